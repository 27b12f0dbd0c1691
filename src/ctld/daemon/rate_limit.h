// The per-user rate limit of SlurmctldParameters=rl_enable (Slurm 23.02): a token bucket per
// uid, in a fixed table allocated once. Admit() is called at the top of every RPC handler, on
// gRPC's threads, so it is thread-safe, takes one short lock and never allocates. It must never
// limit root or SlurmUser: the agents' and the administrators' traffic keeps the cluster alive.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/cluster_config.h"
#include "common/mutex.h"

namespace drover::ctld {

class RateLimiter {
 public:
  // `now` returns seconds since the epoch (tests pass a fake; default: the wall clock).
  // `exempt` are uids never limited besides root (SlurmUser's).
  explicit RateLimiter(const RateLimitSettings& settings, std::vector<uint32_t> exempt = {},
                       std::function<int64_t()> now = {});

  // True when `uid` may make this request (and takes one of its tokens); false when its bucket
  // is empty. Always true when the limit is off, for root and the exempt uids, and for users
  // beyond the table's size (Slurm logs those and lets them through).
  bool Admit(uint32_t uid) EXCLUDES(mutex_);

  bool enabled() const { return settings_.enabled; }
  uint64_t refused() const EXCLUDES(mutex_);  // requests refused so far

  // The table never takes more than this many slots, whatever rl_table_size says.
  static constexpr uint32_t kMaxTableSize = 1 << 20;

 private:
  struct Bucket {
    uint32_t uid = 0;  // 0: free (root is never limited, so never stored)
    uint32_t tokens = 0;
    int64_t period = 0;  // the refill period of the last update (seconds / refill_period)
  };
  Bucket* Find(uint32_t uid) REQUIRES(mutex_);

  RateLimitSettings settings_;
  std::vector<uint32_t> exempt_;
  std::function<int64_t()> now_;
  mutable Mutex mutex_;
  std::vector<Bucket> table_ GUARDED_BY(mutex_);
  uint64_t refused_ GUARDED_BY(mutex_) = 0;
};

// The limiter for a cluster: its SlurmctldParameters' rl_* settings, with SlurmUser (a name
// looked up in the controller's passwd, or a number) exempt besides root.
std::unique_ptr<RateLimiter> MakeRateLimiter(const ClusterSettings& settings);

// The message a refused caller gets with RESOURCE_EXHAUSTED (Slurm's words, then Drover's).
std::string RateLimitMessage(uint32_t uid);

}  // namespace drover::ctld
