// See node_usage.h.
#include "ctld/views/node_usage.h"

#include <algorithm>
#include <numeric>

namespace drover::ctld {

bool HoldsAllocation(const Job& job) {
  return job.state == JobState::kRunning || job.state == JobState::kSuspended;
}

std::vector<uint64_t> JobsOnNodes(const Snapshot& snapshot, std::span<const size_t> nodes) {
  std::vector<uint64_t> ids;
  for (size_t node : nodes)
    if (node < snapshot.nodes.size())
      ids.insert(ids.end(), snapshot.nodes[node].jobs.begin(), snapshot.nodes[node].jobs.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::vector<NodeUsage> UsageByNode(const ClusterConfig& cluster, const Snapshot& snapshot,
                                   std::span<const size_t> only) {
  std::vector<NodeUsage> usage(cluster.nodes.size());
  std::vector<size_t> every;
  if (only.empty()) {
    every.resize(usage.size());
    std::iota(every.begin(), every.end(), size_t{0});
    only = every;
  }
  std::vector<bool> wanted(usage.size());
  for (size_t node : only)
    if (node < wanted.size()) wanted[node] = true;
  for (uint64_t id : JobsOnNodes(snapshot, only)) {
    const JobPtr* job = snapshot.jobs.Find(id);
    if (!job || !HoldsAllocation(**job)) continue;
    for (const sched::NodeAllocation& share : (*job)->allocation.nodes) {
      if (share.node < 0 || share.node >= static_cast<int>(usage.size()) || !wanted[share.node])
        continue;
      NodeUsage& node = usage[share.node];
      node.cores.insert(share.cores.begin(), share.cores.end());
      node.memory_mb += share.memory_mb;
      node.gpus.insert(share.gpus.begin(), share.gpus.end());
    }
  }
  return usage;
}

bool FullyAllocated(const ClusterConfig& cluster, const std::vector<NodeUsage>& usage,
                    size_t node) {
  return static_cast<int>(usage[node].cores.size()) >= cluster.nodes[node].cores();
}

std::string NodeState(const ClusterConfig& cluster, const Snapshot& snapshot,
                      const std::vector<NodeUsage>& usage, size_t node) {
  return NodeStateName(snapshot.nodes[node], FullyAllocated(cluster, usage, node));
}

int AllocatedCpus(const NodeConfig& node, const NodeUsage& usage) {
  int cpus = static_cast<int>(usage.cores.size()) * std::max(node.threads_per_core, 1);
  return std::min(cpus, node.cpus);
}

}  // namespace drover::ctld
