// sacct's source: the jobs the store keeps in its history (read through a second connection of
// the store's own) and the jobs still in the live queue. Called from the service's query
// threads, so the connection is used by one at a time. It writes the store only to purge old
// history (PurgeJobAfter): rows the engine wrote once, when the job left the live queue, and
// never writes again, so the two connections never change the same row.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>

#include "common/mutex.h"
#include "common/result.h"
#include "ctld/engine/engine.h"
#include "ctld/store/store.h"
#include "ctld/views/history.h"
#include "wire/read_model.h"

namespace drover::ctld {

class JobHistory {
 public:
  // `store` may be null: only the live queue is searched then.
  explicit JobHistory(std::unique_ptr<Store> store);

  // No call reads more stored records than this, whatever the caller asks.
  static constexpr size_t kMaxPage = 10'000;

  struct Page {
    wire::JobListing listing;
    std::string next;  // the cursor of the next page; empty: this was the last
  };

  // One page: of the stored records found through at most `limit` (0 meaning kMaxPage) keys of
  // history_index after the cursor `after`, those the query selects that have left the live
  // queue; the last page adds the live queue's, by ID. The index is read where the query points:
  // its jobs' and arrays' keys when it names job IDs, else its owners' (query.uids, or the
  // caller alone under PrivateData=jobs unless an operator asks) from the window's start on,
  // else every job's from the window's start on. An error when the store cannot be read.
  Result<Page> Find(const Snapshot& snapshot, const Caller& caller, views::HistoryQuery query,
                    const std::string& after = "", size_t limit = kMaxPage) EXCLUDES(mutex_);

  // Whose job `id` is, live or recorded, and the ID its script and environment are stored
  // under (an array task's are its array's). nullopt when no record of it is kept.
  struct Owner {
    uint32_t uid = 0;
    uint64_t script_id = 0;
  };
  Result<std::optional<Owner>> FindOwner(const Snapshot& snapshot, uint64_t id) EXCLUDES(mutex_);
  // The row of `table` ("scripts" or "environments") kept for `script_id`; nullopt when none.
  Result<std::optional<std::string>> Stored(const std::string& table, uint64_t script_id)
      EXCLUDES(mutex_);

  // PurgeJobAfter: deletes the records of finished jobs submitted at or before `cutoff`, with
  // the script and environment kept for them (an array's once none of its tasks is left here
  // or in `live_arrays`), one page (kMaxPage records) at a time, so queries go on between
  // pages, in commits of at most kPurgeCommit deletes, so the engine's commits wait little for
  // the write lock. How many were purged, or why the store failed.
  Result<size_t> Purge(int64_t cutoff, const std::set<uint64_t>& live_arrays = {}) EXCLUDES(mutex_);
  // Deletes per purge commit (a job's record, its three index keys, script and environment).
  static constexpr size_t kPurgeCommit = 1'500;

 private:
  Mutex mutex_;  // the store is not thread-safe; queries are concurrent
  std::unique_ptr<Store> store_ PT_GUARDED_BY(mutex_);
};

// Fills history_index from job_history once (meta's "history_indexed" row says it was done): a
// store written before the index existed. Run at start, before the history is queried.
Status IndexHistory(Store& store);

}  // namespace drover::ctld
