// The cluster-wide keys of slurm.conf: one table row per key of CONFIG_KEYS.md, each parsing
// its value with Slurm's meaning into ClusterSettings. Keys Slurm documents but Drover does not
// act on are reported by slurm_conf.cc, not here.
#include <fmt/format.h>

#include <algorithm>

#include "common/log.h"
#include "common/slurm_conf.h"
#include "common/tres.h"

namespace drover {
namespace {

using S = ClusterSettings;
using namespace conf;  // NOLINT: the setter builders read best unqualified in the table

SetResult SetControllerHost(S& s, std::string_view value) {
  // "name" or "name(address)"; each SlurmctldHost line adds a backup controller.
  ControllerHost host;
  size_t open = value.find('(');
  if (open == std::string_view::npos) {
    host.name = std::string(value);
  } else {
    if (value.back() != ')') return Invalid(value, "expected NAME or NAME(ADDRESS)");
    host.name = std::string(value.substr(0, open));
    host.address = std::string(value.substr(open + 1, value.size() - open - 2));
    // Drover's "address:port" ("[v6]:port" for an IPv6 address): a controller's own port.
    std::string_view address = host.address;
    size_t colon = address.rfind(':');
    bool bracketed = address.starts_with('[');
    bool has_port =
        colon != std::string_view::npos &&
        (bracketed ? colon > 0 && address[colon - 1] == ']' : address.find(':') == colon);
    if (has_port) {
      std::optional<int64_t> port = ParseInt64(address.substr(colon + 1));
      if (!port || *port < 1 || *port > 65535)
        return Invalid(value, "expected NAME, NAME(ADDRESS) or NAME(ADDRESS:PORT), a port 1-65535");
      host.port = static_cast<int>(*port);
      address = address.substr(0, colon);
    }
    if (address.starts_with('[') && address.ends_with(']'))
      address = address.substr(1, address.size() - 2);
    host.address = std::string(address);
  }
  if (host.name.empty() || (value.find('(') != std::string_view::npos && host.address.empty()))
    return Invalid(value, "expected NAME or NAME(ADDRESS)");
  s.controller_hosts.push_back(std::move(host));
  return std::nullopt;
}

SetResult SetControlAddr(S& s, std::string_view value) {
  if (s.controller_hosts.empty()) s.controller_hosts.push_back({std::string(value), ""});
  s.controller_hosts.front().address = std::string(value);
  return std::nullopt;
}

// SlurmctldPort may be a range ("6817-6818"); the controller listens on the first.
SetResult SetPort(int S::*member, std::string_view value, S& s) {
  std::string_view first = value.substr(0, value.find('-'));
  auto port = ParseInt64(first);
  if (!port || *port < 1 || *port > 65535) return Invalid(value, "expected a port from 1 to 65535");
  s.*member = static_cast<int>(*port);
  return std::nullopt;
}

// SlurmctldDebug: one of Slurm's level names or numbers 0-9 (slurmctld refuses anything else).
SetResult SetDebugLevel(std::string S::*member, std::string_view value, S& s) {
  if (!log::ParseLevel(value))
    return Invalid(value,
                   "expected quiet, fatal, error, info, verbose, debug, debug2, debug3, "
                   "debug4, debug5 or a number from 0 to 9");
  s.*member = std::string(value);
  return std::nullopt;
}

// SlurmctldPidFile / SlurmdPidFile: an absolute path, and that it was set (the daemons write
// a pid file only then).
SetResult SetPidFile(std::string S::*file, bool S::*set, std::string_view value, S& s) {
  if (!value.starts_with('/')) return Invalid(value, "expected an absolute path");
  s.*file = std::string(value);
  s.*set = true;
  return std::nullopt;
}

// DroverControllerListen / DroverAgentListen: an address or host name without a port (the port
// stays SlurmctldPort, SlurmdPort or the node's Port). One colon can only be HOST:PORT; IPv6
// addresses have at least two.
SetResult SetListenHost(std::string S::*member, std::string_view value, S& s) {
  std::string_view host = value;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  size_t colons = std::count(host.begin(), host.end(), ':');
  if (host.empty() || colons == 1 || host.find_first_of(" \t[]/") != std::string_view::npos)
    return Invalid(value,
                   "expected an address or host name without a port, such as 10.0.0.1 or ::1; "
                   "the port is SlurmctldPort or SlurmdPort");
  s.*member = std::string(host);
  return std::nullopt;
}

// A TLS file: the daemons read it wherever they start, so the path must not depend on their
// working directory.
SetResult SetPath(std::string TlsSettings::*member, std::string_view value, S& s) {
  if (!value.starts_with('/')) return Invalid(value, "expected an absolute path");
  s.tls.*member = std::string(value);
  return std::nullopt;
}

// Licenses=foo:4,bar: local licenses, counted by the scheduler.
SetResult SetLicenses(S& s, std::string_view value) {
  Result<std::vector<LicenseCount>> licenses = ParseLicenses(value);
  if (!licenses) return Invalid(value, licenses.error());
  s.licenses = std::move(*licenses);
  return std::nullopt;
}

SetResult SetSelectParameters(S& s, std::string_view value) {
  ResourceSelection selection;
  selection.memory = false;
  using Unit = ResourceSelection::Unit;
  static const std::vector<std::tuple<std::string_view, Unit, bool>> kUnits = {
      {"CR_CPU", Unit::kCpu, false},       {"CR_CPU_Memory", Unit::kCpu, true},
      {"CR_Core", Unit::kCore, false},     {"CR_Core_Memory", Unit::kCore, true},
      {"CR_Socket", Unit::kSocket, false}, {"CR_Socket_Memory", Unit::kSocket, true},
      {"CR_Board", Unit::kBoard, false},   {"CR_Board_Memory", Unit::kBoard, true},
      {"CR_Memory", Unit::kMemory, true},
  };
  for (const std::string& item : Split(value, ',')) {
    std::string_view option = Trim(item);
    bool known = false;
    for (const auto& [name, unit, memory] : kUnits) {
      if (EqualsIgnoreCase(option, name)) {
        selection.unit = unit;
        selection.memory = memory;
        known = true;
      }
    }
    if (EqualsIgnoreCase(option, "CR_Pack_Nodes")) selection.pack_nodes = known = true;
    if (EqualsIgnoreCase(option, "CR_LLN")) selection.least_loaded = known = true;
    // Options that refine task layout but not what is allocated.
    for (std::string_view accepted : {"CR_ONE_TASK_PER_CORE", "CR_CORE_DEFAULT_DIST_BLOCK",
                                      "CR_OTHER_CONS_RES", "CR_OTHER_CONS_TRES"})
      if (EqualsIgnoreCase(option, accepted)) known = true;
    if (!known)
      return Invalid(option,
                     "expected CR_Core, CR_Core_Memory, CR_CPU, CR_CPU_Memory, "
                     "CR_Socket, CR_Memory, CR_Pack_Nodes or CR_LLN");
  }
  s.selection = selection;
  return std::nullopt;
}

// One option of a comma-separated *Parameters value: "name" or "name=argument".
struct ParameterOption {
  std::string name;  // lower case
  std::string_view text, argument;
};

std::vector<ParameterOption> SplitParameterOptions(std::string_view value) {
  std::vector<ParameterOption> options;
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = std::min(value.find(',', start), value.size());
    std::string_view option = Trim(value.substr(start, comma - start));
    start = comma + 1;
    if (option.empty()) continue;
    size_t eq = option.find('=');
    options.push_back({ToLower(option.substr(0, eq)), option,
                       eq == std::string_view::npos ? "" : option.substr(eq + 1)});
  }
  return options;
}

SetResult SetSchedulerParameters(S& s, std::string_view value) {
  SchedulerParameters params;
  struct IntOption {
    std::string_view name;
    int64_t SchedulerParameters::*member;
    int64_t min;
  };
  static const IntOption kIntOptions[] = {
      {"bf_window", &SchedulerParameters::bf_window_minutes, 1},
      {"bf_resolution", &SchedulerParameters::bf_resolution_seconds, 1},
      {"bf_interval", &SchedulerParameters::bf_interval_seconds, -1},
      {"bf_max_job_test", &SchedulerParameters::bf_max_job_test, 1},
      {"bf_max_job_user", &SchedulerParameters::bf_max_job_user, 0},
      {"default_queue_depth", &SchedulerParameters::default_queue_depth, 0},
      {"sched_min_interval", &SchedulerParameters::sched_min_interval_us, 0},
      {"sched_interval", &SchedulerParameters::sched_interval_seconds, -1},
      {"max_switch_wait", &SchedulerParameters::max_switch_wait_seconds, 0},
      {"bf_reservation_depth", &SchedulerParameters::bf_reservation_depth, 1},
      {"max_script_size", &SchedulerParameters::max_script_size, 1},
  };
  for (const ParameterOption& parsed : SplitParameterOptions(value)) {
    const std::string& name = parsed.name;
    std::string_view option = parsed.text, argument = parsed.argument;
    if (name == "bf_continue") {
      params.bf_continue = true;
      continue;
    }
    if (name == "bf_conservative" || name == "drover_conservative") {
      params.conservative = true;
      continue;
    }
    if (name == "enable_user_top") {
      params.enable_user_top = true;
      continue;
    }
    bool matched = false;
    for (const IntOption& known : kIntOptions) {
      if (name != known.name) continue;
      auto number = ParseInt64(argument);
      if (!number || *number < known.min)
        return fmt::format(
            "invalid SchedulerParameters option '{}' (expected {}=NUMBER, at "
            "least {})",
            option, known.name, known.min);
      params.*known.member = *number;
      matched = true;
    }
    if (!matched) params.other[name] = std::string(argument);
  }
  s.scheduler_params = std::move(params);
  return std::nullopt;
}

// SlurmctldParameters: the rl_* rate limit; other options are kept without effect. Slurm
// refuses to start on a value of 0 or below; so does Drover, with the option named.
SetResult SetSlurmctldParameters(S& s, std::string_view value) {
  SlurmctldParameters params;
  RateLimitSettings& limit = params.rate_limit;
  struct UintOption {
    std::string_view name;
    uint32_t RateLimitSettings::*member;
    int64_t min;
  };
  static const UintOption kRateOptions[] = {
      {"rl_bucket_size", &RateLimitSettings::bucket_size, 1},
      {"rl_refill_rate", &RateLimitSettings::refill_rate, 1},
      {"rl_refill_period", &RateLimitSettings::refill_period_seconds, 1},
      {"rl_table_size", &RateLimitSettings::table_size, 1},
      {"rl_log_freq", &RateLimitSettings::log_freq, 0},
  };
  for (const ParameterOption& parsed : SplitParameterOptions(value)) {
    const std::string& name = parsed.name;
    std::string_view option = parsed.text, argument = parsed.argument;
    if (name == "rl_enable") {
      limit.enabled = true;
      continue;
    }
    const UintOption* known = nullptr;
    for (const UintOption& candidate : kRateOptions)
      if (name == candidate.name) known = &candidate;
    if (!known) {
      params.other[name] = std::string(argument);
      continue;
    }
    auto number = ParseInt64(argument);
    if (!number || *number < known->min || *number > UINT32_MAX)
      return fmt::format(
          "invalid SlurmctldParameters option '{}' (expected {}=NUMBER, at least {})", option,
          known->name, known->min);
    limit.*known->member = static_cast<uint32_t>(*number);
  }
  s.controller_params = std::move(params);
  return std::nullopt;
}

SetResult SetWeightTres(S& s, std::string_view value) {
  auto weights = ParseTresWeights(value);
  if (!weights) return weights.error();
  s.weight_tres = std::move(*weights);
  return std::nullopt;
}

SetResult SetPreemptModeKey(S& s, std::string_view value) {
  auto mode = ParsePreemptMode(value);
  if (!mode)
    return Invalid(value,
                   "expected OFF, CANCEL, REQUEUE or SUSPEND, optionally with "
                   ",GANG or ,WITHIN");
  s.preempt_mode = *mode;
  return std::nullopt;
}

// OverTimeLimit is in minutes, or UNLIMITED.
SetResult SetOverTimeLimit(S& s, std::string_view value) {
  if (EqualsIgnoreCase(value, "UNLIMITED") || EqualsIgnoreCase(value, "INFINITE")) {
    s.over_time_limit_minutes = kUnlimitedSeconds;
    return std::nullopt;
  }
  auto minutes = ParseInt64(value);
  if (!minutes || *minutes < 0) return Invalid(value, "expected minutes or UNLIMITED");
  s.over_time_limit_minutes = *minutes;
  return std::nullopt;
}

SetResult SetPurgeJobAfter(S& s, std::string_view value) {
  auto retention = ParseRetention(value);
  if (!retention) return Invalid(value, retention.error().substr(retention.error().find(": ") + 2));
  s.purge_job_after = *retention;
  return std::nullopt;
}

SetResult SetJobRequeue(S& s, std::string_view value) {
  auto number = ParseInt64(value);
  if (!number || (*number != 0 && *number != 1)) return Invalid(value, "expected 0 or 1");
  s.job_requeue = *number == 1;
  return std::nullopt;
}

// Slurm's three names, in any case; anything else is a typo Slurm would silently ignore.
SetResult SetAccountingStoreFlags(S& s, std::string_view value) {
  s.store_job_comment = s.store_job_env = s.store_job_script = false;
  for (const std::string& item : Split(value, ',')) {
    std::string_view flag = Trim(item);
    if (EqualsIgnoreCase(flag, "job_comment")) {
      s.store_job_comment = true;
    } else if (EqualsIgnoreCase(flag, "job_env")) {
      s.store_job_env = true;
    } else if (EqualsIgnoreCase(flag, "job_script")) {
      s.store_job_script = true;
    } else {
      return Invalid(flag, "expected job_comment, job_env or job_script");
    }
  }
  return std::nullopt;
}

// Slurm's only alternative scheme is auth/jwt (for slurmrestd); anything else is a typo.
SetResult SetAuthAltTypes(S& s, std::string_view value) {
  std::vector<std::string> types;
  for (const std::string& item : Split(value, ',')) {
    std::string_view type = Trim(item);
    if (!EqualsIgnoreCase(type, "auth/jwt")) return Invalid(type, "expected auth/jwt");
    types.emplace_back("auth/jwt");
  }
  s.auth_alt_types = std::move(types);
  return std::nullopt;
}

// PrivateData=jobs,usage,...: Slurm 22.05's words, any case.
SetResult SetPrivateData(S& s, std::string_view value) {
  using F = bool PrivateData::*;
  static const std::pair<std::string_view, F> kWords[] = {
      {"accounts", &PrivateData::accounts},
      {"cloud", &PrivateData::cloud},
      {"events", &PrivateData::events},
      {"jobs", &PrivateData::jobs},
      {"nodes", &PrivateData::nodes},
      {"partitions", &PrivateData::partitions},
      {"reservations", &PrivateData::reservations},
      {"usage", &PrivateData::usage},
      {"users", &PrivateData::users}};
  PrivateData data;
  for (const std::string& item : Split(value, ',')) {
    std::string_view word = Trim(item);
    if (word.empty()) continue;
    auto known = std::find_if(std::begin(kWords), std::end(kWords), [&](const auto& entry) {
      return EqualsIgnoreCase(entry.first, word);
    });
    if (known == std::end(kWords))
      return Invalid(value, fmt::format("'{}' is not one of accounts, cloud, events, jobs, nodes, "
                                        "partitions, reservations, usage, users",
                                        word));
    data.*known->second = true;
  }
  s.private_data = data;
  return std::nullopt;
}

std::vector<ConfField<S>> BuildFields() {
  std::vector<ConfField<S>> f = {
      // cluster
      {"ClusterName", String(&S::cluster_name)},
      {"SlurmctldHost", SetControllerHost},
      {"ControlMachine", SetControllerHost},
      {"ControlAddr", SetControlAddr},
      {"SlurmctldPort",
       [](S& s, std::string_view v) { return SetPort(&S::controller_port, v, s); }},
      {"SlurmdPort", [](S& s, std::string_view v) { return SetPort(&S::agent_port, v, s); }},
      {"StateSaveLocation", String(&S::state_save_location)},
      {"SlurmdSpoolDir", String(&S::slurmd_spool_dir)},
      {"SlurmUser", String(&S::slurm_user)},
      {"SlurmctldLogFile", String(&S::controller_log_file)},
      {"SlurmdLogFile", String(&S::agent_log_file)},
      {"SlurmctldDebug",
       [](S& s, std::string_view v) { return SetDebugLevel(&S::controller_debug, v, s); }},
      {"SlurmdDebug",
       [](S& s, std::string_view v) { return SetDebugLevel(&S::agent_debug, v, s); }},
      {"SlurmctldPidFile",
       [](S& s, std::string_view v) {
         return SetPidFile(&S::controller_pid_file, &S::controller_pid_file_set, v, s);
       }},
      {"SlurmdPidFile",
       [](S& s, std::string_view v) {
         return SetPidFile(&S::agent_pid_file, &S::agent_pid_file_set, v, s);
       }},
      {"AuthType", Choice(&S::auth,
                          {{"auth/munge", AuthType::kMunge},
                           {"auth/slurm", AuthType::kHmac},
                           {"auth/drover", AuthType::kHmac},
                           {"auth/none", AuthType::kNone}},
                          "expected auth/munge, auth/slurm or auth/none")},
      {"AuthInfo", String(&S::auth_info)},
      {"AuthAltParameters", String(&S::auth_alt_parameters)},
      {"AuthAltTypes", SetAuthAltTypes},
      {"DisableRootJobs", Bool(&S::disable_root_jobs)},
      {"PrivateData", SetPrivateData},
      {"GroupUpdateTime", Integer(&S::group_update_time_seconds, 0, UINT32_MAX)},
      // Drover's own: listen addresses and TLS (docs/configuration.md)
      {"DroverControllerListen",
       [](S& s, std::string_view v) { return SetListenHost(&S::controller_listen_host, v, s); }},
      {"DroverAgentListen",
       [](S& s, std::string_view v) { return SetListenHost(&S::agent_listen_host, v, s); }},
      {"DroverAgentMetricsPort",
       [](S& s, std::string_view v) -> SetResult {
         auto port = ParseInt64(v);
         if (!port || *port < 0 || *port > 65535)
           return Invalid(v, "expected a port from 1 to 65535 (0: no /metrics)");
         s.agent_metrics_port = static_cast<int>(*port);
         return std::nullopt;
       }},
      {"DroverTLSCertFile",
       [](S& s, std::string_view v) { return SetPath(&TlsSettings::cert_file, v, s); }},
      {"DroverTLSKeyFile",
       [](S& s, std::string_view v) { return SetPath(&TlsSettings::key_file, v, s); }},
      {"DroverTLSCAFile",
       [](S& s, std::string_view v) { return SetPath(&TlsSettings::ca_file, v, s); }},
      {"DroverTLSRequireClientCert",
       [](S& s, std::string_view v) -> SetResult {
         auto yes = ParseBool(v);
         if (!yes) return Invalid(v, "expected YES or NO");
         s.tls.require_client_cert = *yes;
         return std::nullopt;
       }},
      {"DroverTLSServerName",
       [](S& s, std::string_view v) -> SetResult {
         s.tls.server_name = std::string(v);
         return std::nullopt;
       }},
      // Drover's own: where the controller's state is kept
      {"StorageType",
       [](S& s, std::string_view v) -> SetResult {
         if (EqualsIgnoreCase(v, "sqlite"))
           s.storage.kind = StorageKind::kSqlite;
         else if (EqualsIgnoreCase(v, "postgresql") || EqualsIgnoreCase(v, "postgres"))
           s.storage.kind = StorageKind::kPostgres;
         else
           return Invalid(v, "expected sqlite or postgresql");
         return std::nullopt;
       }},
      {"StorageHost",
       [](S& s, std::string_view v) -> SetResult {
         if (v.empty()) return Invalid(v, "expected a host name, an address or a socket folder");
         s.storage.host = std::string(v);
         return std::nullopt;
       }},
      {"StoragePort",
       [](S& s, std::string_view v) -> SetResult {
         std::optional<int64_t> port = ParseInt64(v);
         if (!port || *port < 1 || *port > 65535) return Invalid(v, "expected a port, 1-65535");
         s.storage.port = static_cast<int>(*port);
         return std::nullopt;
       }},
      {"StorageUser",
       [](S& s, std::string_view v) -> SetResult {
         if (v.empty()) return Invalid(v, "expected a PostgreSQL role");
         s.storage.user = std::string(v);
         return std::nullopt;
       }},
      {"StoragePassFile",
       [](S& s, std::string_view v) -> SetResult {
         if (!v.starts_with('/')) return Invalid(v, "expected an absolute path");
         s.storage.pass_file = std::string(v);
         return std::nullopt;
       }},
      // slurmdbd.conf's StoragePass has no place in slurm.conf, which every command on every
      // host reads: refused, and its value never echoed.
      {"StoragePass",
       [](S&, std::string_view) -> SetResult {
         return std::string(
             "a password in slurm.conf is readable by every user of every host; put it on the "
             "first line of a file only the controller's user can read, and name that file "
             "with StoragePassFile");
       }},
      {"StorageLoc",
       [](S& s, std::string_view v) -> SetResult {
         if (v.empty()) return Invalid(v, "expected a database's name");
         s.storage.database = std::string(v);
         return std::nullopt;
       }},
      // resources and selection
      {"SelectType", Choice(&S::select,
                            {{"select/cons_tres", SelectType::kConsTres},
                             {"select/cons_res", SelectType::kConsTres},
                             {"select/linear", SelectType::kLinear}},
                            "expected select/cons_tres or select/linear")},
      {"SelectTypeParameters", SetSelectParameters},
      {"GresTypes", List(&S::gres_types)},
      {"TopologyPlugin", Choice(&S::topology,
                                {{"topology/tree", TopologyKind::kTree},
                                 {"topology/block", TopologyKind::kBlock},
                                 {"topology/flat", TopologyKind::kFlat},
                                 {"topology/default", TopologyKind::kFlat},
                                 {"topology/none", TopologyKind::kFlat}},
                                "expected topology/tree, topology/block or topology/flat")},
      {"TopologyParam", List(&S::topology_params)},
      {"DefMemPerCPU", Memory(&S::def_mem_per_cpu_mb)},
      {"DefMemPerGPU", Memory(&S::def_mem_per_gpu_mb)},
      {"DefMemPerNode", Memory(&S::def_mem_per_node_mb)},
      {"DefCpuPerGPU", Integer(&S::def_cpu_per_gpu, 0, 1 << 20)},
      {"MaxMemPerCPU", Memory(&S::max_mem_per_cpu_mb)},
      {"MaxMemPerNode", Memory(&S::max_mem_per_node_mb)},
      {"ProctrackType", String(&S::proctrack_type)},
      {"TaskPlugin", String(&S::task_plugin)},
      {"JobAcctGatherType", String(&S::job_acct_gather_type)},
      {"JobAcctGatherFrequency", String(&S::job_acct_gather_frequency)},
      {"JobAcctGatherParams", List(&S::job_acct_gather_params)},
      {"DependencyParameters", List(&S::dependency_params)},
      {"MailProg", String(&S::mail_prog)},
      {"MailDomain", String(&S::mail_domain)},
      {"TmpFS", String(&S::tmp_fs)},
      // scheduling and priority
      {"SchedulerType", Choice(&S::scheduler,
                               {{"sched/backfill", SchedulerType::kBackfill},
                                {"sched/builtin", SchedulerType::kBuiltin}},
                               "expected sched/backfill or sched/builtin")},
      {"SchedulerParameters", SetSchedulerParameters},
      {"Licenses", SetLicenses},
      {"SlurmctldParameters", SetSlurmctldParameters},
      {"PriorityType", Choice(&S::priority,
                              {{"priority/basic", PriorityType::kBasic},
                               {"priority/multifactor", PriorityType::kMultifactor}},
                              "expected priority/multifactor or priority/basic")},
      {"PriorityWeightAge", Integer(&S::weight_age, 0, UINT32_MAX)},
      {"PriorityWeightFairshare", Integer(&S::weight_fairshare, 0, UINT32_MAX)},
      {"PriorityWeightJobSize", Integer(&S::weight_job_size, 0, UINT32_MAX)},
      {"PriorityWeightPartition", Integer(&S::weight_partition, 0, UINT32_MAX)},
      {"PriorityWeightQOS", Integer(&S::weight_qos, 0, UINT32_MAX)},
      {"PriorityWeightAssoc", Integer(&S::weight_assoc, 0, UINT32_MAX)},
      {"PriorityWeightTRES", SetWeightTres},
      {"PriorityDecayHalfLife", Duration(&S::decay_half_life_seconds)},
      {"PriorityMaxAge", Duration(&S::priority_max_age_seconds)},
      {"PriorityFavorSmall", Bool(&S::favor_small)},
      {"PriorityFlags", List(&S::priority_flags, /*upper=*/true)},
      {"PriorityCalcPeriod", Duration(&S::priority_calc_period_seconds)},
      {"PriorityUsageResetPeriod",
       Choice(&S::usage_reset, {{"NONE", UsageResetPeriod::kNone},
                                {"NOW", UsageResetPeriod::kNow},
                                {"DAILY", UsageResetPeriod::kDaily},
                                {"WEEKLY", UsageResetPeriod::kWeekly},
                                {"MONTHLY", UsageResetPeriod::kMonthly},
                                {"QUARTERLY", UsageResetPeriod::kQuarterly},
                                {"YEARLY", UsageResetPeriod::kYearly}})},
      {"PreemptType", Choice(&S::preempt,
                             {{"preempt/none", PreemptType::kNone},
                              {"preempt/partition_prio", PreemptType::kPartitionPriority},
                              {"preempt/qos", PreemptType::kQos}},
                             "expected preempt/none, preempt/partition_prio or preempt/qos")},
      {"PreemptMode", SetPreemptModeKey},
      {"PreemptExemptTime", Duration(&S::preempt_exempt_seconds)},
      {"MaxJobCount", Integer(&S::max_job_count, 1, INT64_MAX)},
      {"FirstJobId", Integer(&S::first_job_id, 1, 0x03FFFFFF)},
      {"MaxArraySize", Integer(&S::max_array_size, 0, 4000001)},
      {"MaxStepCount", Integer(&S::max_step_count, 1, UINT32_MAX)},
      {"MinJobAge", Integer(&S::min_job_age_seconds, 0, UINT32_MAX)},
      {"PurgeJobAfter", SetPurgeJobAfter},
      {"OverTimeLimit", SetOverTimeLimit},
      {"JobRequeue", SetJobRequeue},
      {"KillWait", Integer(&S::kill_wait_seconds, 0, 65533)},
      {"BatchStartTimeout", Integer(&S::batch_start_timeout_seconds, 0, 65533)},
      {"TreeWidth", Integer(&S::tree_width, 1, 65533)},
      {"InactiveLimit", Integer(&S::inactive_limit_seconds, 0, 65533)},
      {"EnforcePartLimits", Choice(&S::enforce_part_limits, {{"NO", EnforcePartLimits::kNo},
                                                             {"YES", EnforcePartLimits::kAny},
                                                             {"ANY", EnforcePartLimits::kAny},
                                                             {"ALL", EnforcePartLimits::kAll}})},
      // nodes, health, faults
      {"HealthCheckProgram", String(&S::health_check_program)},
      {"HealthCheckInterval", Integer(&S::health_check_interval_seconds, 0, UINT32_MAX)},
      {"DroverGpuHealthResume", Bool(&S::gpu_health_resume)},
      {"JobContainerType",
       [](S& s, std::string_view v) -> SetResult {
         if (EqualsIgnoreCase(v, "job_container/tmpfs")) {
           s.job_container.tmpfs = true;
         } else if (v.empty() || EqualsIgnoreCase(v, "job_container/none")) {
           s.job_container.tmpfs = false;
         } else {
           return Invalid(v, "expected job_container/tmpfs or job_container/none");
         }
         return std::nullopt;
       }},
      {"HealthCheckNodeState", List(&S::health_check_node_state, /*upper=*/true)},
      {"Prolog", String(&S::prolog)},
      {"Epilog", String(&S::epilog)},
      {"PrologFlags", List(&S::prolog_flags, /*upper=*/true)},
      {"PrologEpilogTimeout", Integer(&S::prolog_epilog_timeout_seconds, 0, 65535)},
      {"SlurmdTimeout", Integer(&S::slurmd_timeout_seconds, 0, 65533)},
      {"SlurmctldTimeout", Integer(&S::slurmctld_timeout_seconds, 0, 65533)},
      {"ReturnToService", Integer(&S::return_to_service, 0, 2)},
      {"MessageTimeout", Integer(&S::message_timeout_seconds, 1, 65533)},
      {"UnkillableStepTimeout", Integer(&S::unkillable_step_timeout_seconds, 0, 65533)},
      {"ResumeTimeout", Integer(&S::resume_timeout_seconds, 0, 65533)},
      {"RebootProgram", String(&S::reboot_program)},
      // accounting
      {"AccountingStorageType", String(&S::accounting_storage_type)},
      {"AccountingStorageEnforce", List(&S::accounting_storage_enforce)},
      {"AccountingStorageTRES", List(&S::accounting_storage_tres)},
      {"AccountingStorageHost", String(&S::accounting_storage_host)},
      {"AccountingStoragePort", Integer(&S::accounting_storage_port, 1, 65535)},
      {"JobCompType", String(&S::job_comp_type)},
      {"AccountingStoreFlags", SetAccountingStoreFlags},
  };
  return f;
}

}  // namespace

const std::vector<ConfField<ClusterSettings>>& ClusterSettingsFields() {
  static const std::vector<ConfField<ClusterSettings>> fields = BuildFields();
  return fields;
}

std::optional<PreemptMode> ParsePreemptMode(std::string_view value) {
  PreemptMode mode;
  bool base_seen = false;
  for (const std::string& item : Split(value, ',')) {
    std::string_view word = Trim(item);
    using Base = PreemptMode::Base;
    std::optional<Base> base;
    if (EqualsIgnoreCase(word, "OFF")) base = Base::kOff;
    if (EqualsIgnoreCase(word, "CANCEL")) base = Base::kCancel;
    if (EqualsIgnoreCase(word, "REQUEUE")) base = Base::kRequeue;
    if (EqualsIgnoreCase(word, "SUSPEND")) base = Base::kSuspend;
    if (base) {
      if (base_seen) return std::nullopt;
      mode.base = *base;
      base_seen = true;
    } else if (EqualsIgnoreCase(word, "GANG")) {
      mode.gang = true;
    } else if (EqualsIgnoreCase(word, "WITHIN")) {
      mode.within = true;
    } else {
      return std::nullopt;
    }
  }
  return mode;
}

std::string FormatPreemptMode(const PreemptMode& mode) {
  static constexpr std::string_view kNames[] = {"OFF", "CANCEL", "REQUEUE", "SUSPEND"};
  std::string out(kNames[static_cast<int>(mode.base)]);
  if (mode.gang) out += mode.base == PreemptMode::Base::kOff ? "GANG" : ",GANG";
  if (mode.base == PreemptMode::Base::kOff && mode.gang) out = "GANG";
  if (mode.within) out += ",WITHIN";
  return out;
}

bool ClusterSettings::fair_tree() const {
  if (priority != PriorityType::kMultifactor) return false;
  for (const std::string& flag : priority_flags)
    if (flag == "NO_FAIR_TREE") return false;
  return true;
}

}  // namespace drover
