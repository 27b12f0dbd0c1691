// See step_binding.h.
#include "cli/srun/step_binding.h"

#include <fmt/format.h>

#include <cstdio>

#include "common/hostlist.h"
#include "common/task_binding.h"
#include "common/task_layout.h"
#include "common/text.h"

namespace drover::cli {
namespace {

constexpr char kHintHelp[] =
    "Application hint options:\n"
    "    --hint=             Bind tasks according to application hints\n"
    "        compute_bound   use all cores in each socket\n"
    "        memory_bound    use only one core in each socket\n"
    "        [no]multithread [don't] use extra threads with in-core multi-threading\n"
    "        help            show this help message\n";

std::optional<uint32_t> CountOf(const ParsedOptions& parsed, std::string_view name) {
  auto value = parsed.Last(name);
  auto number = value ? ParseUint64(*value) : std::nullopt;
  if (!number || *number > 100'000) return std::nullopt;
  return static_cast<uint32_t>(*number);
}

// --hint as Slurm's srun reads it: the binding and tasks per core it stands for. Slurm ignores it
// (saying so with -v) next to --ntasks-per-core, --threads-per-core, -B or a --cpu-bind type.
Status ApplyHint(const ParsedOptions& parsed, StepBinding& binding) {
  std::optional<std::string> hint = parsed.Last("hint");
  if (!hint) return OkStatus();
  bool bind_type = !binding.cpu_bind.empty() && ParseCpuBind(binding.cpu_bind) &&
                   ParseCpuBind(binding.cpu_bind)->type != CpuBindType::kDefault;
  if (parsed.Has("ntasks-per-core") || parsed.Has("threads-per-core") ||
      parsed.Has("extra-node-info") || bind_type) {
    binding.notices.push_back(
        "srun: Following options are mutually exclusive with --hint: --ntasks-per-core, "
        "--threads-per-core, -B and --cpu-bind (other than --cpu-bind=verbose). Ignoring --hint.");
    return OkStatus();
  }
  std::string verbose = binding.cpu_bind.empty() ? "" : binding.cpu_bind + ",";
  for (const std::string& word : Split(ToLower(*hint), ',')) {
    if (word == "compute_bound" || word == "memory_bound") {
      binding.cpu_bind = verbose + "cores";
    } else if (word == "multithread") {
      binding.cpu_bind = verbose + "threads";
    } else if (word == "nomultithread") {
      binding.cpu_bind = verbose + "threads";
      binding.ntasks_per_core = 1;
      binding.threads_per_core = 1;
    } else {
      return MakeError(fmt::format("unrecognized --hint argument \"{}\", see --hint=help", word));
    }
  }
  return OkStatus();
}

// -m arbitrary: SLURM_HOSTFILE's hosts, one a line or comma separated (hostlists expanded);
// without the variable the layout is block, as srun(1) says.
Status ReadHostfile(const std::map<std::string, std::string>& env, FileReader read_file,
                    StepBinding& binding) {
  auto it = env.find("SLURM_HOSTFILE");
  if (it == env.end() || it->second.empty()) {
    binding.distribution = "block";
    return OkStatus();
  }
  Result<std::string> text = read_file(it->second);
  if (!text)
    return MakeError(fmt::format("Unable to open SLURM_HOSTFILE {}: {}", it->second, text.error()));
  for (const std::string& line : Split(*text, '\n'))
    for (const std::string& word : SplitTopLevel(Trim(line), ',')) {
      if (Trim(word).empty() || Trim(word).starts_with('#')) continue;
      auto hosts = ExpandHostlist(std::string(Trim(word)));
      if (!hosts) return MakeError(fmt::format("SLURM_HOSTFILE {}: {}", it->second, hosts.error()));
      binding.arbitrary_nodes.insert(binding.arbitrary_nodes.end(), hosts->begin(), hosts->end());
    }
  if (binding.arbitrary_nodes.empty())
    return MakeError(fmt::format("SLURM_HOSTFILE {} names no hosts", it->second));
  return OkStatus();
}

// -m as given; a bare "plane" takes its size from SLURM_DIST_PLANESIZE (srun(1)).
Status ReadDistribution(const ParsedOptions& parsed, const std::map<std::string, std::string>& env,
                        FileReader read_file, StepBinding& binding) {
  binding.distribution = parsed.Last("distribution").value_or("");
  if (binding.distribution.empty()) return OkStatus();
  std::string lower = ToLower(binding.distribution);
  if (lower == "plane" || lower.starts_with("plane:") || lower.starts_with("plane,")) {
    auto size = env.find("SLURM_DIST_PLANESIZE");
    if (size == env.end()) return MakeError("Invalid --distribution specification");
    binding.distribution.insert(5, "=" + size->second);
  }
  auto distribution = ParseDistribution(binding.distribution);
  if (!distribution) return std::move(distribution).take_error();
  if (distribution->nodes == NodeDistribution::kArbitrary)
    return ReadHostfile(env, read_file, binding);
  return OkStatus();
}

}  // namespace

std::optional<int> BindingHelp(const ParsedOptions& parsed) {
  if (EqualsIgnoreCase(parsed.Last("cpu-bind").value_or(""), "help")) {
    std::printf("%s", kCpuBindHelp);
    return 0;
  }
  if (EqualsIgnoreCase(parsed.Last("hint").value_or(""), "help")) {
    std::printf("%s", kHintHelp);
    return 0;
  }
  return std::nullopt;
}

Result<StepBinding> ReadStepBinding(const ParsedOptions& parsed,
                                    const std::map<std::string, std::string>& env,
                                    FileReader read_file) {
  StepBinding binding;
  if (Status read = ReadDistribution(parsed, env, read_file, binding); !read)
    return std::move(read).take_error();
  binding.ntasks_per_core = CountOf(parsed, "ntasks-per-core").value_or(0);
  binding.threads_per_core = CountOf(parsed, "threads-per-core").value_or(0);
  binding.ntasks_per_socket = CountOf(parsed, "ntasks-per-socket").value_or(0);
  binding.cpu_bind = parsed.Last("cpu-bind").value_or(parsed.Last("cpu_bind").value_or(""));
  if (!binding.cpu_bind.empty())
    if (auto bind = ParseCpuBind(binding.cpu_bind); !bind) return std::move(bind).take_error();
  if (Status hinted = ApplyHint(parsed, binding); !hinted) return std::move(hinted).take_error();
  binding.mem_bind = parsed.Last("mem-bind").value_or("");
  binding.gpu_bind = parsed.Last("gpu-bind").value_or("");
  if (!binding.gpu_bind.empty())
    if (auto bind = ParseGpuBind(binding.gpu_bind); !bind) return std::move(bind).take_error();
  binding.accel_bind = parsed.Last("accel-bind").value_or("");
  if (parsed.Has("accel-bind") && binding.accel_bind.find_first_of("gnv") == std::string::npos)
    return MakeError("Invalid --accel-bind specification");
  binding.cpu_freq = parsed.Last("cpu-freq").value_or("");
  binding.gpu_freq = parsed.Last("gpu-freq").value_or("");
  return binding;
}

}  // namespace drover::cli
