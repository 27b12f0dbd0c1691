// Authentication on Drover's gRPC calls: the client side adds a fresh credential to every call's
// metadata (a channel interceptor, so no call can forget it), the server side reads and verifies
// it. The channel is TLS when slurm.conf names a certificate (tls.h).
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "auth/auth.h"
#include "common/cluster_config.h"
#include "common/result.h"

namespace drover::auth {

inline constexpr char kCredentialHeader[] = "x-drover-credential";

// A channel to `target` whose every call carries a credential from `authenticator` (which must
// outlive the channel), over TLS when the cluster configures it.
Result<std::shared_ptr<grpc::Channel>> NewChannel(const std::string& target, const ClusterConfig& cluster,
                                          const grpc::ChannelArguments& args,
                                          Authenticator& authenticator);

// The caller's proven identity, or the gRPC status to answer with (UNAUTHENTICATED, with a
// message a person can act on).
Result<Identity> Authenticate(const grpc::ServerContextBase& context,
                              Authenticator& authenticator);
grpc::Status Unauthenticated(const std::string& why);

}  // namespace drover::auth
