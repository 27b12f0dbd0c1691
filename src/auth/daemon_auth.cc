// See daemon_auth.h.
#include "auth/daemon_auth.h"

#include <fmt/format.h>

#include <cstdio>

namespace drover::auth {

std::optional<DaemonAuth> StartDaemonAuth(const char* program, const ClusterConfig& cluster) {
  Result<Settings> settings = SettingsOf(cluster);
  if (!settings) {
    fmt::print(stderr, "{}: error: {}\n", program, settings.error());
    return std::nullopt;
  }
  if (settings->scheme == Scheme::kNone)
    fmt::print(stderr,
               "{}: warning: AuthType=auth/none: no call is authenticated; any process that "
               "can reach this daemon can act as any user, root included. Use auth/munge or "
               "auth/slurm on any cluster that is not a private test.\n",
               program);
  Result<std::unique_ptr<Authenticator>> authenticator = Create(*settings, Role::kDaemon);
  if (!authenticator) {
    fmt::print(stderr, "{}: error: {}\n", program, authenticator.error());
    return std::nullopt;
  }
  return DaemonAuth{std::move(*settings), std::move(*authenticator)};
}

}  // namespace drover::auth
