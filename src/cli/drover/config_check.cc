// `drover config check [--conf FILE]`: reads slurm.conf and the gres.conf and topology.conf
// beside it, prints the cluster it understood, then the warnings; exits 1 with the errors when
// the configuration cannot be used.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/cluster_config.h"
#include "common/getopt.h"
#include "common/hostlist.h"
#include "common/memory_size.h"
#include "common/slurm_conf.h"
#include "common/text.h"

namespace drover::cli {
namespace {

constexpr std::string_view kUsage =
    "Usage: drover config check [--conf FILE]\n"
    "Reads FILE (default: $DROVER_CONF, $SLURM_CONF, /etc/slurm/slurm.conf) with the gres.conf\n"
    "and topology.conf beside it, prints the cluster it describes and any problems.\n";

std::string Names(const ClusterConfig& config, const std::vector<int>& nodes) {
  std::vector<std::string> names;
  names.reserve(nodes.size());
  for (int n : nodes) names.push_back(config.nodes[n].name);
  return CompressHostlist(names);
}

std::string Limit(uint64_t value) {
  return value == kUnlimitedCount ? "UNLIMITED" : std::to_string(value);
}

std::string GpuSummary(const std::map<std::string, uint64_t>& by_type) {
  std::vector<std::string> parts;
  for (const auto& [type, count] : by_type)
    parts.push_back(fmt::format("{} {}", count, type.empty() ? "untyped" : type));
  return parts.empty() ? "" : " (" + Join(parts, ", ") + ")";
}

// Nodes described alike, so 10,000 nodes print as a few lines.
std::string NodeShape(const NodeConfig& node) {
  std::map<std::string, uint64_t> gpus;
  for (const GpuDevice& gpu : node.gpus) ++gpus[gpu.type];
  std::string gpu_text;
  for (const auto& [type, count] : gpus)
    gpu_text += fmt::format(", {} x {} GPU", count, type.empty() ? "untyped" : type);
  if (node.gpus_autodetect) gpu_text += " (NVML)";
  return fmt::format("{} CPUs ({} sockets x {} cores x {} threads), {} memory{}{}", node.cpus,
                     node.boards * node.sockets, node.cores_per_socket, node.threads_per_core,
                     FormatMemoryMB(node.real_memory_mb), gpu_text,
                     node.features.empty() ? "" : ", features " + Join(node.features, ","));
}

void PrintTotals(const ClusterConfig& config) {
  uint64_t cpus = 0, memory = 0;
  std::map<std::string, uint64_t> gpus;
  for (const NodeConfig& node : config.nodes) {
    cpus += node.cpus;
    memory += node.real_memory_mb;
    for (const GpuDevice& gpu : node.gpus) ++gpus[gpu.type];
  }
  uint64_t gpu_total = 0;
  for (const auto& entry : gpus) gpu_total += entry.second;
  fmt::print("Cluster {} ({})\n", config.settings.cluster_name, config.conf_path);
  fmt::print("  Nodes      {}\n", config.nodes.size());
  fmt::print("  CPUs       {}\n", cpus);
  fmt::print("  Memory     {}\n", FormatMemoryMB(memory));
  fmt::print("  GPUs       {}{}\n", gpu_total, GpuSummary(gpus));
  std::map<std::string, std::vector<int>> shapes;
  std::vector<std::string> order;
  for (size_t i = 0; i < config.nodes.size(); ++i) {
    std::string shape = NodeShape(config.nodes[i]);
    if (!shapes.count(shape)) order.push_back(shape);
    shapes[shape].push_back(static_cast<int>(i));
  }
  fmt::print("\nNodes\n");
  for (const std::string& shape : order)
    fmt::print("  {}: {}\n", Names(config, shapes[shape]), shape);
}

void PrintPartitions(const ClusterConfig& config) {
  fmt::print("\nPartitions\n");
  fmt::print("  {:<12} {:>5} {:>6} {:>5} {:>4} {:>11} {:>11} {:>9} {:<8} {}\n", "NAME", "NODES",
             "CPUS", "GPUS", "TIER", "MAXTIME", "DEFAULTTIME", "MAXNODES", "STATE", "PREEMPT");
  static constexpr std::string_view kStates[] = {"UP", "DOWN", "DRAIN", "INACTIVE"};
  for (const PartitionConfig& partition : config.partitions) {
    uint64_t cpus = 0, gpus = 0;
    for (int n : partition.nodes) {
      cpus += config.nodes[n].cpus;
      gpus += config.nodes[n].gpus.size();
    }
    PreemptMode mode = partition.preempt_mode.value_or(config.settings.preempt_mode);
    std::string name = partition.name + (partition.is_default ? "*" : "");
    std::string default_time =
        partition.default_time_seconds ? FormatDuration(*partition.default_time_seconds) : "NONE";
    fmt::print("  {:<12} {:>5} {:>6} {:>5} {:>4} {:>11} {:>11} {:>9} {:<8} {}{}\n", name,
               partition.nodes.size(), cpus, gpus, partition.priority_tier,
               FormatDuration(partition.max_time_seconds), default_time, Limit(partition.max_nodes),
               kStates[static_cast<int>(partition.state)], FormatPreemptMode(mode),
               partition.grace_time_seconds
                   ? fmt::format(" (GraceTime={}s)", partition.grace_time_seconds)
                   : "");
  }
}

void PrintSwitch(const ClusterConfig& config, int index, int depth) {
  const SwitchConfig& node = config.topology.switches[index];
  fmt::print("  {:{}}{} (level {}): {}\n", "", depth * 2, node.name, node.level,
             Names(config, node.subtree_nodes));
  for (int child : node.children) PrintSwitch(config, child, depth + 1);
}

void PrintTopology(const ClusterConfig& config) {
  const TopologyConfig& topology = config.topology;
  if (topology.kind == TopologyKind::kFlat) {
    fmt::print("\nTopology: flat (no topology.conf in use)\n");
    return;
  }
  if (topology.kind == TopologyKind::kTree) {
    int leaves = 0;
    for (const SwitchConfig& node : topology.switches) leaves += node.level == 0;
    fmt::print("\nTopology: tree, {} switches, {} leaves\n", topology.switches.size(), leaves);
    for (size_t s = 0; s < topology.switches.size(); ++s)
      if (topology.switches[s].parent < 0) PrintSwitch(config, static_cast<int>(s), 0);
    return;
  }
  std::vector<std::string> sizes;
  for (int size : topology.block_sizes) sizes.push_back(std::to_string(size));
  fmt::print("\nTopology: block, {} blocks, BlockSizes={}\n", topology.blocks.size(),
             Join(sizes, ","));
  for (const BlockConfig& block : topology.blocks)
    fmt::print("  {}: {} ({} nodes)\n", block.name, Names(config, block.nodes), block.nodes.size());
}

void PrintScheduling(const ClusterConfig& config) {
  const ClusterSettings& s = config.settings;
  std::string priority = s.priority == PriorityType::kBasic ? "priority/basic (FIFO)"
                         : s.fair_tree()                    ? "priority/multifactor (Fair Tree)"
                                         : "priority/multifactor (classic fair share)";
  static constexpr std::string_view kPreempt[] = {"preempt/none", "preempt/partition_prio",
                                                  "preempt/qos"};
  fmt::print("\nScheduling\n");
  fmt::print("  {}, {}, {} ({})\n",
             s.scheduler == SchedulerType::kBackfill ? "sched/backfill" : "sched/builtin", priority,
             kPreempt[static_cast<int>(s.preempt)], FormatPreemptMode(s.preempt_mode));
  if (s.priority == PriorityType::kMultifactor)
    fmt::print("  weights: age {} fairshare {} jobsize {} partition {} qos {}; half-life {}\n",
               s.weight_age, s.weight_fairshare, s.weight_job_size, s.weight_partition,
               s.weight_qos, FormatDuration(s.decay_half_life_seconds));
}

// In file order (slurm.conf, its includes, gres.conf, topology.conf) and line order within each.
std::vector<Diagnostic> Sorted(const std::vector<Diagnostic>& list) {
  std::vector<std::string> files;
  for (const Diagnostic& d : list)
    if (std::find(files.begin(), files.end(), d.where.file) == files.end())
      files.push_back(d.where.file);
  auto rank = [&](const Diagnostic& d) {
    return std::pair(std::find(files.begin(), files.end(), d.where.file) - files.begin(),
                     d.where.line);
  };
  std::vector<Diagnostic> sorted = list;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](const Diagnostic& a, const Diagnostic& b) { return rank(a) < rank(b); });
  return sorted;
}

void PrintDiagnostics(const std::vector<Diagnostic>& list, std::string_view severity,
                      std::FILE* out) {
  for (const Diagnostic& d : Sorted(list)) {
    std::string where = d.where.file.empty() ? ""
                        : d.where.line > 0   ? fmt::format("{}:{}: ", d.where.file, d.where.line)
                                             : d.where.file + ": ";
    fmt::print(out, "{}{}: {}\n", where, severity, d.message);
  }
}

int Check(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    fmt::print(stderr,
               "drover: error: cannot read '{}': {}; name the file with --conf FILE, or "
               "set DROVER_CONF or SLURM_CONF\n",
               path, std::filesystem::exists(path, ec) ? "not a file" : "no such file");
    return 1;
  }
  ConfigLoad load = LoadClusterConfig(path);
  const Diagnostics& diagnostics = load.diagnostics;
  if (!load.ok()) {
    PrintDiagnostics(diagnostics.errors(), "error", stderr);
    PrintDiagnostics(diagnostics.warnings(), "warning", stderr);
    fmt::print(stderr, "drover: {} error{} in {}; fix {} and run 'drover config check' again\n",
               diagnostics.errors().size(), diagnostics.errors().size() == 1 ? "" : "s", path,
               diagnostics.errors().size() == 1 ? "it" : "them");
    return 1;
  }
  PrintTotals(load.config);
  PrintPartitions(load.config);
  PrintTopology(load.config);
  PrintScheduling(load.config);
  if (!diagnostics.warnings().empty()) {
    fmt::print("\nWarnings ({})\n", diagnostics.warnings().size());
    std::fflush(stdout);
    PrintDiagnostics(diagnostics.warnings(), "warning", stdout);
  }
  return 0;
}

}  // namespace

constexpr OptionSpec kCheckOptions[] = {
    {'h', "help", OptionSpec::kNone},
    {0, "conf", OptionSpec::kRequired},
};

int RunConfig(Arguments args) {
  if (args.empty() || std::string_view(args[0]) != "check") {
    fmt::print(stderr, "{}", kUsage);
    return 2;
  }
  std::vector<std::string> words(args.begin() + 1, args.end());
  OptionScan scan = ScanOptions(words, kCheckOptions);
  std::optional<size_t> refused = FirstRefused(scan);
  std::string conf;
  for (const OptionUse& use : scan.uses) {
    if (refused && use.argument >= *refused) break;
    if (use.spec->long_name == "help") {  // --help before a wrong word still helps
      fmt::print("{}", kUsage);
      return 0;
    }
    conf = *use.value;
  }
  if (refused) {
    fmt::print(stderr, "drover config check: error: unexpected argument '{}'\n{}", words[*refused],
               kUsage);
    return 2;
  }
  return Check(ResolveConfPath(conf));
}

}  // namespace drover::cli
