// auth/slurm: credentials and sealed claims signed with HMAC-SHA256 under the cluster key (a
// file of random bytes that every daemon can read and users cannot). A process that cannot read
// the key (a user's command) gets its credentials from the local broker (broker.h). Internal to
// auth/: others reach it through auth.h's Create; tests use the clock hook below.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "auth/auth.h"
#include "auth/replay_cache.h"
#include "auth/schemes.h"
#include "common/result.h"

namespace drover::auth {

using WallClock = std::function<int64_t()>;  // seconds since the epoch

inline constexpr int64_t kDefaultSlurmTtlSeconds = 60;
inline constexpr int64_t kClockSkewSeconds = 5;  // a credential issued this far ahead is fine

class SlurmAuthenticator final : public Authenticator {
 public:
  // As Create(settings, role) for auth/slurm; `now` replaces the wall clock (tests).
  static Result<std::unique_ptr<SlurmAuthenticator>> Load(const Settings& settings, Role role,
                                                          WallClock now = {});
  ~SlurmAuthenticator() override;

  Result<std::string> Credential() override;
  Result<Identity> Verify(std::string_view credential) override;
  Result<std::string> Seal(std::string_view payload, int64_t ttl_seconds) override;
  Result<Sealed> Open(std::string_view sealed) override;
  Scheme scheme() const override { return Scheme::kSlurm; }

  // A credential for `who`, whom the caller has proven by other means (the broker asks the
  // kernel). Needs the key; clients never reach it.
  Result<std::string> MintFor(const Identity& who);
  bool has_key() const { return !key_.empty(); }

 private:
  SlurmAuthenticator(const Settings& settings, WallClock now);
  Status NeedKey() const;
  std::string Mac(std::string_view text) const;
  // "drv1.X.PAYLOAD.MAC" checked against the key; the decoded payload.
  Result<std::string> Unwrap(std::string_view token, std::string_view domain,
                             std::string_view what) const;

  Settings settings_;
  WallClock now_;
  std::string key_;        // empty: this process cannot read it (key_error_ says why)
  std::string key_error_;  // "cannot read PATH (Permission denied)"
  ReplayCache replays_;
};

// The key file's bytes, or why they cannot be used.
Result<std::string> ReadKey(const std::string& path);
// HMAC-SHA256 (RFC 2104) of `text` under `key`: the MAC of every token.
std::string HmacSha256(std::string_view key, std::string_view text);

}  // namespace drover::auth
