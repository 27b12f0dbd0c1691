// The scheduler's main pass: one pure call from the cluster, the running and pending jobs, the
// association tree and `now` to decisions — which jobs start, on exactly which cores, memory
// and GPUs of which nodes; why every other job waits; and every pending job's priority. The
// controller and the simulator both call this; nothing else decides.
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"
#include "sched/fair_share.h"
#include "sched/model.h"
#include "sched/pending_reason.h"
#include "sched/priority.h"

namespace drover::sched {

struct StartDecision {
  uint64_t job_id = 0;
  int partition = -1;
  Allocation allocation;
  int64_t time_limit_seconds = 0;
  int64_t end_time = 0;  // now + time limit (kUnlimitedSeconds when unlimited)
  int64_t priority{0};   // its priority when it started (later passes weigh victims by it)
  int batch_node{-1};    // --batch: the node with its features that runs the script; -1: the first
  // Started ahead of a higher-priority job its partition could not run yet: a backfill start
  // (sacct's SchedBackfill), not one in priority order (SchedMain).
  bool backfill = false;
};

struct PendingDecision {
  uint64_t job_id = 0;
  PendingReason reason = PendingReason::kNone;
};

// When and where the plan expects a waiting job to start (squeue --start, SchedNodeList).
struct PlannedStart {
  uint64_t job_id = 0;
  int64_t start_time = 0;
  int partition = -1;
  std::vector<int> nodes;  // ascending
  bool reserved = false;   // the plan holds these nodes for it: no lower job may delay it
};

// A running job to preempt for a waiting one; its resources are back by `release_time` (now
// plus its grace time), and the preemptor is reserved on them from then.
struct PreemptDecision {
  uint64_t victim = 0, preemptor = 0;
  int64_t release_time = 0;
};

struct SchedulerResult {
  std::vector<StartDecision> started;       // in the order decided (priority order)
  std::vector<PendingDecision> pending;     // every job not started, in priority order
  std::vector<PriorityFactors> priorities;  // every pending job, in priority order
  // For each pending job of the input, in the input's order: its place in `priorities`.
  std::vector<uint32_t> priority_of_input;
  std::vector<PlannedStart> planned;  // every waiting job with a foreseeable start
  std::vector<PreemptDecision> preempted;
  FairShare fair_share;  // per association, for sshare
};

// One pass. Jobs are taken by partition PriorityTier, then priority (then submit time, then job
// ID); each gets all it asked for at once or nothing. Under FIFO a job that waits for resources
// blocks the lower jobs of its partitions (they wait with reason Priority). Under backfill (EASY
// or conservative) the first blocked jobs of each partition get a reservation in the plan, a
// lower job starts only where it delays none, and every waiting job gets its expected start;
// a job that can only start by preempting gets its victims chosen and their resources reserved.
SchedulerResult Schedule(const SchedulerInput& input);
// The same into `result`, reusing its storage: a controller that keeps one result between passes
// does not allocate (and fault in) 100,000 records' worth of memory every pass.
void Schedule(const SchedulerInput& input, SchedulerResult& result);

// At submission: whether this job could ever run on this cluster with every node up and idle,
// in at least one of its partitions. Errors are Slurm's words with what to change, e.g.
// "Requested node configuration is not available (no node of partition gpu has 16 GPUs)".
Status CheckSatisfiable(const ClusterConfig& cluster, const JobSpec& job);
// The same with the partitions' MaximaOfPartitions kept by the caller.
Status CheckSatisfiable(const ClusterConfig& cluster, const JobSpec& job,
                        const std::vector<NodeMaxima>& maxima);

}  // namespace drover::sched
