// Who may submit what, and where. A submission's owner, group, IDs and array fields are the
// controller's, never the request's; DisableRootJobs, the partitions' access lists (RootOnly,
// AllowGroups, AllowAccounts/DenyAccounts, AllowQos/DenyQos) and a reservation's users decide
// the rest, with Slurm 22.05's refusals (slurmctld's _part_access_check, _valid_job_part_acct).
#include <fmt/format.h>

#include <algorithm>

#include "common/text.h"
#include "ctld/engine/engine.h"

namespace drover::ctld {
namespace {

bool Lists(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// An Allow* list that is unset or says ALL lets everyone in.
bool AllowsAll(const std::vector<std::string>& list) {
  return list.empty() || std::any_of(list.begin(), list.end(), [](const std::string& item) {
           return EqualsIgnoreCase(item, "ALL");
         });
}

std::string Named(const std::string& value) {
  return value.empty() ? "none" : value;
}

// Why this account and QOS may not use the partition; "" when they may.
std::string AccountQosRefusal(const PartitionConfig& partition, const JobSpec& spec) {
  if (!AllowsAll(partition.allow_accounts) && !Lists(partition.allow_accounts, spec.account))
    return fmt::format(
        "Invalid account or account/partition combination specified (partition {} allows "
        "accounts {}, not {}; choose one with --account)",
        partition.name, Join(partition.allow_accounts, ","), Named(spec.account));
  if (!spec.account.empty() && Lists(partition.deny_accounts, spec.account))
    return fmt::format(
        "Invalid account or account/partition combination specified (partition {} denies "
        "account {})",
        partition.name, spec.account);
  if (!AllowsAll(partition.allow_qos) && !Lists(partition.allow_qos, spec.qos))
    return fmt::format(
        "Invalid qos specification (partition {} allows QOS {}, not {}; choose one with --qos)",
        partition.name, Join(partition.allow_qos, ","), Named(spec.qos));
  if (!spec.qos.empty() && Lists(partition.deny_qos, spec.qos))
    return fmt::format("Invalid qos specification (partition {} denies QOS {})", partition.name,
                       spec.qos);
  return "";
}

}  // namespace

std::string PartitionAccessRefusal(const PartitionConfig& partition,
                                   const ClusterSettings& settings, const Caller& caller,
                                   const JobSpec& spec) {
  if (partition.root_only && !IsOperator(caller))
    return fmt::format("Access/permission denied (partition {} is RootOnly)", partition.name);
  if (spec.uid == 0 && partition.disable_root_jobs.value_or(settings.disable_root_jobs))
    return fmt::format("Invalid user id (DisableRootJobs: partition {} runs no job as root)",
                       partition.name);
  if (!AllowsAll(partition.allow_groups) && !IsOperator(caller) &&
      std::none_of(partition.allow_groups.begin(), partition.allow_groups.end(),
                   [&](const std::string& group) { return caller.InGroupNamed(group); }))
    return fmt::format("User's group not permitted to use this partition ({} allows {})",
                       partition.name, Join(partition.allow_groups, ","));
  return AccountQosRefusal(partition, spec);
}

std::string Engine::Admit(const Caller& caller, JobSpec& spec) const {
  spec.job_id = 0;
  spec.array_job_id = 0;
  spec.array_task_id = kNoArrayTask;
  spec.array_max_running = 0;
  spec.submit_time = 0;
  // Operators (root, SlurmUser) may submit for another user, as Slurm's --uid/--gid; everyone
  // else submits as themselves, in one of their own groups. uid 0 in a spec means unset: only
  // root submits jobs that run as root.
  bool on_behalf = IsOperator(caller) && spec.uid != 0 && spec.uid != caller.uid;
  if (!on_behalf) {
    spec.uid = caller.uid;
    if (!caller.user.empty()) spec.user = caller.user;
    if (spec.gid == 0 && !caller.InGroup(0)) spec.gid = caller.gid;
    if (!caller.InGroup(spec.gid) && !IsOperator(caller))
      return fmt::format(
          "Invalid group id (you are not a member of group {}; leave --gid out or "
          "name one of your groups)",
          spec.gid);
  }
  if (spec.user.empty()) spec.user = std::to_string(spec.uid);
  if (spec.hold == HoldKind::kAdmin && !IsOperator(caller)) spec.hold = HoldKind::kUser;
  // As Slurm: only operators and administrators set a job's priority.
  if (spec.priority != 0 && !IsOperator(caller)) return "Access/permission denied";
  if (std::string refusal = AdmitAccounting(spec); !refusal.empty()) return refusal;
  return AdmitPartitions(caller, spec);
}

std::string Engine::AdmitPartitions(const Caller& caller, JobSpec& spec) const {
  const ClusterConfig& config = cluster();
  std::vector<std::string> names = spec.partitions;
  if (names.empty()) {
    if (config.DefaultPartition() < 0) return "";  // Validate says what is missing
    names.push_back(config.partitions[config.DefaultPartition()].name);
  }
  // As Slurm: of several partitions, those the job may not use are dropped while one remains.
  std::vector<std::string> usable;
  std::string first_refusal;
  for (const std::string& name : names) {
    int p = config.FindPartition(name);
    std::string refusal =
        p < 0 ? "" : PartitionAccessRefusal(config.partitions[p], config.settings, caller, spec);
    // State=DRAIN and INACTIVE take no new jobs (DOWN takes them; they wait).
    if (p >= 0 && (config.partitions[p].state == PartitionState::kDrain ||
                   config.partitions[p].state == PartitionState::kInactive))
      refusal = "Required partition not available (inactive or drain)";
    if (refusal.empty()) {
      usable.push_back(name);
    } else if (first_refusal.empty()) {
      first_refusal = std::move(refusal);
    }
  }
  if (usable.empty()) return first_refusal;
  if (!spec.partitions.empty()) spec.partitions = std::move(usable);
  return "";
}

std::string Engine::UpdatedPartitionRefusal(const Caller& caller, const JobSpec& spec) const {
  const ClusterConfig& config = cluster();
  for (const std::string& name : spec.partitions)
    if (int p = config.FindPartition(name); p >= 0)
      if (std::string refusal =
              PartitionAccessRefusal(config.partitions[p], config.settings, caller, spec);
          !refusal.empty())
        return refusal;
  return "";
}

}  // namespace drover::ctld
