// drover-sim, run as `drover sim` (the drover binary execs it from its own directory): replays a
// workload trace through the controller's own engine and scheduler on a virtual clock and prints
// what happened: a summary, or --json, per-job records with --jobs, two configurations side by
// side with --compare. Its own binary, so that drover links neither the engine nor the scheduler.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/accounting_dump.h"
#include "common/accounting_settings.h"
#include "common/cluster_config.h"
#include "common/text.h"
#include "sim/cluster_source.h"
#include "sim/options.h"
#include "sim/report.h"
#include "sim/simulator.h"
#include "sim/synthetic.h"

namespace drover::sim {
namespace {

int Fail(const std::string& message) {
  fmt::print(stderr, "drover sim: error: {}\n", message);
  return 1;
}

// The cluster the options name; for an Alibaba pod list, its node list beside it by default.
Result<ClusterConfig> ClusterOf(const Options& options, const std::string& conf) {
  if (!conf.empty()) {
    ConfigLoad load = LoadClusterConfig(conf);
    if (!load.ok()) return MakeError(load.ErrorText());
    return std::move(load.config);
  }
  if (options.generated.nodes > 0) return GenerateCluster(options.generated);
  std::string nodes = options.alibaba_nodes;
  if (nodes.empty() && options.trace.ends_with(".csv")) {
    auto beside =
        std::filesystem::path(options.trace).parent_path() / "openb_node_list_gpu_node.csv";
    if (std::filesystem::exists(beside)) nodes = beside.string();
  }
  if (!nodes.empty()) return AlibabaCluster(nodes, "");
  std::string path = ResolveConfPath("");
  if (!std::filesystem::exists(path))
    return MakeError(
        "no cluster: give --conf slurm.conf, --nodes N --cores-per-node C, or --alibaba-nodes "
        "(or set DROVER_CONF)");
  return ClusterOf(options, path);
}

// --accounts: a sacctmgr dump file loaded for the configuration's cluster (whatever cluster the
// file names); the QOS it names are added with Slurm's defaults, as the file holds none.
Result<acct::Database> AccountsOf(const std::string& path, const ClusterConfig& cluster) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(fmt::format("--accounts {}: cannot read it", path));
  std::string text;
  char block[65536];
  while (in.read(block, sizeof block) || in.gcount() > 0) text.append(block, in.gcount());
  if (in.bad()) return MakeError(fmt::format("--accounts {}: cannot read it", path));  // a folder
  auto file = acct::ParseDumpFile(text);
  if (!file) return MakeError(fmt::format("--accounts {}: {}", path, Trim(file.error())));
  std::string name = acct::NameOf(cluster.settings.cluster_name);
  acct::Database database = acct::Database::Initial(name);
  acct::LoadOptions load;
  load.cluster = name;
  load.add_missing_qos = true;
  auto loaded = acct::LoadDumpFile(database, *file, load);
  if (!loaded) return MakeError(fmt::format("--accounts {}: {}", path, Trim(loaded.error())));
  return database;
}

// One replay: a cluster (a slurm.conf, or "" for the one the options name) and how jobs share
// GPUs; `label` names it in a comparison.
struct Run {
  std::string conf;
  GpuSharingMode sharing;
  std::string label;
};

// The --compare pair, the two --gpu-sharing modes, else the one run the options name.
std::vector<Run> RunsOf(const Options& options) {
  GpuSharingMode sharing = options.sharing.empty() ? GpuSharingMode{} : options.sharing.front();
  std::vector<Run> runs;
  if (options.sharing.size() == 2) {
    for (const GpuSharingMode& mode : options.sharing)
      runs.push_back({options.conf, mode, "--gpu-sharing " + mode.Name()});
  } else if (!options.compare.empty()) {
    for (const std::string& conf : options.compare) runs.push_back({conf, sharing, conf});
  } else {
    runs.push_back({options.conf, sharing, options.conf});
  }
  return runs;
}

Result<std::vector<SimResult>> SimulateEach(const Options& options, const std::vector<Run>& runs) {
  std::vector<SimResult> results;
  for (const Run& run : runs) {
    const std::string& conf = run.conf;
    auto cluster = ClusterOf(options, conf);
    if (!cluster) return MakeError(cluster.error());
    Trace trace;
    if (options.synthetic) {
      trace = SyntheticTrace(*cluster, options.synthetic->first, options.synthetic->second);
    } else {
      auto read = ReadTrace(options.trace, {options.strict});
      if (!read) return MakeError(read.error());
      trace = std::move(*read);
    }
    SimOptions sim = options.sim;
    sim.gpu_sharing = run.sharing;
    if (!options.accounts.empty()) {
      auto accounts = AccountsOf(options.accounts, *cluster);
      if (!accounts) return MakeError(accounts.error());
      sim.accounts = std::make_shared<const acct::Database>(std::move(*accounts));
    }
    auto result = Simulate(*cluster, trace, sim);
    if (!result) return MakeError(result.error());
    results.push_back(std::move(*result));
  }
  return results;
}

// The report on stdout: both configurations side by side, or the one.
void PrintReport(const Options& options, const std::vector<SimResult>& results,
                 const std::vector<Run>& runs) {
  if (results.size() == 2) {
    if (options.json) {
      nlohmann::ordered_json both;
      both[runs[0].label] = ReportJson(results[0]);
      both[runs[1].label] = ReportJson(results[1]);
      std::fputs((both.dump(2) + "\n").c_str(), stdout);
    } else {
      std::fputs(CompareText(results[0], runs[0].label, results[1], runs[1].label).c_str(), stdout);
    }
    return;
  }
  if (options.json)
    std::fputs((ReportJson(results.front()).dump(2) + "\n").c_str(), stdout);
  else
    std::fputs(ReportText(results.front()).c_str(), stdout);
}

int RunSim(std::span<const std::string> words) {
  auto options = ParseOptions(words);
  if (!options) {
    if (options.error().empty()) {
      std::fputs(kUsage.data(), stdout);
      return 0;
    }
    fmt::print(stderr, "drover sim: error: {}\n{}", options.error(), kUsage);
    return 2;
  }
  std::vector<Run> runs = RunsOf(*options);
  auto results = SimulateEach(*options, runs);
  if (!results) return Fail(results.error());
  if (!options->jobs_csv.empty()) {
    std::ofstream out(options->jobs_csv);
    out << JobsCsv(results->front());
    if (!out) return Fail("cannot write " + options->jobs_csv);
  }
  PrintReport(*options, *results, runs);
  return 0;
}

}  // namespace
}  // namespace drover::sim

int main(int argc, char** argv) {
  std::vector<std::string> words(argv + std::min(argc, 1), argv + argc);
  return drover::sim::RunSim(words);
}
