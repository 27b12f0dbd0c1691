// SBATCH_* input variables; see sbatch_input_environment.h.
#include "cli/sbatch/sbatch_input_environment.h"

#include <fmt/format.h>

#include "cli/sbatch/sbatch_option_table.h"
#include "common/text.h"

namespace drover::cli::sbatch {
namespace {

// The SBATCH_* input variables sbatch(1) lists, and the option each stands for; the two
// environment-only ones index the unnamed entries at the end of the table.
struct EnvironmentOption {
  std::string_view variable;
  std::string_view option;
  int unnamed = 0;         // an environment-only entry, counted from the table's end
  bool any_value = false;  // a flag set whatever the value (Slurm's OPT_NO_REQUEUE and kin)
};

constexpr EnvironmentOption kEnvironmentOptions[] = {
    {"SBATCH_ACCOUNT", "account"},
    {"SBATCH_ACCTG_FREQ", "acctg-freq"},
    {"SBATCH_ARRAY_INX", "array"},
    {"SBATCH_BATCH", "batch"},
    {"SBATCH_BURST_BUFFER", "bb"},
    {"SBATCH_CLUSTER_CONSTRAINT", "cluster-constraint"},
    {"SBATCH_CLUSTERS", "clusters"},
    {"SLURM_CLUSTERS", "clusters"},
    {"SBATCH_CONSTRAINT", "constraint"},
    {"SBATCH_CONTAINER", "container"},
    {"SBATCH_CONTAINER_ID", "container-id"},
    {"SBATCH_CORE_SPEC", "core-spec"},
    {"SBATCH_CPU_FREQ_REQ", "cpu-freq"},
    {"SBATCH_CPUS_PER_GPU", "cpus-per-gpu"},
    {"SBATCH_DEBUG", "verbose"},
    {"SBATCH_DELAY_BOOT", "delay-boot"},
    {"SBATCH_DISTRIBUTION", "distribution"},
    {"SBATCH_ERROR", "error"},
    {"SBATCH_EXCLUSIVE", "exclusive"},
    {"SBATCH_EXPORT", "export"},
    {"SBATCH_GET_USER_ENV", "get-user-env"},
    {"SBATCH_GPU_BIND", "gpu-bind"},
    {"SBATCH_GPU_FREQ", "gpu-freq"},
    {"SBATCH_GPUS", "gpus"},
    {"SBATCH_GPUS_PER_NODE", "gpus-per-node"},
    {"SBATCH_GPUS_PER_SOCKET", "gpus-per-socket"},
    {"SBATCH_GPUS_PER_TASK", "gpus-per-task"},
    {"SBATCH_GRES", "gres"},
    {"SBATCH_GRES_FLAGS", "gres-flags"},
    {"SLURM_HINT", "hint"},
    {"SBATCH_HINT", "hint"},
    {"SBATCH_IGNORE_PBS", "ignore-pbs"},
    {"SBATCH_INPUT", "input"},
    {"SBATCH_JOB_NAME", "job-name"},
    {"SBATCH_MEM_BIND", "mem-bind"},
    {"SBATCH_MEM_PER_CPU", "mem-per-cpu"},
    {"SBATCH_MEM_PER_GPU", "mem-per-gpu"},
    {"SBATCH_MEM_PER_NODE", "mem"},
    {"SBATCH_NETWORK", "network"},
    {"SBATCH_NO_KILL", "no-kill"},
    {"SBATCH_NO_REQUEUE", "no-requeue", 0, true},
    {"SBATCH_OPEN_MODE", "open-mode"},
    {"SBATCH_OUTPUT", "output"},
    {"SBATCH_OVERCOMMIT", "overcommit"},
    {"SBATCH_PARTITION", "partition"},
    {"SBATCH_POWER", "power"},
    {"SBATCH_PROFILE", "profile"},
    {"SBATCH_QOS", "qos"},
    {"SBATCH_REQ_SWITCH", "", 2},
    {"SBATCH_REQUEUE", "requeue", 0, true},
    {"SBATCH_RESERVATION", "reservation"},
    {"SBATCH_SEGMENT_SIZE", "segment"},
    {"SBATCH_SIGNAL", "signal"},
    {"SBATCH_SPREAD_JOB", "spread-job"},
    {"SBATCH_THREAD_SPEC", "thread-spec"},
    {"SBATCH_THREADS_PER_CORE", "threads-per-core"},
    {"SBATCH_TIMELIMIT", "time"},
    {"SBATCH_TRES_BIND", "tres-bind"},
    {"SBATCH_TRES_PER_TASK", "tres-per-task"},
    {"SBATCH_USE_MIN_NODES", "use-min-nodes"},
    {"SBATCH_WAIT", "wait"},
    {"SBATCH_WAIT_ALL_NODES", "wait-all-nodes"},
    {"SBATCH_WAIT4SWITCH", "", 1},
    {"SBATCH_WCKEY", "wckey"},
};

// A flag set through the environment is on for "", "yes" or a non-zero number, as in Slurm.
bool EnvironmentFlag(const std::string& value) {
  if (value.empty() || EqualsIgnoreCase(value, "yes")) return true;
  std::optional<int64_t> number = ParseInt64(value);
  return number && *number != 0;
}

}  // namespace

Status ApplyEnvironment(const Inputs& in, Settings& s) {
  const std::vector<OptionDef>& options = Options();
  for (const EnvironmentOption& entry : kEnvironmentOptions) {
    auto found = in.environment.find(std::string(entry.variable));
    if (found == in.environment.end()) continue;
    const std::string& value = found->second;
    const OptionDef& def =
        entry.unnamed > 0 ? options[options.size() - entry.unnamed] : Option(entry.option);
    Use use{&def, std::nullopt, Source::kEnvironment, nullptr};
    if (def.arg == Arg::kNone && !entry.any_value && !EnvironmentFlag(value)) continue;
    if (def.arg == Arg::kRequired && value.empty()) continue;
    if (def.arg != Arg::kNone && !value.empty()) use.value = value;
    if (Status ok = Apply(std::move(use), in, s); !ok)
      return WithOrigin(std::move(ok).take_error(), fmt::format("{}={}", entry.variable, value));
  }
  return OkStatus();
}

}  // namespace drover::cli::sbatch
