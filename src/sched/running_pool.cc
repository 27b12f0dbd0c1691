// The kept pool of running jobs; see running_pool.h.
#include "sched/running_pool.h"

#include <algorithm>

#include "sched/request.h"

namespace drover::sched {

bool SharesCores(const ClusterConfig& cluster, const RunningJob& job) {
  return job.partition >= 0 && static_cast<size_t>(job.partition) < cluster.partitions.size() &&
         CoreShare(cluster.partitions[job.partition], job.oversubscribe, job.held().exclusive) > 1;
}

void RunningPool::Begin(std::shared_ptr<const ClusterConfig> cluster,
                        const std::vector<NodeState>& states) {
  std::vector<NodeState> given = states;
  if (given.empty()) given.assign(cluster->nodes.size(), NodeState::kUp);
  if (cluster != cluster_ || given.size() != states_.size() || !pool_) {
    pool_.reset();  // it refers to the old configuration
    // And every entry was worked out under it (whether it shares cores, its usage): all are
    // read again.
    entries_.clear();
    cluster_ = std::move(cluster);
    rebuild_ = true;
  }
  if (!rebuild_)
    for (size_t i = 0; i < given.size(); ++i)
      if (given[i] != states_[i] && !dirty_[i]) {
        dirty_[i] = 1;
        dirty_nodes_.push_back(static_cast<int>(i));
      }
  states_ = std::move(given);
  cursor_ = 0;
  last_id_ = 0;
  next_.clear();
  next_.reserve(entries_.size() + 16);
}

void RunningPool::Take(const Entry& entry, const NodeAllocation& part) {
  pool_->Commit(part, entry.allocation->exclusive, entry.shared, entry.end);
  taken_.emplace_back(part.node,
                      Release{entry.end, entry.id,
                              Held(cluster_->nodes[part.node], part, entry.allocation->exclusive)});
}

void RunningPool::Touch(const Allocation& allocation) {
  for (const NodeAllocation& part : allocation.nodes)
    if (Valid(part.node) && !dirty_[part.node]) {
      dirty_[part.node] = 1;
      dirty_nodes_.push_back(part.node);
    }
}

void RunningPool::Drop(const Entry& entry) {
  if (rebuild_) return;
  Touch(*entry.allocation);
  for (const NodeAllocation& part : entry.allocation->nodes) {
    if (!Valid(part.node)) continue;
    std::vector<uint64_t>& ids = on_node_[part.node];
    auto it = std::find(ids.begin(), ids.end(), entry.id);
    if (it != ids.end()) ids.erase(it);
  }
}

void RunningPool::Add(const RunningJob& job) {
  // Out of order: the walk below cannot pair entries; rebuild from what is added.
  if (job.job_id <= last_id_ && !next_.empty()) rebuild_ = true;
  last_id_ = job.job_id;
  while (cursor_ < entries_.size() && entries_[cursor_].id < job.job_id) Drop(entries_[cursor_++]);
  if (cursor_ < entries_.size() && entries_[cursor_].id == job.job_id) {
    Entry& kept = entries_[cursor_++];
    if (kept.revision != 0 && kept.revision == job.revision) {
      next_.push_back(std::move(kept));
      return;
    }
    Drop(kept);
  }
  Entry entry;
  entry.id = job.job_id;
  entry.revision = job.revision;
  entry.end = job.end_time;
  entry.shared = SharesCores(*cluster_, job);
  entry.allocation = std::make_unique<const Allocation>(job.held());
  entry.usage = sched::UsageOf(*cluster_, *entry.allocation);
  if (!rebuild_) {
    Touch(*entry.allocation);
    for (const NodeAllocation& part : entry.allocation->nodes)
      if (Valid(part.node)) on_node_[part.node].push_back(entry.id);
  }
  next_.push_back(std::move(entry));
}

const NodePool& RunningPool::End() {
  while (cursor_ < entries_.size()) Drop(entries_[cursor_++]);
  entries_.swap(next_);
  next_.clear();
  taken_.clear();
  if (rebuild_) {
    std::sort(entries_.begin(), entries_.end(),
              [](const Entry& a, const Entry& b) { return a.id < b.id; });
    pool_.emplace(*cluster_, states_);
    on_node_.assign(states_.size(), {});
    for (const Entry& entry : entries_) {
      for (const NodeAllocation& part : entry.allocation->nodes) {
        if (!Valid(part.node)) continue;
        Take(entry, part);
        on_node_[part.node].push_back(entry.id);
      }
    }
    dirty_.assign(states_.size(), 1);
    dirty_nodes_.clear();
    for (size_t node = 0; node < states_.size(); ++node)
      dirty_nodes_.push_back(static_cast<int>(node));
    recomputed_ = states_.size();
    rebuild_ = false;
  } else {
    // Each changed node afresh: idle in its state, then every job on it taken again in ID
    // order, the order a pool built afresh takes them in.
    auto by_id = [](const Entry& entry, uint64_t id) { return entry.id < id; };
    std::sort(dirty_nodes_.begin(), dirty_nodes_.end());
    for (int node : dirty_nodes_) {
      pool_->ResetNode(node, states_[node] == NodeState::kUp);
      std::vector<uint64_t>& ids = on_node_[node];
      std::sort(ids.begin(), ids.end());
      for (size_t k = 0; k < ids.size(); ++k) {
        uint64_t id = ids[k];
        if (k > 0 && ids[k - 1] == id) continue;  // listed once a part; its parts taken below
        auto it = std::lower_bound(entries_.begin(), entries_.end(), id, by_id);
        if (it == entries_.end() || it->id != id) continue;
        for (const NodeAllocation& part : it->allocation->nodes)
          if (part.node == node) Take(*it, part);
      }
    }
    recomputed_ = dirty_nodes_.size();
  }
  // The releases, node after node in one array: the changed nodes' from taken_ (by node, then
  // job ID, as taken), the others' as they were.
  std::stable_sort(taken_.begin(), taken_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Release> flat;
  flat.reserve(releases_.size() + taken_.size());
  std::vector<uint32_t> first(states_.size() + 1, 0);
  size_t k = 0;
  for (size_t node = 0; node < states_.size(); ++node) {
    first[node] = static_cast<uint32_t>(flat.size());
    if (dirty_[node]) {
      for (; k < taken_.size() && taken_[k].first == static_cast<int>(node); ++k)
        flat.push_back(taken_[k].second);
      dirty_[node] = 0;
    } else if (node + 1 < first_.size()) {
      flat.insert(flat.end(), releases_.begin() + first_[node],
                  releases_.begin() + first_[node + 1]);
    }
  }
  first[states_.size()] = static_cast<uint32_t>(flat.size());
  releases_.swap(flat);
  first_.swap(first);
  dirty_nodes_.clear();
  return *pool_;
}

bool RunningPool::MatchesFresh(std::span<const RunningJob> running) const {
  if (!pool_) return false;
  NodePool fresh(*cluster_, states_);
  std::vector<std::vector<Release>> releases(states_.size());
  for (const RunningJob& job : running) {
    fresh.Take(job.held(), SharesCores(*cluster_, job), job.end_time);
    for (const NodeAllocation& part : job.held().nodes)
      if (Valid(part.node))
        releases[part.node].push_back(
            {job.end_time, job.job_id,
             Held(cluster_->nodes[part.node], part, job.held().exclusive)});
  }
  if (!fresh.SameState(*pool_)) return false;
  for (size_t node = 0; node < releases.size(); ++node) {
    std::span<const Release> kept = ReleasesOn(static_cast<int>(node));
    if (!std::equal(kept.begin(), kept.end(), releases[node].begin(), releases[node].end()))
      return false;
  }
  return true;
}

}  // namespace drover::sched
