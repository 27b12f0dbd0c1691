// topology.conf lines to TopologyConfig; see topology_conf.h. The tree is checked as a tree:
// every switch has at most one parent, there are no cycles, and every node sits under exactly
// one leaf.
#include "common/topology_conf.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/documented_keys.h"
#include "common/hostlist.h"

namespace drover {
namespace {

struct SwitchLine {
  SourceLocation where;
  std::string name, switches, nodes;
  int64_t link_speed = 1;
};

std::vector<int> ResolveNodes(const std::string& expression, const ClusterConfig& config,
                              const SourceLocation& where, std::string_view owner,
                              Diagnostics& diagnostics) {
  std::vector<int> nodes;
  auto names = ExpandHostlist(expression);
  if (!names) {
    diagnostics.Error(where, fmt::format("{}: Nodes: {}", owner, names.error()));
    return nodes;
  }
  std::vector<std::string> unknown;
  nodes = config.ResolveNodes(*names, unknown);
  if (!unknown.empty())
    diagnostics.Error(where, fmt::format("{}: {}", owner, UndefinedNodesMessage(unknown)));
  return nodes;
}

std::string NodeNames(const ClusterConfig& config, const std::vector<int>& nodes) {
  std::vector<std::string> names;
  for (int index : nodes) names.push_back(config.nodes[index].name);
  return CompressHostlist(names);
}

// Children first; levels from the leaves up. Returns false on a cycle.
bool AssignLevels(TopologyConfig& topology, int index, std::vector<int>& visiting) {
  SwitchConfig& node = topology.switches[index];
  if (visiting[index] == 2) return true;
  if (visiting[index] == 1) return false;
  visiting[index] = 1;
  int level = 0;
  for (int child : node.children) {
    if (!AssignLevels(topology, child, visiting)) return false;
    level = std::max(level, topology.switches[child].level + 1);
  }
  node.level = level;
  visiting[index] = 2;
  return true;
}

void CollectSubtree(TopologyConfig& topology, int index) {
  SwitchConfig& node = topology.switches[index];
  std::vector<int> all = node.nodes;
  for (int child : node.children) {
    const auto& below = topology.switches[child].subtree_nodes;
    all.insert(all.end(), below.begin(), below.end());
  }
  std::sort(all.begin(), all.end());
  node.subtree_nodes = std::move(all);
}

void LinkSwitches(const std::vector<SwitchLine>& lines, const ClusterConfig& config,
                  TopologyConfig& topology, Diagnostics& diagnostics) {
  std::map<std::string, int> by_name;
  for (const SwitchLine& line : lines) {
    if (!by_name.emplace(line.name, topology.switches.size()).second) {
      diagnostics.Error(line.where, fmt::format("switch {} is defined twice", line.name));
      continue;
    }
    SwitchConfig node;
    node.name = line.name;
    node.link_speed = line.link_speed;
    node.defined_at = line.where;
    topology.switches.push_back(std::move(node));
  }
  for (const SwitchLine& line : lines) {
    int self = by_name[line.name];
    SwitchConfig& node = topology.switches[self];
    if (!line.switches.empty() && !line.nodes.empty())
      diagnostics.Error(line.where, fmt::format("switch {} has both Switches= and Nodes=; a "
                                                "switch connects either switches or nodes",
                                                line.name));
    if (!line.nodes.empty())
      node.nodes = ResolveNodes(line.nodes, config, line.where, "switch " + line.name, diagnostics);
    if (line.switches.empty()) continue;
    auto children = ExpandHostlist(line.switches);
    if (!children) {
      diagnostics.Error(line.where,
                        fmt::format("switch {}: Switches: {}", line.name, children.error()));
      continue;
    }
    for (const std::string& child : *children) {
      auto it = by_name.find(child);
      if (it == by_name.end()) {
        diagnostics.Error(line.where, fmt::format("switch {}: switch '{}' is not defined by any "
                                                  "SwitchName line",
                                                  line.name, child));
        continue;
      }
      SwitchConfig& below = topology.switches[it->second];
      if (below.parent >= 0) {
        diagnostics.Error(line.where,
                          fmt::format("switch {} is under both {} and {}; a switch "
                                      "has one parent",
                                      child, topology.switches[below.parent].name, line.name));
        continue;
      }
      below.parent = self;
      node.children.push_back(it->second);
    }
  }
}

void CheckTree(ClusterConfig& config, Diagnostics& diagnostics) {
  TopologyConfig& topology = config.topology;
  topology.node_leaf.assign(config.nodes.size(), -1);
  for (size_t s = 0; s < topology.switches.size(); ++s) {
    const SwitchConfig& node = topology.switches[s];
    for (int n : node.nodes) {
      int& leaf = topology.node_leaf[n];
      if (leaf >= 0) {
        diagnostics.Error(
            node.defined_at,
            fmt::format("node {} is under both switch {} and switch {}; a node "
                        "sits under one leaf",
                        config.nodes[n].name, topology.switches[leaf].name, node.name));
        continue;
      }
      leaf = static_cast<int>(s);
    }
    if (node.nodes.empty() && node.children.empty())
      diagnostics.Warning(node.defined_at, fmt::format("switch {} connects nothing", node.name));
  }
  std::vector<int> visiting(topology.switches.size(), 0), roots;
  for (size_t s = 0; s < topology.switches.size(); ++s) {
    if (topology.switches[s].parent < 0) roots.push_back(static_cast<int>(s));
    if (!AssignLevels(topology, static_cast<int>(s), visiting)) {
      diagnostics.Error(
          topology.switches[s].defined_at,
          fmt::format("switch {} is part of a loop of switches", topology.switches[s].name));
      return;
    }
  }
  if (roots.empty() && !topology.switches.empty()) {
    diagnostics.Error({config.topology_conf_path, 0},
                      "every switch has a parent: the switches "
                      "form a loop with no root");
    return;
  }
  // Leaves first, so each switch's subtree is complete when its parent collects it.
  std::vector<int> order(topology.switches.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return topology.switches[a].level < topology.switches[b].level; });
  for (int s : order) CollectSubtree(topology, s);
  if (roots.size() == 1) {
    topology.root = roots.front();
  } else if (roots.size() > 1) {
    std::vector<std::string> names;
    for (int r : roots) names.push_back(topology.switches[r].name);
    diagnostics.Warning({config.topology_conf_path, 0},
                        fmt::format("switches {} have no common parent; a job cannot span them",
                                    Join(names, ", ")));
  }
  std::vector<int> orphans;
  for (size_t n = 0; n < config.nodes.size(); ++n)
    if (topology.node_leaf[n] < 0) orphans.push_back(static_cast<int>(n));
  if (!orphans.empty())
    diagnostics.Warning({config.topology_conf_path, 0},
                        fmt::format("{} node{} under no switch ({}): they can run only "
                                    "single-node jobs",
                                    orphans.size(), orphans.size() == 1 ? " is" : "s are",
                                    NodeNames(config, orphans)));
}

void CheckBlockSizes(ClusterConfig& config, const SourceLocation& where, Diagnostics& diagnostics) {
  TopologyConfig& topology = config.topology;
  if (topology.blocks.empty()) return;
  size_t smallest = SIZE_MAX;
  for (const BlockConfig& block : topology.blocks)
    smallest = std::min(smallest, block.nodes.size());
  if (topology.block_sizes.empty()) {
    // Slurm's default: the smallest block, and its power-of-two multiples up to all blocks.
    size_t total = smallest * topology.blocks.size();
    for (size_t size = smallest; size > 0 && size <= total; size *= 2)
      topology.block_sizes.push_back(static_cast<int>(size));
    return;
  }
  int base = topology.block_sizes.front();
  for (size_t i = 1; i < topology.block_sizes.size(); ++i) {
    int size = topology.block_sizes[i], previous = topology.block_sizes[i - 1];
    if (size <= previous || size % base != 0 || ((size / base) & (size / base - 1)) != 0) {
      diagnostics.Error(where, fmt::format("BlockSizes: {} must be the base block size {} times a "
                                           "power of two, larger than {}",
                                           size, base, previous));
      return;
    }
  }
  if (static_cast<size_t>(base) > smallest)
    diagnostics.Warning(where, fmt::format("BlockSizes base {} is larger than the smallest block "
                                           "({} nodes): that block cannot be used whole",
                                           base, smallest));
}

void BuildBlocks(const std::vector<ConfLine>& lines, ClusterConfig& config,
                 Diagnostics& diagnostics, KeyReporter& reporter) {
  TopologyConfig& topology = config.topology;
  topology.node_block.assign(config.nodes.size(), -1);
  SourceLocation sizes_at{config.topology_conf_path, 0};
  for (const ConfLine& line : lines) {
    const ConfPair& first = line.pairs.front();
    if (EqualsIgnoreCase(first.key, "BlockSizes")) {
      sizes_at = line.where;
      topology.block_sizes.clear();
      for (const std::string& item : Split(first.value, ',')) {
        auto size = ParseInt64(Trim(item));
        if (!size || *size < 1 || *size > 1 << 20) {
          diagnostics.Error(line.where, fmt::format("BlockSizes: invalid size '{}' (expected "
                                                    "node counts such as 18,36,72)",
                                                    item));
          return;
        }
        topology.block_sizes.push_back(static_cast<int>(*size));
      }
      continue;
    }
    if (!EqualsIgnoreCase(first.key, "BlockName")) {
      reporter.Report(diagnostics, line.where, first.key, "topology.conf",
                      std::vector<std::string_view>{"BlockName", "BlockSizes"},
                      TopologyConfDocumentedKeys());
      continue;
    }
    BlockConfig block{first.value, {}, line.where};
    for (size_t i = 1; i < line.pairs.size(); ++i) {
      if (EqualsIgnoreCase(line.pairs[i].key, "Nodes"))
        block.nodes = ResolveNodes(line.pairs[i].value, config, line.where, "block " + block.name,
                                   diagnostics);
      else
        reporter.Report(diagnostics, line.where, line.pairs[i].key, "topology.conf",
                        std::vector<std::string_view>{"Nodes"}, TopologyConfDocumentedKeys());
    }
    int index = static_cast<int>(topology.blocks.size());
    for (int n : block.nodes) {
      if (topology.node_block[n] >= 0) {
        diagnostics.Error(
            line.where,
            fmt::format("node {} is in both block {} and block {}", config.nodes[n].name,
                        topology.blocks[topology.node_block[n]].name, block.name));
        continue;
      }
      topology.node_block[n] = index;
    }
    topology.blocks.push_back(std::move(block));
  }
  CheckBlockSizes(config, sizes_at, diagnostics);
}

void BuildTree(const std::vector<ConfLine>& lines, ClusterConfig& config, Diagnostics& diagnostics,
               KeyReporter& reporter) {
  std::vector<SwitchLine> switches;
  for (const ConfLine& line : lines) {
    const ConfPair& first = line.pairs.front();
    if (!EqualsIgnoreCase(first.key, "SwitchName")) {
      reporter.Report(diagnostics, line.where, first.key, "topology.conf",
                      std::vector<std::string_view>{"SwitchName"}, TopologyConfDocumentedKeys());
      continue;
    }
    SwitchLine entry{line.where, first.value, "", "", 1};
    for (size_t i = 1; i < line.pairs.size(); ++i) {
      const ConfPair& pair = line.pairs[i];
      if (EqualsIgnoreCase(pair.key, "Switches")) {
        entry.switches = pair.value;
      } else if (EqualsIgnoreCase(pair.key, "Nodes")) {
        entry.nodes = pair.value;
      } else if (EqualsIgnoreCase(pair.key, "LinkSpeed")) {
        auto speed = ParseInt64(pair.value);
        if (!speed || *speed < 0)
          diagnostics.Error(line.where, fmt::format("LinkSpeed: invalid value '{}' (expected a "
                                                    "whole number)",
                                                    pair.value));
        else
          entry.link_speed = *speed;
      } else {
        reporter.Report(diagnostics, line.where, pair.key, "topology.conf",
                        std::vector<std::string_view>{"Switches", "Nodes", "LinkSpeed"},
                        TopologyConfDocumentedKeys());
      }
    }
    switches.push_back(std::move(entry));
  }
  LinkSwitches(switches, config, config.topology, diagnostics);
  CheckTree(config, diagnostics);
}

}  // namespace

void ApplyTopologyConf(const std::vector<ConfLine>& lines, ClusterConfig& config,
                       Diagnostics& diagnostics, KeyReporter& reporter) {
  config.topology = TopologyConfig{};
  config.topology.kind = config.settings.topology;
  if (config.topology.kind == TopologyKind::kTree) BuildTree(lines, config, diagnostics, reporter);
  if (config.topology.kind == TopologyKind::kBlock)
    BuildBlocks(lines, config, diagnostics, reporter);
}

}  // namespace drover
