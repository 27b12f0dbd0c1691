// A job record's helpers; see job.h.
#include "ctld/engine/job.h"

#include <fmt/format.h>

namespace drover::ctld {
sched::RunningJob RunningOf(const Job& job) {
  sched::RunningJob running;
  running.job_id = job.spec.job_id;
  running.name = job.spec.name;
  running.user = job.spec.user;
  running.account = job.spec.account;
  running.qos = job.spec.qos;
  running.partition = job.partition;
  running.shared_allocation = &job.allocation;
  running.revision = job.revision.get();
  running.start_time = job.start_time;
  running.end_time = job.end_time;
  running.array_job_id = job.spec.array_job_id;
  running.preempted = job.preempted_at != 0;
  running.priority = job.start_priority;
  running.licenses = job.spec.licenses;
  running.oversubscribe = job.spec.oversubscribe;
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
