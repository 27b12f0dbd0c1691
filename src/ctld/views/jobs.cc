// See jobs.h.
#include "ctld/views/jobs.h"

#include <algorithm>
#include <iterator>
#include <set>
#include <utility>

#include "common/hostlist.h"
#include "ctld/views/node_usage.h"
#include "ctld/views/privacy.h"

namespace drover::ctld::views {

// An array's tasks took consecutive IDs from the array's ID at submission, in increasing task
// order, so an array's ID or one of its tasks is found by walking from the array's ID, not the
// queue.
std::vector<JobPtr> NamedJobs(const Snapshot& snapshot, const JobFilter& filter) {
  using TaskKey = std::pair<uint64_t, uint32_t>;  // array job ID, task ID
  const JobTable::View& jobs = snapshot.jobs;
  const std::set<uint64_t> ids(filter.job_ids.begin(), filter.job_ids.end());
  const std::set<TaskKey> tasks(filter.array_tasks.begin(), filter.array_tasks.end());
  std::vector<JobPtr> found;
  for (uint64_t id : ids) {
    if (id == 0) continue;  // no job has it (array_job_id 0 means "not an array")
    for (auto it = jobs.From(id); it != jobs.end(); ++it) {
      const JobSpec& spec = (*it)->spec;
      if (spec.job_id != id && spec.array_job_id != id) break;
      found.push_back(*it);
    }
  }
  for (auto task = tasks.begin(); task != tasks.end();) {
    const uint64_t array = task->first;
    // This array's asked tasks: [task, last). (array + 1 would wrap for the largest ID.)
    auto last = tasks.upper_bound({array, UINT32_MAX});
    const uint32_t highest = std::prev(last)->second;
    if (array != 0) {
      for (auto it = jobs.From(array); it != jobs.end(); ++it) {
        const JobSpec& spec = (*it)->spec;
        if (spec.array_job_id != array || spec.array_task_id > highest) break;
        if (tasks.count({array, spec.array_task_id})) found.push_back(*it);
      }
    }
    task = last;
  }
  std::sort(found.begin(), found.end(),
            [](const JobPtr& a, const JobPtr& b) { return a->spec.job_id < b->spec.job_id; });
  found.erase(std::unique(found.begin(), found.end()), found.end());
  return found;
}

JobSelection SelectJobs(const Snapshot& snapshot, const Caller& caller, const JobFilter& asked,
                        bool all_states, bool with_plan, bool holding_nodes, const JobPage& page) {
  const JobFilter filter = VisibleJobs(asked, caller, snapshot.cluster->settings);
  JobSelection selection;
  selection.time = snapshot.time;
  const bool by_id = !filter.job_ids.empty() || !filter.array_tasks.empty();
  const std::vector<sched::PlannedStart>& plan = *snapshot.plan;  // by job ID
  auto planned = plan.begin();
  // False once the page is full and another job matches.
  auto take = [&](const JobPtr& job) {
    if (job->spec.job_id <= page.after) return true;
    if (holding_nodes && job->state != JobState::kRunning && job->state != JobState::kSuspended &&
        job->state != JobState::kCompleting)
      return true;
    if (!JobMatches(*job, filter, *snapshot.cluster)) return true;
    if (!all_states && IsFinal(job->state) && !by_id && !filter.state) return true;
    if (selection.jobs.size() >= std::max<size_t>(page.limit, 1)) {
      selection.more_after = selection.jobs.back()->spec.job_id;
      return false;
    }
    if (with_plan && job->state == JobState::kPending) {
      // Jobs come in ID order, as the plan does: one walk through both.
      planned = std::lower_bound(planned, plan.end(), job->spec.job_id,
                                 [](const auto& p, uint64_t id) { return p.job_id < id; });
      if (planned != plan.end() && planned->job_id == job->spec.job_id)
        selection.planned.push_back(PlannedStartOf(*planned, *snapshot.cluster));
    }
    selection.jobs.push_back(job);
    return true;
  };
  if (by_id) {
    for (const JobPtr& job : NamedJobs(snapshot, filter))
      if (!take(job)) break;
  } else if (!filter.nodes.empty() && !all_states && !filter.state) {
    // The live jobs on these nodes (scontrol show node NAME, scancel -i -w): those the nodes list
    // as running there. A pending job holds no allocation, and finished ones are not asked for.
    std::vector<size_t> nodes;
    for (const std::string& name : filter.nodes)
      if (int node = snapshot.cluster->FindNode(name); node >= 0) nodes.push_back(node);
    for (uint64_t id : JobsOnNodes(snapshot, nodes))
      if (const JobPtr* job = snapshot.jobs.Find(id); job && !take(*job)) break;
  } else {
    if (page.after == UINT64_MAX) return selection;  // no job comes after it
    for (auto it = snapshot.jobs.From(page.after + 1); it != snapshot.jobs.end(); ++it)
      if (!take(*it)) break;
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
