// scontrol's Key=Value arguments turned into the controller's requests: `update job`,
// `update node` and `create|update reservation`, as Slurm 22.05 spells them (keys in any case).
// Pure: no controller, no clock (`now` comes in for StartTime=now+1hour). Errors are the line
// scontrol prints.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"
#include "proto/drover.pb.h"

namespace drover::cli::scontrol {

// "12", "12_3" (one task of an array) or "12_[1-3,5]" (tasks) into `filter`; false when it is
// none of these.
bool AddJobId(std::string_view text, v1::JobFilter* filter);

// A list of IDs as hold/release/requeue/suspend take them: "12,13_1 14".
Result<v1::JobFilter> ParseJobList(std::span<const std::string> words);

// scontrol top's list, in its order: "12,14_2 13". A whole job's task is UINT32_MAX.
Result<v1::TopRequest> ParseTopList(std::span<const std::string> words);

// `update` arguments naming jobs: "JobId=12 TimeLimit=30", "job 12 Nice=10", "JobId=12_3 ...",
// "JobId=12_[1-5] ...", "JobName=x Comment=y" (the caller's jobs named x). Keys: TimeLimit,
// Nice, Partition, Name/JobName, QOS, and common/job_update.h's (sent as "Key=Value" settings,
// checked here first). Anything else is an error that names it. `now` resolves relative times.
Result<v1::UpdateJobRequest> ParseJobUpdate(std::span<const std::string> words, int64_t now);

// `reboot [ASAP] [nextstate=RESUME|DOWN] [reason=TEXT] ALL|NODES`, as Slurm's scontrol takes it.
Result<v1::RebootRequest> ParseReboot(std::span<const std::string> words);

// `update` arguments naming nodes: "NodeName=n[1-2] State=DRAIN Reason=maintenance", with
// Weight, Features/AvailableFeatures, ActiveFeatures, Comment and Extra. States: DRAIN, RESUME
// (IDLE), DOWN, UNDRAIN, FAIL, NoResp, CANCEL_REBOOT; those of features Drover lacks (POWER_*,
// FUTURE) are refused saying so.
Result<v1::UpdateNodeRequest> ParseNodeUpdate(std::span<const std::string> words);

// `create|update PartitionName=P Key=Value...`: the keys of slurm.conf's partition line
// (common/partition_update.h), sent as "Key=Value" settings; others are refused by name.
Result<v1::UpdatePartitionRequest> ParsePartitionUpdate(std::span<const std::string> words,
                                                        bool create);

// `create|update reservation` arguments: ReservationName, StartTime, EndTime, Duration, Nodes,
// NodeCnt, TRES, Users, Accounts, Flags, PartitionName.
Result<v1::ReservationRequest> ParseReservation(std::span<const std::string> words, int64_t now);

// "Key=Value" split at the first '='; the key lower-cased. No '=': the value is empty.
std::pair<std::string, std::string> SplitKeyValue(std::string_view word);

}  // namespace drover::cli::scontrol
