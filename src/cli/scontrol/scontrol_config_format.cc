// `scontrol show config`: the slurm.conf keys Drover reads, with their effective values (the
// file's or Slurm's defaults), in the order and "%-23s = %s" form Slurm 22.05 prints them. Keys
// Drover does not read are left out rather than printed with values it does not honour. And
// `scontrol write config`: the same keys, the nodes and the partitions as a slurm.conf.
#include <fmt/format.h>

#include <algorithm>

#include "cli/scontrol/scontrol_format.h"
#include "common/duration.h"
#include "common/gres.h"
#include "common/hostlist.h"
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

namespace {

// slurm_write_ctl_conf's sections and the keys each holds; the rest go to OTHER.
struct Section {
  std::string_view title;
  std::vector<std::string_view> keys;
};
const std::vector<Section>& Sections() {
  static const std::vector<Section> kSections = {
      {"CONTROL",
       {"ControlMachine", "ControlAddr", "ClusterName", "SlurmUser", "SlurmdUser", "SlurmctldHost",
        "SlurmctldPort", "SlurmdPort", "BackupAddr", "BackupController"}},
      {"LOGGING & OTHER PATHS",
       {"StateSaveLocation", "SlurmdSpoolDir", "SlurmctldLogFile", "SlurmdLogFile",
        "SlurmctldPidFile", "SlurmdPidFile", "SlurmSchedLogFile", "SlurmEventHandlerLogfile"}},
      {"ACCOUNTING",
       {"AccountingStorageBackupHost", "AccountingStorageEnforce", "AccountingStorageHost",
        "AccountingStoragePort", "AccountingStorageType", "AccountingStorageUser",
        "AccountingStoreFlags", "AcctGatherEnergyType", "AcctGatherFilesystemType",
        "AcctGatherInterconnectType", "AcctGatherNodeFreq", "AcctGatherProfileType",
        "JobAcctGatherFrequency", "JobAcctGatherType"}},
      {"SCHEDULING & ALLOCATION",
       {"SelectType", "SelectTypeParameters", "SchedulerParameters", "SchedulerTimeSlice",
        "SchedulerType", "SlurmSchedLogLevel", "PreemptMode", "PreemptParameters", "PreemptType",
        "PreemptExemptTime", "PriorityType", "FastSchedule"}},
      {"TOPOLOGY", {"TopologyPlugin"}},
      {"TIMERS",
       {"SlurmctldTimeout", "SlurmdTimeout", "InactiveLimit", "MinJobAge", "KillWait",
        "BatchStartTimeout", "CompleteWait", "EpilogMsgTime", "GetEnvTimeout", "Waittime"}},
      {"POWER",
       {"SuspendExcNodes", "SuspendExcParts", "SuspendExcStates", "SuspendProgram", "SuspendRate",
        "SuspendTime", "SuspendTimeout", "ResumeProgram", "ResumeRate", "ResumeTimeout"}},
      {"DEBUG", {"SlurmctldDebug", "SlurmdDebug", "DebugFlags"}},
      {"EPILOG & PROLOG",
       {"Epilog", "Prolog", "SrunProlog", "SrunEpilog", "TaskEpilog", "TaskProlog"}},
      {"PROCESS TRACKING", {"ProcTrackType"}},
      {"RESOURCE CONFINEMENT", {"TaskPlugin", "TaskPluginParam"}},
  };
  return kSections;
}

// Programs are written whole; other values only up to their first space or '(' ("60 sec").
bool IsProgramKey(std::string_view key) {
  for (std::string_view program :
       {"Epilog", "EpilogSlurmctld", "HealthCheckProgram", "MailProg", "Prolog", "PrologSlurmctld",
        "RebootProgram", "ResumeProgram", "ResvEpilog", "ResvProlog", "SrunEpilog", "SrunProlog",
        "SuspendProgram", "TaskEpilog", "TaskProlog", "UnkillableStepProgram"})
    if (EqualsIgnoreCase(key, program)) return true;
  return false;
}

// One key as a slurm.conf line: "#Key=" for a value that means unset.
std::string ConfLine(std::string_view key, const std::string& value) {
  std::string name(key.substr(0, key.find('[')));
  if (value.empty() || EqualsIgnoreCase(value, "(null type)") ||
      EqualsIgnoreCase(value, "(null)") || EqualsIgnoreCase(value, "N/A") ||
      (EqualsIgnoreCase(key, "DefMemPerNode") && EqualsIgnoreCase(value, "UNLIMITED")) ||
      (EqualsIgnoreCase(key, "CpuFreqDef") && EqualsIgnoreCase(value, "Unknown")))
    return "#" + name + "=";
  std::string written = value;
  if (!IsProgramKey(key)) {
    size_t start = written.find_first_not_of(" (");
    written = start == std::string::npos ? "" : written.substr(start);
    written = written.substr(0, written.find_first_of(" ("));
  }
  if (written.find(' ') != std::string::npos) return fmt::format("{}=\"{}\"", name, written);
  return name + "=" + written;
}

// The title centred in a box of 48 '#', as _write_group_header draws it.
std::string GroupHeader(std::string_view title) {
  const int width = 48, length = static_cast<int>(title.size());
  const int left = (width - length) / 2 - 1, right = left + (width - length) % 2;
  std::string rule(width, '#');
  return fmt::format("#\n{}\n#{}{}{}#\n{}\n", rule, std::string(std::max(left, 0), ' '), title,
                     std::string(std::max(right, 0), ' '), rule);
}

// A node's fields after its name, as slurm_write_ctl_conf collects them; nodes whose fields
// match share one NodeName line.
std::string NodeFields(const ClusterConfig& cluster, const NodeConfig& config,
                       const v1::NodeStatus* live) {
  std::string fields;
  if (!config.hostname.empty() && config.hostname != config.name)
    fields += " NodeHostName=" + config.hostname;
  if (!config.address.empty() && config.address != config.name)
    fields += " NodeAddr=" + config.address;
  fields += fmt::format(" Sockets={} CoresPerSocket={} ThreadsPerCore={}", config.sockets,
                        config.cores_per_socket, config.threads_per_core);
  if (!config.gres.empty()) fields += " Gres=" + FormatGres(config.gres);
  if (config.real_memory_mb > 1) fields += fmt::format(" RealMemory={}", config.real_memory_mb);
  if (config.tmp_disk_mb) fields += fmt::format(" TmpDisk={}", config.tmp_disk_mb);
  uint32_t weight = live && live->weight() ? live->weight() : config.weight;
  if (weight != 1) fields += fmt::format(" Weight={}", weight);
  std::string features =
      live && !live->features().empty() ? live->features() : Join(config.features, ",");
  if (!features.empty()) fields += " Feature=" + features;
  if (config.port && config.port != cluster.settings.agent_port)
    fields += fmt::format(" Port={}", config.port);
  return fields;
}

std::string PartitionLine(const v1::Partition& partition, const PartitionConfig* config) {
  static const PartitionConfig kDefaults;
  const PartitionConfig& c = config ? *config : kDefaults;
  std::string line = "PartitionName=" + partition.name();
  if (!c.allow_accounts.empty()) line += " AllowAccounts=" + Join(c.allow_accounts, ",");
  if (!c.allow_groups.empty()) line += " AllowGroups=" + Join(c.allow_groups, ",");
  if (!c.allow_qos.empty()) line += " AllowQos=" + Join(c.allow_qos, ",");
  if (partition.is_default()) line += " Default=YES";
  if (c.def_mem_per_cpu_mb) line += fmt::format(" DefMemPerCPU={}", *c.def_mem_per_cpu_mb);
  if (c.allow_accounts.empty() && !c.deny_accounts.empty())
    line += " DenyAccounts=" + Join(c.deny_accounts, ",");
  if (c.allow_qos.empty() && !c.deny_qos.empty()) line += " DenyQos=" + Join(c.deny_qos, ",");
  if (partition.default_time_seconds() >= 0)
    line += " DefaultTime=" + TimeLimitText(partition.default_time_seconds());
  if (c.disable_root_jobs.value_or(false)) line += " DisableRootJobs=YES";
  if (c.exclusive_user) line += " ExclusiveUser=YES";
  if (partition.grace_time_seconds())
    line += fmt::format(" GraceTime={}", partition.grace_time_seconds());
  if (partition.hidden()) line += " Hidden=YES";
  if (c.least_loaded) line += " LLN=YES";
  if (c.max_cpus_per_node != kUnlimitedCount)
    line += fmt::format(" MaxCPUsPerNode={}", c.max_cpus_per_node);
  if (c.max_mem_per_node_mb) line += fmt::format(" MaxMemPerNode={}", *c.max_mem_per_node_mb);
  if (partition.max_nodes() && partition.max_nodes() != kUnlimitedCount)
    line += fmt::format(" MaxNodes={}", partition.max_nodes());
  if (partition.max_time_seconds() < kUnlimitedSeconds)
    line += " MaxTime=" + TimeLimitText(partition.max_time_seconds());
  if (partition.min_nodes() != 1) line += fmt::format(" MinNodes={}", partition.min_nodes());
  if (!partition.node_list().empty()) line += " Nodes=" + partition.node_list();
  if (c.preempt_mode && !partition.preempt_mode().empty())
    line += " PreemptMode=" + partition.preempt_mode();
  if (partition.priority_job_factor() != 1)
    line += fmt::format(" PriorityJobFactor={}", partition.priority_job_factor());
  if (partition.priority_tier() != 1)
    line += fmt::format(" PriorityTier={}", partition.priority_tier());
  if (!partition.qos().empty()) line += " QOS=" + partition.qos();
  if (partition.root_only()) line += " RootOnly=YES";
  const std::string& share = partition.over_subscribe();
  if (share == "EXCLUSIVE" || share.starts_with("FORCE:") ||
      (share.starts_with("YES:") && share != "YES:1"))
    line += " OverSubscribe=" + share;
  line += " State=" + (partition.state().empty() ? std::string("UP") : partition.state());
  if (!c.billing_weights.empty()) line += " TRESBillingWeights=" + BillingWeightsText(c);
  return line;
}

}  // namespace

std::string WriteConfigText(const ClusterConfig& cluster, std::span<const v1::NodeStatus> nodes,
                            std::span<const v1::Partition> partitions, std::string_view stamp,
                            std::string_view conf_path) {
  std::string banner(56, '#');
  std::string out =
      fmt::format("{}\n#  Configuration file for Slurm - {}  #\n{}\n#\n#\n", banner, stamp, banner);
  std::vector<std::vector<std::string>> grouped(Sections().size() + 1);
  for (const auto& [key, value] : Keys(cluster, conf_path)) {
    if (key == "BOOT_TIME" || key == "HASH_VAL" || key == "MULTIPLE_SLURMD" ||
        key == "NEXT_JOB_ID" || key == "SLURM_CONF" || key == "SLURM_VERSION")
      continue;
    std::string shown = value;
    if (key == "DefMemPerNode" && value.empty() && !cluster.settings.def_mem_per_cpu_mb)
      shown = "UNLIMITED";
    size_t section = Sections().size();  // OTHER
    for (size_t i = 0; i < Sections().size() && section == Sections().size(); ++i)
      for (std::string_view member : Sections()[i].keys)
        if (EqualsIgnoreCase(member, key)) section = i;
    grouped[section].push_back(ConfLine(key, shown));
  }
  for (size_t i = 0; i <= Sections().size(); ++i) {
    out += GroupHeader(i < Sections().size() ? Sections()[i].title : "OTHER");
    for (const std::string& line : grouped[i]) out += line + "\n";
  }
  out += GroupHeader("NODES");
  std::vector<std::pair<std::string, std::vector<std::string>>> records;  // fields, names
  for (const NodeConfig& config : cluster.nodes) {
    const v1::NodeStatus* live = nullptr;
    for (const v1::NodeStatus& node : nodes)
      if (node.name() == config.name) live = &node;
    std::string fields = NodeFields(cluster, config, live);
    auto same = std::find_if(records.begin(), records.end(),
                             [&](const auto& record) { return record.first == fields; });
    if (same == records.end())
      records.push_back({fields, {config.name}});
    else
      same->second.push_back(config.name);
  }
  for (const auto& [fields, names] : records)
    out += "NodeName=" + CompressHostlist(names) + fields + "\n";
  out += GroupHeader("PARTITIONS");
  for (const v1::Partition& partition : partitions) {
    int index = cluster.FindPartition(partition.name());
    out += PartitionLine(partition, index >= 0 ? &cluster.partitions[index] : nullptr) + "\n";
  }
  return out;
}

}  // namespace drover::cli::scontrol
