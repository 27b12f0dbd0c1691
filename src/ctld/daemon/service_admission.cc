// Admission of every call: see service.h. Runs on the gRPC thread, so verifying a credential
// (an HMAC, or a round trip to munged) never holds up the engine.
#include <fmt/format.h>

#include <iterator>
#include <optional>
#include <string_view>

#include "auth/grpc_auth.h"
#include "common/log.h"
#include "ctld/daemon/requests.h"
#include "ctld/daemon/service.h"

namespace drover::ctld {

namespace {

// The call's credential as sent (empty when it has none, or several).
std::string_view CredentialOf(const grpc::ServerContextBase& context) {
  auto [begin, end] = context.client_metadata().equal_range(auth::kCredentialHeader);
  if (begin == end || std::next(begin) != end) return {};
  return std::string_view(begin->second.data(), begin->second.size());
}

}  // namespace

void ControllerService::HoldForRetry(Context* context, const Caller& caller) {
  busy_retries_.Hold(CredentialOf(*context), {caller.uid, caller.gid});
}

grpc::Status ControllerService::Admit(Context* context, Access access, Caller& caller,
                                      const char* handler) {
  // A retry of a call refused as busy carries the refused call's (spent) credential.
  std::optional<auth::Identity> retried = busy_retries_.Find(CredentialOf(*context));
  Result<auth::Identity> identity =
      retried ? Result<auth::Identity>(*retried) : auth::Authenticate(*context, authenticator_);
  if (!identity) return auth::Unauthenticated(identity.error());
  // As slurmctld's "Processing RPC: REQUEST_... from UID=N".
  log::Debug2("Processing RPC: {} from UID={}", handler, identity->uid);
  bool daemon = auth::IsDaemonIdentity(*identity, auth_settings_);
  if (access == Access::kDaemon && !daemon)
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        fmt::format("only the agents (root or SlurmUser {}) may call this; uid {} "
                                    "may not",
                                    auth_settings_.slurm_user, identity->uid));
  // One user's loop must not starve the others (SlurmctldParameters=rl_*; daemons exempt).
  if (rate_limiter_ && !rate_limiter_->Admit(identity->uid)) {
    busy_retries_.Hold(CredentialOf(*context), *identity);
    return Busy(RateLimitMessage(identity->uid));
  }
  caller = callers_.Of(identity->uid, identity->gid);
  // sacctmgr's AdminLevel=Operator or Administrator makes the user an operator here too.
  if (!caller.operator_ && !caller.user.empty()) {
    std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
    if (snapshot->accounting &&
        snapshot->accounting->AdminLevelOf(caller.user) != acct::AdminLevel::kNone)
      caller.operator_ = true;
  }
  return grpc::Status::OK;
}

}  // namespace drover::ctld
