// Token: `scontrol token [lifespan=N] [username=U]`, a JWT for the REST API (AuthAltTypes=
// auth/jwt; auth/jwt.h). As slurmctld: any user gets one for themself, unless
// AuthAltParameters=disable_token_creation; root and SlurmUser get one for anyone, and
// max_token_lifespan bounds everyone else's. A call proven by a token may not make another
// (a stolen token must not outlive its expiry).
#include <ctime>
#include <string>

#include <fmt/format.h>

#include "auth/jwt.h"
#include "common/log.h"
#include "ctld/daemon/requests.h"
#include "ctld/daemon/service.h"

namespace drover::ctld {

namespace {
constexpr int64_t kDefaultTokenLifespanSeconds = 1800;
constexpr int64_t kMaxTokenLifespanSeconds = INT32_MAX;  // about 68 years: any sane request
}  // namespace

ControllerService::Reactor* ControllerService::Token(Context* context,
                                                     const v1::TokenRequest* request,
                                                     v1::TokenReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  auto denied = [context](const std::string& why) {
    return Finished(context, grpc::Status(grpc::StatusCode::PERMISSION_DENIED, why));
  };
  if (jwt_key_.empty())
    return Finished(context,
                    grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                 "tokens are not enabled: slurm.conf needs "
                                 "AuthAltTypes=auth/jwt (and AuthAltParameters=jwt_key=)"));
  if (caller.by_token) return denied("a token cannot be used to get another token");
  const bool daemon = auth::IsDaemonIdentity({caller.uid, caller.gid}, auth_settings_);
  if (!daemon && !auth_settings_.token_creation)
    return denied("token creation is disabled (AuthAltParameters=disable_token_creation)");
  std::string user = request->user_name().empty() ? caller.user : request->user_name();
  if (user != caller.user && !daemon)
    return denied(
        fmt::format("only root or SlurmUser may get a token for another user ({})", user));
  if (user.empty() || !PasswdIdsOf(user))
    return Finished(context, Invalid(fmt::format("no user is named '{}'", user)));
  int64_t lifespan = request->lifespan_seconds();
  if (lifespan < 0 || lifespan > kMaxTokenLifespanSeconds)
    return Finished(context, Invalid(fmt::format("invalid lifespan {} (expected 1 to {} seconds)",
                                                 lifespan, kMaxTokenLifespanSeconds)));
  if (lifespan == 0) lifespan = kDefaultTokenLifespanSeconds;
  const int64_t bound = auth_settings_.max_token_lifespan_seconds;
  if (!daemon && bound > 0 && lifespan > bound)
    return denied(
        fmt::format("a lifespan of {} s is beyond max_token_lifespan={} s", lifespan, bound));
  const int64_t now = std::time(nullptr);
  reply->set_token(auth::SignJwt(jwt_key_, user, now, now + lifespan));
  reply->set_expires_at(now + lifespan);
  log::Info("token for {} (lifespan {} s) made for uid {}", user, lifespan, caller.uid);
  return Finished(context, grpc::Status::OK);
}

}  // namespace drover::ctld
