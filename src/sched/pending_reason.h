// Why a job waits, with the names Slurm prints in squeue's NODELIST(REASON) and scontrol's
// Reason=. One enum, one table; never a free-form string.
#pragma once

#include <string_view>

namespace drover::sched {

enum class PendingReason {
  kNone,
  kPriority,
  kResources,
  kDependency,
  kDependencyNeverSatisfied,
  kBeginTime,
  kJobHeldUser,
  kJobHeldAdmin,
  kPartitionTimeLimit,
  kPartitionNodeLimit,
  kPartitionDown,
  kPartitionInactive,
  kReqNodeNotAvail,
  kQosMaxGresPerUser,
  kQosMaxCpuPerUserLimit,
  kQosMaxJobsPerUserLimit,
  kQosMaxWallDurationPerJobLimit,
  kQosGrpGres,
  kQosGrpCpuLimit,
  kAssocGrpGres,
  kAssocGrpCpuLimit,
  kAssocMaxJobsLimit,
  kBadConstraints,
  kJobArrayTaskLimit,
  kNodeDown,
  kInvalidQos,
  kReservation,         // waiting for its advance reservation's window
  kReservationDeleted,  // the reservation it asks for is gone
  kLicenses,            // not enough of its -L licenses are free
  kDeadline,            // removed: it could not end before its --deadline (state DEADLINE)
};
inline constexpr PendingReason kLastPendingReason = PendingReason::kDeadline;

// "Priority", "Resources", "QOSMaxGRESPerUser", ... exactly as Slurm spells them.
std::string_view PendingReasonName(PendingReason reason);

}  // namespace drover::sched
