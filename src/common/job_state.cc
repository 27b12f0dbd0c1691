// Job states as Slurm names and abbreviates them; see job_state.h.
#include "common/job_state.h"

#include <iterator>

namespace drover {
namespace {

struct StateNames {
  std::string_view name, code;
};

constexpr StateNames kNames[] = {
    {"PENDING", "PD"},   {"RUNNING", "R"},    {"SUSPENDED", "S"},       {"COMPLETING", "CG"},
    {"COMPLETED", "CD"}, {"FAILED", "F"},     {"CANCELLED", "CA"},      {"TIMEOUT", "TO"},
    {"NODE_FAIL", "NF"}, {"PREEMPTED", "PR"}, {"OUT_OF_MEMORY", "OOM"}, {"BOOT_FAIL", "BF"},
    {"DEADLINE", "DL"},  {"REQUEUED", "RQ"},
};
static_assert(std::size(kNames) == static_cast<size_t>(JobState::kRequeued) + 1);

}  // namespace

std::string_view JobStateName(JobState state) {
  return kNames[static_cast<int>(state)].name;
}
std::string_view JobStateCode(JobState state) {
  return kNames[static_cast<int>(state)].code;
}

bool IsFinal(JobState state) {
  return state != JobState::kPending && state != JobState::kRunning &&
         state != JobState::kSuspended && state != JobState::kCompleting;
}

std::optional<JobState> ParseJobState(std::string_view name) {
  for (size_t i = 0; i < std::size(kNames); ++i)
    if (kNames[i].name == name) return static_cast<JobState>(i);
  return std::nullopt;
}

}  // namespace drover
