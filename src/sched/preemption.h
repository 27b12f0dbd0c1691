// Preemption planning: which running jobs a pending job may displace — preempt/partition_prio:
// jobs of partitions with a lower PriorityTier; preempt/qos: jobs of the QOS its QOS lists in
// Preempt — and the cheapest set of them that, with what is free, gives it a feasible
// topology-aware placement: fewest GPU-seconds lost, then CPU-seconds, then lowest priority,
// then newest. Jobs younger than PreemptExemptTime, of PreemptMode OFF, or of an equal or higher
// tier are never chosen; jobs already in their grace time count as freed at its end and are
// never chosen twice. What the controller then does to a victim (signal, grace, requeue, cancel)
// is the controller's.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/cluster_config.h"
#include "sched/model.h"
#include "sched/node_pool.h"
#include "sched/placement.h"
#include "sched/planner.h"

namespace drover::sched {

// How a running job of `partition` and QOS `qos` goes when preempted, and its grace time: the
// QOS's under preempt/qos, the partition's under preempt/partition_prio, else the cluster's
// PreemptMode (and no grace). The scheduler plans with these; the controller carries them out.
PreemptMode VictimMode(const ClusterConfig& cluster, const std::vector<Qos>& qos, int partition,
                       const std::string& victim_qos);
int64_t VictimGraceSeconds(const ClusterConfig& cluster, const std::vector<Qos>& qos, int partition,
                           const std::string& victim_qos);

struct PreemptionPlan {
  std::vector<size_t> victims;  // indexes into the running jobs: to be preempted now
  PlannedPlace place;           // the preemptor's nodes, and when the last victim is gone
};

class Preemptor {
 public:
  // `running` must outlive the preemptor.
  Preemptor(const ClusterConfig& cluster, const Planner& planner, const NodePool& pool,
            const std::vector<RunningJob>& running, const std::vector<Qos>& qos, int64_t now);

  // When a victim of `running[victim]` is gone: now plus its grace time (0 without one).
  int64_t ReleaseTime(size_t victim) const;

  // The plan for a job of partition `partition` and QOS `qos` (an index into the QOS, or < 0)
  // needing `need` on each of `count` nodes among `nodes`, or nullopt when preempting cannot
  // place it (or there is nothing it may preempt).
  std::optional<PreemptionPlan> Plan(int partition, int qos, const NodeRequest& need, int count,
                                     const std::vector<int>& nodes,
                                     const PlacementRequest& placement) const;

  // The victims of a plan carried out: in their grace time from now on.
  void Preempted(const std::vector<size_t>& victims);

 private:
  struct Cost {
    double gpu_seconds = 0, cpu_seconds = 0;
    int64_t priority = 0, start_time = 0;
    auto Key() const { return std::tuple(gpu_seconds, cpu_seconds, priority, -start_time); }
  };
  bool MayPreempt(int partition, int qos, const RunningJob& victim) const;
  // What preempting `victim` gives back on `node`: all it holds, but its memory when it is
  // suspended.
  Amount Released(const RunningJob& victim, int node) const;
  Cost CostOf(const RunningJob& victim) const;

  const ClusterConfig& cluster_;
  const Planner& planner_;
  const NodePool& pool_;
  const std::vector<RunningJob>& running_;
  const std::vector<Qos>& qos_;
  int64_t now_;
  std::vector<std::vector<size_t>> on_node_;  // running jobs by node
  std::vector<char> in_grace_;                // per running job
  std::vector<int64_t> release_;              // per running job in its grace: when it is gone
};

}  // namespace drover::sched
