// The planner: every node's free cores, memory and GPUs from now on, as a step function of time.
// Running jobs give theirs back at their expected end (start + time limit); windows are taken
// out of it — the jobs a cycle starts, the reservations it makes for blocked jobs, advance
// reservations (tagged, so that the jobs inside one can see past it). It answers "the earliest
// time, and the nodes, at which N nodes each hold this much for this long" from each request
// shape's free windows kept in start order: a query walks about as many windows as it needs
// nodes, not every node at every instant. Counts only: which cores and GPUs a job gets is the
// NodePool's choice when it starts. Pure, like everything in src/sched.
#pragma once

#include <cstdint>
#include <memory>
#include <memory_resource>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common/cluster_config.h"
#include "sched/node_pool.h"
#include "sched/placement.h"

namespace drover::sched {

inline constexpr int64_t kForever = INT64_MAX;

// t + d without overflow: kForever when either is at or beyond the unlimited horizon.
int64_t AddTime(int64_t t, int64_t d);

// An amount of one node's resources; signed, since an advance reservation made over running
// jobs (IGNORE_JOBS) takes more than is free.
// GPUs that jobs share (gres/shard, gres/mps) are counted twice over: as shares, and as one GPU
// held by each sharing job (the free count less one for each job sharing a GPU with another),
// so that whole-GPU jobs are planned only once every job sharing a GPU has gone. A job that
// needs no GPU (or no share) is not refused where that count runs below zero.
struct Amount {
  int64_t cores = 0, memory_mb = 0, gpus = 0, shares = 0, nvme = 0;
  Amount& operator+=(const Amount& other);
  Amount& operator-=(const Amount& other);
  bool Holds(const Amount& need) const {
    return cores >= need.cores && memory_mb >= need.memory_mb &&
           (need.gpus <= 0 || gpus >= need.gpus) && (need.shares <= 0 || shares >= need.shares) &&
           nvme >= need.nvme;
  }
  bool operator==(const Amount&) const = default;
};

// What a shape's windows are made from: the need on each node and the advance reservation the
// jobs run in. Which nodes it spans (partition, features) is the caller's, given with them.
struct Shape {
  NodeRequest per_node;
  int tag = 0;  // the advance reservation the jobs run in (0: none); its take is ignored
  // Jobs inside a reservation start and end inside its window (unless FLEX).
  int64_t not_before = 0, not_after = kForever;
};

// What `part` of an allocation holds on its node (the whole node when exclusive).
Amount Held(const NodeConfig& node, const NodeAllocation& part, bool exclusive);

// A running job's share of one node, given back at its end (RunningPool keeps these).
struct Release {
  int64_t end = 0;
  uint64_t job_id = 0;
  Amount held;
  bool operator==(const Release&) const = default;
};

struct PlannedPlace {
  int64_t start = 0;
  std::vector<int> nodes;  // ascending
};

class Planner {
 public:
  Planner(const ClusterConfig& cluster, int64_t now);

  // Start-up, before any query: what `pool` has free now (unusable nodes hold nothing), then
  // each running job's allocation coming back at its end.
  void SetFree(const NodePool& pool);
  void AddRelease(const Allocation& allocation, int64_t end);
  // The same for every running job's part on `node` at once, as AddRelease of each job in job ID
  // order would leave it.
  void AddReleases(int node, std::span<const Release> releases);

  // Takes `need` on each node of `nodes` over [start, end). `tag` names an advance reservation
  // (0 for the cycle's own starts and reservations).
  void Take(const std::vector<int>& nodes, const NodeRequest& need, int64_t start, int64_t end,
            int tag = 0);
  void TakeWhole(const std::vector<int>& nodes, int64_t start, int64_t end, int tag);
  // A running job that will now end at `new_end` instead of `old_end` (a preempted job's grace).
  void MoveRelease(const Allocation& allocation, int64_t old_end, int64_t new_end);

  // What `need` is on `node` (cores by the node's threads, the whole node when exclusive).
  Amount NeedOn(int node, const NodeRequest& need) const;
  // Whether `node` holds `need` throughout [start, end), seeing past advance reservation `tag`.
  bool Fits(int node, const Amount& need, int64_t start, int64_t end, int tag = 0) const;
  // Whether anything is taken from `node` after now (a cheap test before Fits).
  bool HasTakes(int node) const { return nodes_[node].takes > 0; }

  // Shapes by a key that says everything that makes them differ: FindShape is -1 for one not
  // seen yet; AddShape builds it over `nodes` (those it may run on). Shapes live as long as the
  // planner and are kept up to date as nodes change.
  int FindShape(const std::string& key) const;
  int AddShape(const std::string& key, const Shape& shape, std::vector<int> nodes);
  const std::vector<int>& ShapeNodes(int shape) const { return shapes_[shape].nodes; }
  // The earliest start at or after `from` (and now), and nodes, at which `count` nodes of the
  // shape each hold its need for `duration` seconds, placed by `placement` (topology); nullopt
  // when no time is foreseeable (nodes that never free, or no window long enough).
  std::optional<PlannedPlace> EarliestFit(int shape, int count, int64_t duration,
                                          const PlacementRequest& placement,
                                          int64_t from = 0) const;

  int64_t now() const { return now_; }

 private:
  struct Change {
    int64_t time;
    Amount delta;
    int tag;
  };
  struct Timeline {
    Amount free_now;
    // After now, by time; in the planner's arena: a pass builds thousands of these and frees
    // them all at once.
    std::pmr::vector<Change> changes;
    int takes = 0;  // changes that take (negative deltas)
    bool usable = true;
  };
  struct Window {
    int64_t start, end;
  };
  // Windows by length class: four classes an octave (class 4k + f holds windows of about
  // 2^k (1 + f/4) seconds), the last class the open-ended ones. A query for d seconds skips
  // every class too short for it, so the many windows that reservations cut short do not slow
  // down the queries of jobs longer than them.
  static constexpr int kLengthClasses = 4 * 64 + 1;
  // A shape's windows and their index live in the planner's arena too: a pass adds each shape
  // over thousands of nodes, and its windows change as the pass takes nodes.
  using WindowSet = std::pmr::set<std::tuple<int64_t, int, int64_t>>;  // (start, node, end)
  struct ShapeState {
    Shape shape;
    std::vector<int> nodes;
    std::vector<std::pmr::vector<Window>> windows;  // by node index
    std::vector<WindowSet> by_class;                // kLengthClasses of them
  };
  static int LengthClass(const Window& window);
  static void Index(ShapeState& state, int node, bool insert);

  void AddChange(int node, int64_t time, const Amount& delta, int tag);
  // The node's windows for the shape, into `windows` (its storage reused).
  void WindowsOf(int node, const ShapeState& state, std::pmr::vector<Window>& windows) const;
  void Refresh(int node);  // the node changed: recompute its windows in every shape using it

  const ClusterConfig& cluster_;
  int64_t now_;
  std::unique_ptr<std::pmr::monotonic_buffer_resource> arena_;  // before nodes_: outlives them
  std::vector<Timeline> nodes_;
  std::vector<ShapeState> shapes_;
  std::unordered_map<std::string, int> shape_index_;
  std::vector<std::pmr::vector<int>> shapes_of_node_;  // in the arena
};

}  // namespace drover::sched
