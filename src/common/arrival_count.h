// Counts the replies of asynchronous calls: each callback arrives once (after writing what it
// brought, which the waiter then sees); a waiter waits until so many have arrived.
#pragma once

#include <cstddef>

#include "common/mutex.h"

namespace drover {

class ArrivalCount {
 public:
  void Arrive() EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    ++arrived_;
    changed_.NotifyAll();
  }
  void WaitFor(size_t count) EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    changed_.Wait(mutex_, [&]() REQUIRES(mutex_) { return arrived_ >= count; });
  }

 private:
  Mutex mutex_;
  CondVar changed_;
  size_t arrived_ GUARDED_BY(mutex_) = 0;
};

}  // namespace drover
