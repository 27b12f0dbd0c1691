// auth.h's CredentialFor: a credential for a given identity, signed with the key.
#include "auth/slurm_auth.h"

namespace drover::auth {

Result<std::string> CredentialFor(const Settings& settings, const Identity& identity,
                                  int64_t issued_at) {
  if (settings.scheme != Scheme::kSlurm)
    return MakeError("a credential for another identity needs auth/slurm's key");
  WallClock clock;
  if (issued_at != 0) clock = [issued_at] { return issued_at; };
  auto authenticator = SlurmAuthenticator::Load(settings, Role::kDaemon, clock);
  if (!authenticator) return std::move(authenticator).take_error();
  return (*authenticator)->MintFor(identity);
}

}  // namespace drover::auth
