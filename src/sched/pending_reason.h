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
  kQosMaxJobsPerUserLimit,
  kQosMaxWallDurationPerJobLimit,
  kQosGrpJobsLimit,
  kQosGrpWallLimit,
  kQosMaxJobsPerAccount,  // Slurm prints it without "QOS": MaxJobsPerAccount
  kQosUsageThreshold,
  kAssocMaxJobsLimit,
  kAssocGrpJobsLimit,
  kAssocGrpWallLimit,
  kAssocMaxWallDurationPerJobLimit,
  kBadConstraints,
  kJobArrayTaskLimit,
  kNodeDown,
  kInvalidQos,
  kReservation,         // waiting for its advance reservation's window
  kReservationDeleted,  // the reservation it asks for is gone
  kLicenses,            // not enough of its -L licenses are free
  kDeadline,            // removed: it could not end before its --deadline (state DEADLINE)
  // The TRES limits follow: one value for each of LimitReason()'s answers, named by its table.
  kFirstTresLimit,
};

// Which limit a TRES is over, for LimitReason.
enum class LimitScope { kAssociation, kQos };
enum class LimitKind {
  kGrp,            // GrpTRES: what its running jobs hold
  kGrpMinutes,     // GrpTRESMins: its decayed usage
  kGrpRunMinutes,  // GrpTRESRunMins: its running jobs' TRES x time left
  kPerJob,         // MaxTRES
  kPerNode,        // MaxTRESPerNode
  kMinutesPerJob,  // MaxTRESMins
  kPerUser,        // QOS MaxTRESPerUser
  kPerAccount,     // QOS MaxTRESPerAccount
  kMin,            // QOS MinTRESPerJob
};

// Slurm's reason for a limit on `tres` ("cpu", "mem", "node", "billing", "gres/gpu[:type]"):
// AssocGrpGRESMinutes, QOSMaxCpuPerUserLimit, MaxGRESPerAccount, ... kNone for a TRES or a
// combination Slurm has no reason for (those limits are not enforced).
PendingReason LimitReason(LimitScope scope, LimitKind kind, std::string_view tres);

// How many values LimitReason can answer, and the last reason of all.
inline constexpr int kTresLimitReasons = 73;
inline constexpr PendingReason kLastPendingReason = static_cast<PendingReason>(
    static_cast<int>(PendingReason::kFirstTresLimit) + kTresLimitReasons - 1);

// "Priority", "Resources", "QOSMaxGRESPerUser", ... exactly as Slurm spells them.
std::string_view PendingReasonName(PendingReason reason);

}  // namespace drover::sched
