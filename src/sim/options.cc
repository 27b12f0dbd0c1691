// `drover sim`'s options; see options.h.
#include "sim/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>

#include "common/getopt.h"
#include "common/text.h"
#include "sched/policy.h"

namespace drover::sim {
namespace {

constexpr OptionSpec kSpecs[] = {{0, "trace", OptionSpec::kRequired},
                                 {0, "synthetic", OptionSpec::kRequired},
                                 {0, "conf", OptionSpec::kRequired},
                                 {0, "nodes", OptionSpec::kRequired},
                                 {0, "cores-per-node", OptionSpec::kRequired},
                                 {0, "gpus-per-node", OptionSpec::kRequired},
                                 {0, "leaf", OptionSpec::kRequired},
                                 {0, "alibaba-nodes", OptionSpec::kRequired},
                                 {0, "policy", OptionSpec::kRequired},
                                 {0, "priority", OptionSpec::kRequired},
                                 {0, "strict", OptionSpec::kNone},
                                 {0, "json", OptionSpec::kNone},
                                 {0, "jobs", OptionSpec::kRequired},
                                 {0, "no-timing", OptionSpec::kNone},
                                 {0, "tick", OptionSpec::kRequired},
                                 {0, "compare", OptionSpec::kRequired},
                                 {0, "accounts", OptionSpec::kRequired},
                                 {0, "gpu-sharing", OptionSpec::kRequired},
                                 {'h', "help", OptionSpec::kNone}};

Result<int> Number(const std::string& option, const std::string& value, int least) {
  auto number = ParseInt64(value);
  if (!number || *number < least || *number > INT32_MAX)
    return MakeError(
        fmt::format("--{} wants a whole number of at least {}, not '{}'", option, least, value));
  return static_cast<int>(*number);
}

// One option's value into `options`.
Status Apply(const std::string& option, const std::string& value, Options& options) {
  if (option == "trace") options.trace = value;
  if (option == "conf") options.conf = value;
  if (option == "alibaba-nodes") options.alibaba_nodes = value;
  if (option == "jobs") options.jobs_csv = value;
  if (option == "strict") options.strict = true;
  if (option == "json") options.json = true;
  if (option == "no-timing") options.sim.timing = false;
  if (option == "compare") options.compare.push_back(value);
  if (option == "accounts") options.accounts = value;
  if (option == "nodes" || option == "cores-per-node" || option == "gpus-per-node" ||
      option == "leaf" || option == "tick") {
    auto number = Number(option, value, option == "nodes" || option == "cores-per-node" ? 1 : 0);
    if (!number) return std::move(number).take_error();
    if (option == "nodes") options.generated.nodes = *number;
    if (option == "cores-per-node") options.generated.cores_per_node = *number;
    if (option == "gpus-per-node") options.generated.gpus_per_node = *number;
    if (option == "leaf") options.generated.leaf = *number;
    if (option == "tick") options.sim.tick_seconds = std::max(*number, 1);
  }
  if (option == "gpu-sharing") {
    auto mode = ParseGpuSharing(value);
    if (!mode) return std::move(mode).take_error();
    options.sharing.push_back(*mode);
  }
  if (option == "synthetic") {
    std::vector<std::string> parts = Split(value, ',');
    auto jobs = ParseUint64(parts.front());
    auto seed = parts.size() > 1 ? ParseUint64(parts[1]) : std::optional<uint64_t>(1);
    if (parts.size() > 2 || !jobs || *jobs == 0 || !seed)
      return MakeError("--synthetic wants JOBS or JOBS,SEED, e.g. --synthetic 200000,7");
    options.synthetic = {*jobs, *seed};
  }
  if (option == "policy") {
    auto kind = sched::PolicyNamed(value);
    if (!kind || value.find('/') != std::string::npos)
      return MakeError("--policy wants fcfs, easy or conservative, not '" + value + "'");
    options.sim.policy = kind;
  }
  if (option == "priority") {
    if (value == "basic")
      options.sim.priority = PriorityType::kBasic;
    else if (value == "multifactor")
      options.sim.priority = PriorityType::kMultifactor;
    else
      return MakeError("--priority wants basic or multifactor, not '" + value + "'");
  }
  return OkStatus();
}

// The options must name one workload and at most one cluster.
Status Check(const Options& options) {
  if (!options.compare.empty() && options.compare.size() != 2)
    return MakeError("--compare wants two slurm.conf files: --compare A.conf B.conf");
  if (options.trace.empty() == !options.synthetic)
    return MakeError("give the workload: --trace FILE or --synthetic JOBS");
  if (options.sharing.size() > 2)
    return MakeError("--gpu-sharing: give one mode, or two to compare them");
  if (options.sharing.size() == 2 && !options.compare.empty())
    return MakeError("compare two clusters (--compare) or two --gpu-sharing modes, not both");
  int sources = !options.conf.empty() + (options.generated.nodes > 0) +
                !options.alibaba_nodes.empty() + !options.compare.empty();
  if (sources > 1)
    return MakeError("give one cluster: --conf, --nodes ..., --alibaba-nodes or --compare");
  return OkStatus();
}

}  // namespace

Result<Options> ParseOptions(std::span<const std::string> words) {
  auto parsed = drover::ParseOptions(words, kSpecs);
  if (!parsed) return MakeError(parsed.error());
  Options options;
  // --compare takes two files: the second comes as an operand.
  std::vector<std::string> operands = parsed->operands;
  for (const auto& [option, value] : parsed->options) {
    if (option == "help") return MakeError("");
    if (Status ok = Apply(option, value, options); !ok) return std::move(ok).take_error();
  }
  if (options.compare.size() == 1 && !operands.empty()) {
    options.compare.push_back(operands.front());
    operands.erase(operands.begin());
  }
  if (!operands.empty()) return MakeError("unexpected argument '" + operands.front() + "'");
  if (Status ok = Check(options); !ok) return std::move(ok).take_error();
  return options;
}

}  // namespace drover::sim
