// drover sim's core: a trace replayed through the controller's own engine (src/ctld/engine: the
// same events, the same scheduler, the same requeues and time limits) on a virtual clock, with
// emulated nodes that run each job for its recorded time. Time jumps from one instant where
// something happens (a submission, a job's end, a deadline the engine keeps) to the next; a
// scheduling cycle runs at each, as the engine decides. Nothing here reads the wall clock except
// to report what the scheduler cost.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/accounting.h"
#include "common/cluster_config.h"
#include "common/result.h"
#include "ctld/engine/job.h"
#include "sched/model.h"
#include "sim/trace.h"

namespace drover::sim {

// --gpu-sharing: how a job that uses part of one GPU (a trace's gpu_milli) is given it, so that
// the fragmentation of each can be compared on one trace.
struct GpuSharingMode {
  enum class Kind {
    kWhole,  // a whole GPU (the default: what a cluster without sharing does)
    kShard,  // every GPU cut into `count` shards (gres/shard); ceil(milli x count / 1000) of one
    kMig,    // `count` GPUs of each node in MIG mode, seven 1g slices each; a job that uses at
             // most a seventh of a GPU gets a slice, any other job whole GPUs (the rest)
  };
  Kind kind = Kind::kWhole;
  uint32_t count = 0;
  std::string Name() const;  // "whole", "shard:8", "mig:4"
};
inline constexpr uint32_t kDefaultShardsPerGpu = 8;
inline constexpr uint32_t kMigSlicesPerGpu = 7;  // A100/H100: 1g is a seventh
// "whole", "shard[:N]" (8 shards a GPU when not given), "mig[:K]" (half a node's GPUs, at least
// one, when not given).
Result<GpuSharingMode> ParseGpuSharing(std::string_view text);

struct SimOptions {
  std::optional<sched::PolicyKind> policy;  // --policy; unset: the configuration's
  std::optional<PriorityType> priority;     // --priority; unset: the configuration's
  int64_t tick_seconds = 60;  // time passing (fair-share usage, purges) at most this often
  bool timing = true;         // measure the scheduler's cost (wall clock)
  // --accounts: the accounting (associations, shares, limits) from a sacctmgr dump file;
  // null: the engine's own (every account and user with one share).
  std::shared_ptr<const acct::Database> accounts;
  GpuSharingMode gpu_sharing;
  // Checks every cycle the engine's kept pool of running jobs against one built afresh
  // (ctld::EngineOptions::check_kept_pool; tests).
  bool check_kept_pool = false;
};

// One job of the trace as it went.
struct JobRecord {
  uint64_t trace_id = 0;
  std::string user, account;
  int64_t submit = 0;                      // seconds from the trace's start
  int64_t start = -1, end = -1;            // its first start and its end; -1: never
  int64_t run_seconds = 0;                 // what it ran in the run that ended it
  uint32_t cpus = 0, gpus = 0, nodes = 0;  // what it was given (its last run): GPU devices
  std::string node_list;                   // where, as a hostlist
  ctld::JobState state = ctld::JobState::kPending;
  uint32_t restarts = 0, preemptions = 0;
  // Used, over every run; GPUs as whole GPUs' worth (a shard of eight is an eighth, a MIG
  // slice a seventh).
  double core_seconds = 0, gpu_seconds = 0;
};

struct SimResult {
  std::string trace, policy, priority;
  uint64_t total_cores = 0, total_gpus = 0;
  std::vector<JobRecord> jobs;  // every submitted job, in trace order
  std::map<std::string, uint64_t> skipped;
  uint64_t fractional_gpu_jobs = 0;   // asked for part of a GPU
  std::string gpu_sharing = "whole";  // how they got it: GpuSharingMode::Name()
  int64_t first_submit = 0, last_event = 0;
  // Resources free while the queue's head waits for resources: free but unusable by it.
  double fragmented_gpu_seconds = 0, fragmented_core_seconds = 0;
  uint64_t cycles = 0;
  double cycle_ms_total = 0, cycle_ms_max = 0, wall_seconds = 0;  // when timed
  bool timed = false;
};

Result<SimResult> Simulate(const ClusterConfig& cluster, const Trace& trace,
                           const SimOptions& options = {});

}  // namespace drover::sim
