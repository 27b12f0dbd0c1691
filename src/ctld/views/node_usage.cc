// See node_usage.h.
#include "ctld/views/node_usage.h"

#include <algorithm>

namespace drover::ctld {

bool HoldsAllocation(const Job& job) {
  return job.state == JobState::kRunning || job.state == JobState::kSuspended;
}

std::vector<NodeUsage> UsageByNode(const ClusterConfig& cluster, const Snapshot& snapshot) {
  std::vector<NodeUsage> usage(cluster.nodes.size());
  for (const JobPtr& job : snapshot.jobs) {
    if (!HoldsAllocation(*job)) continue;
    for (const sched::NodeAllocation& share : job->allocation.nodes) {
      if (share.node < 0 || share.node >= static_cast<int>(usage.size())) continue;
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
