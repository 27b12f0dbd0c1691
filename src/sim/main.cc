// `drover sim`: replays a workload trace through the controller's own engine and scheduler on a
// virtual clock (src/sim) and prints what happened: a summary, or --json, per-job records with
// --jobs, two configurations side by side with --compare.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "common/getopt.h"
#include "common/cluster_config.h"
#include "common/text.h"
#include "sched/policy.h"
#include "sim/cluster_source.h"
#include "sim/report.h"
#include "sim/simulator.h"
#include "sim/synthetic.h"

namespace drover::cli {
namespace {

constexpr std::string_view kUsage =
    "Usage: drover sim --trace FILE | --synthetic JOBS[,SEED]   the workload\n"
    "                  [--conf slurm.conf | --nodes N --cores-per-node C [--gpus-per-node G]\n"
    "                   [--leaf L] | --alibaba-nodes NODES.csv]   the cluster\n"
    "                  [--policy fcfs|easy|conservative] [--priority basic|multifactor]\n"
    "                  [--strict] [--json] [--jobs OUT.csv] [--no-timing] [--tick SECONDS]\n"
    "       drover sim --trace FILE --compare A.conf B.conf [options above]\n"
    "Traces: SWF (.swf, .swf.gz), Alibaba GPU pod lists (.csv; the cluster is the node list\n"
    "openb_node_list_gpu_node.csv beside it unless given), sacct --json output (.json).\n"
    "Without a cluster option: $DROVER_CONF or $SLURM_CONF.\n";

int Fail(const std::string& message) {
  fmt::print(stderr, "drover sim: error: {}\n", message);
  return 1;
}

struct Options {
  std::string trace, conf, alibaba_nodes, jobs_csv;
  std::optional<std::pair<uint64_t, uint64_t>> synthetic;
  std::vector<std::string> compare;
  sim::GeneratedCluster generated;
  bool strict = false, json = false;
  sim::SimOptions sim;
};

Result<int> Number(const std::string& option, const std::string& value, int least) {
  auto number = ParseInt64(value);
  if (!number || *number < least || *number > INT32_MAX)
    return MakeError(
        fmt::format("--{} wants a whole number of at least {}, not '{}'", option, least, value));
  return static_cast<int>(*number);
}

Result<Options> Parse(Arguments args) {
  static constexpr OptionSpec kSpecs[] = {{0, "trace", OptionSpec::kRequired},
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
                                          {'h', "help", OptionSpec::kNone}};
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSpecs);
  if (!parsed) return MakeError(parsed.error());
  Options options;
  // --compare takes two files: the second comes as an operand.
  std::vector<std::string> operands = parsed->operands;
  for (const auto& [option, value] : parsed->options) {
    if (option == "help") return MakeError("");
    if (option == "trace") options.trace = value;
    if (option == "conf") options.conf = value;
    if (option == "alibaba-nodes") options.alibaba_nodes = value;
    if (option == "jobs") options.jobs_csv = value;
    if (option == "strict") options.strict = true;
    if (option == "json") options.json = true;
    if (option == "no-timing") options.sim.timing = false;
    if (option == "compare") options.compare.push_back(value);
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
  }
  if (options.compare.size() == 1 && !operands.empty()) {
    options.compare.push_back(operands.front());
    operands.erase(operands.begin());
  }
  if (!operands.empty()) return MakeError("unexpected argument '" + operands.front() + "'");
  if (!options.compare.empty() && options.compare.size() != 2)
    return MakeError("--compare wants two slurm.conf files: --compare A.conf B.conf");
  if (options.trace.empty() == !options.synthetic)
    return MakeError("give the workload: --trace FILE or --synthetic JOBS");
  int sources = !options.conf.empty() + (options.generated.nodes > 0) +
                !options.alibaba_nodes.empty() + !options.compare.empty();
  if (sources > 1)
    return MakeError("give one cluster: --conf, --nodes ..., --alibaba-nodes or --compare");
  return options;
}

// The cluster the options name; for an Alibaba pod list, its node list beside it by default.
Result<ClusterConfig> ClusterOf(const Options& options, const std::string& conf) {
  if (!conf.empty()) {
    ConfigLoad load = LoadClusterConfig(conf);
    if (!load.ok()) return MakeError(load.ErrorText());
    return std::move(load.config);
  }
  if (options.generated.nodes > 0) return sim::GenerateCluster(options.generated);
  std::string nodes = options.alibaba_nodes;
  if (nodes.empty() && options.trace.ends_with(".csv")) {
    auto beside =
        std::filesystem::path(options.trace).parent_path() / "openb_node_list_gpu_node.csv";
    if (std::filesystem::exists(beside)) nodes = beside.string();
  }
  if (!nodes.empty()) return sim::AlibabaCluster(nodes, "");
  std::string path = ResolveConfPath("");
  if (!std::filesystem::exists(path))
    return MakeError(
        "no cluster: give --conf slurm.conf, --nodes N --cores-per-node C, or --alibaba-nodes "
        "(or set DROVER_CONF)");
  return ClusterOf(options, path);
}

}  // namespace

int RunSim(Arguments args) {
  auto options = Parse(args);
  if (!options) {
    if (options.error().empty()) {
      std::fputs(kUsage.data(), stdout);
      return 0;
    }
    fmt::print(stderr, "drover sim: error: {}\n{}", options.error(), kUsage);
    return 2;
  }
  std::vector<std::string> confs = options->compare;
  if (confs.empty()) confs.push_back(options->conf);
  std::vector<sim::SimResult> results;
  for (const std::string& conf : confs) {
    auto cluster = ClusterOf(*options, conf);
    if (!cluster) return Fail(cluster.error());
    sim::Trace trace;
    if (options->synthetic) {
      trace = sim::SyntheticTrace(*cluster, options->synthetic->first, options->synthetic->second);
    } else {
      auto read = sim::ReadTrace(options->trace, {options->strict});
      if (!read) return Fail(read.error());
      trace = std::move(*read);
    }
    auto result = sim::Simulate(*cluster, trace, options->sim);
    if (!result) return Fail(result.error());
    results.push_back(std::move(*result));
  }
  if (!options->jobs_csv.empty()) {
    std::ofstream out(options->jobs_csv);
    out << sim::JobsCsv(results.front());
    if (!out) return Fail("cannot write " + options->jobs_csv);
  }
  if (results.size() == 2) {
    if (options->json) {
      nlohmann::ordered_json both;
      both[confs[0]] = sim::ReportJson(results[0]);
      both[confs[1]] = sim::ReportJson(results[1]);
      std::fputs((both.dump(2) + "\n").c_str(), stdout);
    } else {
      std::fputs(sim::CompareText(results[0], confs[0], results[1], confs[1]).c_str(), stdout);
    }
    return 0;
  }
  if (options->json)
    std::fputs((sim::ReportJson(results.front()).dump(2) + "\n").c_str(), stdout);
  else
    std::fputs(sim::ReportText(results.front()).c_str(), stdout);
  return 0;
}

}  // namespace drover::cli
