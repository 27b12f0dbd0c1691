// priority/multifactor as Slurm defines it: factors in [0, 1] for age, fair share, job size,
// partition and QOS, TRES factors, and nice; weighted by the PriorityWeight* keys. Under
// priority/basic every job's priority is 0 and order is submit time, then job ID.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sched/fair_share.h"
#include "sched/model.h"

namespace drover::sched {

struct PriorityFactors {
  uint64_t job_id = 0;
  double age = 0, fairshare = 0, job_size = 0, partition = 0, qos = 0, assoc = 0;
  std::vector<std::pair<std::string, double>> tres;  // per PriorityWeightTRES name, in [0, 1]
  int32_t nice = 0;
  int32_t site = 0;      // scontrol update job SiteFactor=, added as Slurm adds its site factor
  int64_t priority = 0;  // the weighted sum, as sprio's PRIORITY; never below 1 for multifactor
};

// The cluster's sizes that the job size and TRES factors are fractions of. They change only with
// the configuration: a caller that keeps them (SchedulerInput::totals) spares every pass a walk
// over every node's configuration.
struct ClusterTotals {
  uint64_t nodes = 0, cpus = 0;
  std::vector<double> tres;  // the cluster's amount per settings.weight_tres entry
};
ClusterTotals TotalsOf(const ClusterConfig& cluster);

class PriorityCalculator {
 public:
  // Precomputes the largest PriorityJobFactor and QOS priority, and the cluster's totals unless
  // `totals` (TotalsOf(cluster)) is given.
  PriorityCalculator(const ClusterConfig& cluster, const std::vector<Association>& associations,
                     const FairShare& fair_share, const std::vector<Qos>& qos, int64_t now,
                     const ClusterTotals* totals = nullptr);

  // `partition` is the index of the partition the factor is taken from (the job's first).
  PriorityFactors Compute(const JobSpec& job, int partition) const;

 private:
  const ClusterConfig& cluster_;
  const std::vector<Association>& associations_;
  const FairShare& fair_share_;
  const std::vector<Qos>& qos_;
  int64_t now_;
  ClusterTotals totals_;
  uint32_t max_partition_factor_ = 1, max_qos_priority_ = 0;
  int64_t max_assoc_priority_ = 0;

  // Compute runs for every pending job every pass, so lookups by name are hashed up front; the
  // views point into `associations_` and `qos_`.
  std::unordered_map<AssociationKey, int, AssociationKeyHash> user_associations_;
  std::unordered_map<std::string_view, uint32_t> qos_priorities_;
};

}  // namespace drover::sched
