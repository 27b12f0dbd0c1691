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

Result<JobHistory::Page> JobHistory::Find(const Snapshot& snapshot, const Caller& caller,
                                          views::HistoryQuery query, const std::string& after,
                                          size_t limit) {
  query.filter = views::VisibleJobs(std::move(query.filter), caller, snapshot.cluster->settings);
  if (limit == 0 || limit > kMaxPage) limit = kMaxPage;
  Page page;
  page.listing.time = snapshot.time;
  std::set<uint64_t> live = views::LiveJobIds(snapshot);
  {
    MutexLock lock(mutex_);
    if (store_) {
      auto rows = store_->LoadPage("job_history", after, limit);
      if (!rows) return std::move(rows).take_error();
      // A full page may have more after it; a short one was the end of the table.
      if (rows->size() == limit) page.next = rows->back().first;
      v1::Job job;
      for (auto& [key, value] : *rows) {
        if (!job.ParseFromString(value) || live.count(job.spec().job_id())) continue;
        if (views::Selects(query, KeyOf(job)))
          page.listing.jobs.push_back(std::make_shared<const std::string>(std::move(value)));
      }
    }
  }
  if (!page.next.empty()) return page;
  for (const JobPtr& job : views::LiveHistory(snapshot, query))
    page.listing.jobs.push_back(EncodeJob(*job, *snapshot.cluster));
  return page;
}

Result<std::optional<JobHistory::Owner>> JobHistory::FindOwner(const Snapshot& snapshot,
                                                               uint64_t id) {
  auto owner = [id](uint32_t uid, uint64_t array_job_id) {
    return std::optional<Owner>(Owner{uid, array_job_id ? array_job_id : id});
  };
  if (const JobPtr* live = snapshot.jobs.Find(id))
    return owner((*live)->spec.uid, (*live)->spec.array_job_id);
  MutexLock lock(mutex_);
  if (!store_) return std::optional<Owner>();
  auto row = store_->Get("job_history", JobKey(id));
  if (!row) return std::move(row).take_error();
  v1::Job job;
  if (!*row || !job.ParseFromString(**row)) return std::optional<Owner>();
  return owner(job.spec().uid(), job.spec().array_job_id());
}

Result<size_t> JobHistory::Purge(int64_t cutoff, const std::set<uint64_t>& live_arrays) {
  size_t purged = 0;
  // An array's script and environment are kept under its first task's ID for every task: they
  // go once no task of it is left, in the history or in the live queue.
  std::set<uint64_t> purged_arrays, kept_arrays = live_arrays;
  std::string after;
  auto drop_script = [](WriteBatch& batch, const std::string& key) {
    batch.deletes.push_back({"scripts", key});
    batch.deletes.push_back({"environments", key});
  };
  for (;;) {
    MutexLock lock(mutex_);
    if (!store_) return purged;
    auto rows = store_->LoadPage("job_history", after, kMaxPage);
    if (!rows) return std::move(rows).take_error();
    WriteBatch batch;
    v1::Job job;
    for (const auto& [key, value] : *rows) {
      if (!job.ParseFromString(value)) continue;
      const v1::JobSpec& spec = job.spec();
      if (job.end_time() == 0 || spec.submit_time() > cutoff) {
        if (spec.array_job_id()) kept_arrays.insert(spec.array_job_id());
        continue;
      }
      batch.deletes.push_back({"job_history", key});
      if (spec.array_job_id())
        purged_arrays.insert(spec.array_job_id());
      else
        drop_script(batch, key);
      ++purged;
      // Small commits: the engine's own commits wait for SQLite's write lock meanwhile.
      if (batch.deletes.size() >= kPurgeCommit) {
        if (Status committed = store_->Commit(batch); !committed)
          return std::move(committed).take_error();
        batch = WriteBatch();
      }
    }
    if (rows->size() < kMaxPage)
      for (uint64_t array : purged_arrays)
        if (!kept_arrays.count(array)) drop_script(batch, JobKey(array));
    if (!batch.empty())
      if (Status committed = store_->Commit(batch); !committed)
        return std::move(committed).take_error();
    if (rows->size() < kMaxPage) return purged;
    after = rows->back().first;
  }
}

Result<std::optional<std::string>> JobHistory::Stored(const std::string& table,
                                                      uint64_t script_id) {
  MutexLock lock(mutex_);
  if (!store_) return std::optional<std::string>();
  return store_->Get(table, JobKey(script_id));
}

}  // namespace drover::ctld
