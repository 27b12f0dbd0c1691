// The schemes behind auth.h's Create, one file each (slurm_auth.h has auth/slurm's class).
#pragma once

#include <cstddef>
#include <memory>

#include "auth/auth.h"
#include "common/result.h"

namespace drover::auth {

// What any scheme reads before decoding: a call's credential, and a sealed job claim.
inline constexpr size_t kMaxCredentialBytes = 4096;
inline constexpr size_t kMaxSealedBytes = 1 << 20;

Result<std::unique_ptr<Authenticator>> CreateMunge(const Settings& settings, Role role);
Result<std::unique_ptr<Authenticator>> CreateNone();

}  // namespace drover::auth
