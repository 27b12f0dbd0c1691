// Admission of every call: see service.h. Runs on the gRPC thread, so verifying a credential
// (an HMAC, or a round trip to munged) never holds up the engine.
#include <fmt/format.h>

#include "auth/grpc_auth.h"
#include "ctld/daemon/requests.h"
#include "ctld/daemon/service.h"

namespace drover::ctld {

grpc::Status ControllerService::Admit(Context* context, Access access, Caller& caller) {
  Result<auth::Identity> identity = auth::Authenticate(*context, authenticator_);
  if (!identity) return auth::Unauthenticated(identity.error());
  bool daemon = auth::IsDaemonIdentity(*identity, auth_settings_);
  if (access == Access::kDaemon && !daemon)
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        fmt::format("only the agents (root or SlurmUser {}) may call this; uid {} "
                                    "may not",
                                    auth_settings_.slurm_user, identity->uid));
  // One user's loop must not starve the others (SlurmctldParameters=rl_*; daemons exempt).
  if (rate_limiter_ && !rate_limiter_->Admit(identity->uid))
    return Busy(RateLimitMessage(identity->uid));
  caller = callers_.Of(identity->uid, identity->gid);
  return grpc::Status::OK;
}

}  // namespace drover::ctld
