// The availability profile and its earliest-fit query; see planner.h.
#include "sched/planner.h"

#include <algorithm>
#include <bit>

namespace drover::sched {
namespace {

Amount Capacity(const NodeConfig& node) {
  return {node.cores(), static_cast<int64_t>(node.real_memory_mb),
          static_cast<int64_t>(node.gpus.size())};
}

Amount Negated(const Amount& amount) {
  return {-amount.cores, -amount.memory_mb, -amount.gpus};
}

}  // namespace

Amount Held(const NodeConfig& node, const NodeAllocation& part, bool exclusive) {
  if (exclusive) return Capacity(node);
  return {static_cast<int64_t>(part.cores.size()), static_cast<int64_t>(part.memory_mb),
          static_cast<int64_t>(part.gpus.size())};
}

int64_t AddTime(int64_t t, int64_t d) {
  if (t >= kUnlimitedSeconds || d >= kUnlimitedSeconds || t > kForever - d) return kForever;
  return t + d;
}

Amount& Amount::operator+=(const Amount& other) {
  cores += other.cores;
  memory_mb += other.memory_mb;
  gpus += other.gpus;
  return *this;
}

Amount& Amount::operator-=(const Amount& other) {
  return *this += Negated(other);
}

Planner::Planner(const ClusterConfig& cluster, int64_t now)
    : cluster_(cluster),
      now_(now),
      nodes_(cluster.nodes.size()),
      shapes_of_node_(cluster.nodes.size()) {}

void Planner::SetFree(const NodePool& pool) {
  for (size_t n = 0; n < nodes_.size(); ++n) {
    Timeline& node = nodes_[n];
    int i = static_cast<int>(n);
    node.usable = pool.usable(i);
    node.free_now = {pool.free_cores(i), static_cast<int64_t>(pool.free_memory(i)),
                     pool.free_gpus(i)};
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
  if (delta.cores < 0 || delta.memory_mb < 0 || delta.gpus < 0) ++timeline.takes;
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

void Planner::MoveRelease(const Allocation& allocation, int64_t old_end, int64_t new_end) {
  int64_t old_when = std::max(old_end, now_ + 1);
  for (const NodeAllocation& part : allocation.nodes) {
    Amount held = Held(cluster_.nodes[part.node], part, allocation.exclusive);
    std::vector<Change>& changes = nodes_[part.node].changes;
    if (old_when < kForever) {
      auto it = std::find_if(changes.begin(), changes.end(), [&](const Change& c) {
        return c.time == old_when && c.tag == 0 && c.delta.cores == held.cores &&
               c.delta.memory_mb == held.memory_mb && c.delta.gpus == held.gpus;
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
  amount.cores = std::max(1, (need.cpus + threads - 1) / threads);
  amount.memory_mb =
      static_cast<int64_t>(need.whole_memory ? config.real_memory_mb : need.memory_mb);
  amount.gpus = need.gpus;
  return amount;
}

void Planner::Take(const std::vector<int>& nodes, const NodeRequest& need, int64_t start,
                   int64_t end, int tag) {
  for (int node : nodes) {
    Amount amount = NeedOn(node, need);
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
  const std::vector<Change>& changes = timeline.changes;
  for (size_t i = 0; i < changes.size() && changes[i].time < end; ++i) {
    // What held since the last change time is checked once all of that time's changes apply.
    bool new_time = i == 0 || changes[i - 1].time != changes[i].time;
    if (new_time && changes[i].time > start && !free.Holds(need)) return false;
    if (tag == 0 || changes[i].tag != tag) free += changes[i].delta;
  }
  return free.Holds(need);
}

std::vector<Planner::Window> Planner::WindowsOf(int node, const ShapeState& state) const {
  const Timeline& timeline = nodes_[node];
  const NodeConfig& config = cluster_.nodes[node];
  const NodeRequest& request = state.shape.per_node;
  std::vector<Window> windows;
  if (!timeline.usable || request.cpus > config.cpus ||
      (request.max_cpus_per_node &&
       static_cast<uint64_t>(request.cpus) > request.max_cpus_per_node))
    return windows;
  Amount need = NeedOn(node, request);
  if (!Capacity(config).Holds(need)) return windows;
  Amount free = timeline.free_now;
  int64_t open = free.Holds(need) ? now_ : -1;
  const std::vector<Change>& changes = timeline.changes;
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
  std::vector<Window> clipped;
  for (Window w : windows) {
    w.start = std::max(w.start, state.shape.not_before);
    w.end = std::min(w.end, state.shape.not_after);
    if (w.start < w.end) clipped.push_back(w);
  }
  return clipped;
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
    state.windows[node] = WindowsOf(node, state);
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
  state.windows.resize(nodes_.size());
  for (int node : state.nodes) {
    shapes_of_node_[node].push_back(index);
    state.windows[node] = WindowsOf(node, state);
    Index(state, node, true);
  }
  return index;
}

std::optional<PlannedPlace> Planner::EarliestFit(int shape, int count, int64_t duration,
                                                 const PlacementRequest& placement,
                                                 int64_t from) const {
  const ShapeState& state = shapes_[shape];
  from = std::max(from, now_);
  // The classes long enough to matter, walked together in start order.
  struct Cursor {
    WindowSet::const_iterator at, end;
  };
  std::vector<Cursor> cursors;
  int first_class = duration >= kUnlimitedSeconds
                        ? kLengthClasses - 1
                        : LengthClass({0, std::max<int64_t>(duration, 1)});
  for (int c = first_class; c < kLengthClasses; ++c)
    if (!state.by_class[c].empty())
      cursors.push_back({state.by_class[c].begin(), state.by_class[c].end()});
  // The cursors by their next window's start, earliest on top.
  auto later = [&](size_t a, size_t b) {
    return std::get<0>(*cursors[a].at) > std::get<0>(*cursors[b].at);
  };
  std::vector<size_t> heap(cursors.size());
  for (size_t i = 0; i < heap.size(); ++i) heap[i] = i;
  std::make_heap(heap.begin(), heap.end(), later);
  auto next = [&]() -> Cursor* { return heap.empty() ? nullptr : &cursors[heap.front()]; };
  auto advance = [&] {  // past the top cursor's window
    std::pop_heap(heap.begin(), heap.end(), later);
    if (++cursors[heap.back()].at == cursors[heap.back()].end)
      heap.pop_back();
    else
      std::push_heap(heap.begin(), heap.end(), later);
  };
  // Nodes whose window is open at the current start time: (last start it allows, node, when
  // it opened). Among them the plan prefers those that open last, so that nodes free sooner
  // stay free for backfill; the windows opening at one time are taken as a group, and a group
  // that alone holds the job ends the search at once.
  std::set<std::tuple<int64_t, int, int64_t>> active;
  std::vector<int> group, candidates;
  int64_t start = -1;
  bool group_refused = false;
  // A placement the topology refused (--switches, segments) is tried again only once an eighth
  // more nodes are open: at times a little later than it could be, instead of a try per window.
  size_t next_try = static_cast<size_t>(std::max(count, 1));
  auto place = [&](std::vector<int>& nodes) -> std::optional<PlannedPlace> {
    if (count == 1 && placement.segment == 0) return PlannedPlace{start, {nodes.front()}};
    if (auto chosen = ChooseNodes(cluster_, nodes, placement))
      return PlannedPlace{start, std::move(*chosen)};
    return std::nullopt;
  };
  // Every node open at `start`, latest opened first, then lightest, then first.
  auto all_open = [&]() -> std::optional<PlannedPlace> {
    if (active.size() < next_try) return std::nullopt;
    std::vector<std::tuple<int64_t, uint32_t, int>> order;
    for (const auto& [last, node, opened] : active)
      order.emplace_back(-opened, cluster_.nodes[node].weight, node);
    std::sort(order.begin(), order.end());
    candidates.clear();
    for (const auto& entry : order) candidates.push_back(std::get<2>(entry));
    if (auto found = place(candidates)) return found;
    next_try = active.size() + 1 + active.size() / 8;
    return std::nullopt;
  };
  for (Cursor* cursor = next(); cursor; cursor = next()) {
    auto [window_start, joining, end] = *cursor->at;
    advance();
    if (duration >= kUnlimitedSeconds && end != kForever) continue;
    int64_t opens = std::max(window_start, from);
    if (opens != start) {
      if (auto found = all_open()) return found;  // the last group is complete
      start = opens;
      group.clear();
      group_refused = false;
      size_t before = active.size();
      while (!active.empty() && std::get<0>(*active.begin()) < start) active.erase(active.begin());
      // Nodes left: the open set is a different one, worth a placement again.
      if (active.size() < before)
        next_try = std::min(next_try, std::max<size_t>(count, active.size() + 1));
    }
    int64_t last_start = end == kForever ? kForever : end - duration;
    if (last_start < start) continue;  // too short for the job (or over before `from`)
    active.insert({last_start, joining, window_start});
    group.push_back(joining);
    if (!group_refused && static_cast<int>(group.size()) >= count) {
      if (auto found = place(group)) return found;
      group_refused = true;
    }
  }
  return all_open();
}

}  // namespace drover::sched
