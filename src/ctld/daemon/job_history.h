// sacct's source: the jobs the store keeps in its history (read through a second connection of
// the store's own) and the jobs still in the live queue. Called from the service's query
// threads, so the connection is used by one at a time; never writes the store.
#pragma once

#include <memory>

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

  // The stored jobs the query selects that have left the live queue, in the store's order, then
  // the live queue's, by ID; under PrivateData=jobs only the caller's own unless an operator
  // asks. An error when the store cannot be read.
  Result<wire::JobListing> Find(const Snapshot& snapshot, const Caller& caller,
                                views::HistoryQuery query) EXCLUDES(mutex_);

 private:
  Mutex mutex_;  // the store is not thread-safe; queries are concurrent
  std::unique_ptr<Store> store_ PT_GUARDED_BY(mutex_);
};

}  // namespace drover::ctld
