// A job's state as Slurm names and abbreviates it (PENDING/PD, OUT_OF_MEMORY/OOM, ...): a value
// type every process shares. It says nothing about how a job moves between states; that is the
// controller's engine.
#pragma once

#include <optional>
#include <string_view>

namespace drover {

enum class JobState {
  kPending,
  kRunning,
  kSuspended,
  kCompleting,
  kCompleted,
  kFailed,
  kCancelled,
  kTimeout,
  kNodeFail,
  kPreempted,
  kOutOfMemory,
  kBootFail,
  kDeadline,
  kRequeued,  // only in the history of runs: the run that ended in a requeue
};

std::string_view JobStateName(JobState state);  // "PENDING", "OUT_OF_MEMORY", ...
std::string_view JobStateCode(JobState state);  // "PD", "OOM", ...
bool IsFinal(JobState state);
// "PENDING" -> kPending; nullopt for anything else.
std::optional<JobState> ParseJobState(std::string_view name);

}  // namespace drover
