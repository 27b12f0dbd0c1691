// Tree and block placement; see placement.h. Both reduce to the same step — choose the fewest
// groups (leaves or blocks) that hold the job, preferring the tightest fit — applied inside the
// best enclosing switch (tree) or BlockSizes group (block).
#include "sched/placement.h"

#include <algorithm>
#include <numeric>

namespace drover::sched {
namespace {

// Candidates grouped by leaf or block, in preference order within each group.
using Groups = std::vector<std::vector<int>>;

// The fewest groups holding `nodes`, best fit: one group if any suffices (the smallest that
// does); else the largest groups, with the last one swapped for the smallest that covers the
// remainder. `usable(g)` is how many nodes group g may give (segments round it down).
std::optional<std::vector<int>> FewestGroups(const std::vector<int>& groups,
                                             const std::vector<int>& usable, int nodes,
                                             int max_groups) {
  std::vector<int> order = groups;
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return usable[a] != usable[b] ? usable[a] > usable[b] : a < b; });
  int single = -1;
  for (int g : order)
    if (usable[g] >= nodes) single = g;  // order is descending, so the last is the tightest
  if (single >= 0) return std::vector<int>{single};
  std::vector<int> chosen;
  int sum = 0;
  size_t i = 0;
  for (; i < order.size() && sum < nodes; ++i) {
    chosen.push_back(order[i]);
    sum += usable[order[i]];
  }
  if (sum < nodes) return std::nullopt;
  if (max_groups > 0 && static_cast<int>(chosen.size()) > max_groups) return std::nullopt;
  int remainder = nodes - (sum - usable[chosen.back()]);
  for (size_t j = order.size(); j-- > i;) {
    if (usable[order[j]] >= remainder) {
      chosen.back() = order[j];
      break;
    }
  }
  return chosen;
}

std::vector<int> TakeNodes(const Groups& members, const std::vector<int>& usable,
                           const std::vector<int>& chosen, int nodes) {
  std::vector<int> taken;
  for (int g : chosen) {
    int want = std::min(usable[g], nodes - static_cast<int>(taken.size()));
    taken.insert(taken.end(), members[g].begin(), members[g].begin() + want);
  }
  std::sort(taken.begin(), taken.end());
  return taken;
}

bool IsUnder(const TopologyConfig& topology, int leaf, int ancestor) {
  for (int s = leaf; s >= 0; s = topology.switches[s].parent)
    if (s == ancestor) return true;
  return false;
}

std::optional<std::vector<int>> PlaceTree(const ClusterConfig& cluster,
                                          const std::vector<int>& candidates,
                                          const PlacementRequest& request) {
  const TopologyConfig& topology = cluster.topology;
  Groups members(topology.switches.size());
  for (int node : candidates)
    if (int leaf = topology.node_leaf[node]; leaf >= 0) members[leaf].push_back(node);
  std::vector<int> count(topology.switches.size(), 0), leaves;
  for (size_t leaf = 0; leaf < members.size(); ++leaf) {
    if (members[leaf].empty()) continue;
    leaves.push_back(static_cast<int>(leaf));
    for (int s = static_cast<int>(leaf); s >= 0; s = topology.switches[s].parent)
      count[s] += static_cast<int>(members[leaf].size());
  }
  // The lowest switch that can hold the job, the tightest of those.
  int best = -1;
  for (size_t s = 0; s < topology.switches.size(); ++s) {
    if (count[s] < request.nodes) continue;
    auto key = [&](int i) { return std::pair(topology.switches[i].level, count[i]); };
    if (best < 0 || key(static_cast<int>(s)) < key(best)) best = static_cast<int>(s);
  }
  if (best < 0) return std::nullopt;
  std::vector<int> under;
  for (int leaf : leaves)
    if (IsUnder(topology, leaf, best)) under.push_back(leaf);
  std::vector<int> usable(members.size());
  for (int leaf : under) usable[leaf] = static_cast<int>(members[leaf].size());
  auto chosen = FewestGroups(under, usable, request.nodes, request.max_leaves);
  if (!chosen) return std::nullopt;
  return TakeNodes(members, usable, *chosen, request.nodes);
}

std::optional<std::vector<int>> PlaceBlocks(const ClusterConfig& cluster,
                                            const std::vector<int>& candidates,
                                            const PlacementRequest& request) {
  const TopologyConfig& topology = cluster.topology;
  size_t block_count = topology.blocks.size();
  Groups members(block_count);
  for (int node : candidates)
    if (int block = topology.node_block[node]; block >= 0) members[block].push_back(node);
  std::vector<int> usable(block_count);
  int segment = std::max(request.segment, 1);
  for (size_t b = 0; b < block_count; ++b)
    usable[b] = static_cast<int>(members[b].size()) / segment * segment;
  // The smallest BlockSizes level that holds the job sets how many aligned blocks form a group.
  int base = topology.block_sizes.empty() ? 1 : std::max(topology.block_sizes.front(), 1);
  size_t per_group = block_count;
  for (int size : topology.block_sizes) {
    if (size >= request.nodes) {
      per_group = std::max<size_t>(1, static_cast<size_t>(size / base));
      break;
    }
  }
  std::optional<std::vector<int>> best;
  int best_total = 0;
  for (size_t first = 0; first < block_count; first += per_group) {
    std::vector<int> group(std::min(per_group, block_count - first));
    std::iota(group.begin(), group.end(), static_cast<int>(first));
    int total = 0;
    for (int b : group) total += usable[b];
    if (total < request.nodes || (best && total >= best_total)) continue;
    if (auto chosen = FewestGroups(group, usable, request.nodes, request.max_leaves)) {
      best = chosen;
      best_total = total;
    }
  }
  if (!best) return std::nullopt;
  return TakeNodes(members, usable, *best, request.nodes);
}

}  // namespace

std::optional<std::vector<int>> ChooseNodes(const ClusterConfig& cluster,
                                            const std::vector<int>& candidates,
                                            const PlacementRequest& request) {
  if (request.nodes <= 0 || static_cast<int>(candidates.size()) < request.nodes)
    return std::nullopt;
  switch (cluster.topology.kind) {
    case TopologyKind::kTree:
      if (request.nodes > 1) return PlaceTree(cluster, candidates, request);
      break;
    case TopologyKind::kBlock:
      if (request.nodes > 1 || request.segment > 0)
        return PlaceBlocks(cluster, candidates, request);
      break;
    case TopologyKind::kFlat:
      break;
  }
  std::vector<int> taken(candidates.begin(), candidates.begin() + request.nodes);
  std::sort(taken.begin(), taken.end());
  return taken;
}

}  // namespace drover::sched
