// A few threads for the service's queries, so a long one (100,000 jobs) holds none of gRPC's own
// threads. Runs work in the order it came; never runs anything on the caller's thread. The queue
// is bounded: when it is full, Run refuses at once (the caller answers RESOURCE_EXHAUSTED) rather
// than let a flood of queries hold memory without limit or block gRPC's threads.
#pragma once

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "common/mutex.h"

namespace drover::ctld {

// What a query refused by a full queue is told (with RESOURCE_EXHAUSTED).
inline constexpr const char* kQueriesBusy =
    "the controller is busy (its queue of queries is full); retry in a moment";

class QueryPool {
 public:
  // Queries waiting beyond those running: a second's worth of the heaviest (a full squeue of
  // 10,000 jobs takes milliseconds), and far more than interactive users make at once.
  static constexpr size_t kDefaultMaxQueued = 1024;

  explicit QueryPool(int threads, size_t max_queued = kDefaultMaxQueued);
  ~QueryPool();  // finishes the queued work, then joins
  // Queues `work`; false (and `work` dropped, not run) when max_queued are already waiting.
  [[nodiscard]] bool Run(std::function<void()> work) EXCLUDES(mutex_);
  size_t queued() const EXCLUDES(mutex_);

 private:
  const size_t max_queued_;
  mutable Mutex mutex_;
  CondVar wake_;
  std::deque<std::function<void()>> queue_ GUARDED_BY(mutex_);
  bool stop_ GUARDED_BY(mutex_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace drover::ctld
