// Placeholder until TLS lands: plain TCP on both sides, as before (tls.h says why).
#include "auth/tls.h"

namespace drover::auth {

Result<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentials(const ClusterConfig&) {
  return grpc::InsecureChannelCredentials();
}

Result<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(const ClusterConfig&) {
  return grpc::InsecureServerCredentials();
}

}  // namespace drover::auth
