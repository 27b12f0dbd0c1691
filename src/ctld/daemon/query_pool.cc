// See query_pool.h.
#include "ctld/daemon/query_pool.h"

#include <pthread.h>

namespace drover::ctld {

QueryPool::QueryPool(int threads) {
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

void QueryPool::Run(std::function<void()> work) {
  {
    MutexLock lock(mutex_);
    queue_.push_back(std::move(work));
  }
  wake_.NotifyOne();
}

}  // namespace drover::ctld
