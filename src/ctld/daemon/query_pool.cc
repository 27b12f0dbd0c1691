// See query_pool.h.
#include "ctld/daemon/query_pool.h"

#include <pthread.h>

namespace drover::ctld {

QueryPool::QueryPool(int threads, size_t max_queued) : max_queued_(max_queued) {
  for (int i = 0; i < threads; ++i)
    threads_.emplace_back([this] {
      pthread_setname_np(pthread_self(), "ctld-query");
      while (true) {
        std::function<void()> work;
        {
          MutexLock lock(mutex_);
          wake_.Wait(mutex_, [&]() REQUIRES(mutex_) { return stop_ || !queue_.empty(); });
          if (queue_.empty()) return;
          work = std::move(queue_.front());
          queue_.pop_front();
        }
        work();
      }
    });
}

QueryPool::~QueryPool() {
  {
    MutexLock lock(mutex_);
    stop_ = true;
  }
  wake_.NotifyAll();
  for (std::thread& thread : threads_) thread.join();
}

bool QueryPool::Run(std::function<void()> work) {
  {
    MutexLock lock(mutex_);
    if (queue_.size() >= max_queued_) return false;
    queue_.push_back(std::move(work));
  }
  wake_.NotifyOne();
  return true;
}

size_t QueryPool::queued() const {
  MutexLock lock(mutex_);
  return queue_.size();
}

}  // namespace drover::ctld
