// See history.h.
#include "ctld/views/history.h"

#include <algorithm>
#include <utility>

#include "ctld/views/jobs.h"

namespace drover::ctld::views {

HistoryKey KeyOf(const Job& job) {
  return {job.spec.job_id,      job.spec.array_job_id, job.spec.user, JobStateName(job.state),
          job.spec.submit_time, job.end_time,          job.spec.uid};
}

bool Selects(const HistoryQuery& query, const HistoryKey& job) {
  if (query.start_time && job.end_time && job.end_time < query.start_time) return false;
  if (query.end_time && job.submit_time > query.end_time) return false;
  const JobFilter& filter = query.filter;
  auto named = [&](uint64_t id) {
    return std::find(filter.job_ids.begin(), filter.job_ids.end(), id) != filter.job_ids.end();
  };
  if (!filter.job_ids.empty() && !named(job.job_id) && !named(job.array_job_id)) return false;
  if (!filter.user.empty() && job.user != filter.user) return false;
  if (filter.uid && job.uid != *filter.uid) return false;
  if (!query.uids.empty() &&
      std::find(query.uids.begin(), query.uids.end(), job.uid) == query.uids.end())
    return false;
  return !filter.state || job.state == JobStateName(*filter.state);
}

std::vector<JobPtr> LiveHistory(const Snapshot& snapshot, const HistoryQuery& query) {
  std::vector<JobPtr> jobs;
  if (!query.filter.job_ids.empty()) {
    // sacct -j: the named jobs and their arrays' tasks, found by ID (as Selects names them).
    JobFilter named;
    named.job_ids = query.filter.job_ids;
    for (JobPtr& job : NamedJobs(snapshot, named))
      if (Selects(query, KeyOf(*job))) jobs.push_back(std::move(job));
    return jobs;
  }
  for (const JobPtr& job : snapshot.jobs)
    if (Selects(query, KeyOf(*job))) jobs.push_back(job);
  return jobs;
}

}  // namespace drover::ctld::views
