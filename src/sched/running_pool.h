// RunningPool: the NodePool of the running jobs, kept between passes. A pass that builds its
// pool afresh reads every running job's allocation, and those lie all over the heap: with
// 10,000 nodes and tens of thousands of running jobs that was most of a cycle. A caller whose
// running jobs change a few at a time (the controller's engine, and the simulator through it)
// keeps one of these, names to it every pass the jobs that run, and hands the pool to Schedule
// (SchedulerInput::running_pool): only the nodes of jobs that started, ended or changed, and of
// nodes whose state changed, are recomputed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "common/cluster_config.h"
#include "sched/limits.h"
#include "sched/model.h"
#include "sched/node_pool.h"
#include "sched/planner.h"

namespace drover::sched {

// Whether a running job's cores may hold other sharing jobs (OverSubscribe in its partition).
bool SharesCores(const ClusterConfig& cluster, const RunningJob& job);

class RunningPool {
 public:
  // Starts a pass's account, with the configuration and node states the pass is given. A new
  // configuration rebuilds the pool; a node whose state changed is recomputed.
  void Begin(std::shared_ptr<const ClusterConfig> cluster, const std::vector<NodeState>& states);
  // Each job the pass is given as running, in ascending job ID. `job.revision` must change
  // whenever anything of the job the pool reads does (its allocation, partition, end time or
  // oversubscription); a job of revision 0 is read again every pass.
  void Add(const RunningJob& job);
  // Ends the account: jobs not added since Begin are gone. The pool then holds the states given
  // to Begin with exactly the jobs added taken, as NodePool and Take would build it.
  const NodePool& End();

  // Whether End has built the pool; the pool as the last End left it.
  bool ready() const { return pool_.has_value(); }
  const NodePool& pool() const { return *pool_; }
  // The jobs added since the last Begin, when End has been called: their number, and the usage
  // (sched::UsageOf) of the i-th, kept with it; null when `id` is not the i-th.
  size_t size() const { return entries_.size(); }
  const JobUsage* UsageOf(size_t i, uint64_t id) const {
    return i < entries_.size() && entries_[i].id == id ? &entries_[i].usage : nullptr;
  }

  // What the jobs on `node` give back at their ends, in job ID order (Planner::AddReleases).
  std::span<const Release> ReleasesOn(int node) const {
    return {releases_.data() + first_[node], releases_.data() + first_[node + 1]};
  }

  // Nodes recomputed by the last End (all of them when it rebuilt the pool).
  size_t recomputed() const { return recomputed_; }

  // Whether the pool and releases the last End left equal those built afresh from `running`
  // (the jobs added since Begin, with the states given to it): a check for tests and
  // simulations, at the cost of a fresh build.
  bool MatchesFresh(std::span<const RunningJob> running) const;

 private:
  struct Entry {
    uint64_t id = 0;
    uint64_t revision = 0;
    int64_t end = 0;
    bool shared = false;
    JobUsage usage;
    std::unique_ptr<const Allocation> allocation;  // its own copy, for recomputing its nodes
  };
  void Drop(const Entry& entry);  // an entry gone or replaced
  void Touch(const Allocation& allocation);
  void Take(const Entry& entry, const NodeAllocation& part);  // into the pool and releases_
  bool Valid(int node) const { return node >= 0 && static_cast<size_t>(node) < states_.size(); }

  std::shared_ptr<const ClusterConfig> cluster_;
  std::optional<NodePool> pool_;
  std::vector<NodeState> states_;
  std::vector<Entry> entries_, next_;  // by ascending ID: last pass's, this pass's
  size_t cursor_ = 0;                  // into entries_, as Add walks it
  uint64_t last_id_ = 0;
  bool rebuild_ = true;
  std::vector<char> dirty_;  // per node
  std::vector<int> dirty_nodes_;
  std::vector<std::vector<uint64_t>> on_node_;  // per node: the IDs of the entries on it
  // Every node's releases one node after another; node n's from first_[n] to first_[n + 1].
  std::vector<Release> releases_;
  std::vector<uint32_t> first_;
  std::vector<std::pair<int, Release>> taken_;  // End's: the changed nodes' releases
  size_t recomputed_ = 0;
};

}  // namespace drover::sched
