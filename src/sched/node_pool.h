// NodePool: the free cores, memory and GPUs of every node during one scheduling pass, with the
// indexes that make a pass over 100,000 jobs cheap: nodes bucketed by (weight, free GPUs) for
// best-fit single-node placement, and cluster-wide counts of nodes by free GPUs for early
// rejection. Fit() picks exact cores, memory and GPUs on one node; nothing here knows topology.
#pragma once

#include <algorithm>
#include <bit>
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
  std::string gpu_type;  // empty: any
  // gres/shard or gres/mps (`share_gres`): this many shares of one GPU (of gpu_type), on nodes
  // that share their GPUs that way; `gpus` is then 0. A GPU is given whole or shared, never
  // both at once.
  uint32_t shares = 0;
  std::string share_gres;
  int nvme = 0;                    // gres/nvme: whole NVMe drives
  bool exclusive = false;          // the whole node
  uint64_t max_cpus_per_node = 0;  // partition MaxCPUsPerNode; 0: none
  // --gres-flags=enforce-binding: cores only from those gres.conf Cores= ties to the chosen
  // GPUs, and some for each of them.
  bool enforce_binding = false;
  // OverSubscribe=FORCE:N, or YES:N with --oversubscribe: each core may hold up to N such jobs
  // (idle cores first). 1: the job's cores are its own.
  int share = 1;
};

// Whether `node`, idle, has the GRES besides GPUs that `request` asks for (GPU shares, NVMe).
bool HasGresFor(const NodeConfig& node, const NodeRequest& request);

class NodePool {
 public:
  // Starts with every node free; states other than kUp take no work.
  NodePool(const ClusterConfig& cluster, const std::vector<NodeState>& states);

  // Marks an allocation as used: a running job's, or one this pass just made. `shared`: its
  // cores may hold other sharing jobs (OverSubscribe); else no other job may use them.
  // `end`: when the job will be gone at the latest (a sharing job keeps its GPU from being
  // whole until then).
  void Take(const Allocation& allocation, bool shared = false, int64_t end = 0);
  void Commit(const NodeAllocation& allocation, bool exclusive, bool shared = false,
              int64_t end = 0);

  // Gives `node` back whole: no job on it, usable or not. A kept pool (RunningPool) recomputes
  // a node whose jobs changed this way, then takes its jobs again.
  void ResetNode(int node, bool usable);
  // Whether `other` holds the same free resources and indexes (a kept pool's check against one
  // built afresh).
  bool SameState(const NodePool& other) const;
  const ClusterConfig& cluster() const { return cluster_; }

  // Whether `request` fits on `node` now (cheap: counts only, no core or GPU choice).
  bool MightFit(int node, const NodeRequest& request) const;
  // The exact cores, memory and GPUs `request` would get on `node`, or nullopt.
  std::optional<NodeAllocation> Fit(int node, const NodeRequest& request) const;

  // Best-fit single-node search: lowest weight first, then fewest free GPUs that suffice,
  // then node order. `allowed` filters nodes (partition, features, nodelist); may be empty.
  template <typename Allowed>
  std::optional<NodeAllocation> FindSingleNode(const NodeRequest& request, Allowed allowed) const;

  // The same among `among` alone (a partition much smaller than the cluster), in the same
  // order: a job of a 16-node partition looks at 16 nodes, not at every node of the cluster.
  template <typename Allowed>
  std::optional<NodeAllocation> FindSingleNodeAmong(const std::vector<int>& among,
                                                    const NodeRequest& request,
                                                    Allowed allowed) const;
  // Calls `visit(node)` for every usable node of `among` with at least `gpus` free GPUs.
  template <typename Visit>
  void ForEachWithFreeGpusAmong(const std::vector<int>& among, int gpus, Visit visit) const {
    for (int node : among)
      if (nodes_[node].usable && nodes_[node].free_gpu_count >= gpus) visit(node);
  }

  // Nodes that could hold `request` now, cluster-wide, by free GPUs alone (an upper bound).
  int CountWithFreeGpus(int gpus) const;
  // Calls `visit(node)` for every usable node with at least `gpus` free GPUs (in no set order).
  template <typename Visit>
  void ForEachWithFreeGpus(int gpus, Visit visit) const;

  int free_gpus(int node) const { return nodes_[node].free_gpu_count; }
  // For the planner, which counts a sharing job as holding a GPU of its own: the whole GPUs
  // free less the jobs sharing a GPU with another, and the shares of GPUs not held whole.
  int planned_free_gpus(int node) const;
  int64_t free_shares(int node) const;
  // The GPU (position) a sharing request takes its shares from: of its type, with the fewest
  // free shares that suffice (GPUs already shared first, keeping whole ones whole); -1: none.
  int ChooseSharedGpu(int node, const NodeRequest& request) const;
  // Until when the jobs sharing GPU `position` of `node` hold it (0: none shares it).
  int64_t shared_until(int node, int position) const {
    return share_until_.empty() ? 0 : share_until_[gpu_offset_[node] + position];
  }
  int free_nvme(int node) const { return std::popcount(nodes_[node].free_nvme); }
  int free_cores(int node) const { return nodes_[node].free_core_count; }
  uint64_t free_memory(int node) const { return nodes_[node].free_memory_mb; }
  bool idle(int node) const { return nodes_[node].jobs == 0; }
  bool usable(int node) const { return nodes_[node].usable; }
  size_t size() const { return nodes_.size(); }

 private:
  struct Node {
    uint32_t core_offset = 0;  // its bitset over core indexes starts here in core_bits_
    int free_core_count = 0;
    uint64_t free_memory_mb = 0;
    uint64_t free_gpus = 0;  // bitset over positions in NodeConfig::gpus
    int free_gpu_count = 0;
    uint64_t free_nvme = 0;  // bitset over NodeConfig::nvme
    int jobs = 0;
    int bucket_base = 0;  // its weight's bucket of 0 free GPUs; + free GPUs is its bucket
    bool usable = true;
  };
  // Usable nodes by (weight, free GPUs), in that order, each bucket a bitset over node indexes:
  // moving a node is two bits, and a bucket lists its nodes in index order. A pass builds the
  // pool afresh, so this must be cheap to build for 10,000 nodes (no allocation per node).
  struct Bucket {
    uint32_t weight = 0;
    int gpus = 0;
    int members = 0;
    std::vector<uint64_t> bits;  // allocated when the first node enters
  };

  void Index(int node);
  void Unindex(int node);
  void SetIdle(int node, bool usable);  // unindexed
  uint64_t* CoreBits(int node) { return core_bits_.data() + nodes_[node].core_offset; }
  const uint64_t* CoreBits(int node) const { return core_bits_.data() + nodes_[node].core_offset; }
  std::vector<int> ChooseGpus(int node, const NodeRequest& request) const;
  // Cores local to the chosen GPUs come first, so --gpus-per-task and --cpus-per-gpu jobs (and
  // every other GPU job) get cores on their GPUs' socket whenever it has them free.
  // With `enforce_binding` only those local cores, taken in turn from each GPU's; with
  // `share` > 1 busy cores that sharing jobs hold, the least used first, once the idle ones are
  // taken. Empty when they do not suffice.
  std::vector<int> ChooseCores(int node, int count, const std::vector<int>& gpu_positions,
                               bool enforce_binding = false, int share = 1) const;
  void TakeShared(int node, int count, std::vector<int>& chosen, int share) const;
  // Cores a job sharing up to `share` ways could use: idle ones and those sharing jobs hold.
  int ShareableCores(int node, int share) const;
  int AvailableCores(int node, const NodeRequest& request) const;
  bool ChooseBound(int node, const NodeRequest& request, std::vector<int>& gpu_positions,
                   std::vector<int>& cores) const;
  int CoresNeeded(int node, const NodeRequest& request) const;
  template <typename Visit>
  static void ForEachMember(const Bucket& bucket, Visit visit);

  const ClusterConfig& cluster_;
  std::vector<Node> nodes_;
  std::vector<uint64_t> core_bits_;  // every node's free cores, one after another
  // Only when a partition lets jobs share cores: per core (at core_offset * 64 + core), how many
  // sharing jobs hold it; kHeldAlone when a job that does not share does.
  static constexpr uint8_t kHeldAlone = 255;
  std::vector<uint8_t> core_uses_;
  std::vector<int> gpu_socket_;  // per node (from gpu_offset_), per GPU position: socket or -1
  std::vector<uint32_t> gpu_offset_;
  // Per node (from gpu_offset_), per GPU position, only when some node shares its GPUs: the
  // shares still free (0 once the GPU is held whole) and the jobs sharing it.
  std::vector<uint32_t> shares_free_;
  std::vector<uint16_t> share_jobs_;
  std::vector<int64_t> share_until_;
  std::vector<Bucket> buckets_;          // sorted by (weight, free GPUs)
  std::vector<int> count_by_free_gpus_;  // usable nodes with exactly g free GPUs
};

template <typename Visit>
void NodePool::ForEachMember(const Bucket& bucket, Visit visit) {
  if (bucket.members == 0) return;
  for (size_t w = 0; w < bucket.bits.size(); ++w)
    for (uint64_t word = bucket.bits[w]; word; word &= word - 1)
      if (!visit(static_cast<int>(w * 64 + static_cast<size_t>(std::countr_zero(word))))) return;
}

template <typename Allowed>
std::optional<NodeAllocation> NodePool::FindSingleNode(const NodeRequest& request,
                                                       Allowed allowed) const {
  std::optional<NodeAllocation> found;
  for (const Bucket& bucket : buckets_) {
    if (bucket.gpus < request.gpus) continue;
    ForEachMember(bucket, [&](int node) {
      if (!MightFit(node, request) || !allowed(node)) return true;
      found = Fit(node, request);
      return !found;
    });
    if (found) return found;
  }
  return std::nullopt;
}

template <typename Allowed>
std::optional<NodeAllocation> NodePool::FindSingleNodeAmong(const std::vector<int>& among,
                                                            const NodeRequest& request,
                                                            Allowed allowed) const {
  // FindSingleNode's order: its bucket (weight, then free GPUs), then the node's index.
  std::vector<std::pair<int, int>> order;
  order.reserve(among.size());
  ForEachWithFreeGpusAmong(among, request.gpus, [&](int node) {
    order.emplace_back(nodes_[node].bucket_base + nodes_[node].free_gpu_count, node);
  });
  std::sort(order.begin(), order.end());
  for (const auto& [bucket, node] : order) {
    if (!MightFit(node, request) || !allowed(node)) continue;
    if (auto found = Fit(node, request)) return found;
  }
  return std::nullopt;
}

template <typename Visit>
void NodePool::ForEachWithFreeGpus(int gpus, Visit visit) const {
  for (const Bucket& bucket : buckets_)
    if (bucket.gpus >= gpus)
      ForEachMember(bucket, [&](int node) {
        visit(node);
        return true;
      });
}

}  // namespace drover::sched
