// Limits that make a job wait even when resources are free, as AccountingStorageEnforce=limits
// applies them: the QOS's (the job's, then its partition's QOS=) and the association's, each
// with Slurm's pending reason. Per job: MaxTRES, MaxTRESPerNode, MaxTRESMins, MaxWall, QOS
// MinTRESPerJob. Over what runs: GrpTRES, GrpJobs, GrpTRESRunMins (TRES x time left), QOS
// MaxTRESPerUser/PerAccount, MaxJobsPerUser/PerAccount, association MaxJobs. Over usage:
// GrpTRESMins and GrpWall (decayed), and with `safe` a job starts only if it can finish within
// GrpTRESMins. Job array % limits too. Counts running jobs, plus those this pass has started.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/cluster_config.h"
#include "sched/model.h"
#include "sched/pending_reason.h"

namespace drover::sched {

// What one job uses (or asks for), in the TRES the limits count.
struct JobUsage {
  uint64_t cpus = 0, gpus = 0, nodes = 0, memory_mb = 0;
  uint64_t billing = 0;  // the billing TRES (TRESBillingWeights), rounded up
};

// What an allocation holds: CPUs (its cores' threads), GPUs, memory and nodes.
JobUsage UsageOf(const ClusterConfig& cluster, const Allocation& allocation);

// `usage` held for `seconds`, its billing TRES given: TRES-seconds (wall: the seconds).
TresSeconds TresSecondsOf(const JobUsage& usage, double billing, double seconds);

// A job's request as the limits see it.
struct LimitRequest {
  JobUsage total, per_node;
  int64_t time_limit_seconds = 0;
  double fair_share = 1.0;  // its association's fair-share factor (QOS UsageThreshold)
};

class LimitTracker {
 public:
  // `safe`: AccountingStorageEnforce=safe.
  LimitTracker(const std::vector<Association>& associations, const std::vector<Qos>& qos,
               bool safe = false);

  // -1 when the job names no QOS and there is no "normal" QOS; -2 when it names an unknown one.
  int FindQos(const std::string& name) const;

  // A running job, or one this pass starts: `seconds_left` of its time limit.
  void Add(const std::string& user, const std::string& account, uint64_t array_job_id, int qos,
           int partition_qos, int association, const JobUsage& usage, int64_t seconds_left);

  uint32_t RunningArrayTasks(uint64_t array_job_id) const;

  // kNone, or the reason a job with this request must wait. `partition_qos` is the QOS= of the
  // partition it would run in (-1: none).
  PendingReason Check(const JobSpec& job, int qos, int partition_qos, int association,
                      const LimitRequest& request) const;

  // The limits a job breaks on its own, whatever else runs (QOS DenyOnLimit refuses it at
  // submission): the QOS's and the association's per-job limits, QOS MinTRESPerJob,
  // MaxTRESPerUser and MaxTRESPerAccount, and with safe a GrpTRESMins budget it could not
  // finish within even unused. `budgets_only`: the GrpTRESMins budgets alone.
  PendingReason CheckAlone(int qos, int association, const LimitRequest& request,
                           bool budgets_only = false) const;

  // A running job, as Slurm's acct_policy_job_time_out: the limit it has run out of (it is
  // then timed out), else kNone. A GrpTRESMins budget or the GrpWall of its QOS, its
  // partition's QOS or an association from its own up to the root used up, or its own TRES x
  // whole minutes run, plus one (Slurm's count), over a MaxTRESMinsPerJob of its QOS or
  // its association. `usage` as Add takes it; `run_seconds` leaves out time suspended. The
  // root association's limits are not applied, as in Slurm.
  PendingReason CheckRunning(int qos, int partition_qos, int association, const JobUsage& usage,
                             int64_t run_seconds) const;

 private:
  struct Counts {
    uint64_t jobs = 0;
    JobUsage usage;
    TresSeconds run_left;  // TRES x seconds left of the running jobs
  };
  static void Count(Counts& counts, const JobUsage& usage, int64_t seconds_left);
  PendingReason CheckQos(const JobSpec& job, int qos, const LimitRequest& request) const;
  PendingReason CheckAssociations(int association, const LimitRequest& request) const;
  PendingReason CheckGroup(LimitScope scope, const Limits& limits, const Counts& counts,
                           const TresSeconds& used, const LimitRequest& request,
                           double usage_factor) const;
  PendingReason CheckPerJob(LimitScope scope, const Limits& limits,
                            const LimitRequest& request) const;

  const std::vector<Association>& associations_;
  const std::vector<Qos>& qos_;
  bool safe_ = false;
  std::unordered_map<std::string, int> qos_index_;
  std::unordered_map<std::pair<std::string, int>, Counts, NameQosHash> by_user_qos_,
      by_account_qos_;
  std::vector<Counts> by_qos_;
  std::vector<Counts> by_association_;     // each job counted in its association and ancestors
  std::vector<TresSeconds> subtree_used_;  // each association's usage with its descendants'
  std::unordered_map<uint64_t, uint32_t> running_array_tasks_;
};

}  // namespace drover::sched
