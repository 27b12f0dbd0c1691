// Accounting in the engine: sacctmgr's changes (operators and users with an AdminLevel), the
// association tree and QOS the scheduler reads, and what a submission's account and QOS must
// satisfy under AccountingStorageEnforce (slurmctld's assoc_mgr_fill_in_assoc and
// _valid_job_part_acct, in Slurm 22.05's words).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "common/accounting_settings.h"
#include "common/text.h"
#include "ctld/engine/engine.h"

namespace drover::ctld {
namespace {

sched::Qos SchedulerQos(const acct::Qos& qos) {
  sched::Qos out;
  out.name = qos.name;
  out.priority = qos.priority;
  out.max_tres_per_user = qos.max_tres_per_user;
  out.max_jobs_per_user =
      qos.limits.max_jobs == acct::kUnset
          ? 0
          : static_cast<uint32_t>(std::min<int64_t>(qos.limits.max_jobs, UINT32_MAX));
  out.max_wall_seconds =
      qos.limits.max_wall_minutes == acct::kUnset ? 0 : qos.limits.max_wall_minutes * 60;
  out.grp_tres = qos.limits.grp_tres;
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
  std::map<std::pair<std::string, std::string>, double> usage;
  for (const sched::Association& association : associations_)
    usage[{association.account, association.user}] = association.usage;
  associations_.clear();
  association_index_.clear();
  associations_.push_back({"root", "", -1, 1, usage[{"root", ""}], {}, 0});
  association_index_[{"root", ""}] = 0;
  const acct::Database& database = *accounting_;
  for (const auto& [record, depth] : database.Hierarchy(AccountingCluster())) {
    if (depth == 0) {  // root
      associations_[0].shares = record->shares;
      associations_[0].grp_tres = record->limits.grp_tres;
      continue;
    }
    std::string parent_account = record->is_user() ? record->account : record->parent;
    acct::Association effective = database.Effective(*record);
    sched::Association association;
    association.account = record->account;
    association.user = record->user;
    association.parent = association_index_.at({parent_account, ""});  // parents come first
    association.shares = record->shares;
    association.usage = usage[{record->account, record->user}];
    association.grp_tres = record->limits.grp_tres;
    association.max_jobs =
        effective.limits.max_jobs == acct::kUnset
            ? 0
            : static_cast<uint32_t>(std::min<int64_t>(effective.limits.max_jobs, UINT32_MAX));
    association_index_[{record->account, record->user}] = static_cast<int>(associations_.size());
    associations_.push_back(std::move(association));
  }
  // Usage of jobs whose account and user accounting does not know (nothing enforced) stays
  // with the associations Association() makes for them.
  for (const auto& [key, value] : usage) {
    if (value != 0 && !association_index_.count(key) && !key.second.empty())
      associations_[Association(key.first, key.second)].usage = value;
  }
  qos_.clear();
  for (const acct::Qos& qos : database.qos) qos_.push_back(SchedulerQos(qos));
  // As Slurm: association and QOS limits hold only with AccountingStorageEnforce=limits.
  if (!EnforcedAccountingOf(cluster().settings).limits) {
    for (sched::Association& association : associations_) {
      association.grp_tres = TresList();
      association.max_jobs = 0;
    }
    for (sched::Qos& qos : qos_) {
      qos.max_tres_per_user = TresList();
      qos.max_jobs_per_user = 0;
      qos.max_wall_seconds = 0;
      qos.grp_tres = TresList();
    }
  }
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
  if (!enforced.qos || spec.qos.empty()) return "";
  if (!database.FindQos(spec.qos) ||
      std::find(effective.qos.begin(), effective.qos.end(), spec.qos) == effective.qos.end())
    return fmt::format("Invalid qos specification (account {} of user {} may use QOS {}, not {})",
                       spec.account, spec.user,
                       effective.qos.empty() ? "none" : Join(effective.qos, ","), spec.qos);
  return "";
}

}  // namespace drover::ctld
