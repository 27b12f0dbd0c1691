// The job credential (Slurm's term): what the controller vouches for when a job or a step runs on
// nodes — job, step, uid, gid, nodes, run, and for a step the digest of the exact Job bytes the
// agents run it from. The controller seals it; an agent acts only on one that a daemon identity
// (root or SlurmUser) sealed, that has not expired, and that names its node.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "auth/auth.h"
#include "common/result.h"
#include "proto/drover.pb.h"

namespace drover::auth {

inline constexpr uint32_t kBatchStep = 4294967295u;    // JobCredential.step_id of a job's Launch
inline constexpr int64_t kJobCredentialSeconds = 120;  // Slurm's default cred_expire

std::string Sha256(std::string_view data);

Result<std::string> SealJobCredential(Authenticator& authenticator,
                                      const v1::JobCredential& claims);

// Opens `sealed` and checks it was sealed by a daemon and names `node`.
Result<v1::JobCredential> OpenJobCredential(Authenticator& authenticator, const Settings& settings,
                                            std::string_view sealed, const std::string& node);

}  // namespace drover::auth
