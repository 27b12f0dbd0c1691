// Slurm's spelling of each pending reason; see pending_reason.h.
#include "sched/pending_reason.h"

namespace drover::sched {

std::string_view PendingReasonName(PendingReason reason) {
  switch (reason) {
    case PendingReason::kNone:
      return "None";
    case PendingReason::kPriority:
      return "Priority";
    case PendingReason::kResources:
      return "Resources";
    case PendingReason::kDependency:
      return "Dependency";
    case PendingReason::kDependencyNeverSatisfied:
      return "DependencyNeverSatisfied";
    case PendingReason::kBeginTime:
      return "BeginTime";
    case PendingReason::kJobHeldUser:
      return "JobHeldUser";
    case PendingReason::kJobHeldAdmin:
      return "JobHeldAdmin";
    case PendingReason::kPartitionTimeLimit:
      return "PartitionTimeLimit";
    case PendingReason::kPartitionNodeLimit:
      return "PartitionNodeLimit";
    case PendingReason::kPartitionDown:
      return "PartitionDown";
    case PendingReason::kPartitionInactive:
      return "PartitionInactive";
    case PendingReason::kReqNodeNotAvail:
      return "ReqNodeNotAvail";
    case PendingReason::kQosMaxGresPerUser:
      return "QOSMaxGRESPerUser";
    case PendingReason::kQosMaxCpuPerUserLimit:
      return "QOSMaxCpuPerUserLimit";
    case PendingReason::kQosMaxJobsPerUserLimit:
      return "QOSMaxJobsPerUserLimit";
    case PendingReason::kQosMaxWallDurationPerJobLimit:
      return "QOSMaxWallDurationPerJobLimit";
    case PendingReason::kQosGrpGres:
      return "QOSGrpGRES";
    case PendingReason::kQosGrpCpuLimit:
      return "QOSGrpCpuLimit";
    case PendingReason::kAssocGrpGres:
      return "AssocGrpGRES";
    case PendingReason::kAssocGrpCpuLimit:
      return "AssocGrpCpuLimit";
    case PendingReason::kAssocMaxJobsLimit:
      return "AssocMaxJobsLimit";
    case PendingReason::kBadConstraints:
      return "BadConstraints";
    case PendingReason::kJobArrayTaskLimit:
      return "JobArrayTaskLimit";
    case PendingReason::kNodeDown:
      return "NodeDown";
    case PendingReason::kInvalidQos:
      return "InvalidQOS";
    case PendingReason::kReservation:
      return "Reservation";
    case PendingReason::kReservationDeleted:
      return "ReservationDeleted";
    case PendingReason::kLicenses:
      return "Licenses";
    case PendingReason::kDeadline:
      return "DeadLine";
  }
  return "None";
}

}  // namespace drover::sched
