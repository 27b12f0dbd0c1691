// sbatch's options and their handlers; see sbatch_option_table.h.
#include "cli/sbatch/sbatch_option_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <utility>

#include "cli/sbatch/sbatch_values.h"
#include "common/duration.h"
#include "common/login_environment.h"
#include "common/mail_type.h"
#include "common/memory_size.h"
#include "common/resource_limits.h"
#include "common/slurm_time.h"
#include "common/text.h"

namespace drover::cli::sbatch {
namespace {

// "--name" as messages give it; an alias speaks as the option it spells.
std::string Spelled(const Use& use) {
  return fmt::format("--{}", use.def->alias_of.empty() ? use.def->name : use.def->alias_of);
}

Status NoEffect(const Use& use, Settings& s) {
  s.NoEffect(use.def->name);
  return OkStatus();
}

// An option for a feature Drover does not have, which Slurm on a cluster without that feature
// (no burst buffer plugin, no federation, no power management, ...) also accepts and ignores;
// docs/cli.md and src/cli/coverage/sbatch.tsv say which and why.
Status WithoutFeature(const Use&, Settings&) {
  return OkStatus();
}

// --use-min-nodes: Drover always allocates the smallest node count of a range (NodeCount in
// sched/request.cc), which is what the option asks of Slurm.
Status SmallestNodeCount(const Use&, Settings&) {
  return OkStatus();
}

// --uid and --gid: root submits a job that runs as someone else (the controller checks again).
Status SetRunUser(const Use& use, Settings& s) {
  if (use.in->uid != 0) return Fail(fmt::format("{} only permitted by root user", Spelled(use)));
  std::optional<UserEntry> user = LookUpUser(Trim(use.text()));
  if (!user) return Fail(fmt::format("Invalid {} specification", Spelled(use)));
  s.run_uid = user->uid;
  s.run_user = user->name;
  s.run_uid_group = user->gid;
  return OkStatus();
}

Status SetRunGroup(const Use& use, Settings& s) {
  if (use.in->uid != 0) return Fail(fmt::format("{} only permitted by root user", Spelled(use)));
  std::optional<uint32_t> gid = LookUpGroup(Trim(use.text()));
  if (!gid) return Fail(fmt::format("Invalid {} specification", Spelled(use)));
  s.run_gid = *gid;
  return OkStatus();
}

// Slurm's --priority: a number below NO_VAL, or TOP for the highest.
Status SetPriority(const Use& use, Settings& s) {
  constexpr uint64_t kNoVal = 0xfffffffe;
  std::string_view text = Trim(use.text());
  if (EqualsIgnoreCase(text, "TOP")) {
    s.priority = static_cast<uint32_t>(kNoVal - 1);
    return OkStatus();
  }
  if (text.starts_with('-')) return Fail("Priority must be >= 0");
  std::optional<uint64_t> value = ParseUint64(text);
  if (!value) return Fail(fmt::format("Invalid {} specification", Spelled(use)));
  if (*value >= kNoVal) return Fail(fmt::format("Priority must be < {}", kNoVal));
  s.priority = static_cast<uint32_t>(*value);
  return OkStatus();
}

// Options Slurm's sbatch hands on to the job's steps in a variable, and the variable.
constexpr std::pair<std::string_view, std::string_view> kPassedOn[] = {
    {"cpu-freq", "SLURM_CPU_FREQ_REQ"},
    {"distribution", "SLURM_DISTRIBUTION"},
    {"gpu-bind", "SLURM_GPU_BIND"},
    {"gpu-freq", "SLURM_GPU_FREQ"},
    {"gpus-per-socket", "SLURM_GPUS_PER_SOCKET"},
    {"mem-bind", "SBATCH_MEM_BIND"},
    {"ntasks-per-core", "SLURM_NTASKS_PER_CORE"},
    {"ntasks-per-gpu", "SLURM_NTASKS_PER_GPU"},
    {"ntasks-per-socket", "SLURM_NTASKS_PER_SOCKET"},
    {"overcommit", "SLURM_OVERCOMMIT"},
    {"profile", "SLURM_PROFILE"},
};

Status PassOn(const Use& use, Settings& s) {
  for (auto [option, variable] : kPassedOn)
    if (option == use.def->name) s.variables[std::string(variable)] = use.value.value_or("1");
  return OkStatus();
}

Status PassOnValid(const Use& use, Settings& s, bool valid) {
  if (!valid) return Fail(fmt::format("Invalid {} specification", Spelled(use)));
  return PassOn(use, s);
}

// -m: block, cyclic, arbitrary, plane=N or *, then :node[:socket] methods, then ,Pack/NoPack.
Status SetDistribution(const Use& use, Settings& s) {
  std::string text(Trim(use.text()));
  std::string methods = text.substr(0, text.find(','));
  std::string pack = text.size() > methods.size() ? ToLower(text.substr(methods.size() + 1)) : "";
  std::vector<std::string> levels = Split(methods, ':');
  std::string first = levels.empty() ? "" : ToLower(levels[0]);
  bool valid = (pack.empty() || pack == "pack" || pack == "nopack") && levels.size() <= 3;
  if (first.starts_with("plane=")) {
    std::optional<uint64_t> size = ParseUint64(std::string_view(first).substr(6));
    valid = valid && size && *size > 0;
    if (valid) s.variables["SLURM_DIST_PLANESIZE"] = std::to_string(*size);
  } else {
    valid =
        valid && (first == "block" || first == "cyclic" || first == "arbitrary" || first == "*");
  }
  for (size_t i = 1; i < levels.size(); ++i) {
    std::string level = ToLower(levels[i]);
    valid = valid && (level == "block" || level == "cyclic" || level == "fcyclic" || level == "*");
  }
  if (!valid) return Fail(fmt::format("Invalid {} specification", Spelled(use)));
  s.variables["SLURM_DISTRIBUTION"] = first.starts_with("plane=") ? "plane" : text;
  return OkStatus();
}

// --cpu-freq: low, medium, high, highm1 or kHz, an optional -max, and an optional :governor.
Status SetCpuFreq(const Use& use, Settings& s) {
  auto frequency = [](std::string_view word) {
    std::string lower = ToLower(std::string(word));
    return lower == "low" || lower == "medium" || lower == "high" || lower == "highm1" ||
           ParseUint64(word).has_value();
  };
  auto governor = [](std::string_view word) {
    std::string lower = ToLower(std::string(word));
    return lower == "conservative" || lower == "ondemand" || lower == "performance" ||
           lower == "powersave" || lower == "userspace" || lower == "schedutil";
  };
  std::string_view text = Trim(use.text());
  std::string_view range = text.substr(0, text.find(':'));
  std::string_view gov = range.size() < text.size() ? text.substr(range.size() + 1) : "";
  size_t dash = range.find('-');
  bool valid = range.empty() ? governor(gov)
               : dash == std::string_view::npos
                   ? frequency(range) || governor(range)
                   : frequency(range.substr(0, dash)) && frequency(range.substr(dash + 1));
  if (!gov.empty() && !range.empty()) valid = valid && governor(gov);
  return PassOnValid(use, s, valid);
}

// --mem-bind: SBATCH_MEM_BIND as given, with its type, list and verbosity apart.
Status SetMemBind(const Use& use, Settings& s) {
  std::string type, list, verbose = "quiet";
  for (const std::string& word : Split(use.text(), ',')) {
    std::string lower = ToLower(word);
    if (lower == "v" || lower == "verbose") {
      verbose = "verbose";
    } else if (!list.empty() && std::all_of(lower.begin(), lower.end(), [](char c) {
                 return std::isxdigit(static_cast<unsigned char>(c)) || c == 'x' || c == '*';
               })) {
      list += "," + word;  // map_mem:0,1: the list goes on after the comma
    } else if (lower == "q" || lower == "quiet" || lower == "prefer" || lower == "sort" ||
               lower == "nosort") {
      continue;
    } else if (lower == "none" || lower == "no" || lower == "local" || lower == "rank" ||
               lower.starts_with("map_mem:") || lower.starts_with("mask_mem:")) {
      size_t colon = lower.find(':');
      type = lower.substr(0, colon);
      if (colon != std::string::npos) list = word.substr(colon + 1);
    } else {
      return Fail(fmt::format("Invalid {} specification", Spelled(use)));
    }
  }
  s.variables["SBATCH_MEM_BIND_TYPE"] = type.empty() ? "" : type + (list.empty() ? "" : ":");
  s.variables["SBATCH_MEM_BIND_LIST"] = list;
  s.variables["SBATCH_MEM_BIND_VERBOSE"] = verbose;
  return PassOn(use, s);
}

Status SetTaskLayoutCount(const Use& use, Settings& s) {
  Result<uint32_t> count = ParseCount(use.text(), Spelled(use));
  if (!count) return std::move(count).take_error();
  if (use.def->name == "ntasks-per-gpu") s.ntasks_per_gpu = *count;
  return PassOn(use, s);
}

Status SetGpusPerSocket(const Use& use, Settings& s) {
  Result<GpuCount> gpus = ParseGpuCount(use.text(), Spelled(use));
  if (!gpus) return std::move(gpus).take_error();
  s.gpus_per_socket = gpus->count;
  return PassOn(use, s);
}

Status SetOvercommit(const Use& use, Settings& s) {
  s.overcommit = true;
  return PassOn(use, s);
}

// --acctg-freq: N (the task sampling interval) or datatype=N, comma-separated.
Status SetAcctgFreq(const Use& use, Settings& s) {
  bool valid = true;
  for (const std::string& item : Split(use.text(), ',')) {
    size_t equals = item.find('=');
    std::string type = equals == std::string::npos ? "task" : ToLower(item.substr(0, equals));
    std::string_view seconds = std::string_view(item).substr(equals + 1);
    valid = valid && ParseUint64(equals == std::string::npos ? item : seconds).has_value() &&
            (type == "task" || type == "energy" || type == "network" || type == "filesystem");
  }
  if (!valid) return Fail(fmt::format("Invalid {} specification", Spelled(use)));
  return WithoutFeature(use, s);
}

Status SetDelayBoot(const Use& use, Settings& s) {
  if (!ParseTimeLimit(use.text()))
    return Fail(fmt::format("Invalid {} specification", Spelled(use)));
  return WithoutFeature(use, s);
}

Status SetWaitAllNodes(const Use& use, Settings& s) {
  std::string_view text = Trim(use.text());
  if (text != "0" && text != "1")
    return Fail(fmt::format("Invalid {} specification", Spelled(use)));
  return WithoutFeature(use, s);
}

// --bbf: sbatch reads the file into the script's #BB lines; with no burst buffer plugin they
// are then ignored, as Slurm ignores them.
Status SetBurstBufferFile(const Use& use, Settings& s) {
  if (!use.in->read_file(Absolute(use.text(), use.in->cwd)))
    return Fail(fmt::format("Unable to open file {}", use.text()));
  return WithoutFeature(use, s);
}

Status SetTime(const Use& use, std::optional<int64_t>& field) {
  std::optional<int64_t> limit = ParseTimeLimit(use.text());
  if (!limit) return Fail(fmt::format("Invalid {} specification", Spelled(use)));
  field = *limit;
  return OkStatus();
}

Status SetDate(const Use& use, std::optional<int64_t>& field) {
  std::optional<int64_t> time = ParseSlurmTime(use.text(), use.in->now);
  if (!time || *time == 0) return Fail(fmt::format("Invalid {} specification", Spelled(use)));
  field = *time;
  return OkStatus();
}

Status SetMemory(const Use& use, std::optional<Sourced<uint64_t>>& field, Settings& s) {
  Result<uint64_t> megabytes = ParseMemoryMB(use.text());
  if (!megabytes) return Fail(fmt::format("Invalid {} specification", Spelled(use)));
  if (*megabytes == 0)
    s.Notice(fmt::format(
        "sbatch: warning: {}=0 (all of a node's memory in Slurm) is not supported by Drover; "
        "the partition's default memory applies",
        Spelled(use)));
  field = Sourced<uint64_t>{*megabytes, use.source};
  return OkStatus();
}

Status SetGpus(const Use& use, std::optional<GpuCount>& field) {
  Result<GpuCount> gpus = ParseGpuCount(use.text(), Spelled(use));
  if (!gpus) return std::move(gpus).take_error();
  field = std::move(*gpus);
  return OkStatus();
}

Status SetCount(const Use& use, std::optional<uint32_t>& field) {
  Result<uint32_t> count = ParseCount(use.text(), Spelled(use));
  if (!count) return std::move(count).take_error();
  field = *count;
  return OkStatus();
}

Status SetSourcedCount(const Use& use, std::optional<Sourced<uint32_t>>& field) {
  Result<uint32_t> count = ParseCount(use.text(), Spelled(use));
  if (!count) return std::move(count).take_error();
  field = Sourced<uint32_t>{*count, use.source};
  return OkStatus();
}

Status SetNodeList(const Use& use, std::optional<std::vector<std::string>>& field, bool file) {
  Result<std::vector<std::string>> names = ParseHostNames(use.text(), Spelled(use), *use.in, file);
  if (!names) return std::move(names).take_error();
  field = std::move(*names);
  return OkStatus();
}

Status SetExclusive(const Use& use, Settings& s) {
  std::string mode = use.value ? ToLower(*use.value) : "exclusive";
  if (mode == "user" || mode == "mcs" || mode == "topo")
    s.Notice(
        fmt::format("sbatch: warning: --exclusive={} is treated as --exclusive in Drover", mode));
  else if (mode != "exclusive" && mode != "oversubscribe")
    return Fail("Invalid --exclusive specification");
  s.exclusive = Sourced<bool>{mode != "oversubscribe", use.source};
  return OkStatus();
}

Status SetGres(const Use& use, Settings& s) {
  if (EqualsIgnoreCase(use.text(), "none")) {
    s.gres = std::vector<GresSpec>{};
    return OkStatus();
  }
  if (EqualsIgnoreCase(use.text(), "help") || EqualsIgnoreCase(use.text(), "list"))
    return Fail("--gres=help is not supported by Drover; sinfo -o %G lists the configured GRES");
  std::vector<std::string> items = SplitTopLevel(use.text());
  for (std::string& item : items)
    if (item.starts_with("gres/")) item.erase(0, 5);
  Result<std::vector<GresSpec>> gres = ParseGres(Join(items, ","));
  if (!gres)
    return Fail(fmt::format("Invalid generic resource (gres) specification: {}", gres.error()));
  s.gres = std::move(*gres);
  return OkStatus();
}

Status SetNice(const Use& use, Settings& s) {
  constexpr int64_t kLimit = 2147483645;  // Slurm's NICE_OFFSET - 3
  std::optional<int64_t> nice = use.value ? ParseInt64(Trim(*use.value)) : 100;
  if (!nice)
    return Fail(fmt::format("Invalid --nice value \"{}\" (expected an integer)", *use.value));
  if (*nice > kLimit || *nice < -kLimit)
    return Fail(fmt::format("Invalid --nice value, out of range (+/- {})", kLimit));
  s.nice = static_cast<int32_t>(*nice);
  return OkStatus();
}

Status SetSignal(const Use& use, Settings& s) {
  bool reservation = false;
  std::optional<SignalRequest> signal = ParseSignalOption(use.text(), reservation);
  if (!signal) return Fail("Invalid --signal specification");
  // R: lets the job overlap a reservation with MaxStartDelay set; Drover's reservations have
  // none, so R: changes nothing, as on a Slurm cluster whose reservations set none.
  (void)reservation;
  s.signal = *signal;
  return OkStatus();
}

Status SetSwitches(const Use& use, Settings& s) {
  size_t at = use.text().find('@');
  Result<uint32_t> count = ParseCount(use.text().substr(0, at), "--switches");
  if (!count) return std::move(count).take_error();
  if (at != std::string::npos) {
    Result<int64_t> wait = ParseDuration(use.text().substr(at + 1));
    if (!wait || *wait == kUnlimitedSeconds) return Fail("Invalid --switches specification");
    s.switch_wait = *wait;
  }
  s.switches = *count;
  return OkStatus();
}

Status SetOpenMode(const Use& use, Settings& s) {
  char mode = use.text().empty() ? '\0' : static_cast<char>(std::tolower(use.text()[0]));
  if (mode != 'a' && mode != 't') return Fail("Invalid --open-mode specification");
  s.open_mode = mode;  // the agent opens the job's files to append or truncate
  return OkStatus();
}

Status SetPartitions(const Use& use, Settings& s) {
  std::vector<std::string> names = Split(use.text(), ',');
  std::erase_if(names, [](const std::string& name) { return name.empty(); });
  s.partitions = std::move(names);
  return OkStatus();
}

Status SetSegment(const Use& use, Settings& s) {
  std::optional<uint64_t> size = ParseUint64(Trim(use.text()));
  if (!size || *size > 0xffff) return Fail("Invalid --segment specification");
  s.segment = static_cast<uint32_t>(*size);
  return OkStatus();
}

Status SetDependency(const Use& use, Settings& s) {
  Result<DependencySpec> dependency = ParseDependency(use.text());
  if (!dependency) return Fail(dependency.error());
  s.dependency = std::move(*dependency);
  return OkStatus();
}

template <std::optional<std::string> Settings::*field>
Status SetText(const Use& use, Settings& s) {
  s.*field = use.text();
  return OkStatus();
}

template <std::optional<std::string> Settings::*field>
Status SetIoPath(const Use& use, Settings& s) {
  s.*field = IoPath(use.text());
  return OkStatus();
}

template <bool Settings::*field>
Status SetFlag(const Use&, Settings& s) {
  s.*field = true;
  return OkStatus();
}

template <std::optional<uint32_t> Settings::*field>
Status SetCountOf(const Use& use, Settings& s) {
  return SetCount(use, s.*field);
}

template <std::optional<Sourced<uint32_t>> Settings::*field>
Status SetSourcedCountOf(const Use& use, Settings& s) {
  return SetSourcedCount(use, s.*field);
}

template <std::optional<Sourced<uint64_t>> Settings::*field>
Status SetMemoryOf(const Use& use, Settings& s) {
  return SetMemory(use, s.*field, s);
}

template <std::optional<GpuCount> Settings::*field>
Status SetGpusOf(const Use& use, Settings& s) {
  return SetGpus(use, s.*field);
}

template <std::optional<int64_t> Settings::*field>
Status SetTimeOf(const Use& use, Settings& s) {
  return SetTime(use, s.*field);
}

template <bool from_file>
Status SetNodeListOf(const Use& use, Settings& s) {
  return SetNodeList(use, s.nodelist, from_file);
}

// One level of -B (or --sockets-per-node and its kin): a minimum "N", a range "N-M" (its
// minimum is what node selection uses), or "*" for any.
Status SetLevel(const Use& use, std::string_view text, std::optional<uint32_t>& field) {
  std::string_view value = Trim(text);
  if (value == "*") {
    field.reset();
    return OkStatus();
  }
  std::string_view low = value.substr(0, value.find('-'));
  std::optional<uint64_t> minimum = ParseUint64(low);
  std::optional<uint64_t> maximum =
      low.size() < value.size() ? ParseUint64(value.substr(low.size() + 1)) : minimum;
  if (!minimum || !maximum || *minimum == 0 || *maximum < *minimum || *minimum > 0xffff)
    return Fail(fmt::format("Invalid {} specification", Spelled(use)));
  field = static_cast<uint32_t>(*minimum);
  return OkStatus();
}

template <std::optional<uint32_t> Settings::*field>
Status SetLevelOf(const Use& use, Settings& s) {
  return SetLevel(use, use.text(), s.*field);
}

// --threads-per-core is -B's third level, and Slurm also hands it to the job's steps.
Status SetThreadsPerCore(const Use& use, Settings& s) {
  if (Status ok = SetLevel(use, use.text(), s.threads_per_core); !ok) return ok;
  s.variables["SLURM_THREADS_PER_CORE"] = std::string(Trim(use.text()));
  return OkStatus();
}

Status SetExtraNodeInfo(const Use& use, Settings& s) {
  std::vector<std::string> levels = Split(use.text(), ':');
  if (levels.empty() || levels.size() > 3)
    return Fail(fmt::format("Invalid {} specification", Spelled(use)));
  std::optional<uint32_t>* fields[] = {&s.sockets_per_node, &s.cores_per_socket,
                                       &s.threads_per_core};
  for (size_t i = 0; i < levels.size(); ++i)
    if (Status ok = SetLevel(use, levels[i], *fields[i]); !ok) return ok;
  return OkStatus();
}

Status SetTmp(const Use& use, Settings& s) {
  Result<uint64_t> megabytes = ParseMemoryMB(use.text());
  if (!megabytes) return Fail(fmt::format("Invalid {} specification", Spelled(use)));
  s.tmp_mb = *megabytes;
  return OkStatus();
}

Status SetVerbose(const Use& use, Settings& s) {
  s.verbose = true;
  return NoEffect(use, s);
}

// --propagate[=rlimit[,rlimit...]]: checked here; the command reads the limits once it knows
// slurm.conf (its PropagateResourceLimits apply when the option is not given).
Status SetPropagate(const Use& use, Settings& s) {
  std::string list = use.value.value_or("");
  if (!list.empty() && !ParseLimitList(list))
    return Fail(fmt::format("--propagate={} is not valid.", list));
  s.propagate = list;
  return OkStatus();
}

// --get-user-env[=timeout][S|L]: the agent reads the user's login environment for the job.
Status SetGetUserEnv(const Use& use, Settings& s) {
  std::string value = use.value.value_or("8");  // sbatch(1): 8 seconds by default
  if (value.empty()) value = "8";
  if (auto request = ParseUserEnvironmentRequest(value); !request) return Fail(request.error());
  s.get_user_env = value;
  return OkStatus();
}

Status SetRequeue(const Use& use, Settings& s) {
  s.requeue = use.def->name == "requeue";
  return OkStatus();
}

Status SetChdir(const Use& use, Settings& s) {
  s.work_dir = Absolute(use.text(), use.in->cwd);
  return OkStatus();
}

Status SetNodes(const Use& use, Settings& s) {
  Result<NodeRange> range = ParseNodeRange(use.text());
  if (!range) return std::move(range).take_error();
  s.nodes = *range;
  return OkStatus();
}

Status SetBegin(const Use& use, Settings& s) {
  return SetDate(use, s.begin);
}

Status SetDeadline(const Use& use, Settings& s) {
  return SetDate(use, s.deadline);
}

Status SetExclude(const Use& use, Settings& s) {
  return SetNodeList(use, s.exclude, false);
}

Status SetOversubscribe(const Use& use, Settings& s) {
  s.oversubscribe = use.source;
  return OkStatus();
}

// Slurm 22.05's two flags; the scheduler honours enforce-binding (sched/node_pool.cc).
Status SetGresFlags(const Use& use, Settings& s) {
  std::string flags = ToLower(Trim(use.text()));
  if (flags != "enforce-binding" && flags != "disable-binding")
    return Fail(fmt::format("Invalid {} specification", Spelled(use)));
  s.gres_flags = flags;
  return OkStatus();
}

Status SetKillOnInvalidDep(const Use& use, Settings& s) {
  if (EqualsIgnoreCase(use.text(), "yes"))
    s.kill_on_invalid_dep = 1;
  else if (EqualsIgnoreCase(use.text(), "no"))
    s.kill_on_invalid_dep = 2;
  else
    return Fail(fmt::format("Invalid {} specification", Spelled(use)));
  return OkStatus();
}

Status SetMailType(const Use& use, Settings& s) {
  std::optional<uint32_t> types = ParseMailTypes(use.text());
  if (!types) return Fail(fmt::format("Invalid {} specification", Spelled(use)));
  s.mail_type = *types ? MailTypeText(*types) : "";
  return OkStatus();
}

// -k/--no-kill[=off]: "off" or "no" turns it off again, as in Slurm.
Status SetNoKill(const Use& use, Settings& s) {
  std::string_view value = use.value ? Trim(*use.value) : std::string_view();
  if (value.empty() || EqualsIgnoreCase(value, "set"))
    s.no_kill = true;
  else if (EqualsIgnoreCase(value, "off") || EqualsIgnoreCase(value, "no"))
    s.no_kill = false;
  else
    return Fail(fmt::format("Invalid {} specification", Spelled(use)));
  return OkStatus();
}

// SBATCH_REQ_SWITCH and SBATCH_WAIT4SWITCH, which have no option of their own.
Status SetSwitchCount(const Use& use, Settings& s) {
  Result<uint32_t> count = ParseCount(use.text(), "--switches");
  if (!count) return std::move(count).take_error();
  s.switches = *count;
  return OkStatus();
}

Status SetSwitchWait(const Use& use, Settings& s) {
  Result<int64_t> wait = ParseDuration(use.text());
  if (!wait || *wait == kUnlimitedSeconds) return Fail("Invalid --switches specification");
  s.switch_wait = *wait;
  return OkStatus();
}

}  // namespace

// Slurm's names, letters and argument kinds, alphabetical as in slurm_opt.c.
const std::vector<OptionDef>& Options() {
  using A = Arg;
  using S = Settings;
  static const std::vector<OptionDef> kOptions = {
      {"account", 'A', A::kRequired, SetText<&S::account>},
      {"acctg-freq", 0, A::kRequired, SetAcctgFreq},
      {"array", 'a', A::kRequired, SetText<&S::array>},
      {"batch", 0, A::kRequired, SetText<&S::batch_features>},
      {"bb", 0, A::kRequired, WithoutFeature},
      {"bbf", 0, A::kRequired, SetBurstBufferFile},
      {"begin", 'b', A::kRequired, SetBegin},
      {"chdir", 'D', A::kRequired, SetChdir},
      {"cluster", 0, A::kRequired, SetText<&S::clusters>, false, "clusters"},
      {"cluster-constraint", 0, A::kRequired, WithoutFeature},
      {"clusters", 'M', A::kRequired, SetText<&S::clusters>},
      {"comment", 0, A::kRequired, SetText<&S::comment>},
      {"constraint", 'C', A::kRequired, SetText<&S::constraint>},
      {"container", 0, A::kRequired, NoEffect},
      {"container-id", 0, A::kRequired, NoEffect},
      {"context", 0, A::kRequired, NoEffect},
      {"contiguous", 0, A::kNone, SetFlag<&S::contiguous>},
      {"core-spec", 'S', A::kRequired, NoEffect},
      {"cores-per-socket", 0, A::kRequired, SetLevelOf<&S::cores_per_socket>},
      {"cpu-freq", 0, A::kRequired, SetCpuFreq},
      {"cpus-per-gpu", 0, A::kRequired, SetSourcedCountOf<&S::cpus_per_gpu>},
      {"cpus-per-task", 'c', A::kRequired, SetSourcedCountOf<&S::cpus_per_task>},
      {"deadline", 0, A::kRequired, SetDeadline},
      {"delay-boot", 0, A::kRequired, SetDelayBoot},
      {"dependency", 'd', A::kRequired, SetDependency},
      {"distribution", 'm', A::kRequired, SetDistribution},
      {"error", 'e', A::kRequired, SetIoPath<&S::stderr_path>},
      {"exclude", 'x', A::kRequired, SetExclude},
      {"exclusive", 0, A::kOptional, SetExclusive},
      {"export", 0, A::kRequired, SetText<&S::export_env>},
      {"export-file", 0, A::kRequired, SetText<&S::export_file>},
      {"extra", 0, A::kRequired, NoEffect},
      {"extra-node-info", 'B', A::kRequired, SetExtraNodeInfo},
      {"get-user-env", 0, A::kOptional, SetGetUserEnv},
      {"gid", 0, A::kRequired, SetRunGroup},
      {"gpu-bind", 0, A::kRequired, PassOn},
      {"gpu-freq", 0, A::kRequired, PassOn},
      {"gpus", 'G', A::kRequired, SetGpusOf<&S::gpus>},
      {"gpus-per-node", 0, A::kRequired, SetGpusOf<&S::gpus_per_node>},
      {"gpus-per-socket", 0, A::kRequired, SetGpusPerSocket},
      {"gpus-per-task", 0, A::kRequired, SetGpusOf<&S::gpus_per_task>},
      {"gres", 0, A::kRequired, SetGres},
      {"gres-flags", 0, A::kRequired, SetGresFlags},
      {"help", 'h', A::kNone, nullptr, true},
      {"hint", 0, A::kRequired, NoEffect},
      {"hold", 'H', A::kNone, SetFlag<&S::hold>},
      {"ignore-pbs", 0, A::kNone, SetFlag<&S::ignore_pbs>},
      {"input", 'i', A::kRequired, SetIoPath<&S::stdin_path>},
      {"job-name", 'J', A::kRequired, SetText<&S::name>},
      {"kill-on-invalid-dep", 0, A::kRequired, SetKillOnInvalidDep},
      {"licenses", 'L', A::kRequired, SetText<&S::licenses>},
      {"mail-type", 0, A::kRequired, SetMailType},
      {"mail-user", 0, A::kRequired, SetText<&S::mail_user>},
      {"mcs-label", 0, A::kRequired, SetText<&S::mcs_label>},
      {"mem", 0, A::kRequired, SetMemoryOf<&S::mem>},
      {"mem-bind", 0, A::kRequired, SetMemBind},
      {"mem-per-cpu", 0, A::kRequired, SetMemoryOf<&S::mem_per_cpu>},
      {"mem-per-gpu", 0, A::kRequired, SetMemoryOf<&S::mem_per_gpu>},
      {"mincpus", 0, A::kRequired, SetCountOf<&S::mincpus>},
      {"network", 0, A::kRequired, WithoutFeature},
      {"nice", 0, A::kOptional, SetNice},
      {"no-kill", 'k', A::kOptional, SetNoKill},
      {"no-requeue", 0, A::kNone, SetRequeue},
      {"nodefile", 'F', A::kRequired, SetNodeListOf<true>},
      {"nodelist", 'w', A::kRequired, SetNodeListOf<false>},
      {"nodes", 'N', A::kRequired, SetNodes},
      {"ntasks", 'n', A::kRequired, SetCountOf<&S::ntasks>},
      {"ntasks-per-core", 0, A::kRequired, SetTaskLayoutCount},
      {"ntasks-per-gpu", 0, A::kRequired, SetTaskLayoutCount},
      {"ntasks-per-node", 0, A::kRequired, SetCountOf<&S::ntasks_per_node>},
      {"ntasks-per-socket", 0, A::kRequired, SetTaskLayoutCount},
      {"ntasks-per-tres", 0, A::kRequired, NoEffect},
      {"open-mode", 0, A::kRequired, SetOpenMode},
      {"output", 'o', A::kRequired, SetIoPath<&S::stdout_path>},
      {"overcommit", 'O', A::kNone, SetOvercommit},
      {"oversubscribe", 's', A::kNone, SetOversubscribe},
      {"parsable", 0, A::kNone, SetFlag<&S::parsable>},
      {"partition", 'p', A::kRequired, SetPartitions},
      {"power", 0, A::kRequired, WithoutFeature},
      {"prefer", 0, A::kRequired, SetText<&S::prefer>},
      {"priority", 0, A::kRequired, SetPriority},
      {"profile", 0, A::kRequired, PassOn},
      {"propagate", 0, A::kOptional, SetPropagate},
      {"qos", 'q', A::kRequired, SetText<&S::qos>},
      {"quiet", 'Q', A::kNone, SetFlag<&S::quiet>, true},
      {"reboot", 0, A::kNone, WithoutFeature},
      {"requeue", 0, A::kNone, SetRequeue},
      {"reservation", 0, A::kRequired, SetText<&S::reservation>},
      {"segment", 0, A::kRequired, SetSegment},
      {"signal", 0, A::kRequired, SetSignal},
      {"sockets-per-node", 0, A::kRequired, SetLevelOf<&S::sockets_per_node>},
      {"spread-job", 0, A::kNone, SetFlag<&S::spread_job>},
      {"stepmgr", 0, A::kNone, NoEffect},
      {"switches", 0, A::kRequired, SetSwitches},
      {"tasks-per-node", 0, A::kRequired, SetCountOf<&S::ntasks_per_node>, false,
       "ntasks-per-node"},
      {"test-only", 0, A::kNone, SetFlag<&S::test_only>},
      {"thread-spec", 0, A::kRequired, NoEffect},
      {"threads-per-core", 0, A::kRequired, SetThreadsPerCore},
      {"time", 't', A::kRequired, SetTimeOf<&S::time_limit>},
      {"time-min", 0, A::kRequired, SetTimeOf<&S::time_min>},
      {"tmp", 0, A::kRequired, SetTmp},
      {"tres-bind", 0, A::kRequired, NoEffect},
      {"tres-per-task", 0, A::kRequired, NoEffect},
      {"uid", 0, A::kRequired, SetRunUser},
      {"usage", 0, A::kNone, nullptr, true},
      {"use-min-nodes", 0, A::kNone, SmallestNodeCount},
      {"verbose", 'v', A::kNone, SetVerbose, true},
      {"version", 'V', A::kNone, nullptr, true},
      {"wait", 'W', A::kNone, SetFlag<&S::wait>},
      {"wait-all-nodes", 0, A::kRequired, SetWaitAllNodes},
      {"wckey", 0, A::kRequired, WithoutFeature},
      {"wrap", 0, A::kRequired, SetText<&S::wrap>, true},
      // Environment-only: SBATCH_REQ_SWITCH and SBATCH_WAIT4SWITCH.
      {"", 0, A::kRequired, SetSwitchCount},
      {"", 0, A::kRequired, SetSwitchWait},
  };
  return kOptions;
}

const OptionDef& Option(std::string_view name) {
  for (const OptionDef& def : Options())
    if (def.name == name) return def;
  throw std::logic_error(fmt::format("no sbatch option --{}", name));
}

Status Apply(Use use, const Inputs& in, Settings& s) {
  use.in = &in;
  return use.def->handler(use, s);
}

// Appends where a value came from to the first line of an error.
Error WithOrigin(Error error, std::string_view origin) {
  size_t newline = error.message.find('\n');
  error.message.insert(newline == std::string::npos ? error.message.size() : newline,
                       fmt::format(" ({})", origin));
  return error;
}

ScannedOptions ScanSbatchOptions(std::span<const std::string> args) {
  // The table as getopt reads it, entry for entry.
  static const std::vector<OptionSpec> specs = [] {
    std::vector<OptionSpec> all;
    for (const OptionDef& def : Options()) all.push_back({def.letter, def.name, def.arg});
    return all;
  }();
  OptionScan scan =
      ScanOptions(args, specs, {.stop_at_operand = true, .quote_whole_argument = true});
  ScannedOptions out;
  for (OptionUse& use : scan.uses) {
    const OptionDef& def = Options()[static_cast<size_t>(use.spec - specs.data())];
    out.uses.emplace_back(Use{&def, std::move(use.value), Source::kCommandLine, nullptr},
                          use.argument);
  }
  out.operands = scan.operands.empty() ? args.size() : scan.operands.front();
  if (scan.error) {
    out.error = fmt::format("sbatch: {}\n{}", *scan.error, kTryHelp);
    out.error_at = scan.error_argument;
  }
  return out;
}

}  // namespace drover::cli::sbatch
