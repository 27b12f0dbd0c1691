// The commands retry a call the controller refused as busy (RESOURCE_EXHAUSTED: the rate limit,
// a full queue) with gRPC's retry policy, which sends the call's metadata, credential included,
// again. The refused call's credential was verified and is spent (a second use is a replay), so
// the controller remembers it with the identity it proved: its retries within a short time are
// admitted as that identity without verifying it again. Bounded; thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "auth/auth.h"
#include "common/mutex.h"

namespace drover::ctld {

class BusyRetries {
 public:
  static constexpr size_t kMaxHeld = 65536;
  static constexpr std::chrono::seconds kHeldFor{30};  // the commands' retries take < 8 s
  using Clock = std::chrono::steady_clock;

  // Remembers a refused call's credential (nothing when full of unexpired ones).
  void Hold(std::string_view credential, const auth::Identity& identity,
            Clock::time_point now = Clock::now()) EXCLUDES(mutex_);
  // The identity of a held credential, which stays held for the call's later retries.
  std::optional<auth::Identity> Find(std::string_view credential,
                                     Clock::time_point now = Clock::now()) EXCLUDES(mutex_);

 private:
  struct Held {
    auth::Identity identity;
    Clock::time_point until;
  };
  Mutex mutex_;
  std::unordered_map<std::string, Held> held_ GUARDED_BY(mutex_);  // by the credential's SHA-256
};

}  // namespace drover::ctld
