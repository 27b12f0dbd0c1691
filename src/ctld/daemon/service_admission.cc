// Admission of every call: see service.h. Runs on the gRPC thread, so verifying a credential
// (an HMAC, or a round trip to munged) never holds up the engine.
#include <fmt/format.h>

#include <ctime>
#include <iterator>
#include <optional>
#include <string_view>

#include "auth/grpc_auth.h"
#include "auth/jwt.h"
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

// The one value of a metadata key the call carries; nullopt when absent, "" when repeated.
std::optional<std::string_view> MetadataOf(const grpc::ServerContextBase& context,
                                           const char* key) {
  auto [begin, end] = context.client_metadata().equal_range(key);
  if (begin == end) return std::nullopt;
  if (std::next(begin) != end) return std::string_view();
  return std::string_view(begin->second.data(), begin->second.size());
}

}  // namespace

Result<auth::Identity> ControllerService::AuthenticateToken(Context* context) {
  std::optional<std::string_view> token = MetadataOf(*context, auth::kJwtTokenHeader);
  if (jwt_key_.empty())
    return MakeError(
        "authentication failed: this cluster accepts no tokens (slurm.conf has no "
        "AuthAltTypes=auth/jwt)");
  if (token->empty()) return MakeError("authentication failed: the call carried no single token");
  Result<auth::JwtClaims> claims = auth::VerifyJwt(jwt_key_, *token, std::time(nullptr));
  if (!claims) return MakeError("authentication failed: " + claims.error());
  std::optional<std::pair<uint32_t, uint32_t>> ids = PasswdIdsOf(claims->user);
  if (!ids)
    return MakeError(
        fmt::format("authentication failed: the token's user {} is not known here", claims->user));
  std::optional<std::string_view> named = MetadataOf(*context, auth::kJwtUserHeader);
  if (!named || named->empty() || *named == claims->user)
    return auth::Identity{ids->first, ids->second};
  // As Slurm's auth/jwt: a token of root or SlurmUser (a portal's) acts for the user the
  // request names; anyone else's token is good for its own user only.
  if (!auth::IsDaemonIdentity({ids->first, ids->second}, auth_settings_))
    return MakeError(
        fmt::format("authentication failed: the token is {}'s, not {}'s (X-SLURM-USER-NAME)",
                    claims->user, *named));
  std::optional<std::pair<uint32_t, uint32_t>> proxied = PasswdIdsOf(std::string(*named));
  if (!proxied)
    return MakeError(
        fmt::format("authentication failed: no user is named {} (X-SLURM-USER-NAME)", *named));
  return auth::Identity{proxied->first, proxied->second};
}

void ControllerService::HoldForRetry(Context* context, const Caller& caller) {
  if (caller.by_token) return;  // a token call has no credential of its own to hold
  busy_retries_.Hold(CredentialOf(*context), {caller.uid, caller.gid});
}

grpc::Status ControllerService::Admit(Context* context, Access access, Caller& caller,
                                      const char* handler) {
  // A retry of a call refused as busy carries the refused call's (spent) credential.
  // A token (the REST API's calls) stands in for the credential, as auth/jwt does in slurmctld.
  const bool by_token = context->client_metadata().count(auth::kJwtTokenHeader) > 0;
  // One proof a call: a credential seen beside a token could be bound to the token's user by
  // the busy-retry cache, and so be replayed as them.
  if (by_token && context->client_metadata().count(auth::kCredentialHeader) > 0)
    return auth::Unauthenticated(
        "authentication failed: the call carried both a token and a credential; send one");
  std::optional<auth::Identity> retried =
      by_token ? std::nullopt : busy_retries_.Find(CredentialOf(*context));
  Result<auth::Identity> identity = by_token  ? AuthenticateToken(context)
                                    : retried ? Result<auth::Identity>(*retried)
                                              : auth::Authenticate(*context, authenticator_);
  if (!identity) return auth::Unauthenticated(identity.error());
  // As slurmctld's "Processing RPC: REQUEST_... from UID=N".
  log::Debug2("Processing RPC: {} from UID={}{}", handler, identity->uid,
              by_token ? " (token)" : "");
  bool daemon = !by_token && auth::IsDaemonIdentity(*identity, auth_settings_);
  if (access == Access::kDaemon && !daemon)
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        fmt::format("only the agents (root or SlurmUser {}) may call this; uid {} "
                                    "may not",
                                    auth_settings_.slurm_user, identity->uid));
  // One user's loop must not starve the others (SlurmctldParameters=rl_*; daemons exempt).
  if (rate_limiter_ && !rate_limiter_->Admit(identity->uid)) {
    if (!by_token) busy_retries_.Hold(CredentialOf(*context), *identity);
    return Busy(RateLimitMessage(identity->uid));
  }
  if (rpc_stats_)  // keyed as the interceptor knows the call: by its ServerContextBase
    rpc_stats_->NameCaller(static_cast<grpc::ServerContextBase*>(context), identity->uid);
  caller = callers_.Of(identity->uid, identity->gid);
  caller.by_token = by_token;
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
