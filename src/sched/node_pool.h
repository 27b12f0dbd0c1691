// NodePool: the free cores, memory and GPUs of every node during one scheduling pass, with the
// indexes that make a pass over 100,000 jobs cheap: nodes bucketed by (weight, free GPUs) for
// best-fit single-node placement, and cluster-wide counts of nodes by free GPUs for early
// rejection. Fit() picks exact cores, memory and GPUs on one node; nothing here knows topology.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/cluster_config.h"
#include "sched/model.h"

namespace drover::sched {

// What a job needs on each node it runs on.
struct NodeRequest {
  int cpus = 1;               // CPUs (threads); whole cores are allocated
  uint64_t memory_mb = 0;     // 0 with whole_memory: all of the node's memory
  bool whole_memory = false;  // no --mem and no default: Slurm gives the whole node's memory
  int gpus = 0;
  std::string gpu_type;            // empty: any
  bool exclusive = false;          // the whole node
  uint64_t max_cpus_per_node = 0;  // partition MaxCPUsPerNode; 0: none
};

class NodePool {
 public:
  // Starts with every node free; states other than kUp take no work.
  NodePool(const ClusterConfig& cluster, const std::vector<NodeState>& states);

  // Marks an allocation as used: a running job's, or one this pass just made.
  void Take(const Allocation& allocation);
  void Commit(const NodeAllocation& allocation, bool exclusive);

  // Whether `request` fits on `node` now (cheap: counts only, no core or GPU choice).
  bool MightFit(int node, const NodeRequest& request) const;
  // The exact cores, memory and GPUs `request` would get on `node`, or nullopt.
  std::optional<NodeAllocation> Fit(int node, const NodeRequest& request) const;

  // Best-fit single-node search: lowest weight first, then fewest free GPUs that suffice,
  // then node order. `allowed` filters nodes (partition, features, nodelist); may be empty.
  template <typename Allowed>
  std::optional<NodeAllocation> FindSingleNode(const NodeRequest& request, Allowed allowed) const;

  // Nodes that could hold `request` now, cluster-wide, by free GPUs alone (an upper bound).
  int CountWithFreeGpus(int gpus) const;
  // Calls `visit(node)` for every usable node with at least `gpus` free GPUs (in no set order).
  template <typename Visit>
  void ForEachWithFreeGpus(int gpus, Visit visit) const;

  int free_gpus(int node) const { return nodes_[node].free_gpu_count; }
  int free_cores(int node) const { return nodes_[node].free_core_count; }
  uint64_t free_memory(int node) const { return nodes_[node].free_memory_mb; }
  bool idle(int node) const { return nodes_[node].jobs == 0; }
  bool usable(int node) const { return nodes_[node].usable; }
  size_t size() const { return nodes_.size(); }

 private:
  struct Node {
    std::vector<uint64_t> free_cores;  // bitset over core indexes
    int free_core_count = 0;
    uint64_t free_memory_mb = 0;
    uint64_t free_gpus = 0;  // bitset over positions in NodeConfig::gpus
    int free_gpu_count = 0;
    int jobs = 0;
    bool usable = true;
  };

  void Index(int node);
  void Unindex(int node);
  std::vector<int> ChooseGpus(int node, const NodeRequest& request) const;
  // Cores local to the chosen GPUs come first, so --gpus-per-task and --cpus-per-gpu jobs (and
  // every other GPU job) get cores on their GPUs' socket whenever it has them free.
  std::vector<int> ChooseCores(int node, int count, const std::vector<int>& gpu_positions) const;
  int CoresNeeded(int node, const NodeRequest& request) const;

  const ClusterConfig& cluster_;
  std::vector<Node> nodes_;
  std::vector<std::vector<int>> gpu_socket_;  // per node, per GPU position: its socket or -1
  std::map<std::pair<uint32_t, int>, std::set<int>> buckets_;  // (weight, free GPUs) -> nodes
  std::vector<int> count_by_free_gpus_;  // usable nodes with exactly g free GPUs
};

template <typename Allowed>
std::optional<NodeAllocation> NodePool::FindSingleNode(const NodeRequest& request,
                                                       Allowed allowed) const {
  for (const auto& [key, members] : buckets_) {
    if (key.second < request.gpus) continue;
    for (int node : members) {
      if (!MightFit(node, request) || !allowed(node)) continue;
      if (auto fit = Fit(node, request)) return fit;
    }
  }
  return std::nullopt;
}

template <typename Visit>
void NodePool::ForEachWithFreeGpus(int gpus, Visit visit) const {
  for (const auto& [key, members] : buckets_)
    if (key.second >= gpus)
      for (int node : members) visit(node);
}

}  // namespace drover::sched
