// See busy_retries.h.
#include "ctld/daemon/busy_retries.h"

#include "auth/job_credential.h"

namespace drover::ctld {

void BusyRetries::Hold(std::string_view credential, const auth::Identity& identity,
                       Clock::time_point now) {
  if (credential.empty()) return;
  std::string key = auth::Sha256(credential);
  MutexLock lock(mutex_);
  if (held_.size() >= kMaxHeld)
    std::erase_if(held_, [now](const auto& entry) { return entry.second.until <= now; });
  if (held_.size() >= kMaxHeld) return;
  held_[key] = Held{identity, now + kHeldFor};
}

std::optional<auth::Identity> BusyRetries::Find(std::string_view credential,
                                                Clock::time_point now) {
  if (credential.empty()) return std::nullopt;
  {
    MutexLock lock(mutex_);  // nearly always empty: no hashing on every call's admission
    if (held_.empty()) return std::nullopt;
  }
  std::string key = auth::Sha256(credential);
  MutexLock lock(mutex_);
  auto it = held_.find(key);
  if (it == held_.end()) return std::nullopt;
  if (it->second.until <= now) {
    held_.erase(it);
    return std::nullopt;
  }
  return it->second.identity;
}

}  // namespace drover::ctld
