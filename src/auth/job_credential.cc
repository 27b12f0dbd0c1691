// See job_credential.h.
#include "auth/job_credential.h"

#include <fmt/format.h>
#include <openssl/sha.h>

#include <algorithm>

namespace drover::auth {

std::string Sha256(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return std::string(reinterpret_cast<const char*>(digest), sizeof(digest));
}

Result<std::string> SealJobCredential(Authenticator& authenticator,
                                      const v1::JobCredential& claims) {
  return authenticator.Seal(claims.SerializeAsString(), kJobCredentialSeconds);
}

Result<v1::JobCredential> OpenJobCredential(Authenticator& authenticator, const Settings& settings,
                                            std::string_view sealed, const std::string& node) {
  if (sealed.empty()) return MakeError("no job credential: only the controller may start jobs");
  Result<Sealed> opened = authenticator.Open(sealed);
  if (!opened) return MakeError("invalid job credential: " + opened.error());
  if (!IsDaemonIdentity(opened->sealer, settings))
    return MakeError(
        fmt::format("job credential sealed by uid {}, not by the controller", opened->sealer.uid));
  v1::JobCredential claims;
  if (!claims.ParseFromString(opened->payload))
    return MakeError("invalid job credential: its claims cannot be read");
  if (std::find(claims.nodes().begin(), claims.nodes().end(), node) == claims.nodes().end())
    return MakeError(
        fmt::format("the job credential of job {} does not name node {}", claims.job_id(), node));
  return claims;
}

}  // namespace drover::auth
