// A mutex, its scoped lock and a condition variable that Clang's thread-safety analysis
// understands (-Wthread-safety): every member a mutex guards is declared GUARDED_BY it, and a
// build with clang checks each access. libstdc++'s std::mutex carries no such annotations.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define DROVER_THREAD_ATTRIBUTE(x) __attribute__((x))
#else
#define DROVER_THREAD_ATTRIBUTE(x)
#endif

// gRPC's headers bring Abseil's legacy macros GUARDED_BY, PT_GUARDED_BY and
// NO_THREAD_SAFETY_ANALYSIS, with the same meaning. These three are spelled token for token as
// Abseil spells them, so either header may come first (an identical redefinition is allowed).
#if defined(__clang__)
#define THREAD_ANNOTATION_ATTRIBUTE__(x) __attribute__((x))
#else
#define THREAD_ANNOTATION_ATTRIBUTE__(x)
#endif
#define GUARDED_BY(x) THREAD_ANNOTATION_ATTRIBUTE__(guarded_by(x))
#define PT_GUARDED_BY(x) THREAD_ANNOTATION_ATTRIBUTE__(pt_guarded_by(x))
#define NO_THREAD_SAFETY_ANALYSIS THREAD_ANNOTATION_ATTRIBUTE__(no_thread_safety_analysis)

#define CAPABILITY(x) DROVER_THREAD_ATTRIBUTE(capability(x))
#define SCOPED_CAPABILITY DROVER_THREAD_ATTRIBUTE(scoped_lockable)
#define REQUIRES(...) DROVER_THREAD_ATTRIBUTE(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) DROVER_THREAD_ATTRIBUTE(locks_excluded(__VA_ARGS__))
#define ACQUIRE(...) DROVER_THREAD_ATTRIBUTE(acquire_capability(__VA_ARGS__))
#define RELEASE(...) DROVER_THREAD_ATTRIBUTE(release_capability(__VA_ARGS__))
#define RETURN_CAPABILITY(x) DROVER_THREAD_ATTRIBUTE(lock_returned(x))

namespace drover {

class CAPABILITY("mutex") Mutex {
 public:
  void Lock() ACQUIRE() { mutex_.lock(); }
  void Unlock() RELEASE() { mutex_.unlock(); }
  // For CondVar only: the analysis cannot see through std::unique_lock.
  std::mutex& native() RETURN_CAPABILITY(this) { return mutex_; }

 private:
  std::mutex mutex_;
};

// Holds `mutex` for its scope.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mutex) ACQUIRE(mutex) : mutex_(mutex) { mutex_.Lock(); }
  ~MutexLock() RELEASE() { mutex_.Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mutex_;
};

// A condition variable over a Mutex the caller already holds (through a MutexLock). A predicate
// that reads guarded members says so: [&]() REQUIRES(mutex_) { return !queue_.empty(); }.
class CondVar {
 public:
  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

  // Waits until `done()` holds; `mutex` is held on return, as on entry.
  template <typename Predicate>
  void Wait(Mutex& mutex, Predicate done) REQUIRES(mutex) {
    std::unique_lock<std::mutex> lock(mutex.native(), std::adopt_lock);
    cv_.wait(lock, done);
    lock.release();
  }
  // As Wait, but gives up at `deadline`; returns done()'s last value.
  template <typename Clock, typename Duration, typename Predicate>
  bool WaitUntil(Mutex& mutex, std::chrono::time_point<Clock, Duration> deadline, Predicate done)
      REQUIRES(mutex) {
    std::unique_lock<std::mutex> lock(mutex.native(), std::adopt_lock);
    bool result = cv_.wait_until(lock, deadline, done);
    lock.release();
    return result;
  }
  template <typename Rep, typename Period, typename Predicate>
  bool WaitFor(Mutex& mutex, std::chrono::duration<Rep, Period> timeout, Predicate done)
      REQUIRES(mutex) {
    return WaitUntil(mutex, std::chrono::steady_clock::now() + timeout, done);
  }

 private:
  std::condition_variable cv_;
};

}  // namespace drover
