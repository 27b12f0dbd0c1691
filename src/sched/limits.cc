// QOS, association and array limits; see limits.h. Reasons are Slurm's: a GPU limit reports
// ...GRES..., a CPU limit ...CPU..., a job count ...MaxJobs....
#include "sched/limits.h"

#include <algorithm>

namespace drover::sched {

JobUsage UsageOf(const ClusterConfig& cluster, const Allocation& allocation) {
  JobUsage usage;
  for (const NodeAllocation& part : allocation.nodes) {
    const NodeConfig& node = cluster.nodes[part.node];
    usage.cpus += part.cores.size() * std::max(node.threads_per_core, 1);
    usage.gpus += part.gpus.size();
    usage.memory_mb += part.memory_mb;
    ++usage.nodes;
  }
  return usage;
}

LimitTracker::LimitTracker(const std::vector<Association>& associations,
                           const std::vector<Qos>& qos)
    : associations_(associations),
      qos_(qos),
      by_qos_(qos.size()),
      by_association_(associations.size()) {
  for (size_t i = 0; i < qos.size(); ++i) qos_index_[qos[i].name] = static_cast<int>(i);
}

int LimitTracker::FindQos(const std::string& name) const {
  auto it = qos_index_.find(name.empty() ? "normal" : name);
  if (it != qos_index_.end()) return it->second;
  return name.empty() ? -1 : -2;
}

uint64_t LimitTracker::Amount(const JobUsage& usage, const std::string& tres) {
  if (tres == "cpu") return usage.cpus;
  if (tres == "mem") return usage.memory_mb;
  if (tres == "node") return usage.nodes;
  if (tres.starts_with("gres/gpu")) return usage.gpus;
  return 0;
}

void LimitTracker::Add(const std::string& user, int qos, int association, uint64_t array_job_id,
                       const JobUsage& usage) {
  auto add = [&](Counts& counts) {
    ++counts.jobs;
    counts.usage.cpus += usage.cpus;
    counts.usage.gpus += usage.gpus;
    counts.usage.nodes += usage.nodes;
    counts.usage.memory_mb += usage.memory_mb;
  };
  if (qos >= 0) {
    add(by_user_qos_[{user, qos}]);
    add(by_qos_[qos]);
  }
  for (int a = association; a >= 0; a = associations_[a].parent) add(by_association_[a]);
  if (array_job_id) ++running_array_tasks_[array_job_id];
}

uint32_t LimitTracker::RunningArrayTasks(uint64_t array_job_id) const {
  auto it = running_array_tasks_.find(array_job_id);
  return it == running_array_tasks_.end() ? 0 : it->second;
}

PendingReason LimitTracker::CheckQos(const JobSpec& job, int qos, const JobUsage& usage,
                                     int64_t time_limit_seconds) const {
  const Qos& q = qos_[qos];
  if (q.max_wall_seconds > 0 && time_limit_seconds > q.max_wall_seconds)
    return PendingReason::kQosMaxWallDurationPerJobLimit;
  auto user = by_user_qos_.find({job.user, qos});
  Counts mine = user == by_user_qos_.end() ? Counts{} : user->second;
  if (q.max_jobs_per_user && mine.jobs + 1 > q.max_jobs_per_user)
    return PendingReason::kQosMaxJobsPerUserLimit;
  for (const auto& [tres, limit] : q.max_tres_per_user.items()) {
    if (Amount(mine.usage, tres) + Amount(usage, tres) <= limit) continue;
    return tres == "cpu" ? PendingReason::kQosMaxCpuPerUserLimit
                         : PendingReason::kQosMaxGresPerUser;
  }
  for (const auto& [tres, limit] : q.grp_tres.items()) {
    if (Amount(by_qos_[qos].usage, tres) + Amount(usage, tres) <= limit) continue;
    return tres == "cpu" ? PendingReason::kQosGrpCpuLimit : PendingReason::kQosGrpGres;
  }
  return PendingReason::kNone;
}

PendingReason LimitTracker::CheckAssociations(int association, const JobUsage& usage) const {
  for (int a = association; a >= 0; a = associations_[a].parent) {
    const Association& assoc = associations_[a];
    const Counts& counts = by_association_[a];
    if (assoc.max_jobs && counts.jobs + 1 > assoc.max_jobs)
      return PendingReason::kAssocMaxJobsLimit;
    for (const auto& [tres, limit] : assoc.grp_tres.items()) {
      if (Amount(counts.usage, tres) + Amount(usage, tres) <= limit) continue;
      return tres == "cpu" ? PendingReason::kAssocGrpCpuLimit : PendingReason::kAssocGrpGres;
    }
  }
  return PendingReason::kNone;
}

PendingReason LimitTracker::Check(const JobSpec& job, int qos, int association,
                                  const JobUsage& usage, int64_t time_limit_seconds) const {
  if (qos == -2) return PendingReason::kInvalidQos;
  if (job.array_job_id && job.array_max_running &&
      RunningArrayTasks(job.array_job_id) >= job.array_max_running)
    return PendingReason::kJobArrayTaskLimit;
  if (qos >= 0)
    if (PendingReason reason = CheckQos(job, qos, usage, time_limit_seconds);
        reason != PendingReason::kNone)
      return reason;
  return CheckAssociations(association, usage);
}

}  // namespace drover::sched
