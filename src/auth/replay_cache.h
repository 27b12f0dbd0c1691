// The nonces of the credentials a process has accepted, each kept until its credential expires,
// so a credential is accepted once. Bounded: when every slot holds an unexpired nonce, a new
// credential is refused with a clear error rather than letting the set grow without end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "common/mutex.h"
#include "common/result.h"

namespace drover::auth {

class ReplayCache {
 public:
  static constexpr size_t kDefaultCapacity = 1 << 19;
  explicit ReplayCache(size_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  // Remembers `nonce` until `expiry` (seconds since the epoch). Refuses one already seen, and
  // any when the cache is full of unexpired nonces.
  Status Insert(std::string_view nonce, int64_t expiry, int64_t now) EXCLUDES(mutex_);
  size_t size() const EXCLUDES(mutex_);

 private:
  void Prune(int64_t now) REQUIRES(mutex_);

  const size_t capacity_;
  mutable Mutex mutex_;
  std::unordered_set<std::string> seen_ GUARDED_BY(mutex_);
  std::map<int64_t, std::vector<std::string>> by_expiry_ GUARDED_BY(mutex_);
};

}  // namespace drover::auth
