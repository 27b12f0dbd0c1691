// `scontrol update job` keys beyond the time limit, nice, partition, name and QOS: Slurm 22.05's
// key names (any case, with its aliases), each parsed into a JobSpec field, and Slurm's rules
// for applying them — which may change only while the job is pending. Shared by scontrol (to
// refuse a bad value before calling) and the controller (which parses again at its edge).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/job_spec.h"
#include "common/result.h"

namespace drover {

enum class JobField {
  kAccount,
  kArrayTaskThrottle,
  kComment,
  kCpusPerTask,
  kDependency,
  kBeginTime,
  kExclude,
  kFeatures,
  kGres,
  kMemPerCpu,
  kMemPerNode,
  kNodeList,
  kNumNodes,
  kNumTasks,
  kOverSubscribe,
  kRequeue,
  kReservation,
  kStderr,
  kStdin,
  kStdout,
  kSwitches,
  kTasksPerNode,
  kTimeMin,
  kWorkDir,
  kLicenses,
  kAdminComment,
  kContiguous,
  kDeadline,
  kMailType,
  kMailUser,
  kMinCpusNode,
  kMinTmpDisk,
  kPrefer,
  kPriority,
  kReqSockets,
  kReqCores,
  kReqThreads,
  kSiteFactor,
  kSwitchWait,
  kNoEffect,  // BurstBuffer, DelayBoot, Reboot, WCKey: checked, then as Slurm without the feature
};

struct JobUpdate {
  JobSpec values;                // the parsed values of `fields`; the rest unused
  std::vector<JobField> fields;  // in the order given
};

// Whether `key` (lower-cased or not) is one of this table's keys.
bool IsJobUpdateKey(std::string_view key);

// Parses one Key=Value into `update`. `now` resolves StartTime=now+1hour. Errors are Slurm's
// words for a bad value ("Invalid CpusPerTask value: x").
Status ParseJobUpdateKey(std::string_view key, std::string_view value, int64_t now,
                         JobUpdate& update);

// Whether `update` sets `field`.
bool Updates(const JobUpdate& update, JobField field);

// Applies `update` to `spec` of a job that is `pending` or not, for a caller who is an operator or
// not; the message Slurm gives for the first field that may not change now ("Job is no longer
// pending execution") or by this caller ("Access/permission denied"), or "". Priority is copied
// as given: the caller checks who may set it and what 0 means (a hold).
std::string ApplyJobUpdate(const JobUpdate& update, bool pending, bool by_operator, JobSpec& spec);

// A --mail-user (or MailUser=) MailProg may be given: no leading '-', only the characters of
// addresses and user names, at most 256.
bool IsSafeMailUser(std::string_view user);

}  // namespace drover
