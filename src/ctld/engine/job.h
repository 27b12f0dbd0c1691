// A job as the controller keeps it: its spec, its state and its allocation, plus the runs it has
// had (a requeued job keeps its ID and its earlier runs for sacct). Records are immutable once
// published: the engine replaces a job's record on every change, so snapshots can share them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/job_spec.h"
#include "common/job_state.h"
#include "common/task_usage.h"
#include "sched/model.h"
#include "sched/pending_reason.h"

namespace drover::ctld {

// The state names live in common (every process shares them); the engine uses them as its own.
using drover::IsFinal;
using drover::JobState;
using drover::JobStateCode;
using drover::JobStateName;

// One run of a job, ended or current.
struct JobRun {
  int64_t start_time = 0, end_time = 0;
  JobState state = JobState::kRunning;
  int32_t exit_code = 0, exit_signal = 0;
  std::vector<int> nodes;
  uint32_t restart_count = 0;
};

// One srun step of the job's current run (sacct's N.0, N.1, ...).
struct Step {
  uint32_t step_id = 0;
  std::string name;
  int64_t start_time = 0, end_time = 0;  // end 0: running
  JobState state = JobState::kRunning;
  int32_t exit_code = 0, exit_signal = 0;
  uint32_t ntasks = 0;
  std::vector<int> nodes;
  uint32_t cpus = 0;
  double cpu_seconds = 0;
  uint64_t max_rss_mib = 0;
  TaskUsage task_usage;  // what its tasks used, once it ended
  // What the step holds of the job's resources on each of its nodes while it runs (cores,
  // memory it asked for, GPUs it asked for); an --overlap step holds nothing.
  std::vector<sched::NodeAllocation> usage{};
  bool overlap = false;
  bool gpus_given = false;  // it asked for GPUs: its tasks see usage's, not all the job's
  // scancel N.S sent SIGTERM: SIGKILL follows at this time if the step still runs (0: none;
  // not stored, so a restarted controller leaves it to the SIGTERM).
  int64_t kill_at = 0;
};

// A record's encoding, filled once for the record it was made from: a copy of the record
// (which is about to change) starts without one.
class WireCache {
 public:
  WireCache() = default;
  WireCache(const WireCache&) {}
  WireCache& operator=(const WireCache&) { return *this; }
  const std::shared_ptr<const std::string>& get() const { return bytes_; }
  // Only before the record is published to readers (the engine thread, ahead of Publish).
  void Set(std::shared_ptr<const std::string> bytes) const { bytes_ = std::move(bytes); }

 private:
  mutable std::shared_ptr<const std::string> bytes_;
};

// A record's revision (sched::RunningJob::revision), given by the engine each time it puts a
// record in its table. Like WireCache it belongs to the record, not to its contents: a copy (the
// next record, about to change) starts without one, and assigning another record's contents over
// this one keeps it. A record given none reads as 0, which the kept pool reads every pass.
class Revision {
 public:
  Revision() = default;
  Revision(const Revision&) {}
  Revision& operator=(const Revision&) { return *this; }
  uint64_t get() const { return value_; }
  void Set(uint64_t value) { value_ = value; }

 private:
  uint64_t value_ = 0;
};

struct Job {
  JobSpec spec;
  JobState state = JobState::kPending;
  sched::PendingReason reason = sched::PendingReason::kNone;
  int partition = -1;
  sched::Allocation allocation;
  // By node index, the UUIDs of the job's GPUs there (its NodeAllocation::gpus' order) when it
  // started: how a bad GPU is traced to the jobs that used it. Empty without UUIDs.
  std::map<int, std::vector<std::string>> gpu_uuids;
  int64_t start_time = 0;
  int64_t end_time = 0;  // running: when the time limit ends it; final: when it ended
  int64_t time_limit_seconds = 0;
  int32_t exit_code = 0, exit_signal = 0;
  uint32_t restart_count = 0;
  int64_t cancel_requested_at = 0;  // scancel of a running job: waiting for it to end
  uint32_t cancelled_by = 0;
  int64_t time_limit_signalled_at = 0;  // SIGTERM sent at the limit; SIGKILL after KillWait
  bool user_signal_sent = false;        // --signal delivered
  // Preempted: when, and when its grace time ends (it is killed then if it has not ended);
  // whether it is cancelled rather than requeued.
  int64_t preempted_at = 0, preempt_deadline = 0;
  int64_t start_priority = 0;  // its priority when it started (not stored: 0 after a restart)
  int batch_node = -1;         // --batch: the node that runs the script; -1: the first
  // The scheduler's kept pool (sched::RunningPool) re-reads a running job only when this
  // changed. Not stored.
  Revision revision;
  // The node whose agent runs the batch script and reports its end.
  int BatchNode() const {
    return batch_node >= 0 || allocation.nodes.empty() ? batch_node : allocation.nodes.front().node;
  }
  // Which pass started the current run, as sacct's Flags names it: "SchedSubmit" (the first
  // cycle that saw it), "SchedMain" (in priority order) or "SchedBackfill"; "" before a start.
  std::string sched_by;
  bool preempt_cancel = false;
  int64_t suspend_time = 0;       // when last suspended (or resumed)
  int64_t suspended_seconds = 0;  // time spent suspended (not counted against the limit)
  // PreemptMode=SUSPEND: the job it was stopped for; it is not resumed while that one waits to
  // start on its resources (kept in memory only: after a restart, free resources resume it).
  uint64_t suspended_for = 0;
  double cpu_seconds = 0;  // the run's CPU time and peak memory, once it ended
  uint64_t max_rss_mib = 0;
  TaskUsage batch_usage;        // the batch script's own processes (sacct's N.batch), once it ended
  std::vector<JobRun> history;  // earlier runs (requeued, preempted)
  std::vector<Step> steps;      // srun's steps of the current run
  uint32_t next_step_id = 0;
  // salloc or srun released the interactive allocation with this status; the job ends
  // COMPLETED or FAILED with it once its nodes have stopped what ran there.
  bool released = false;
  int32_t release_exit_code = 0, release_signal = 0;
  WireCache wire;  // the record as the store and ListJobs encode it

  // "0:0", "1:0", "0:9": Slurm's exit code and signal.
  std::string ExitCodeText() const;
  std::vector<int> NodeIndexes() const;  // the allocation's nodes, in its order
};

using JobPtr = std::shared_ptr<const Job>;

// A running (or suspended) job as the scheduler sees it; it shares the record's allocation, so
// the record must outlive the scheduling pass.
sched::RunningJob RunningOf(const Job& job);

}  // namespace drover::ctld
