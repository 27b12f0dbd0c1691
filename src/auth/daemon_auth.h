// A daemon's start of authentication: its settings and authenticator, or the reason it cannot
// start (said on stderr). auth/none starts with a warning, every time.
#pragma once

#include <memory>
#include <optional>

#include "auth/auth.h"
#include "common/cluster_config.h"

namespace drover::auth {

struct DaemonAuth {
  Settings settings;
  std::unique_ptr<Authenticator> authenticator;
};

std::optional<DaemonAuth> StartDaemonAuth(const char* program, const ClusterConfig& cluster);

}  // namespace drover::auth
