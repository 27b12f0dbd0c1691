// A few threads for the service's queries, so a long one (100,000 jobs) holds none of gRPC's own
// threads. Runs work in the order it came; never runs anything on the caller's thread.
#pragma once

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "common/mutex.h"

namespace drover::ctld {

class QueryPool {
 public:
  explicit QueryPool(int threads);
  ~QueryPool();  // finishes the queued work, then joins
  void Run(std::function<void()> work) EXCLUDES(mutex_);

 private:
  Mutex mutex_;
  CondVar wake_;
  std::deque<std::function<void()>> queue_ GUARDED_BY(mutex_);
  bool stop_ GUARDED_BY(mutex_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace drover::ctld
