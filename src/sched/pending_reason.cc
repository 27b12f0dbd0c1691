// Slurm's spelling of each pending reason; see pending_reason.h.
#include "sched/pending_reason.h"

#include <iterator>

namespace drover::sched {
namespace {

// The TRES limit reasons in Slurm's spelling (job_reason_string); column 0 cpu, 1 mem, 2 node,
// 3 gres, 4 billing. PendingReason::kFirstTresLimit + i is entry i.
struct TresLimitName {
  LimitScope scope;
  LimitKind kind;
  int column;
  std::string_view name;
};
constexpr TresLimitName kTresLimitNames[] = {
    {LimitScope::kAssociation, LimitKind::kGrp, 0, "AssocGrpCpuLimit"},
    {LimitScope::kAssociation, LimitKind::kGrp, 1, "AssocGrpMemLimit"},
    {LimitScope::kAssociation, LimitKind::kGrp, 2, "AssocGrpNodeLimit"},
    {LimitScope::kAssociation, LimitKind::kGrp, 3, "AssocGrpGRES"},
    {LimitScope::kAssociation, LimitKind::kGrp, 4, "AssocGrpBilling"},
    {LimitScope::kAssociation, LimitKind::kGrpMinutes, 0, "AssocGrpCPUMinutesLimit"},
    {LimitScope::kAssociation, LimitKind::kGrpMinutes, 1, "AssocGrpMemMinutes"},
    {LimitScope::kAssociation, LimitKind::kGrpMinutes, 2, "AssocGrpNodeMinutes"},
    {LimitScope::kAssociation, LimitKind::kGrpMinutes, 3, "AssocGrpGRESMinutes"},
    {LimitScope::kAssociation, LimitKind::kGrpMinutes, 4, "AssocGrpBillingMinutes"},
    {LimitScope::kAssociation, LimitKind::kGrpRunMinutes, 0, "AssocGrpCPURunMinutesLimit"},
    {LimitScope::kAssociation, LimitKind::kGrpRunMinutes, 1, "AssocGrpMemRunMinutes"},
    {LimitScope::kAssociation, LimitKind::kGrpRunMinutes, 2, "AssocGrpNodeRunMinutes"},
    {LimitScope::kAssociation, LimitKind::kGrpRunMinutes, 3, "AssocGrpGRESRunMinutes"},
    {LimitScope::kAssociation, LimitKind::kGrpRunMinutes, 4, "AssocGrpBillingRunMinutes"},
    {LimitScope::kAssociation, LimitKind::kPerJob, 0, "AssocMaxCpuPerJobLimit"},
    {LimitScope::kAssociation, LimitKind::kPerJob, 1, "AssocMaxMemPerJob"},
    {LimitScope::kAssociation, LimitKind::kPerJob, 2, "AssocMaxNodePerJobLimit"},
    {LimitScope::kAssociation, LimitKind::kPerJob, 3, "AssocMaxGRESPerJob"},
    {LimitScope::kAssociation, LimitKind::kPerJob, 4, "AssocMaxBillingPerJob"},
    {LimitScope::kAssociation, LimitKind::kPerNode, 0, "AssocMaxCpuPerNode"},
    {LimitScope::kAssociation, LimitKind::kPerNode, 1, "AssocMaxMemPerNode"},
    {LimitScope::kAssociation, LimitKind::kPerNode, 3, "AssocMaxGRESPerNode"},
    {LimitScope::kAssociation, LimitKind::kPerNode, 4, "AssocMaxBillingPerNode"},
    {LimitScope::kAssociation, LimitKind::kMinutesPerJob, 0, "AssocMaxCpuMinutesPerJobLimit"},
    {LimitScope::kAssociation, LimitKind::kMinutesPerJob, 1, "AssocMaxMemMinutesPerJob"},
    {LimitScope::kAssociation, LimitKind::kMinutesPerJob, 2, "AssocMaxNodeMinutesPerJob"},
    {LimitScope::kAssociation, LimitKind::kMinutesPerJob, 3, "AssocMaxGRESMinutesPerJob"},
    {LimitScope::kAssociation, LimitKind::kMinutesPerJob, 4, "AssocMaxBillingMinutesPerJob"},
    {LimitScope::kQos, LimitKind::kGrp, 0, "QOSGrpCpuLimit"},
    {LimitScope::kQos, LimitKind::kGrp, 1, "QOSGrpMemLimit"},
    {LimitScope::kQos, LimitKind::kGrp, 2, "QOSGrpNodeLimit"},
    {LimitScope::kQos, LimitKind::kGrp, 3, "QOSGrpGRES"},
    {LimitScope::kQos, LimitKind::kGrp, 4, "QOSGrpBilling"},
    {LimitScope::kQos, LimitKind::kGrpMinutes, 0, "QOSGrpCPUMinutesLimit"},
    {LimitScope::kQos, LimitKind::kGrpMinutes, 1, "QOSGrpMemoryMinutes"},
    {LimitScope::kQos, LimitKind::kGrpMinutes, 2, "QOSGrpNodeMinutes"},
    {LimitScope::kQos, LimitKind::kGrpMinutes, 3, "QOSGrpGRESMinutes"},
    {LimitScope::kQos, LimitKind::kGrpMinutes, 4, "QOSGrpBillingMinutes"},
    {LimitScope::kQos, LimitKind::kGrpRunMinutes, 0, "QOSGrpCPURunMinutesLimit"},
    {LimitScope::kQos, LimitKind::kGrpRunMinutes, 1, "QOSGrpMemoryRunMinutes"},
    {LimitScope::kQos, LimitKind::kGrpRunMinutes, 2, "QOSGrpNodeRunMinutes"},
    {LimitScope::kQos, LimitKind::kGrpRunMinutes, 3, "QOSGrpGRESRunMinutes"},
    {LimitScope::kQos, LimitKind::kGrpRunMinutes, 4, "QOSGrpBillingRunMinutes"},
    {LimitScope::kQos, LimitKind::kPerJob, 0, "QOSMaxCpuPerJobLimit"},
    {LimitScope::kQos, LimitKind::kPerJob, 1, "QOSMaxMemoryPerJob"},
    {LimitScope::kQos, LimitKind::kPerJob, 2, "QOSMaxNodePerJobLimit"},
    {LimitScope::kQos, LimitKind::kPerJob, 3, "QOSMaxGRESPerJob"},
    {LimitScope::kQos, LimitKind::kPerJob, 4, "QOSMaxBillingPerJob"},
    {LimitScope::kQos, LimitKind::kPerNode, 0, "QOSMaxCpuPerNode"},
    {LimitScope::kQos, LimitKind::kPerNode, 1, "QOSMaxMemoryPerNode"},
    {LimitScope::kQos, LimitKind::kPerNode, 3, "QOSMaxGRESPerNode"},
    {LimitScope::kQos, LimitKind::kPerNode, 4, "QOSMaxBillingPerNode"},
    {LimitScope::kQos, LimitKind::kMinutesPerJob, 0, "QOSMaxCpuMinutesPerJobLimit"},
    {LimitScope::kQos, LimitKind::kMinutesPerJob, 1, "QOSMaxMemoryMinutesPerJob"},
    {LimitScope::kQos, LimitKind::kMinutesPerJob, 2, "QOSMaxNodeMinutesPerJob"},
    {LimitScope::kQos, LimitKind::kMinutesPerJob, 3, "QOSMaxGRESMinutesPerJob"},
    {LimitScope::kQos, LimitKind::kMinutesPerJob, 4, "QOSMaxBillingMinutesPerJob"},
    {LimitScope::kQos, LimitKind::kPerUser, 0, "QOSMaxCpuPerUserLimit"},
    {LimitScope::kQos, LimitKind::kPerUser, 1, "QOSMaxMemoryPerUser"},
    {LimitScope::kQos, LimitKind::kPerUser, 2, "QOSMaxNodePerUserLimit"},
    {LimitScope::kQos, LimitKind::kPerUser, 3, "QOSMaxGRESPerUser"},
    {LimitScope::kQos, LimitKind::kPerUser, 4, "QOSMaxBillingPerUser"},
    {LimitScope::kQos, LimitKind::kPerAccount, 0, "MaxCpuPerAccount"},
    {LimitScope::kQos, LimitKind::kPerAccount, 1, "MaxMemoryPerAccount"},
    {LimitScope::kQos, LimitKind::kPerAccount, 2, "MaxNodePerAccount"},
    {LimitScope::kQos, LimitKind::kPerAccount, 3, "MaxGRESPerAccount"},
    {LimitScope::kQos, LimitKind::kPerAccount, 4, "MaxBillingPerAccount"},
    {LimitScope::kQos, LimitKind::kMin, 0, "QOSMinCpuNotSatisfied"},
    {LimitScope::kQos, LimitKind::kMin, 1, "QOSMinMemory"},
    {LimitScope::kQos, LimitKind::kMin, 2, "QOSMinNode"},
    {LimitScope::kQos, LimitKind::kMin, 3, "QOSMinGRES"},
    {LimitScope::kQos, LimitKind::kMin, 4, "QOSMinBilling"},
};
static_assert(std::size(kTresLimitNames) == kTresLimitReasons);

}  // namespace

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
    case PendingReason::kQosMaxJobsPerUserLimit:
      return "QOSMaxJobsPerUserLimit";
    case PendingReason::kQosMaxWallDurationPerJobLimit:
      return "QOSMaxWallDurationPerJobLimit";
    case PendingReason::kQosGrpJobsLimit:
      return "QOSGrpJobsLimit";
    case PendingReason::kQosGrpWallLimit:
      return "QOSGrpWallLimit";
    case PendingReason::kQosMaxJobsPerAccount:
      return "MaxJobsPerAccount";
    case PendingReason::kQosUsageThreshold:
      return "QOSUsageThreshold";
    case PendingReason::kAssocMaxJobsLimit:
      return "AssocMaxJobsLimit";
    case PendingReason::kAssocGrpJobsLimit:
      return "AssocGrpJobsLimit";
    case PendingReason::kAssocGrpWallLimit:
      return "AssocGrpWallLimit";
    case PendingReason::kAssocMaxWallDurationPerJobLimit:
      return "AssocMaxWallDurationPerJobLimit";
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
    case PendingReason::kFirstTresLimit:
      break;
  }
  size_t index = static_cast<size_t>(reason) - static_cast<size_t>(PendingReason::kFirstTresLimit);
  if (index < std::size(kTresLimitNames)) return kTresLimitNames[index].name;
  return "None";
}

PendingReason LimitReason(LimitScope scope, LimitKind kind, std::string_view tres) {
  int column = tres == "cpu"       ? 0
               : tres == "mem"     ? 1
               : tres == "node"    ? 2
               : tres == "billing" ? 4
                                   : -1;
  if (tres.starts_with("gres/")) column = 3;
  if (column < 0) return PendingReason::kNone;
  for (size_t i = 0; i < std::size(kTresLimitNames); ++i) {
    const TresLimitName& entry = kTresLimitNames[i];
    if (entry.scope == scope && entry.kind == kind && entry.column == column)
      return static_cast<PendingReason>(static_cast<size_t>(PendingReason::kFirstTresLimit) + i);
  }
  return PendingReason::kNone;
}

}  // namespace drover::sched
