// QOS, association and array limits; see limits.h. Reasons are Slurm's (LimitReason): a GPU
// limit reports ...GRES..., a CPU limit ...Cpu..., a job count ...Jobs....
#include "sched/limits.h"

#include <algorithm>
#include <cmath>

#include "common/accounting.h"

namespace drover::sched {
namespace {

uint64_t Amount(const JobUsage& usage, std::string_view tres) {
  if (tres == "cpu") return usage.cpus;
  if (tres == "mem") return usage.memory_mb;
  if (tres == "node") return usage.nodes;
  if (tres == "billing") return usage.billing;
  if (tres.starts_with("gres/gpu")) return usage.gpus;
  return 0;
}

// A TRES count times seconds, in minutes.
double Minutes(double tres_seconds) {
  return tres_seconds / 60.0;
}

double JobTresSeconds(const LimitRequest& request, std::string_view tres) {
  if (request.time_limit_seconds >= kUnlimitedSeconds) return HUGE_VAL;
  return static_cast<double>(Amount(request.total, tres)) *
         static_cast<double>(request.time_limit_seconds);
}

}  // namespace

double TresSeconds::Of(std::string_view tres) const {
  if (tres == "cpu") return cpu;
  if (tres == "mem") return mem;
  if (tres == "node") return node;
  if (tres == "billing") return billing;
  if (tres.starts_with("gres/gpu")) return gpu;
  return 0;
}

void TresSeconds::Add(const TresSeconds& other) {
  cpu += other.cpu;
  mem += other.mem;
  node += other.node;
  gpu += other.gpu;
  billing += other.billing;
  wall += other.wall;
}

void TresSeconds::Scale(double factor) {
  cpu *= factor;
  mem *= factor;
  node *= factor;
  gpu *= factor;
  billing *= factor;
  wall *= factor;
}

TresSeconds TresSecondsOf(const JobUsage& usage, double billing, double seconds) {
  TresSeconds out;
  out.cpu = static_cast<double>(usage.cpus) * seconds;
  out.mem = static_cast<double>(usage.memory_mb) * seconds;
  out.node = static_cast<double>(usage.nodes) * seconds;
  out.gpu = static_cast<double>(usage.gpus) * seconds;
  out.billing = billing * seconds;
  out.wall = seconds;
  return out;
}

JobUsage UsageOf(const ClusterConfig& cluster, const Allocation& allocation) {
  JobUsage usage;
  for (const NodeAllocation& part : allocation.nodes) {
    const NodeConfig& node = cluster.nodes[part.node];
    usage.cpus += part.cores.size() * std::max(node.threads_per_core, 1);
    if (part.shares == 0) usage.gpus += part.gpus.size();  // shares are not gres/gpu
    usage.memory_mb += part.memory_mb;
    ++usage.nodes;
  }
  return usage;
}

LimitTracker::LimitTracker(const std::vector<Association>& associations,
                           const std::vector<Qos>& qos, bool safe)
    : associations_(associations),
      qos_(qos),
      safe_(safe),
      by_qos_(qos.size()),
      by_association_(associations.size()),
      subtree_used_(associations.size()) {
  for (size_t i = 0; i < qos.size(); ++i) qos_index_[qos[i].name] = static_cast<int>(i);
  // Parents come before their children: one walk from the leaves up adds each to its parent.
  for (size_t i = 0; i < associations.size(); ++i) subtree_used_[i] = associations[i].used;
  for (size_t i = associations.size(); i-- > 0;) {
    int parent = associations[i].parent;
    if (parent >= 0 && static_cast<size_t>(parent) < i) subtree_used_[parent].Add(subtree_used_[i]);
  }
}

int LimitTracker::FindQos(const std::string& name) const {
  auto it = qos_index_.find(name.empty() ? "normal" : name);
  if (it != qos_index_.end()) return it->second;
  return name.empty() ? -1 : -2;
}

void LimitTracker::Count(Counts& counts, const JobUsage& usage, int64_t seconds_left) {
  ++counts.jobs;
  counts.usage.cpus += usage.cpus;
  counts.usage.gpus += usage.gpus;
  counts.usage.nodes += usage.nodes;
  counts.usage.memory_mb += usage.memory_mb;
  counts.usage.billing += usage.billing;
  double left = static_cast<double>(std::max<int64_t>(seconds_left, 0));
  counts.run_left.cpu += static_cast<double>(usage.cpus) * left;
  counts.run_left.mem += static_cast<double>(usage.memory_mb) * left;
  counts.run_left.node += static_cast<double>(usage.nodes) * left;
  counts.run_left.gpu += static_cast<double>(usage.gpus) * left;
  counts.run_left.billing += static_cast<double>(usage.billing) * left;
}

void LimitTracker::Add(const std::string& user, const std::string& account, uint64_t array_job_id,
                       int qos, int partition_qos, int association, const JobUsage& usage,
                       int64_t seconds_left) {
  for (int q : {qos, partition_qos == qos ? -1 : partition_qos}) {
    if (q < 0) continue;
    Count(by_user_qos_[{user, q}], usage, seconds_left);
    Count(by_account_qos_[{account, q}], usage, seconds_left);
    Count(by_qos_[q], usage, seconds_left);
  }
  for (int a = association; a >= 0; a = associations_[a].parent)
    Count(by_association_[a], usage, seconds_left);
  if (array_job_id) ++running_array_tasks_[array_job_id];
}

uint32_t LimitTracker::RunningArrayTasks(uint64_t array_job_id) const {
  auto it = running_array_tasks_.find(array_job_id);
  return it == running_array_tasks_.end() ? 0 : it->second;
}

// The limits over everything an association's subtree or a QOS runs and has used.
PendingReason LimitTracker::CheckGroup(LimitScope scope, const Limits& limits, const Counts& counts,
                                       const TresSeconds& used, const LimitRequest& request,
                                       double usage_factor) const {
  bool qos = scope == LimitScope::kQos;
  if (limits.grp_jobs != kNoLimit && counts.jobs + 1 > static_cast<uint64_t>(limits.grp_jobs))
    return qos ? PendingReason::kQosGrpJobsLimit : PendingReason::kAssocGrpJobsLimit;
  for (const auto& [tres, limit] : limits.grp_tres.items())
    if (Amount(counts.usage, tres) + Amount(request.total, tres) > limit)
      if (PendingReason reason = LimitReason(scope, LimitKind::kGrp, tres);
          reason != PendingReason::kNone)
        return reason;
  for (const auto& [tres, limit] : limits.grp_tres_mins.items()) {
    // Without safe a job starts while the budget lasts; with it, only if it can finish within
    // it (what runs counted to its time limit), its own usage scaled by UsageFactor.
    double minutes = Minutes(used.Of(tres));
    bool over = minutes >= static_cast<double>(limit);
    if (safe_)
      over = over || minutes + Minutes(counts.run_left.Of(tres)) +
                             Minutes(JobTresSeconds(request, tres) * usage_factor) >
                         static_cast<double>(limit);
    if (over)
      if (PendingReason reason = LimitReason(scope, LimitKind::kGrpMinutes, tres);
          reason != PendingReason::kNone)
        return reason;
  }
  for (const auto& [tres, limit] : limits.grp_tres_run_mins.items())
    if (Minutes(counts.run_left.Of(tres)) + Minutes(JobTresSeconds(request, tres)) >
        static_cast<double>(limit))
      if (PendingReason reason = LimitReason(scope, LimitKind::kGrpRunMinutes, tres);
          reason != PendingReason::kNone)
        return reason;
  if (limits.grp_wall_seconds != kNoLimit &&
      used.wall >= static_cast<double>(limits.grp_wall_seconds))
    return qos ? PendingReason::kQosGrpWallLimit : PendingReason::kAssocGrpWallLimit;
  return PendingReason::kNone;
}

// The limits on one job's own size and time.
PendingReason LimitTracker::CheckPerJob(LimitScope scope, const Limits& limits,
                                        const LimitRequest& request) const {
  bool qos = scope == LimitScope::kQos;
  if (limits.max_wall_seconds != kNoLimit && request.time_limit_seconds > limits.max_wall_seconds)
    return qos ? PendingReason::kQosMaxWallDurationPerJobLimit
               : PendingReason::kAssocMaxWallDurationPerJobLimit;
  auto first = [scope](LimitKind kind, const TresList& list, auto over) {
    for (const auto& [tres, limit] : list.items())
      if (over(tres, static_cast<double>(limit)))
        if (PendingReason reason = LimitReason(scope, kind, tres); reason != PendingReason::kNone)
          return reason;
    return PendingReason::kNone;
  };
  PendingReason reason = first(LimitKind::kPerJob, limits.max_tres_per_job,
                               [&](const std::string& tres, double limit) {
                                 return static_cast<double>(Amount(request.total, tres)) > limit;
                               });
  if (reason != PendingReason::kNone) return reason;
  reason = first(LimitKind::kPerNode, limits.max_tres_per_node,
                 [&](const std::string& tres, double limit) {
                   return static_cast<double>(Amount(request.per_node, tres)) > limit;
                 });
  if (reason != PendingReason::kNone) return reason;
  return first(LimitKind::kMinutesPerJob, limits.max_tres_mins_per_job,
               [&](const std::string& tres, double limit) {
                 return Minutes(JobTresSeconds(request, tres)) > limit;
               });
}

PendingReason LimitTracker::CheckQos(const JobSpec& job, int qos,
                                     const LimitRequest& request) const {
  const Qos& q = qos_[qos];
  if (PendingReason reason = CheckPerJob(LimitScope::kQos, q.limits, request);
      reason != PendingReason::kNone)
    return reason;
  for (const auto& [tres, limit] : q.min_tres_per_job.items())
    if (Amount(request.total, tres) < limit)
      if (PendingReason reason = LimitReason(LimitScope::kQos, LimitKind::kMin, tres);
          reason != PendingReason::kNone)
        return reason;
  auto user = by_user_qos_.find({job.user, qos});
  Counts mine = user == by_user_qos_.end() ? Counts{} : user->second;
  if (q.limits.max_jobs != kNoLimit && mine.jobs + 1 > static_cast<uint64_t>(q.limits.max_jobs))
    return PendingReason::kQosMaxJobsPerUserLimit;
  for (const auto& [tres, limit] : q.max_tres_per_user.items())
    if (Amount(mine.usage, tres) + Amount(request.total, tres) > limit)
      if (PendingReason reason = LimitReason(LimitScope::kQos, LimitKind::kPerUser, tres);
          reason != PendingReason::kNone)
        return reason;
  auto account = by_account_qos_.find({job.account, qos});
  Counts ours = account == by_account_qos_.end() ? Counts{} : account->second;
  if (q.max_jobs_per_account != kNoLimit &&
      ours.jobs + 1 > static_cast<uint64_t>(q.max_jobs_per_account))
    return PendingReason::kQosMaxJobsPerAccount;
  for (const auto& [tres, limit] : q.max_tres_per_account.items())
    if (Amount(ours.usage, tres) + Amount(request.total, tres) > limit)
      if (PendingReason reason = LimitReason(LimitScope::kQos, LimitKind::kPerAccount, tres);
          reason != PendingReason::kNone)
        return reason;
  if (PendingReason reason = CheckGroup(LimitScope::kQos, q.limits, by_qos_[qos], q.used, request,
                                        (q.flags & acct::kUsageFactorSafe) ? q.usage_factor : 1.0);
      reason != PendingReason::kNone)
    return reason;
  if ((q.flags & acct::kEnforceUsageThreshold) && q.usage_threshold >= 0 &&
      request.fair_share < q.usage_threshold)
    return PendingReason::kQosUsageThreshold;
  return PendingReason::kNone;
}

PendingReason LimitTracker::CheckAssociations(int association, const LimitRequest& request) const {
  if (association < 0) return PendingReason::kNone;
  // Max* are per user: the job's own association holds them, inherited from its ancestors.
  const Association& own = associations_[association];
  if (PendingReason reason = CheckPerJob(LimitScope::kAssociation, own.limits, request);
      reason != PendingReason::kNone)
    return reason;
  if (own.limits.max_jobs != kNoLimit &&
      by_association_[association].jobs + 1 > static_cast<uint64_t>(own.limits.max_jobs))
    return PendingReason::kAssocMaxJobsLimit;
  for (int a = association; a >= 0; a = associations_[a].parent)
    if (PendingReason reason = CheckGroup(LimitScope::kAssociation, associations_[a].limits,
                                          by_association_[a], subtree_used_[a], request, 1.0);
        reason != PendingReason::kNone)
      return reason;
  return PendingReason::kNone;
}

PendingReason LimitTracker::CheckAlone(int qos, int association, const LimitRequest& request,
                                       bool budgets_only) const {
  auto over = [&](LimitKind kind, LimitScope scope, const TresList& list, bool below) {
    for (const auto& [tres, limit] : list.items()) {
      uint64_t amount = Amount(request.total, tres);
      if (below ? amount >= limit : amount <= limit) continue;
      if (PendingReason reason = LimitReason(scope, kind, tres); reason != PendingReason::kNone)
        return reason;
    }
    return PendingReason::kNone;
  };
  auto budget = [&](LimitScope scope, const TresList& list) {
    if (!safe_) return PendingReason::kNone;
    for (const auto& [tres, limit] : list.items())
      if (Minutes(JobTresSeconds(request, tres)) > static_cast<double>(limit))
        if (PendingReason reason = LimitReason(scope, LimitKind::kGrpMinutes, tres);
            reason != PendingReason::kNone)
          return reason;
    return PendingReason::kNone;
  };
  if (budgets_only) {
    if (qos >= 0)
      if (PendingReason reason = budget(LimitScope::kQos, qos_[qos].limits.grp_tres_mins);
          reason != PendingReason::kNone)
        return reason;
    for (int a = association; a >= 0; a = associations_[a].parent)
      if (PendingReason reason =
              budget(LimitScope::kAssociation, associations_[a].limits.grp_tres_mins);
          reason != PendingReason::kNone)
        return reason;
    return PendingReason::kNone;
  }
  if (qos >= 0) {
    const Qos& q = qos_[qos];
    for (PendingReason reason :
         {CheckPerJob(LimitScope::kQos, q.limits, request),
          over(LimitKind::kMin, LimitScope::kQos, q.min_tres_per_job, true),
          over(LimitKind::kPerUser, LimitScope::kQos, q.max_tres_per_user, false),
          over(LimitKind::kPerAccount, LimitScope::kQos, q.max_tres_per_account, false),
          over(LimitKind::kGrp, LimitScope::kQos, q.limits.grp_tres, false),
          budget(LimitScope::kQos, q.limits.grp_tres_mins)})
      if (reason != PendingReason::kNone) return reason;
  }
  if (association < 0) return PendingReason::kNone;
  if (PendingReason reason =
          CheckPerJob(LimitScope::kAssociation, associations_[association].limits, request);
      reason != PendingReason::kNone)
    return reason;
  for (int a = association; a >= 0; a = associations_[a].parent)
    for (PendingReason reason :
         {over(LimitKind::kGrp, LimitScope::kAssociation, associations_[a].limits.grp_tres, false),
          budget(LimitScope::kAssociation, associations_[a].limits.grp_tres_mins)})
      if (reason != PendingReason::kNone) return reason;
  return PendingReason::kNone;
}

PendingReason LimitTracker::CheckRunning(int qos, int partition_qos, int association,
                                         const JobUsage& usage, int64_t run_seconds) const {
  // Whole minutes run, plus one, as Slurm counts a running job's TRES-minutes.
  double minutes = static_cast<double>(std::max<int64_t>(run_seconds, 0) / 60);
  auto job_over = [&](LimitScope scope, const TresList& list) {
    for (const auto& [tres, limit] : list.items())
      if (static_cast<double>(Amount(usage, tres)) * minutes + 1 > static_cast<double>(limit))
        if (PendingReason reason = LimitReason(scope, LimitKind::kMinutesPerJob, tres);
            reason != PendingReason::kNone)
          return reason;
    return PendingReason::kNone;
  };
  auto used_up = [&](LimitScope scope, const Limits& limits, const TresSeconds& used) {
    for (const auto& [tres, limit] : limits.grp_tres_mins.items())
      if (Minutes(used.Of(tres)) >= static_cast<double>(limit))
        if (PendingReason reason = LimitReason(scope, LimitKind::kGrpMinutes, tres);
            reason != PendingReason::kNone)
          return reason;
    if (limits.grp_wall_seconds != kNoLimit &&
        used.wall >= static_cast<double>(limits.grp_wall_seconds))
      return scope == LimitScope::kQos ? PendingReason::kQosGrpWallLimit
                                       : PendingReason::kAssocGrpWallLimit;
    return PendingReason::kNone;
  };
  bool over_part = qos >= 0 && (qos_[qos].flags & acct::kOverPartQos);
  for (int q : {qos, partition_qos == qos || over_part ? -1 : partition_qos}) {
    if (q < 0) continue;
    for (PendingReason reason : {job_over(LimitScope::kQos, qos_[q].limits.max_tres_mins_per_job),
                                 used_up(LimitScope::kQos, qos_[q].limits, qos_[q].used)})
      if (reason != PendingReason::kNone) return reason;
  }
  if (association < 0) return PendingReason::kNone;
  if (PendingReason reason = job_over(LimitScope::kAssociation,
                                      associations_[association].limits.max_tres_mins_per_job);
      reason != PendingReason::kNone)
    return reason;
  // As Slurm: the root association's limits are not applied to running jobs.
  for (int a = association; a >= 0 && associations_[a].parent >= 0; a = associations_[a].parent)
    if (PendingReason reason =
            used_up(LimitScope::kAssociation, associations_[a].limits, subtree_used_[a]);
        reason != PendingReason::kNone)
      return reason;
  return PendingReason::kNone;
}

PendingReason LimitTracker::Check(const JobSpec& job, int qos, int partition_qos, int association,
                                  const LimitRequest& request) const {
  if (qos == -2) return PendingReason::kInvalidQos;
  if (job.array_job_id && job.array_max_running &&
      RunningArrayTasks(job.array_job_id) >= job.array_max_running)
    return PendingReason::kJobArrayTaskLimit;
  if (qos >= 0)
    if (PendingReason reason = CheckQos(job, qos, request); reason != PendingReason::kNone)
      return reason;
  // A partition's QOS= applies too, unless the job's QOS has OverPartQOS.
  bool over_part = qos >= 0 && (qos_[qos].flags & acct::kOverPartQos);
  if (partition_qos >= 0 && partition_qos != qos && !over_part)
    if (PendingReason reason = CheckQos(job, partition_qos, request);
        reason != PendingReason::kNone)
      return reason;
  return CheckAssociations(association, request);
}

}  // namespace drover::sched
