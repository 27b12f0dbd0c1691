// Timings and counters the engine thread records for /metrics: store commit latency and
// scheduling cycle duration as Prometheus histograms, and batch counts. Written by the engine
// thread, read by the HTTP thread: every field is atomic.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <vector>

#include "common/mutex.h"

namespace drover::ctld {

class Histogram {
 public:
  // Upper bounds in seconds, as Prometheus' "le" labels; +Inf is implicit.
  static constexpr std::array<double, 12> kBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                     0.05,   0.1,   0.25,   0.5,   1,    2.5};
  void Observe(double seconds) {
    for (size_t i = 0; i < kBounds.size(); ++i)
      if (seconds <= kBounds[i]) buckets_[i].fetch_add(1, std::memory_order_relaxed);
    count_.fetch_add(1, std::memory_order_relaxed);
    uint64_t micros = static_cast<uint64_t>(seconds * 1e6);
    sum_micros_.fetch_add(micros, std::memory_order_relaxed);
  }
  uint64_t bucket(size_t i) const { return buckets_[i].load(std::memory_order_relaxed); }
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  double sum() const { return static_cast<double>(sum_micros_.load()) / 1e6; }

 private:
  std::array<std::atomic<uint64_t>, kBounds.size()> buckets_{};  // cumulative, as Prometheus
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_micros_{0};
};

struct LoopStats {
  Histogram commit_seconds;  // one store transaction (group commit)
  Histogram cycle_seconds;   // a batch that ran a scheduling cycle
  std::atomic<uint64_t> batches{0};
  std::atomic<uint64_t> jobs_considered_last_cycle{0};
  // sdiag: the last scheduling cycle's length and the longest since start (or `sdiag -r`).
  std::atomic<uint64_t> last_cycle_micros{0};
  std::atomic<uint64_t> max_cycle_micros{0};
  std::atomic<int64_t> last_cycle_time{0};  // seconds since the epoch
  // The longest cycle since the queue history's last sample (QueueHistory::Record resets it).
  std::atomic<uint64_t> peak_cycle_micros{0};
};

// The queue over time, for the web dashboard and sdiag's readers: pending and running counts
// and the longest scheduling cycle, one sample every kInterval seconds for the last kSamples.
// The commit thread records; any thread reads.
class QueueHistory {
 public:
  static constexpr int64_t kInterval = 15;
  static constexpr size_t kSamples = 1440;  // six hours
  struct Sample {
    int64_t time = 0;
    uint32_t pending = 0, running = 0;
    uint64_t cycle_micros = 0;
  };
  // Whether a sample is due at `now` (then the caller counts the queue and calls Record).
  bool Due(int64_t now) const EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return samples_.empty() || now - samples_.back().time >= kInterval;
  }
  void Record(const Sample& sample) EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    samples_.push_back(sample);
    while (samples_.size() > kSamples) samples_.pop_front();
  }
  std::vector<Sample> Samples() const EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return {samples_.begin(), samples_.end()};
  }

 private:
  mutable Mutex mutex_;
  std::deque<Sample> samples_ GUARDED_BY(mutex_);
};

}  // namespace drover::ctld
