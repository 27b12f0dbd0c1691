// Accounting in the engine: sacctmgr's changes (operators and users with an AdminLevel), the
// association tree and QOS the scheduler reads, and what a submission's account and QOS must
// satisfy under AccountingStorageEnforce (slurmctld's assoc_mgr_fill_in_assoc and
// _valid_job_part_acct, in Slurm 22.05's words).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <utility>

#include "common/accounting_settings.h"
#include "common/text.h"
#include "ctld/engine/engine.h"
#include "sched/billing.h"
#include "sched/request.h"

namespace drover::ctld {
namespace {

int64_t Seconds(int64_t minutes) {
  return minutes == acct::kUnset ? sched::kNoLimit : minutes * 60;
}

sched::Limits SchedulerLimits(const acct::Limits& limits) {
  sched::Limits out;
  out.grp_tres = limits.grp_tres;
  out.grp_tres_mins = limits.grp_tres_mins;
  out.grp_tres_run_mins = limits.grp_tres_run_mins;
  out.grp_jobs = limits.grp_jobs;  // acct::kUnset is sched::kNoLimit
  out.grp_wall_seconds = Seconds(limits.grp_wall_minutes);
  out.max_tres_per_job = limits.max_tres;
  out.max_tres_per_node = limits.max_tres_per_node;
  out.max_tres_mins_per_job = limits.max_tres_mins;
  out.max_jobs = limits.max_jobs;
  out.max_wall_seconds = Seconds(limits.max_wall_minutes);
  return out;
}

sched::Qos SchedulerQos(const acct::Qos& qos) {
  sched::Qos out;
  out.name = qos.name;
  out.priority = qos.priority;
  out.limits = SchedulerLimits(qos.limits);
  out.max_tres_per_user = qos.max_tres_per_user;
  out.max_tres_per_account = qos.max_tres_per_account;
  out.min_tres_per_job = qos.min_tres;
  out.max_jobs_per_account = qos.max_jobs_per_account;
  out.flags = qos.flags;
  out.usage_threshold = qos.usage_threshold;
  out.usage_factor = qos.usage_factor;
  out.preempt = qos.preempt;
  if (qos.preempt_mode != "cluster") {
    PreemptMode mode;
    if (qos.preempt_mode == "cancel") mode.base = PreemptMode::Base::kCancel;
    if (qos.preempt_mode == "requeue") mode.base = PreemptMode::Base::kRequeue;
    if (qos.preempt_mode == "suspend") mode.base = PreemptMode::Base::kSuspend;
    out.preempt_mode = mode;
  }
  out.grace_time_seconds = qos.grace_seconds;
  out.preempt_exempt_seconds = qos.preempt_exempt_seconds;
  return out;
}

bool Enforces(const ClusterSettings& settings, std::string_view word) {
  return std::any_of(settings.accounting_storage_enforce.begin(),
                     settings.accounting_storage_enforce.end(),
                     [word](const std::string& item) { return EqualsIgnoreCase(item, word); });
}

}  // namespace

EnforcedAccounting EnforcedAccountingOf(const ClusterSettings& settings) {
  EnforcedAccounting enforced;
  // As Slurm: limits, qos and safe each imply associations; safe implies limits.
  enforced.safe = Enforces(settings, "safe");
  enforced.limits = enforced.safe || Enforces(settings, "limits");
  enforced.qos = enforced.safe || Enforces(settings, "qos");
  enforced.associations = enforced.limits || enforced.qos || Enforces(settings, "associations");
  return enforced;
}

void Engine::RestoreAccounting(acct::Database database) {
  accounting_ = std::make_shared<const acct::Database>(std::move(database));
  RebuildAccounting();
}

std::string Engine::AccountingCluster() const {
  return acct::NameOf(cluster().settings.cluster_name);  // kept in lower case, as Slurm keeps it
}

void Engine::RebuildAccounting() {
  // The configuration's cluster is served even before sacctmgr adds it (drover up, a rename).
  if (!accounting_->FindCluster(AccountingCluster())) {
    auto grown = std::make_shared<acct::Database>(*accounting_);
    grown->AddCluster(AccountingCluster());
    accounting_ = std::move(grown);
  }
  // Usage survives the rebuild: by account and user, and by QOS name.
  struct Kept {
    double usage = 0;
    sched::TresSeconds used;
  };
  std::map<std::pair<std::string, std::string>, Kept> usage;
  for (const sched::Association& association : associations_)
    usage[{association.account, association.user}] = {association.usage, association.used};
  std::map<std::string, sched::TresSeconds> qos_usage;
  for (const sched::Qos& qos : qos_) qos_usage[qos.name] = qos.used;
  associations_.clear();
  association_index_.clear();
  sched::Association root;
  root.account = "root";
  root.usage = usage[{"root", ""}].usage;
  root.used = usage[{"root", ""}].used;
  associations_.push_back(std::move(root));
  association_index_[{"root", ""}] = 0;
  const acct::Database& database = *accounting_;
  for (const auto& [record, depth] : database.Hierarchy(AccountingCluster())) {
    acct::Association effective = database.Effective(*record);
    if (depth == 0) {  // root
      associations_[0].shares = record->shares;
      associations_[0].limits = SchedulerLimits(effective.limits);
      associations_[0].priority = effective.priority;
      continue;
    }
    std::string parent_account = record->is_user() ? record->account : record->parent;
    sched::Association association;
    association.account = record->account;
    association.user = record->user;
    association.parent = association_index_.at({parent_account, ""});  // parents come first
    association.shares = record->shares;
    const Kept& kept = usage[{record->account, record->user}];
    association.usage = kept.usage;
    association.used = kept.used;
    // Grp* are the association's own; Max* and Priority are inherited (Effective).
    association.limits = SchedulerLimits(effective.limits);
    association.priority = effective.priority;
    association_index_[{record->account, record->user}] = static_cast<int>(associations_.size());
    associations_.push_back(std::move(association));
  }
  // Usage of jobs whose account and user accounting does not know (nothing enforced) stays
  // with the associations Association() makes for them.
  for (const auto& [key, value] : usage) {
    if ((value.usage != 0 || value.used.wall != 0) && !association_index_.count(key) &&
        !key.second.empty()) {
      sched::Association& made = associations_[Association(key.first, key.second)];
      made.usage = value.usage;
      made.used = value.used;
    }
  }
  qos_.clear();
  for (const acct::Qos& qos : database.qos) {
    qos_.push_back(SchedulerQos(qos));
    qos_.back().used = qos_usage[qos.name];
  }
  // As Slurm: association and QOS limits hold only with AccountingStorageEnforce=limits.
  if (!EnforcedAccountingOf(cluster().settings).limits) {
    for (sched::Association& association : associations_) association.limits = sched::Limits();
    for (sched::Qos& qos : qos_) {
      qos.limits = sched::Limits();
      qos.max_tres_per_user = TresList();
      qos.max_tres_per_account = TresList();
      qos.min_tres_per_job = TresList();
      qos.max_jobs_per_account = sched::kNoLimit;
      qos.flags &= ~static_cast<uint32_t>(acct::kEnforceUsageThreshold);
    }
  }
  RecountActiveJobs();
  schedule_requested_ = true;
}

void Engine::On(const ChangeAccounting& event, EngineOutput& out) {
  // Slurm's AdminLevel Operator and Administrator, root and SlurmUser (IsOperator covers them
  // all: the service raises a caller with an AdminLevel to operator).
  if (!IsOperator(event.caller))
    return out.effects.push_back(Reply{event.token, false, "Access/permission denied", {}, {}});
  acct::Database database = *accounting_;
  auto outcome = acct::ApplyChange(database, event.request);
  if (!outcome) return out.effects.push_back(Reply{event.token, false, outcome.error(), {}, {}});
  Reply reply{event.token, true, "", {}, {}};
  reply.message = outcome->text;
  reply.changed = outcome->changed;
  reply.warnings = std::move(outcome->warnings);
  out.effects.push_back(std::move(reply));
  if (event.dry_run || !outcome->changed) return;
  accounting_ = std::make_shared<const acct::Database>(std::move(database));
  RebuildAccounting();
  out.changed_accounting = true;
}

std::string Engine::AdmitAccounting(JobSpec& spec) const {
  const acct::Database& database = *accounting_;
  const ClusterSettings& settings = cluster().settings;
  EnforcedAccounting enforced = EnforcedAccountingOf(settings);
  if (spec.account.empty()) {
    if (const acct::User* user = database.FindUser(spec.user)) spec.account = user->default_account;
  }
  const acct::Association* association =
      database.FindAssociation(AccountingCluster(), spec.account, spec.user);
  if (!association) {
    // As Slurm: a job accounting does not know still runs under the default QOS.
    if (spec.qos.empty() && database.FindQos("normal")) spec.qos = "normal";
    if (!enforced.associations) return "";
    if (spec.account.empty())
      return fmt::format(
          "Invalid account or account/partition combination specified (user {} has no default "
          "account: an administrator adds one with sacctmgr add user {} account=NAME)",
          spec.user, spec.user);
    return fmt::format(
        "Invalid account or account/partition combination specified (user {} has no "
        "association with account {} on cluster {}; sacctmgr show assoc user={} lists theirs)",
        spec.user, spec.account, AccountingCluster(), spec.user);
  }
  acct::Association effective = database.Effective(*association);
  if (spec.qos.empty()) {
    spec.qos = effective.default_qos;
    if (spec.qos.empty() && effective.qos.size() == 1) spec.qos = effective.qos.front();
  }
  if (enforced.limits) {
    const acct::Qos* qos = database.FindQos(spec.qos.empty() ? "normal" : spec.qos);
    if (qos && (qos->flags & acct::kRequiresReservation) && spec.reservation.empty())
      return fmt::format(
          "Invalid qos specification (QOS {} requires a reservation: submit with "
          "--reservation=NAME)",
          qos->name);
    // As Slurm: a job without --time gets its partition's DefaultTime, else the smaller of the
    // partition's MaxTime and the QOS's or association's MaxWall.
    int64_t max_wall = qos ? qos->limits.max_wall_minutes : acct::kUnset;
    if (max_wall == acct::kUnset) max_wall = effective.limits.max_wall_minutes;
    int p = spec.partitions.empty() ? cluster().DefaultPartition()
                                    : cluster().FindPartition(spec.partitions.front());
    if (spec.time_limit_seconds == 0 && max_wall != acct::kUnset && p >= 0 &&
        !cluster().partitions[p].default_time_seconds)
      spec.time_limit_seconds = std::min(max_wall * 60, cluster().partitions[p].max_time_seconds);
  }
  if (!enforced.qos || spec.qos.empty()) return "";
  if (!database.FindQos(spec.qos) ||
      std::find(effective.qos.begin(), effective.qos.end(), spec.qos) == effective.qos.end())
    return fmt::format("Invalid qos specification (account {} of user {} may use QOS {}, not {})",
                       spec.account, spec.user,
                       effective.qos.empty() ? "none" : Join(effective.qos, ","), spec.qos);
  return "";
}

}  // namespace drover::ctld

namespace drover::ctld {

std::string FormatUsage(double usage, const sched::TresSeconds& used) {
  return fmt::format("{:.6f} {:.3f} {:.3f} {:.3f} {:.3f} {:.3f} {:.3f}", usage, used.cpu, used.mem,
                     used.node, used.gpu, used.billing, used.wall);
}

void ParseUsage(const std::string& text, double& usage, sched::TresSeconds& used) {
  double numbers[7] = {};
  const char* next = text.c_str();
  for (double& slot : numbers) {
    char* end = nullptr;
    double number = std::strtod(next, &end);
    if (end == next) break;
    // A damaged value counts as nothing used rather than as a negative or endless budget.
    slot = std::isfinite(number) && number > 0 ? number : 0;
    next = end;
  }
  usage = numbers[0];
  used = {numbers[1], numbers[2], numbers[3], numbers[4], numbers[5], numbers[6]};
}

void Engine::RecountActiveJobs() {
  active_by_association_.assign(associations_.size(), 0);
  active_by_qos_.clear();
  active_by_qos_user_.clear();
  active_by_qos_account_.clear();
  const acct::Database& database = *accounting_;
  submit_limits_ = false;
  if (EnforcedAccountingOf(cluster().settings).limits) {
    for (const acct::Association& association : database.associations)
      submit_limits_ = submit_limits_ || association.limits.max_submit_jobs != acct::kUnset ||
                       association.limits.grp_submit_jobs != acct::kUnset;
    for (const acct::Qos& qos : database.qos)
      submit_limits_ = submit_limits_ || qos.limits.max_submit_jobs != acct::kUnset ||
                       qos.limits.grp_submit_jobs != acct::kUnset ||
                       qos.max_submit_per_account != acct::kUnset;
  }
  if (!submit_limits_) return;
  for (const auto& [id, job] : jobs_)
    if (!IsFinal(job->state)) CountActive(job->spec, 1);
}

void Engine::CountActive(const JobSpec& spec, int64_t delta) {
  if (!submit_limits_) return;
  for (int a = Association(spec.account, spec.user); a >= 0; a = associations_[a].parent)
    active_by_association_[a] += delta;
  std::string qos = spec.qos.empty() ? "normal" : spec.qos;
  active_by_qos_[qos] += delta;
  active_by_qos_user_[{qos, spec.user}] += delta;
  active_by_qos_account_[{qos, spec.account}] += delta;
}

std::string Engine::CheckSubmitLimits(const JobSpec& spec, size_t count) const {
  EnforcedAccounting enforced = EnforcedAccountingOf(cluster().settings);
  if (!enforced.limits) return "";
  const acct::Database& database = *accounting_;
  constexpr std::string_view kPolicy =
      "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)";
  auto lookup = [](const auto& map, const auto& key) -> int64_t {
    auto it = map.find(key);
    return it == map.end() ? 0 : it->second;
  };
  auto submit = [&](int64_t limit, int64_t active, std::string_view what) -> std::string {
    if (limit == acct::kUnset || active + static_cast<int64_t>(count) <= limit) return "";
    return fmt::format(
        "{}: {} allows {} jobs pending or running and {} are; submit when some have ended", kPolicy,
        what, limit, active);
  };
  std::string qos_name = spec.qos.empty() ? "normal" : spec.qos;
  const acct::Qos* qos = database.FindQos(qos_name);
  if (submit_limits_) {
    if (qos) {
      for (std::string refusal :
           {submit(qos->limits.max_submit_jobs,
                   lookup(active_by_qos_user_, std::pair(qos_name, spec.user)),
                   fmt::format("MaxSubmitJobsPerUser of QOS {} for user {}", qos_name, spec.user)),
            submit(qos->max_submit_per_account,
                   lookup(active_by_qos_account_, std::pair(qos_name, spec.account)),
                   fmt::format("MaxSubmitJobsPerAccount of QOS {} for account {}", qos_name,
                               spec.account)),
            submit(qos->limits.grp_submit_jobs, lookup(active_by_qos_, qos_name),
                   fmt::format("GrpSubmitJobs of QOS {}", qos_name))})
        if (!refusal.empty()) return refusal;
    }
    if (const acct::Association* own =
            database.FindAssociation(AccountingCluster(), spec.account, spec.user)) {
      auto index = association_index_.find({spec.account, spec.user});
      int a = index == association_index_.end() ? -1 : index->second;
      auto active = [&](int i) {
        return i >= 0 && static_cast<size_t>(i) < active_by_association_.size()
                   ? active_by_association_[i]
                   : 0;
      };
      if (std::string refusal = submit(
              database.Effective(*own).limits.max_submit_jobs, active(a),
              fmt::format("MaxSubmitJobs of user {} under account {}", spec.user, spec.account));
          !refusal.empty())
        return refusal;
      const acct::Association* record = own;
      for (int i = a; i >= 0 && record; i = associations_[i].parent) {
        std::string what = record->is_user()
                               ? fmt::format("GrpSubmitJobs of user {} under account {}",
                                             record->user, record->account)
                               : fmt::format("GrpSubmitJobs of account {}", record->account);
        if (std::string refusal = submit(record->limits.grp_submit_jobs, active(i), what);
            !refusal.empty())
          return refusal;
        record = database.Parent(*record);
      }
    }
  }
  // What the job breaks alone: refused now with DenyOnLimit (and with safe, a budget it could
  // not finish within), instead of pending for ever.
  bool deny = qos && (qos->flags & acct::kDenyOnLimit);
  if (!deny && !enforced.safe) return "";
  int p = spec.partitions.empty() ? cluster().DefaultPartition()
                                  : cluster().FindPartition(spec.partitions.front());
  if (p < 0) return "";
  const PartitionConfig& partition = cluster().partitions[p];
  sched::ResolvedRequest r =
      sched::ResolveRequest(cluster(), spec, partition, sched::MaximaOf(cluster(), partition));
  sched::LimitRequest request;
  request.total = {r.total_cpus, r.total_gpus, static_cast<uint64_t>(r.nodes),
                   r.per_node.memory_mb * static_cast<uint64_t>(r.nodes), 0};
  request.total.billing = static_cast<uint64_t>(
      std::ceil(sched::BillingOf(partition.billing_weights, request.total, spec.gpu_type)));
  request.per_node = {static_cast<uint64_t>(r.per_node.cpus),
                      static_cast<uint64_t>(r.per_node.gpus), 1, r.per_node.memory_mb,
                      request.total.billing / static_cast<uint64_t>(std::max(r.nodes, 1))};
  request.time_limit_seconds = r.time_limit_seconds;
  sched::LimitTracker tracker(associations_, qos_, enforced.safe);
  int qos_index = tracker.FindQos(spec.qos);
  auto index = association_index_.find({spec.account, spec.user});
  int association = index == association_index_.end() ? -1 : index->second;
  // safe without DenyOnLimit: only a GrpTRESMins budget the job could never finish within.
  sched::PendingReason reason = tracker.CheckAlone(qos_index, association, request, !deny);
  if (reason == sched::PendingReason::kNone) return "";
  return fmt::format("{}: the job alone breaks its {} ({}); ask for less or a QOS that allows it",
                     kPolicy, deny ? "limits" : "GrpTRESMins budget",
                     sched::PendingReasonName(reason));
}

}  // namespace drover::ctld
