// One scheduling pass over the queue; internal to src/sched (scheduler.h is the interface).
// scheduler.cc holds eligibility, limits and placement now; pass_plan.cc the plan ahead:
// advance reservations, expected starts, backfill reservations and preemption.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/licenses.h"
#include "sched/constraint.h"
#include "sched/limits.h"
#include "sched/node_pool.h"
#include "sched/planner.h"
#include "sched/policy.h"
#include "sched/preemption.h"
#include "sched/request.h"
#include "sched/running_pool.h"
#include "sched/scheduler.h"

namespace drover::sched {

class Pass {
 public:
  explicit Pass(const SchedulerInput& input);
  void Run(SchedulerResult& result);

 private:
  // Small on purpose: 100,000 of these are sorted every pass.
  struct Candidate {
    uint32_t tier;
    int64_t priority;
    int64_t submit_time;
    uint64_t job_id;
    uint32_t index;  // into input.pending
    int association;
  };
  // The advance reservation a job runs in, with its planner tag.
  struct InReservation {
    const AdvanceReservation* reservation;
    int tag;
  };
  // What one partition's attempt found, for the plan.
  struct Attempt {
    int partition;
    ResolvedRequest request;
    // A sharing job planned as a job of one whole GPU: what it really asks for (its nodes must
    // give it).
    std::optional<NodeRequest> shares_as_gpu = std::nullopt;
  };

  // scheduler.cc: the pass itself, eligibility and placement now
  // Whether the input's kept pool serves this pass; the pool the pass starts from.
  static bool PoolKept(const SchedulerInput& input);
  static NodePool StartingPool(const SchedulerInput& input);
  // Whether the input's kept partition maxima are this configuration's (one per partition).
  static bool MaximaKept(const SchedulerInput& input);
  void TakeRunning();
  void IndexSingletons();
  std::vector<Candidate> Prioritise(SchedulerResult& result);
  PendingReason Decide(const Candidate& candidate, SchedulerResult& result);
  int Association(const std::string& account, const std::string& user) const;
  // The QOS index of the partition's QOS=; -1 when it has none (or names an unknown one).
  int PartitionQos(int partition) const;
  // `usage` with its billing TRES by the partition's TRESBillingWeights.
  JobUsage Billed(JobUsage usage, int partition, const std::string& gpu_type) const;
  PendingReason Eligibility(const JobSpec& job) const;
  PendingReason JobFeatures(const JobSpec& job);
  PendingReason TryPartition(const JobSpec& job, int partition, int association,
                             const Constraint& constraint, const InReservation* reservation,
                             SchedulerResult& result, std::vector<Attempt>& blocked);
  std::optional<Allocation> PlaceNow(const JobSpec& job, int partition, ResolvedRequest& r,
                                     const Constraint& constraint, const InReservation* reservation,
                                     int64_t end) const;
  std::optional<Allocation> PlaceSpread(const JobSpec& job, int partition, ResolvedRequest& r,
                                        const Constraint& constraint,
                                        const InReservation* reservation, int64_t end) const;
  std::optional<Allocation> Place(const JobSpec& job, int partition, const ResolvedRequest& r,
                                  const Constraint& constraint, const InReservation* reservation,
                                  int64_t end) const;
  bool BatchMatches(int node) const;
  void WithBatchNode(const std::vector<int>& required, const std::vector<int>& candidates,
                     std::vector<int>& chosen) const;
  int BatchNode(const Allocation& allocation) const;
  // Licenses (slurm.conf Licenses=): whether the job's -L request is free now, and taking it.
  bool LicensesFree(const std::vector<LicenseCount>& wanted) const;
  void TakeLicenses(const std::vector<LicenseCount>& wanted);
  std::optional<Allocation> PlaceOnNodes(const std::vector<int>& nodes,
                                         const ResolvedRequest& r) const;
  bool Allowed(const JobSpec& job, int partition, const Constraint& constraint, int node) const;
  bool EverFits(const JobSpec& job, int partition, const ResolvedRequest& r,
                const Constraint& constraint) const;
  int MaxLeaves(const JobSpec& job) const;
  uint32_t TierOf(int partition) const;

  // pass_plan.cc: the plan ahead
  void BuildPlanner();
  // The advance reservation the job asks for; kNone with `found` empty when it asks for none.
  PendingReason ReservationOf(const JobSpec& job, std::optional<InReservation>& found) const;
  bool ReservationNode(const InReservation& reservation, int node) const;
  void PlanAhead(const JobSpec& job, const Constraint& constraint, const InReservation* reservation,
                 std::span<const Attempt> blocked, SchedulerResult& result);
  int ShapeFor(const JobSpec& job, int partition, const ResolvedRequest& r,
               const Constraint& constraint, const InReservation* reservation,
               const std::optional<NodeRequest>& shares_as_gpu = std::nullopt);
  std::optional<PlannedPlace> Earliest(const JobSpec& job, int shape, const ResolvedRequest& r,
                                       int64_t from) const;
  bool TryPreemption(const JobSpec& job, const Attempt& attempt, int shape,
                     SchedulerResult& result);

  const SchedulerInput& in_;
  const ClusterConfig& cluster_;
  Policy policy_;
  NodePool pool_;
  Planner planner_;
  std::unique_ptr<Preemptor> preemptor_;
  int64_t preemption_budget_ = 0;  // preemption attempts left in this pass
  LimitTracker limits_;
  std::vector<char> blocked_;  // per partition: a job there waits for resources
  // Per (partition, advance reservation tag): blocked jobs reserved this pass.
  std::map<std::pair<int, int>, int64_t> reserved_;
  std::vector<std::vector<char>> member_;
  // Each partition's largest nodes: the input's kept ones, or own_most_ computed for the pass.
  std::vector<NodeMaxima> own_most_;
  const std::vector<NodeMaxima>& most_;
  std::unordered_set<std::string> running_names_;            // "user\nname" running
  std::unordered_map<std::string, uint64_t> first_pending_;  // "user\nname" -> lowest job ID
  std::unordered_map<AssociationKey, int, AssociationKeyHash> associations_;  // (account, user)
  std::unordered_map<std::string_view, int> reservations_;  // name -> index in input
  std::vector<int> first_partition_;  // per input.pending index; -1 when unknown
  std::map<std::string, int64_t, std::less<>> licenses_free_;  // by name: Total - Used
  // The job being decided: its --prefer and --batch features (none: not given), set by Decide.
  std::optional<Constraint> prefer_, batch_;
  // EverFits by request shape: most waiting jobs ask what others asked before them.
  mutable std::unordered_map<std::string, bool> ever_fits_;
};

}  // namespace drover::sched
