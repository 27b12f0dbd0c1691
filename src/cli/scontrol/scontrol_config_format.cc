// `scontrol show config`: the slurm.conf keys Drover reads, with their effective values (the
// file's or Slurm's defaults), in the order and "%-23s = %s" form Slurm 22.05 prints them. Keys
// Drover does not read are left out rather than printed with values it does not honour.
#include <fmt/format.h>

#include "cli/scontrol/scontrol_format.h"
#include "common/duration.h"
#include "common/licenses.h"
#include "common/slurm_conf.h"
#include "common/text.h"

namespace drover::cli::scontrol {
namespace {

std::string OrNull(const std::string& text) {
  return text.empty() ? "(null)" : text;
}

std::string Seconds(int64_t seconds) {
  return fmt::format("{} sec", seconds);
}

std::string ListOrNull(const std::vector<std::string>& items) {
  return OrNull(Join(items, ","));
}

std::string HhMmSs(int64_t seconds) {
  return seconds >= kUnlimitedSeconds ? "UNLIMITED" : FormatDurationPadded(seconds);
}

std::string SelectTypeParameters(const ResourceSelection& selection) {
  static constexpr std::string_view kUnits[] = {"CR_CORE", "CR_CPU", "CR_MEMORY", "CR_SOCKET",
                                                "CR_BOARD"};
  std::string out(kUnits[static_cast<int>(selection.unit)]);
  if (selection.memory && selection.unit != ResourceSelection::Unit::kMemory) out += "_MEMORY";
  if (selection.pack_nodes) out += ",CR_PACK_NODES";
  if (selection.least_loaded) out += ",CR_LLN";
  return out;
}

std::string SchedulerParametersText(const SchedulerParameters& p) {
  const SchedulerParameters defaults;
  std::vector<std::string> items;
  auto add = [&](std::string_view name, int64_t value, int64_t fallback) {
    if (value != fallback) items.push_back(fmt::format("{}={}", name, value));
  };
  add("bf_window", p.bf_window_minutes, defaults.bf_window_minutes);
  add("bf_resolution", p.bf_resolution_seconds, defaults.bf_resolution_seconds);
  add("bf_interval", p.bf_interval_seconds, defaults.bf_interval_seconds);
  if (p.bf_continue) items.push_back("bf_continue");
  add("bf_max_job_test", p.bf_max_job_test, defaults.bf_max_job_test);
  add("bf_max_job_user", p.bf_max_job_user, defaults.bf_max_job_user);
  add("default_queue_depth", p.default_queue_depth, defaults.default_queue_depth);
  add("sched_min_interval", p.sched_min_interval_us, defaults.sched_min_interval_us);
  add("sched_interval", p.sched_interval_seconds, defaults.sched_interval_seconds);
  add("max_switch_wait", p.max_switch_wait_seconds, defaults.max_switch_wait_seconds);
  for (const auto& [key, value] : p.other)
    items.push_back(value.empty() ? key : fmt::format("{}={}", key, value));
  return ListOrNull(items);
}

std::string PriorityWeightTres(const ClusterSettings& s) {
  std::vector<std::string> items;
  for (const auto& [name, weight] : s.weight_tres)
    items.push_back(fmt::format("{}={}", name, weight));
  return ListOrNull(items);
}

std::string UsageResetText(UsageResetPeriod period) {
  static constexpr std::string_view kNames[] = {"NONE",    "NOW",       "DAILY", "WEEKLY",
                                                "MONTHLY", "QUARTERLY", "YEARLY"};
  return std::string(kNames[static_cast<int>(period)]);
}

std::vector<std::pair<std::string, std::string>> Keys(const ClusterConfig& cluster,
                                                      std::string_view conf_path) {
  const ClusterSettings& s = cluster.settings;
  bool multifactor = s.priority == PriorityType::kMultifactor;
  std::vector<std::pair<std::string, std::string>> keys = {
      {"AccountingStorageEnforce",
       s.accounting_storage_enforce.empty() ? "none" : Join(s.accounting_storage_enforce, ",")},
      {"AccountingStorageHost", OrNull(s.accounting_storage_host)},
      {"AccountingStoragePort", std::to_string(s.accounting_storage_port)},
      {"AccountingStorageTRES", ListOrNull(s.accounting_storage_tres)},
      {"AccountingStorageType", s.accounting_storage_type},
      {"AuthType", s.auth == AuthType::kMunge  ? "auth/munge"
                   : s.auth == AuthType::kHmac ? "auth/slurm"
                                               : "auth/none"},
      {"ClusterName", OrNull(s.cluster_name)},
      {"DefMemPerCPU", s.def_mem_per_cpu_mb ? std::to_string(s.def_mem_per_cpu_mb) : ""},
      {"DefMemPerNode", s.def_mem_per_node_mb ? std::to_string(s.def_mem_per_node_mb) : ""},
      {"EnforcePartLimits", s.enforce_part_limits == EnforcePartLimits::kNo    ? "NO"
                            : s.enforce_part_limits == EnforcePartLimits::kAny ? "ANY"
                                                                               : "ALL"},
      {"Epilog", OrNull(s.epilog)},
      {"FirstJobId", std::to_string(s.first_job_id)},
      {"GresTypes", ListOrNull(s.gres_types)},
      {"HealthCheckInterval", Seconds(s.health_check_interval_seconds)},
      {"HealthCheckNodeState", Join(s.health_check_node_state, ",")},
      {"HealthCheckProgram", OrNull(s.health_check_program)},
      {"InactiveLimit", Seconds(s.inactive_limit_seconds)},
      {"JobAcctGatherFrequency", s.job_acct_gather_frequency},
      {"JobAcctGatherType", s.job_acct_gather_type},
      {"JobCompType", s.job_comp_type},
      {"JobRequeue", s.job_requeue ? "1" : "0"},
      {"KillWait", Seconds(s.kill_wait_seconds)},
      {"Licenses", OrNull(FormatLicenses(s.licenses))},
      {"MaxArraySize", std::to_string(s.max_array_size)},
      {"MaxJobCount", std::to_string(s.max_job_count)},
      {"MaxMemPerNode",
       s.max_mem_per_node_mb ? std::to_string(s.max_mem_per_node_mb) : "UNLIMITED"},
      {"MaxNodeCount", std::to_string(cluster.nodes.size())},
      {"MessageTimeout", Seconds(s.message_timeout_seconds)},
      {"MinJobAge", Seconds(s.min_job_age_seconds)},
      {"OverTimeLimit", s.over_time_limit_minutes >= kUnlimitedSeconds
                            ? "UNLIMITED"
                            : fmt::format("{} min", s.over_time_limit_minutes)},
      {"PreemptMode", FormatPreemptMode(s.preempt_mode)},
      {"PreemptType", s.preempt == PreemptType::kNone                ? "preempt/none"
                      : s.preempt == PreemptType::kPartitionPriority ? "preempt/partition_prio"
                                                                     : "preempt/qos"},
      {"PreemptExemptTime", HhMmSs(s.preempt_exempt_seconds)},
  };
  if (multifactor) {
    keys.insert(keys.end(), {{"PriorityParameters", "(null)"},
                             {"PriorityDecayHalfLife", HhMmSs(s.decay_half_life_seconds)},
                             {"PriorityCalcPeriod", HhMmSs(s.priority_calc_period_seconds)},
                             {"PriorityFavorSmall", s.favor_small ? "Yes" : "No"},
                             {"PriorityFlags", Join(s.priority_flags, ",")},
                             {"PriorityMaxAge", HhMmSs(s.priority_max_age_seconds)},
                             {"PriorityUsageResetPeriod", UsageResetText(s.usage_reset)},
                             {"PriorityType", "priority/multifactor"},
                             {"PriorityWeightAge", std::to_string(s.weight_age)},
                             {"PriorityWeightAssoc", std::to_string(s.weight_assoc)},
                             {"PriorityWeightFairShare", std::to_string(s.weight_fairshare)},
                             {"PriorityWeightJobSize", std::to_string(s.weight_job_size)},
                             {"PriorityWeightPartition", std::to_string(s.weight_partition)},
                             {"PriorityWeightQOS", std::to_string(s.weight_qos)},
                             {"PriorityWeightTRES", PriorityWeightTres(s)}});
  } else {
    keys.push_back({"PriorityType", "priority/basic"});
  }
  std::string controller = "(null)";
  if (!s.controller_hosts.empty()) {
    const ControllerHost& host = s.controller_hosts.front();
    controller = host.address.empty() ? host.name : fmt::format("{}({})", host.name, host.address);
  }
  keys.insert(
      keys.end(),
      {{"ProctrackType", s.proctrack_type},
       {"Prolog", OrNull(s.prolog)},
       {"PrologEpilogTimeout", s.prolog_epilog_timeout_seconds
                                   ? std::to_string(s.prolog_epilog_timeout_seconds)
                                   : "65534"},
       {"PrologFlags", ListOrNull(s.prolog_flags)},
       {"ResumeTimeout", Seconds(s.resume_timeout_seconds)},
       {"ReturnToService", std::to_string(s.return_to_service)},
       {"SchedulerParameters", SchedulerParametersText(s.scheduler_params)},
       {"SchedulerType",
        s.scheduler == SchedulerType::kBackfill ? "sched/backfill" : "sched/builtin"},
       {"SelectType", s.select == SelectType::kConsTres ? "select/cons_tres" : "select/linear"},
       {"SelectTypeParameters", SelectTypeParameters(s.selection)},
       {"SlurmUser", s.slurm_user},
       {"SlurmctldDebug", s.controller_debug},
       {"SlurmctldHost[0]", controller},
       {"SlurmctldLogFile", OrNull(s.controller_log_file)},
       {"SlurmctldPort", std::to_string(s.controller_port)},
       {"SlurmctldTimeout", Seconds(s.slurmctld_timeout_seconds)},
       {"SlurmdDebug", s.agent_debug},
       {"SlurmdLogFile", OrNull(s.agent_log_file)},
       {"SlurmdPidFile", s.agent_pid_file},
       {"SlurmdPort", std::to_string(s.agent_port)},
       {"SlurmdSpoolDir", s.slurmd_spool_dir},
       {"SlurmdTimeout", Seconds(s.slurmd_timeout_seconds)},
       {"SlurmctldPidFile", s.controller_pid_file},
       {"SLURM_CONF", std::string(conf_path)},
       {"StateSaveLocation", s.state_save_location},
       {"TaskPlugin", s.task_plugin},
       {"TmpFS", s.tmp_fs},
       {"TopologyParam", ListOrNull(s.topology_params)},
       {"TopologyPlugin", s.topology == TopologyKind::kTree    ? "topology/tree"
                          : s.topology == TopologyKind::kBlock ? "topology/block"
                                                               : "topology/default"},
       {"UnkillableStepTimeout", Seconds(s.unkillable_step_timeout_seconds)}});
  return keys;
}

}  // namespace

std::string ConfigText(const ClusterConfig& cluster, int64_t now, std::string_view conf_path) {
  std::string out = "Configuration data as of " + columns::IsoTime(now) + "\n";
  for (const auto& [key, value] : Keys(cluster, conf_path)) {
    if (value.empty() && (key == "DefMemPerCPU" || key == "DefMemPerNode")) continue;
    out += fmt::format("{:<23} = {}\n", key, value);
  }
  if (!cluster.settings.def_mem_per_cpu_mb && !cluster.settings.def_mem_per_node_mb)
    out.insert(out.find("EnforcePartLimits"), fmt::format("{:<23} = UNLIMITED\n", "DefMemPerNode"));
  return out;
}

}  // namespace drover::cli::scontrol
