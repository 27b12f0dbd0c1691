#include "auth/replay_cache.h"

#include <fmt/format.h>

namespace drover::auth {

Status ReplayCache::Insert(std::string_view nonce, int64_t expiry, int64_t now) {
  MutexLock lock(mutex_);
  Prune(now);
  std::string key(nonce);
  if (seen_.count(key)) return MakeError("replayed credential (its nonce was already used)");
  if (seen_.size() >= capacity_)
    return MakeError(fmt::format(
        "too many credentials in use: {} unexpired ones were accepted already; retry in a few "
        "seconds, or lower AuthInfo's ttl",
        capacity_));
  seen_.insert(key);
  by_expiry_[expiry].push_back(std::move(key));
  return OkStatus();
}

size_t ReplayCache::size() const {
  MutexLock lock(mutex_);
  return seen_.size();
}

// A credential is refused from its expiry second on, so its nonce may go then.
void ReplayCache::Prune(int64_t now) {
  while (!by_expiry_.empty() && by_expiry_.begin()->first <= now) {
    for (const std::string& nonce : by_expiry_.begin()->second) seen_.erase(nonce);
    by_expiry_.erase(by_expiry_.begin());
  }
}

}  // namespace drover::auth
