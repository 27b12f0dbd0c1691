// See jobs.h.
#include "ctld/views/jobs.h"

#include <algorithm>
#include <set>
#include <utility>

#include "common/hostlist.h"
#include "ctld/views/privacy.h"

namespace drover::ctld::views {

JobSelection SelectJobs(const Snapshot& snapshot, const Caller& caller, const JobFilter& asked,
                        bool all_states, bool with_plan, bool holding_nodes) {
  const JobFilter filter = VisibleJobs(asked, caller, snapshot.cluster->settings);
  JobSelection selection;
  selection.time = snapshot.time;
  std::set<uint64_t> ids(filter.job_ids.begin(), filter.job_ids.end());
  std::set<std::pair<uint64_t, uint32_t>> tasks(filter.array_tasks.begin(),
                                                filter.array_tasks.end());
  const bool by_id = !ids.empty() || !tasks.empty();
  const std::vector<sched::PlannedStart>& plan = *snapshot.plan;  // by job ID
  auto planned = plan.begin();
  for (const JobPtr& job : snapshot.jobs) {
    if (holding_nodes && job->state != JobState::kRunning && job->state != JobState::kSuspended &&
        job->state != JobState::kCompleting)
      continue;
    const JobSpec& spec = job->spec;
    if (by_id && !ids.count(spec.job_id) && !ids.count(spec.array_job_id) &&
        !tasks.count({spec.array_job_id, spec.array_task_id}))
      continue;
    if (!JobMatches(*job, filter, *snapshot.cluster)) continue;
    if (!all_states && IsFinal(job->state) && !by_id && !filter.state) continue;
    if (with_plan && job->state == JobState::kPending) {
      // Jobs come in ID order, as the plan does: one walk through both.
      planned = std::lower_bound(planned, plan.end(), spec.job_id,
                                 [](const auto& p, uint64_t id) { return p.job_id < id; });
      if (planned != plan.end() && planned->job_id == spec.job_id)
        selection.planned.push_back(PlannedStartOf(*planned, *snapshot.cluster));
    }
    selection.jobs.push_back(job);
  }
  return selection;
}

wire::PlannedStartInfo PlannedStartOf(const sched::PlannedStart& plan,
                                      const ClusterConfig& cluster) {
  std::vector<std::string> names;
  for (int node : plan.nodes) names.push_back(cluster.nodes[node].name);
  return {plan.job_id, plan.start_time, CompressHostlist(names), plan.reserved};
}

wire::WillRunInfo WillRunOf(const WillRun& will_run, const ClusterConfig& cluster) {
  uint32_t processors = 0;
  for (const sched::NodeAllocation& node : will_run.allocation.nodes) {
    int threads = node.node >= 0 && static_cast<size_t>(node.node) < cluster.nodes.size()
                      ? std::max(cluster.nodes[node.node].threads_per_core, 1)
                      : 1;
    processors += static_cast<uint32_t>(node.cores.size()) * static_cast<uint32_t>(threads);
  }
  return {will_run.start_time, NodeList(will_run.allocation, cluster),
          PartitionName(will_run.partition, cluster), processors};
}

std::string PartitionName(int partition, const ClusterConfig& cluster) {
  if (partition < 0 || static_cast<size_t>(partition) >= cluster.partitions.size()) return "";
  return cluster.partitions[partition].name;
}

std::string NodeList(const sched::Allocation& allocation, const ClusterConfig& cluster) {
  std::vector<std::string> names;
  for (const sched::NodeAllocation& node : allocation.nodes) {
    if (node.node >= 0 && static_cast<size_t>(node.node) < cluster.nodes.size()) {
      names.push_back(cluster.nodes[node.node].name);
    }
  }
  return CompressHostlist(names);
}

std::string PartitionLabel(const Job& job, const ClusterConfig& cluster) {
  if (job.partition >= 0 && job.partition < static_cast<int>(cluster.partitions.size()))
    return cluster.partitions[job.partition].name;
  if (!job.spec.partitions.empty()) return job.spec.partitions.front();
  int fallback = cluster.DefaultPartition();
  return fallback >= 0 ? cluster.partitions[fallback].name : "";
}

}  // namespace drover::ctld::views
