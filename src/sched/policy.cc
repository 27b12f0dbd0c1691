// The policy registry; see policy.h.
#include "sched/policy.h"

#include <array>
#include <limits>
#include <utility>

namespace drover::sched {
namespace {

constexpr std::array<std::pair<std::string_view, PolicyKind>, 6> kNames{{
    {"fcfs", PolicyKind::kFifo},
    {"fifo", PolicyKind::kFifo},
    {"sched/builtin", PolicyKind::kFifo},
    {"easy", PolicyKind::kEasy},
    {"sched/backfill", PolicyKind::kEasy},
    {"conservative", PolicyKind::kConservative},
}};

}  // namespace

Policy PolicyFor(const ClusterSettings& settings, std::optional<PolicyKind> kind) {
  const SchedulerParameters& params = settings.scheduler_params;
  if (!kind)
    kind = settings.scheduler == SchedulerType::kBuiltin ? PolicyKind::kFifo
           : params.conservative                         ? PolicyKind::kConservative
                                                         : PolicyKind::kEasy;
  Policy policy;
  policy.kind = *kind;
  switch (*kind) {
    case PolicyKind::kFifo:
      policy.reservations_per_partition = 0;
      break;
    case PolicyKind::kEasy:
      policy.reservations_per_partition = std::max<int64_t>(params.bf_reservation_depth, 1);
      break;
    case PolicyKind::kConservative:
      policy.reservations_per_partition = std::numeric_limits<int64_t>::max();
      break;
  }
  return policy;
}

std::optional<PolicyKind> PolicyNamed(std::string_view name) {
  for (const auto& [known, kind] : kNames)
    if (known == name) return kind;
  return std::nullopt;
}

std::string_view PolicyName(PolicyKind kind) {
  switch (kind) {
    case PolicyKind::kFifo:
      return "fcfs";
    case PolicyKind::kEasy:
      return "easy";
    case PolicyKind::kConservative:
      return "conservative";
  }
  return "easy";
}

}  // namespace drover::sched
