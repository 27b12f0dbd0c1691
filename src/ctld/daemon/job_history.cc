// See job_history.h.
#include "ctld/daemon/job_history.h"

#include <set>

#include "ctld/records.h"
#include "ctld/views/privacy.h"

namespace drover::ctld {
namespace {

views::HistoryKey KeyOf(const v1::Job& job) {
  return {job.spec().job_id(), job.spec().array_job_id(), job.spec().user(),
          job.state(),         job.spec().submit_time(),  job.end_time(),
          job.spec().uid()};
}

}  // namespace

JobHistory::JobHistory(std::unique_ptr<Store> store) : store_(std::move(store)) {}

Result<wire::JobListing> JobHistory::Find(const Snapshot& snapshot, const Caller& caller,
                                          views::HistoryQuery query) {
  query.filter = views::VisibleJobs(std::move(query.filter), caller, snapshot.cluster->settings);
  wire::JobListing listing;
  listing.time = snapshot.time;
  std::set<uint64_t> live = views::LiveJobIds(snapshot);
  {
    MutexLock lock(mutex_);
    if (store_) {
      auto rows = store_->Load("job_history");
      if (!rows) return std::move(rows).take_error();
      v1::Job job;
      for (auto& [key, value] : *rows) {
        if (!job.ParseFromString(value) || live.count(job.spec().job_id())) continue;
        if (views::Selects(query, KeyOf(job)))
          listing.jobs.push_back(std::make_shared<const std::string>(std::move(value)));
      }
    }
  }
  for (const JobPtr& job : views::LiveHistory(snapshot, query))
    listing.jobs.push_back(EncodeJob(*job, *snapshot.cluster));
  return listing;
}

}  // namespace drover::ctld
