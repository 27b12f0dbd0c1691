// Limits that make a job wait even when resources are free: QOS MaxTRESPerUser,
// MaxJobsPerUser, MaxWall and GrpTRES; association GrpTRES (over its subtree) and MaxJobs;
// job array % limits. Counts running jobs, plus those this pass has started.
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
};

// What an allocation holds: CPUs (its cores' threads), GPUs, memory and nodes.
JobUsage UsageOf(const ClusterConfig& cluster, const Allocation& allocation);

class LimitTracker {
 public:
  LimitTracker(const std::vector<Association>& associations, const std::vector<Qos>& qos);

  // -1 when the job names no QOS and there is no "normal" QOS; -2 when it names an unknown one.
  int FindQos(const std::string& name) const;

  void Add(const std::string& user, int qos, int association, uint64_t array_job_id,
           const JobUsage& usage);

  uint32_t RunningArrayTasks(uint64_t array_job_id) const;

  // kNone, or the reason a job with this usage and time limit must wait.
  PendingReason Check(const JobSpec& job, int qos, int association, const JobUsage& usage,
                      int64_t time_limit_seconds) const;

 private:
  struct Counts {
    uint64_t jobs = 0;
    JobUsage usage;
  };
  static uint64_t Amount(const JobUsage& usage, const std::string& tres);
  PendingReason CheckQos(const JobSpec& job, int qos, const JobUsage& usage,
                         int64_t time_limit_seconds) const;
  PendingReason CheckAssociations(int association, const JobUsage& usage) const;

  const std::vector<Association>& associations_;
  const std::vector<Qos>& qos_;
  std::unordered_map<std::string, int> qos_index_;
  std::map<std::pair<std::string, int>, Counts> by_user_qos_;
  std::vector<Counts> by_qos_;
  std::vector<Counts> by_association_;  // each job counted in its association and ancestors
  std::unordered_map<uint64_t, uint32_t> running_array_tasks_;
};

}  // namespace drover::sched
