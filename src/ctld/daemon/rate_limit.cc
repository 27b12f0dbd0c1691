// See rate_limit.h. The table is Slurm's: open addressing from uid % size, linear probing, no
// removal (a user seen once keeps a slot; table_size bounds the memory).
#include "ctld/daemon/rate_limit.h"

#include <fmt/format.h>
#include <pwd.h>

#include <algorithm>
#include <ctime>

#include "common/text.h"

namespace drover::ctld {

RateLimiter::RateLimiter(const RateLimitSettings& settings, std::vector<uint32_t> exempt,
                         std::function<int64_t()> now)
    : settings_(settings), exempt_(std::move(exempt)), now_(std::move(now)) {
  if (!now_) now_ = [] { return static_cast<int64_t>(std::time(nullptr)); };
  settings_.bucket_size = std::max<uint32_t>(settings_.bucket_size, 1);
  settings_.refill_period_seconds = std::max<uint32_t>(settings_.refill_period_seconds, 1);
  settings_.table_size = std::clamp<uint32_t>(settings_.table_size, 1, kMaxTableSize);
  MutexLock lock(mutex_);
  if (settings_.enabled) table_.resize(settings_.table_size);
}

RateLimiter::Bucket* RateLimiter::Find(uint32_t uid) {
  size_t size = table_.size();
  size_t start = uid % size;
  for (size_t i = 0; i < size; ++i) {
    Bucket& bucket = table_[(start + i) % size];
    if (bucket.uid == uid || bucket.uid == 0) return &bucket;
  }
  return nullptr;  // every slot holds another user
}

bool RateLimiter::Admit(uint32_t uid) {
  if (!settings_.enabled || uid == 0) return true;
  if (std::find(exempt_.begin(), exempt_.end(), uid) != exempt_.end()) return true;
  int64_t period = now_() / settings_.refill_period_seconds;
  MutexLock lock(mutex_);
  Bucket* bucket = Find(uid);
  if (!bucket) return true;
  if (bucket->uid == 0) {  // first request: a full bucket, less this one
    *bucket = Bucket{uid, settings_.bucket_size - 1, period};
    return true;
  }
  if (period > bucket->period) {
    uint64_t added = static_cast<uint64_t>(period - bucket->period) * settings_.refill_rate;
    bucket->tokens =
        static_cast<uint32_t>(std::min<uint64_t>(bucket->tokens + added, settings_.bucket_size));
    bucket->period = period;
  }
  if (bucket->tokens == 0) {
    ++refused_;
    return false;
  }
  --bucket->tokens;
  return true;
}

uint64_t RateLimiter::refused() const {
  MutexLock lock(mutex_);
  return refused_;
}

std::unique_ptr<RateLimiter> MakeRateLimiter(const ClusterSettings& settings) {
  std::vector<uint32_t> exempt;
  if (auto number = ParseUint64(settings.slurm_user); number && *number <= UINT32_MAX)
    exempt.push_back(static_cast<uint32_t>(*number));
  else if (passwd* entry = getpwnam(settings.slurm_user.c_str()))
    exempt.push_back(entry->pw_uid);
  return std::make_unique<RateLimiter>(settings.controller_params.rate_limit, std::move(exempt));
}

std::string RateLimitMessage(uint32_t uid) {
  return fmt::format(
      "Rate limit exceeded, please retry momentarily (too many requests from user "
      "{}; SlurmctldParameters=rl_*)",
      uid);
}

}  // namespace drover::ctld
