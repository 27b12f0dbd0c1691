// TLS for Drover's gRPC ports, when slurm.conf names a certificate (Drover's own keys; see
// docs/security.md): the controller's and the agents' listening credentials, and the channels
// every process opens to them. Without the keys both sides are plain TCP, as before.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>

#include "common/cluster_config.h"
#include "common/result.h"

namespace drover::auth {

// Errors name the key and the file that cannot be read.
Result<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentials(const ClusterConfig& cluster);
Result<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(const ClusterConfig& cluster);

// Sets DroverTLSServerName (when TLS is on) as the name a channel expects in the server's
// certificate; without it the certificate must name the host the channel dials (by DNS name, or
// by IP address in its subjectAltName). Call on the arguments of every channel to a daemon.
void ApplyTlsChannelArgs(const ClusterConfig& cluster, grpc::ChannelArguments& args);

}  // namespace drover::auth
