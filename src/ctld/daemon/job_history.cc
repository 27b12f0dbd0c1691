// See job_history.h.
#include "ctld/daemon/job_history.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "common/log.h"
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

namespace {

// Keys of history_index after `from` and before `before`.
struct Range {
  std::string from, before;
};

// "x/.../" -> "x/...0": the first key after every key that starts with the prefix.
std::string PastPrefix(std::string prefix) {
  prefix.back() = '/' + 1;
  return prefix;
}

// The index ranges that hold every stored job the query can select, in key order: its jobs and
// arrays by ID; else its owners' jobs that ended in the window or later; else every such job.
std::vector<Range> RangesOf(const views::HistoryQuery& query) {
  std::vector<Range> ranges;
  const JobFilter& filter = query.filter;
  if (!filter.job_ids.empty()) {
    std::set<uint64_t> ids(filter.job_ids.begin(), filter.job_ids.end());
    for (uint64_t id : ids) {
      std::string prefix = HistoryGroupPrefix(id);
      ranges.push_back({prefix, PastPrefix(prefix)});
    }
    return ranges;
  }
  std::set<uint32_t> uids(query.uids.begin(), query.uids.end());
  if (filter.uid) {
    bool asked = uids.empty() || uids.count(*filter.uid);
    uids.clear();
    if (!asked) return ranges;  // someone else's jobs, and the caller sees only its own
    uids.insert(*filter.uid);
  }
  for (uint32_t uid : uids) {
    std::string prefix = HistoryUserPrefix(uid);
    ranges.push_back({HistoryTimeKey(prefix, query.start_time), PastPrefix(prefix)});
  }
  if (uids.empty()) {
    std::string prefix(kHistoryTimePrefix);
    ranges.push_back({HistoryTimeKey(prefix, query.start_time), PastPrefix(prefix)});
  }
  return ranges;
}

}  // namespace

Result<JobHistory::Page> JobHistory::Find(const Snapshot& snapshot, const Caller& caller,
                                          views::HistoryQuery query, const std::string& after,
                                          size_t limit) {
  query.filter = views::VisibleJobs(std::move(query.filter), caller, snapshot.cluster->settings);
  if (limit == 0 || limit > kMaxPage) limit = kMaxPage;
  Page page;
  page.listing.time = snapshot.time;
  {
    MutexLock lock(mutex_);
    if (store_) {
      std::set<uint64_t> listed;  // a job is listed once, however many of its keys are read
      v1::Job job;
      // `task_of_other`: only an array task whose array has another ID (the rest are in ranges).
      auto add = [&](std::string value, bool task_of_other) {
        if (!job.ParseFromString(value) || snapshot.jobs.Find(job.spec().job_id())) return;
        uint64_t group = job.spec().array_job_id();
        if (task_of_other && (group == 0 || group == job.spec().job_id())) return;
        if (!views::Selects(query, KeyOf(job))) return;
        if (!listed.insert(job.spec().job_id()).second) return;
        page.listing.jobs.push_back(std::make_shared<const std::string>(std::move(value)));
      };
      Store& store = *store_;  // held under mutex_ for the whole of this block
      auto record = [&](uint64_t id, bool task_of_other) -> Status {
        auto row = store.Get("job_history", JobKey(id));
        if (!row) return std::move(row).take_error();
        if (*row) add(std::move(**row), task_of_other);
        return OkStatus();
      };
      // sacct -j names an array task by its own ID too: it is found under its array's.
      if (after.empty())
        for (uint64_t id : query.filter.job_ids)
          if (Status found = record(id, true); !found) return std::move(found).take_error();
      size_t read = 0;
      for (const Range& range : RangesOf(query)) {
        if (!after.empty() && after >= range.before) continue;
        std::string from = std::max(range.from, after);
        for (;;) {
          size_t want = limit - read;
          auto rows = store_->LoadRange("history_index", from, range.before, want);
          if (!rows) return std::move(rows).take_error();
          read += rows->size();
          for (const auto& [key, value] : *rows)
            if (Status found = record(HistoryIndexJobId(key), false); !found)
              return std::move(found).take_error();
          // A full page may have more after it; the next call goes on from its last key.
          if (read == limit) {
            page.next = rows->back().first;  // read grew to the limit: rows has some
            return page;
          }
          if (rows->size() < want) break;
          from = rows->back().first;
        }
      }
    }
  }
  for (const JobPtr& job : views::LiveHistory(snapshot, query))
    page.listing.jobs.push_back(EncodeJob(*job, *snapshot.cluster));
  return page;
}

Status IndexHistory(Store& store) {
  auto indexed = store.Get("meta", "history_indexed");
  if (!indexed) return std::move(indexed).take_error();
  if (*indexed) return OkStatus();
  std::string after;
  size_t count = 0;
  v1::Job job;
  for (;;) {
    auto rows = store.LoadPage("job_history", after, JobHistory::kMaxPage);
    if (!rows) return std::move(rows).take_error();
    WriteBatch batch;
    for (const auto& [key, value] : *rows) {
      if (!job.ParseFromString(value)) continue;
      for (std::string& index : HistoryIndexKeys(job.spec().job_id(), job.spec().array_job_id(),
                                                 job.spec().uid(), job.end_time()))
        batch.puts.push_back({"history_index", std::move(index), ""});
      ++count;
    }
    if (rows->size() < JobHistory::kMaxPage) {
      batch.puts.push_back({"meta", "history_indexed", "1"});
      if (Status committed = store.Commit(batch); !committed) return committed;
      if (count) log::Info("indexed the {} jobs of the job history", count);
      return OkStatus();
    }
    if (Status committed = store.Commit(batch); !committed) return committed;
    after = rows->back().first;
  }
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
      for (std::string& index :
           HistoryIndexKeys(spec.job_id(), spec.array_job_id(), spec.uid(), job.end_time()))
        batch.deletes.push_back({"history_index", std::move(index)});
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
