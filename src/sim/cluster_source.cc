// Generated and trace-given clusters; see cluster_source.h.
#include "sim/cluster_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <vector>

#include "common/hostlist.h"
#include "common/text.h"
#include "sim/trace.h"

namespace drover::sim {
namespace {

// What every simulated cluster starts from: the scheduler and priority a site would run, and
// no node that could be taken for dead (the simulated nodes never send heartbeats).
constexpr const char* kCommon =
    "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core_Memory\nGresTypes=gpu\n"
    "SchedulerType=sched/backfill\nPriorityType=priority/multifactor\n"
    "PriorityWeightAge=1000\nPriorityWeightFairshare=10000\nPriorityWeightJobSize=100\n"
    "PriorityMaxAge=7-0\nPriorityDecayHalfLife=7-0\nSlurmdTimeout=0\nMinJobAge=60\n";

std::string NodeName(int index, int width) {
  return fmt::format("n{:0{}d}", index + 1, width);
}

}  // namespace

ClusterText GenerateClusterText(const GeneratedCluster& spec) {
  int width = std::max<int>(5, static_cast<int>(std::to_string(spec.nodes).size()));
  auto range = [&](int first, int last) {
    return fmt::format("n[{:0{}d}-{:0{}d}]", first + 1, width, last + 1, width);
  };
  ClusterText text;
  uint64_t memory = spec.memory_mb_per_core * static_cast<uint64_t>(spec.cores_per_node);
  text.slurm_conf = fmt::format(
      "ClusterName=sim\n{}DefMemPerCPU={}\n{}{}NodeName={} CPUs={} Sockets=1 CoresPerSocket={} "
      "ThreadsPerCore=1 RealMemory={}{}\nPartitionName=main Nodes=ALL Default=YES "
      "MaxTime=UNLIMITED{}\n{}",
      kCommon, spec.memory_mb_per_core, spec.leaf > 0 ? "TopologyPlugin=topology/tree\n" : "",
      spec.extra.empty() ? "" : spec.extra + "\n",
      spec.nodes == 1 ? NodeName(0, width) : range(0, spec.nodes - 1), spec.cores_per_node,
      spec.cores_per_node, memory,
      spec.gpus_per_node > 0 ? fmt::format(" Gres=gpu:{}", spec.gpus_per_node) : "",
      spec.main_partition.empty() ? "" : " " + spec.main_partition,
      spec.partitions.empty() ? "" : spec.partitions + "\n");
  if (spec.leaf > 0 && spec.nodes > 0) {
    int leaves = (spec.nodes + spec.leaf - 1) / spec.leaf;
    for (int l = 0; l < leaves; ++l) {
      int first = l * spec.leaf, last = std::min(spec.nodes, (l + 1) * spec.leaf) - 1;
      text.topology_conf +=
          fmt::format("SwitchName=leaf{} Nodes={}\n", l,
                      first == last ? NodeName(first, width) : range(first, last));
    }
    if (leaves > 1)
      text.topology_conf += fmt::format("SwitchName=top Switches=leaf[0-{}]\n", leaves - 1);
  }
  return text;
}

Result<ClusterConfig> LoadClusterText(const ClusterText& text) {
  ConfigLoad load = LoadClusterConfigText(
      text.slurm_conf, std::nullopt,
      text.topology_conf.empty() ? std::nullopt : std::optional<std::string>(text.topology_conf));
  if (!load.ok()) return MakeError(load.ErrorText());
  return std::move(load.config);
}

Result<ClusterConfig> GenerateCluster(const GeneratedCluster& spec) {
  if (spec.nodes <= 0 || spec.cores_per_node <= 0 || spec.gpus_per_node < 0 || spec.leaf < 0)
    return MakeError(
        "a generated cluster needs --nodes N and --cores-per-node C of at least 1 (and "
        "--gpus-per-node, --leaf of 0 or more)");
  return LoadClusterText(GenerateClusterText(spec));
}

Result<ClusterText> AlibabaClusterText(const std::string& csv, const std::string& name,
                                       const std::string& extra) {
  std::istringstream in(csv);
  std::string line;
  if (!std::getline(in, line) || Trim(line) != "sn,cpu_milli,memory_mib,gpu,model")
    return MakeError(
        fmt::format("{}:1: expected the header sn,cpu_milli,memory_mib,gpu,model (an Alibaba "
                    "cluster-trace-gpu-v2023 node list)",
                    name));
  // Consecutive nodes of one shape share a NodeName line.
  struct Shape {
    int64_t cpus;
    int64_t memory;
    int64_t gpus;
    std::string model;
    bool operator==(const Shape&) const = default;
  };
  std::vector<std::pair<Shape, std::vector<std::string>>> groups;
  for (size_t number = 2; std::getline(in, line); ++number) {
    if (Trim(line).empty()) continue;
    std::vector<std::string> cells = Split(Trim(line), ',');
    auto cpu = cells.size() == 5 ? ParseInt64(Trim(cells[1])) : std::nullopt;
    auto memory = cells.size() == 5 ? ParseInt64(Trim(cells[2])) : std::nullopt;
    auto gpus = cells.size() == 5 ? ParseInt64(Trim(cells[3])) : std::nullopt;
    if (!cpu || !memory || !gpus || *cpu <= 0 || *memory <= 0 || *gpus < 0)
      return MakeError(
          fmt::format("{}:{}: expected NAME,CPU_MILLI,MEMORY_MIB,GPUS,MODEL with positive numbers",
                      name, number));
    Shape shape{std::max<int64_t>(*cpu / 1000, 1), *memory, *gpus, std::string(Trim(cells[4]))};
    if (groups.empty() || !(groups.back().first == shape)) groups.push_back({shape, {}});
    groups.back().second.emplace_back(Trim(cells[0]));
  }
  if (groups.empty()) return MakeError(name + ": no nodes");
  ClusterText text;
  text.slurm_conf = fmt::format("ClusterName=openb\n{}DefMemPerCPU=1024\n{}", kCommon,
                                extra.empty() ? "" : extra + "\n");
  for (const auto& [shape, names] : groups) {
    text.slurm_conf += fmt::format("NodeName={} CPUs={} RealMemory={}", CompressHostlist(names),
                                   shape.cpus, shape.memory);
    if (shape.gpus > 0)
      text.slurm_conf +=
          fmt::format(" Gres=gpu:{}:{} Features={}", shape.model, shape.gpus, shape.model);
    text.slurm_conf += "\n";
  }
  text.slurm_conf += "PartitionName=main Nodes=ALL Default=YES MaxTime=UNLIMITED\n";
  return text;
}

Result<ClusterConfig> AlibabaCluster(const std::string& path, const std::string& extra) {
  auto csv = ReadFileText(path);
  if (!csv) return std::move(csv).take_error();
  auto text = AlibabaClusterText(*csv, path, extra);
  if (!text) return std::move(text).take_error();
  return LoadClusterText(*text);
}

}  // namespace drover::sim
