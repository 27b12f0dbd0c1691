// Job states as Slurm names and abbreviates them; see job.h.
#include "ctld/engine/job.h"

#include <fmt/format.h>

namespace drover::ctld {
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

sched::RunningJob RunningOf(const Job& job) {
  sched::RunningJob running;
  running.job_id = job.spec.job_id;
  running.name = job.spec.name;
  running.user = job.spec.user;
  running.account = job.spec.account;
  running.qos = job.spec.qos;
  running.partition = job.partition;
  running.shared_allocation = &job.allocation;
  running.start_time = job.start_time;
  running.end_time = job.end_time;
  running.array_job_id = job.spec.array_job_id;
  running.preempted = job.preempted_at != 0;
  running.priority = job.start_priority;
  return running;
}

std::vector<int> Job::NodeIndexes() const {
  std::vector<int> nodes;
  for (const sched::NodeAllocation& part : allocation.nodes) nodes.push_back(part.node);
  return nodes;
}

std::string Job::ExitCodeText() const {
  return fmt::format("{}:{}", exit_code, exit_signal);
}

}  // namespace drover::ctld
