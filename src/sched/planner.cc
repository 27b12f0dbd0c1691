// The availability profile and its earliest-fit query; see planner.h.
#include "sched/planner.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

namespace drover::sched {
namespace {

int64_t SharesOf(const NodeConfig& node) {
  // Only a node whose Gres= shares GPUs has shares (gres_conf.cc); the others' are 0 and are
  // not read: a query reads a node's capacity for every node of a shape, and the GPU records lie
  // far apart.
  if (node.gpu_sharing.empty()) return 0;
  int64_t shares = 0;
  for (const GpuDevice& gpu : node.gpus) shares += gpu.shares;
  return shares;
}

Amount Capacity(const NodeConfig& node) {
  return {node.cores(), static_cast<int64_t>(node.real_memory_mb),
          static_cast<int64_t>(node.gpus.size()), SharesOf(node),
          static_cast<int64_t>(node.nvme.size())};
}

Amount Negated(const Amount& amount) {
  return {-amount.cores, -amount.memory_mb, -amount.gpus, -amount.shares, -amount.nvme};
}

using WindowEntry = std::tuple<int64_t, int, int64_t>;  // (start, node, end)

// Several length classes' windows walked together in start order: a merge of sorted sets
// through a heap of cursors, earliest next window on top.
class MergedWindows {
  struct Cursor {
    std::pmr::set<WindowEntry>::const_iterator at, end;
  };
  // Heap order: the cursor whose next window starts later sinks.
  struct Later {
    const std::vector<Cursor>* cursors;
    bool operator()(size_t a, size_t b) const {
      return std::get<0>(*(*cursors)[a].at) > std::get<0>(*(*cursors)[b].at);
    }
  };

 public:
  MergedWindows(const std::vector<std::pmr::set<WindowEntry>>& classes, int first) {
    for (size_t c = first; c < classes.size(); ++c)
      if (!classes[c].empty()) cursors_.push_back({classes[c].begin(), classes[c].end()});
    heap_.resize(cursors_.size());
    for (size_t i = 0; i < heap_.size(); ++i) heap_[i] = i;
    std::make_heap(heap_.begin(), heap_.end(), Later{&cursors_});
  }

  // The next window in start order; nullopt once every class is walked.
  std::optional<WindowEntry> Next() {
    if (heap_.empty()) return std::nullopt;
    WindowEntry window = *cursors_[heap_.front()].at;
    std::pop_heap(heap_.begin(), heap_.end(), Later{&cursors_});
    Cursor& top = cursors_[heap_.back()];
    if (++top.at == top.end)
      heap_.pop_back();
    else
      std::push_heap(heap_.begin(), heap_.end(), Later{&cursors_});
    return window;
  }

 private:
  std::vector<Cursor> cursors_;
  std::vector<size_t> heap_;
};

// The nodes whose window is open at the current start time: (last start it allows, node, when
// it opened). Among them the plan prefers those that open last, so that nodes free sooner stay
// free for backfill; the windows opening at one time are taken as a group, and a group that
// alone holds the job ends the search at once.
class OpenNodes {
 public:
  OpenNodes(const ClusterConfig& cluster, int count, const PlacementRequest& placement)
      : cluster_(cluster),
        count_(count),
        placement_(placement),
        next_try_(static_cast<size_t>(std::max(count, 1))) {}

  int64_t start() const { return start_; }

  // Moves on to windows opening at `start`: the nodes open until now are tried first (their
  // group is complete), then those whose windows end before `start` leave.
  std::optional<PlannedPlace> MoveTo(int64_t start) {
    if (auto found = TryAll()) return found;
    start_ = start;
    group_.clear();
    group_refused_ = false;
    size_t before = active_.size();
    while (!active_.empty() && std::get<0>(*active_.begin()) < start_)
      active_.erase(active_.begin());
    // Nodes left: the open set is a different one, worth a placement again.
    if (active_.size() < before)
      next_try_ = std::min(next_try_, std::max<size_t>(count_, active_.size() + 1));
    return std::nullopt;
  }

  // A node whose window opens at start() and allows starts until `last_start`.
  std::optional<PlannedPlace> Add(int64_t last_start, int node, int64_t opened) {
    active_.insert({last_start, node, opened});
    group_.push_back(node);
    if (group_refused_ || static_cast<int>(group_.size()) < count_) return std::nullopt;
    if (auto found = Place(group_)) return found;
    group_refused_ = true;
    return std::nullopt;
  }

  // Every node open at start(), latest opened first, then lightest, then first. A placement
  // the topology refused (--switches, segments) is tried again only once an eighth more nodes
  // are open: at times a little later than it could be, instead of a try per window.
  std::optional<PlannedPlace> TryAll() {
    if (active_.size() < next_try_) return std::nullopt;
    std::vector<std::tuple<int64_t, uint32_t, int>> order;
    for (const auto& [last, node, opened] : active_)
      order.emplace_back(-opened, cluster_.nodes[node].weight, node);
    std::sort(order.begin(), order.end());
    candidates_.clear();
    for (const auto& entry : order) candidates_.push_back(std::get<2>(entry));
    if (auto found = Place(candidates_)) return found;
    next_try_ = active_.size() + 1 + active_.size() / 8;
    return std::nullopt;
  }

 private:
  std::optional<PlannedPlace> Place(const std::vector<int>& nodes) const {
    if (count_ == 1 && placement_.segment == 0) return PlannedPlace{start_, {nodes.front()}};
    if (auto chosen = ChooseNodes(cluster_, nodes, placement_))
      return PlannedPlace{start_, std::move(*chosen)};
    return std::nullopt;
  }

  const ClusterConfig& cluster_;
  const int count_;
  const PlacementRequest& placement_;
  std::set<std::tuple<int64_t, int, int64_t>> active_;
  std::vector<int> group_, candidates_;
  int64_t start_ = -1;
  bool group_refused_ = false;
  size_t next_try_;
};

}  // namespace

Amount Held(const NodeConfig& node, const NodeAllocation& part, bool exclusive) {
  if (exclusive) return Capacity(node);
  Amount held{static_cast<int64_t>(part.cores.size()), static_cast<int64_t>(part.memory_mb),
              static_cast<int64_t>(part.gpus.size()), part.shares,
              static_cast<int64_t>(part.nvme.size())};
  if (part.shares == 0 && !node.gpu_sharing.empty())  // whole GPUs take their shares too
    for (const GpuDevice& gpu : node.gpus)
      if (std::find(part.gpus.begin(), part.gpus.end(), gpu.index) != part.gpus.end())
        held.shares += gpu.shares;
  return held;
}

int64_t AddTime(int64_t t, int64_t d) {
  if (t >= kUnlimitedSeconds || d >= kUnlimitedSeconds || t > kForever - d) return kForever;
  return t + d;
}

Amount& Amount::operator+=(const Amount& other) {
  cores += other.cores;
  memory_mb += other.memory_mb;
  gpus += other.gpus;
  shares += other.shares;
  nvme += other.nvme;
  return *this;
}

Amount& Amount::operator-=(const Amount& other) {
  return *this += Negated(other);
}

Planner::Planner(const ClusterConfig& cluster, int64_t now)
    : cluster_(cluster),
      now_(now),
      arena_(std::make_unique<std::pmr::monotonic_buffer_resource>(size_t{64} << 10)) {
  nodes_.reserve(cluster.nodes.size());
  shapes_of_node_.reserve(cluster.nodes.size());
  // Constructed with the arena: assigning a vector would keep the default resource.
  for (size_t n = 0; n < cluster.nodes.size(); ++n) {
    nodes_.push_back(Timeline{{}, std::pmr::vector<Change>(arena_.get()), 0, true});
    shapes_of_node_.emplace_back(arena_.get());
  }
}

void Planner::SetFree(const NodePool& pool) {
  for (size_t n = 0; n < nodes_.size(); ++n) {
    Timeline& node = nodes_[n];
    int i = static_cast<int>(n);
    node.usable = pool.usable(i);
    node.free_now = {pool.free_cores(i), static_cast<int64_t>(pool.free_memory(i)),
                     pool.planned_free_gpus(i), pool.free_shares(i), pool.free_nvme(i)};
  }
}

void Planner::AddChange(int node, int64_t time, const Amount& delta, int tag) {
  if (time >= kUnlimitedSeconds) return;  // never happens
  Timeline& timeline = nodes_[node];
  // An untagged change already due is part of what is free now; a tagged one stays a change
  // (at now), so that the jobs inside its reservation can still see past it.
  if (time <= now_ && tag == 0) {
    timeline.free_now += delta;
    return;
  }
  time = std::max(time, now_);
  auto at = std::upper_bound(timeline.changes.begin(), timeline.changes.end(), time,
                             [](int64_t t, const Change& c) { return t < c.time; });
  timeline.changes.insert(at, Change{time, delta, tag});
  if (delta.cores < 0 || delta.memory_mb < 0 || delta.gpus < 0 || delta.shares < 0 ||
      delta.nvme < 0)
    ++timeline.takes;
}

void Planner::AddRelease(const Allocation& allocation, int64_t end) {
  if (end >= kUnlimitedSeconds) return;  // no limit: it never gives its share back
  // A job past its limit is about to be ended: it gives its share back just after now.
  int64_t when = std::max(end, now_ + 1);
  for (const NodeAllocation& part : allocation.nodes) {
    AddChange(part.node, when, Held(cluster_.nodes[part.node], part, allocation.exclusive), 0);
    Refresh(part.node);
  }
}

void Planner::AddReleases(int node, std::span<const Release> releases) {
  if (releases.empty()) return;
  // In job ID order, each after the changes of its time: as AddRelease job by job would.
  for (const Release& release : releases)
    if (release.end < kUnlimitedSeconds)
      AddChange(node, std::max(release.end, now_ + 1), release.held, 0);
  Refresh(node);
}

void Planner::MoveRelease(const Allocation& allocation, int64_t old_end, int64_t new_end) {
  int64_t old_when = std::max(old_end, now_ + 1);
  for (const NodeAllocation& part : allocation.nodes) {
    Amount held = Held(cluster_.nodes[part.node], part, allocation.exclusive);
    std::pmr::vector<Change>& changes = nodes_[part.node].changes;
    if (old_when < kForever) {
      auto it = std::find_if(changes.begin(), changes.end(), [&](const Change& c) {
        return c.time == old_when && c.tag == 0 && c.delta == held;
      });
      if (it == changes.end()) continue;
      changes.erase(it);
    }
    AddChange(part.node, std::max(new_end, now_ + 1), held, 0);
    Refresh(part.node);
  }
}

Amount Planner::NeedOn(int node, const NodeRequest& need) const {
  const NodeConfig& config = cluster_.nodes[node];
  if (need.exclusive) return Capacity(config);
  int threads = std::max(config.threads_per_core, 1);
  Amount amount;
  // A job that may share cores (OverSubscribe) is not planned by them: it can start on busy ones.
  amount.cores = need.share > 1 ? 0 : std::max(1, (need.cpus + threads - 1) / threads);
  amount.memory_mb =
      static_cast<int64_t>(need.whole_memory ? config.real_memory_mb : need.memory_mb);
  amount.gpus = need.gpus;
  amount.shares = need.shares;
  amount.nvme = need.nvme;
  if (need.gpus > 0 && !config.gpu_sharing.empty()) {  // whole GPUs: their shares too
    int64_t most = 0;
    for (const GpuDevice& gpu : config.gpus) most = std::max<int64_t>(most, gpu.shares);
    amount.shares = std::min(most * need.gpus, SharesOf(config));
  }
  return amount;
}

void Planner::Take(const std::vector<int>& nodes, const NodeRequest& need, int64_t start,
                   int64_t end, int tag) {
  for (int node : nodes) {
    Amount amount = NeedOn(node, need);
    if (need.shares > 0 && !need.exclusive) amount.gpus = 1;  // as Held counts a sharing job
    AddChange(node, start, Negated(amount), tag);
    AddChange(node, end, amount, tag);
    Refresh(node);
  }
}

void Planner::TakeWhole(const std::vector<int>& nodes, int64_t start, int64_t end, int tag) {
  for (int node : nodes) {
    Amount amount = Capacity(cluster_.nodes[node]);
    AddChange(node, start, Negated(amount), tag);
    AddChange(node, end, amount, tag);
    Refresh(node);
  }
}

bool Planner::Fits(int node, const Amount& need, int64_t start, int64_t end, int tag) const {
  const Timeline& timeline = nodes_[node];
  if (!timeline.usable) return false;
  Amount free = timeline.free_now;
  const std::pmr::vector<Change>& changes = timeline.changes;
  for (size_t i = 0; i < changes.size() && changes[i].time < end; ++i) {
    // What held since the last change time is checked once all of that time's changes apply.
    bool new_time = i == 0 || changes[i - 1].time != changes[i].time;
    if (new_time && changes[i].time > start && !free.Holds(need)) return false;
    if (tag == 0 || changes[i].tag != tag) free += changes[i].delta;
  }
  return free.Holds(need);
}

void Planner::WindowsOf(int node, const ShapeState& state,
                        std::pmr::vector<Window>& windows) const {
  const Timeline& timeline = nodes_[node];
  const NodeConfig& config = cluster_.nodes[node];
  const NodeRequest& request = state.shape.per_node;
  windows.clear();
  if (!timeline.usable || request.cpus > config.cpus ||
      (request.max_cpus_per_node &&
       static_cast<uint64_t>(request.cpus) > request.max_cpus_per_node))
    return;
  Amount need = NeedOn(node, request);
  if (!Capacity(config).Holds(need)) return;
  Amount free = timeline.free_now;
  int64_t open = free.Holds(need) ? now_ : -1;
  const std::pmr::vector<Change>& changes = timeline.changes;
  for (size_t i = 0; i < changes.size(); ++i) {
    if (state.shape.tag == 0 || changes[i].tag != state.shape.tag) free += changes[i].delta;
    if (i + 1 < changes.size() && changes[i + 1].time == changes[i].time) continue;
    bool holds = free.Holds(need);
    if (open >= 0 && !holds) {
      windows.push_back({open, changes[i].time});
      open = -1;
    } else if (open < 0 && holds) {
      open = changes[i].time;
    }
  }
  if (open >= 0) windows.push_back({open, kForever});
  // Inside a reservation: only its window.
  for (Window& w : windows) {
    w.start = std::max(w.start, state.shape.not_before);
    w.end = std::min(w.end, state.shape.not_after);
  }
  std::erase_if(windows, [](const Window& w) { return w.start >= w.end; });
}

int Planner::LengthClass(const Window& window) {
  if (window.end == kForever) return kLengthClasses - 1;
  uint64_t length = static_cast<uint64_t>(std::max<int64_t>(window.end - window.start, 1));
  int octave = 63 - std::countl_zero(length);
  int quarter = octave >= 2 ? static_cast<int>((length >> (octave - 2)) & 3) : 0;
  return std::min(4 * octave + quarter, kLengthClasses - 2);
}

void Planner::Index(ShapeState& state, int node, bool insert) {
  for (const Window& w : state.windows[node]) {
    WindowSet& set = state.by_class[LengthClass(w)];
    if (insert)
      set.insert({w.start, node, w.end});
    else
      set.erase({w.start, node, w.end});
  }
}

void Planner::Refresh(int node) {
  for (int s : shapes_of_node_[node]) {
    ShapeState& state = shapes_[s];
    Index(state, node, false);
    WindowsOf(node, state, state.windows[node]);
    Index(state, node, true);
  }
}

int Planner::FindShape(const std::string& key) const {
  auto it = shape_index_.find(key);
  return it == shape_index_.end() ? -1 : it->second;
}

int Planner::AddShape(const std::string& key, const Shape& shape, std::vector<int> nodes) {
  int index = static_cast<int>(shapes_.size());
  shape_index_.emplace(key, index);
  ShapeState& state = shapes_.emplace_back();
  state.shape = shape;
  state.nodes = std::move(nodes);
  // Each made with the arena: a copy of one would take the default resource.
  state.windows.reserve(nodes_.size());
  for (size_t n = 0; n < nodes_.size(); ++n) state.windows.emplace_back(arena_.get());
  state.by_class.reserve(kLengthClasses);
  for (int c = 0; c < kLengthClasses; ++c) state.by_class.emplace_back(arena_.get());
  for (int node : state.nodes) {
    shapes_of_node_[node].push_back(index);
    WindowsOf(node, state, state.windows[node]);
    Index(state, node, true);
  }
  return index;
}

std::optional<PlannedPlace> Planner::EarliestFit(int shape, int count, int64_t duration,
                                                 const PlacementRequest& placement,
                                                 int64_t from) const {
  const ShapeState& state = shapes_[shape];
  from = std::max(from, now_);
  int first_class = duration >= kUnlimitedSeconds
                        ? kLengthClasses - 1
                        : LengthClass({0, std::max<int64_t>(duration, 1)});
  MergedWindows windows(state.by_class, first_class);
  OpenNodes open(cluster_, count, placement);
  while (std::optional<WindowEntry> window = windows.Next()) {
    auto [window_start, node, end] = *window;
    if (duration >= kUnlimitedSeconds && end != kForever) continue;
    int64_t opens = std::max(window_start, from);
    if (opens != open.start())
      if (auto found = open.MoveTo(opens)) return found;  // the last group was complete
    int64_t last_start = end == kForever ? kForever : end - duration;
    if (last_start < open.start()) continue;  // too short for the job (or over before `from`)
    if (auto found = open.Add(last_start, node, window_start)) return found;
  }
  return open.TryAll();
}

}  // namespace drover::sched
