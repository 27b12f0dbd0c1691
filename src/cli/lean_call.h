// One unary call to the controller from this thread alone, over one plain HTTP/2 connection
// (libnghttp2): the gRPC wire protocol without a gRPC channel, so a one-shot command starts no
// threads, resolver or event engine. The controller sees an ordinary gRPC call, with the same
// credential header, authentication, bounds and rate limit as every other.
//
// Only for clusters without TLS (the caller checks `settings.tls.enabled()`); anything else
// goes through the gRPC channel (client.h).
#pragma once

#include <google/protobuf/message_lite.h>
#include <grpcpp/support/status.h>

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace drover::cli {

struct LeanTarget {
  std::string host;  // a name or an address, as slurm.conf gives it
  int port = 0;
};

// Sends `request` to `method` ("/drover.v1.Controller/Submit") with `metadata` (lowercase names)
// and parses the answer into `reply`. The status is the controller's (its code and message),
// UNAVAILABLE when it cannot be reached or the connection breaks, DEADLINE_EXCEEDED after
// `deadline_seconds`, INTERNAL for an answer that is not a gRPC reply. `metadata` is called once
// per attempt (a credential is good for one call).
using LeanMetadata = std::vector<std::pair<std::string, std::string>>;
grpc::Status LeanUnaryCall(const LeanTarget& target, std::string_view method,
                           const google::protobuf::MessageLite& request,
                           google::protobuf::MessageLite* reply,
                           const std::function<LeanMetadata()>& metadata, int deadline_seconds);

// grpc-message's percent-encoding (the gRPC over HTTP/2 protocol), undone.
std::string PercentDecode(std::string_view text);

}  // namespace drover::cli
