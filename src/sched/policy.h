// The scheduling policies and the registry that maps a name to each: FIFO (sched/builtin: a
// partition's first blocked job holds back every job behind it), EASY backfill (sched/backfill:
// the first bf_reservation_depth blocked jobs of each partition get a reservation and lower jobs
// start only where they delay none) and conservative backfill (every blocked job gets one).
// The three differ in two numbers only; the planning itself is the planner's.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/cluster_config.h"
#include "sched/model.h"

namespace drover::sched {

struct Policy {
  PolicyKind kind = PolicyKind::kEasy;
  int64_t reservations_per_partition = 1;  // blocked jobs reserved per partition
  bool backfill() const { return kind != PolicyKind::kFifo; }
};

// The configuration's policy (SchedulerType, SchedulerParameters bf_reservation_depth and
// bf_conservative), or `kind` where one is given.
Policy PolicyFor(const ClusterSettings& settings, std::optional<PolicyKind> kind = std::nullopt);

// "fcfs" (or "fifo", "sched/builtin"), "easy" (or "sched/backfill"), "conservative".
std::optional<PolicyKind> PolicyNamed(std::string_view name);
std::string_view PolicyName(PolicyKind kind);

}  // namespace drover::sched
