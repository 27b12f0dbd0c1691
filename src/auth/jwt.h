// auth/jwt, as Slurm's AuthAltTypes=auth/jwt: HS256 JSON Web Tokens (RFC 7519) under the key
// that AuthAltParameters=jwt_key= names. The controller makes them (`scontrol token`) and
// accepts them in place of a MUNGE or auth/slurm credential, as slurmctld does for the calls
// slurmrestd forwards ("x-slurm-user-name" and "x-slurm-user-token"). A token names a user
// ("sun", Slurm's claim) and expires ("exp"); nothing else in it is trusted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace drover::auth {

// gRPC metadata keys (lowercase, as HTTP/2 carries them): slurmrestd's headers.
inline constexpr char kJwtUserHeader[] = "x-slurm-user-name";
inline constexpr char kJwtTokenHeader[] = "x-slurm-user-token";

// A token is one header line; a longer one is refused before it is decoded.
inline constexpr size_t kMaxJwtBytes = 4096;

struct JwtClaims {
  std::string user;  // "sun"
  int64_t issued_at = 0;
  int64_t expires_at = 0;
};

// The key file's bytes: refused when other users may read it (Slurm: "must not be accessible
// by 'other'") or shorter than 32 bytes (RFC 7518 §3.2: as long as the hash); the error says
// how to make a good one (`drover keygen PATH` writes one).
Result<std::string> ReadJwtKey(const std::string& path);

// A signed token for `user`, good from `issued_at` until `expires_at` (seconds since the epoch).
std::string SignJwt(std::string_view key, std::string_view user, int64_t issued_at,
                    int64_t expires_at);

// The claims of a token signed with `key` that has not expired at `now`. Refuses every other
// algorithm (among them "none"), a bad signature, a missing or malformed "sun" or "exp", a
// token issued in the future, and trailing garbage; each with its own message.
Result<JwtClaims> VerifyJwt(std::string_view key, std::string_view token, int64_t now);

// The user a token claims, unchecked: for a front end (drover restd) that forwards the token and
// needs the name before the controller, which verifies it, answers.
std::optional<std::string> UnverifiedJwtUser(std::string_view token);

}  // namespace drover::auth
