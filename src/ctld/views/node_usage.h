// What the jobs holding an allocation hold on each node, from one snapshot: the basis of a
// node's ALLOCATED/MIXED state and of allocated CPUs, memory and GPUs (metrics, sinfo).
#pragma once

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "common/cluster_config.h"
#include "ctld/engine/engine.h"

namespace drover::ctld {

// Cores and GPUs are sets: with OverSubscribe two jobs may share a core, and a node is never
// more than fully allocated.
struct NodeUsage {
  std::set<int> cores;
  uint64_t memory_mb = 0;
  std::set<int> gpus;
};

// The engine frees a suspended job's allocation only when it ends (Engine::Release).
bool HoldsAllocation(const Job& job);
// The IDs of the jobs the nodes list as running on them (NodeStatus::jobs: every running or
// suspended job with a share of the node), by ID and once each; nodes out of range are skipped.
std::vector<uint64_t> JobsOnNodes(const Snapshot& snapshot, std::span<const size_t> nodes);
// Every node's usage (one per node of the configuration), or only that of the nodes `only`
// lists (the others' stay empty). The jobs are found through the nodes' own lists of the jobs
// they run, so the cost grows with the running jobs of those nodes, not with the queue.
std::vector<NodeUsage> UsageByNode(const ClusterConfig& cluster, const Snapshot& snapshot,
                                   std::span<const size_t> only = {});
// Every core of the node is taken.
bool FullyAllocated(const ClusterConfig& cluster, const std::vector<NodeUsage>& usage, size_t node);
// Slurm's state name, ALLOCATED when every core is taken.
std::string NodeState(const ClusterConfig& cluster, const Snapshot& snapshot,
                      const std::vector<NodeUsage>& usage, size_t node);
int AllocatedCpus(const NodeConfig& node, const NodeUsage& usage);

}  // namespace drover::ctld
