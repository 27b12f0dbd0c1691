// See node_usage.h.
#include "ctld/views/node_usage.h"

#include <algorithm>

namespace drover::ctld {

bool HoldsAllocation(const Job& job) {
  return job.state == JobState::kRunning || job.state == JobState::kSuspended;
}

std::vector<NodeUsage> UsageByNode(const ClusterConfig& cluster, const Snapshot& snapshot,
                                   std::span<const size_t> only) {
  std::vector<NodeUsage> usage(cluster.nodes.size());
  std::vector<bool> wanted(usage.size(), only.empty());
  std::vector<uint64_t> ids;  // each job once, however many of the nodes it runs on
  auto add = [&](size_t node) {
    if (node >= snapshot.nodes.size() || node >= usage.size()) return;
    wanted[node] = true;
    ids.insert(ids.end(), snapshot.nodes[node].jobs.begin(), snapshot.nodes[node].jobs.end());
  };
  if (only.empty()) {
    for (size_t node = 0; node < usage.size(); ++node) add(node);
  } else {
    for (size_t node : only) add(node);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  for (uint64_t id : ids) {
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
