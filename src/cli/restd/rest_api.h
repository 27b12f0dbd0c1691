// `drover restd`: Slurm 22.05's REST API (slurmrestd's openapi/v0.0.38 and dbv0.0.38 paths) in
// front of the controller. Like slurmrestd with rest_auth/jwt, it proves nobody itself: each
// request's X-SLURM-USER-NAME and X-SLURM-USER-TOKEN go with every call it makes for that
// request, and the controller checks the token (AuthAltTypes=auth/jwt) and answers as that
// user, with that user's rights. The answers are the documents the commands' --json prints
// (cli/scontrol/scontrol_format.h, cli/formats/formats.h). docs/rest.md lists the paths.
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "cli/lean_call.h"
#include "common/cluster_config.h"
#include "common/mutex.h"
#include "common/result.h"
#include "proto/accounting.grpc.pb.h"
#include "proto/drover.grpc.pb.h"

namespace drover::cli::restd {

struct Request {
  std::string method;  // "GET", "POST", "DELETE"
  std::string path;    // without the query
  std::multimap<std::string, std::string> query;
  std::string user, token;  // the headers (Authorization: Bearer also gives the token)
  std::string body;
};

struct Response {
  int status = 200;
  std::string body;  // JSON
};

// One route of the API, as the OpenAPI document lists it.
struct RouteInfo {
  const char* method;
  const char* path;  // with {parameters}
  const char* summary;
  std::vector<const char*> query;  // query parameters it reads
};
const std::vector<RouteInfo>& Routes();

// The OpenAPI 3 document of every route (GET /openapi/v3).
std::string OpenApiDocument();

// A Slurm error document: the openapi envelope with one entry in "errors".
std::string ErrorDocument(std::string_view message, int error_number);
// A gRPC failure as the HTTP status and Slurm error a client expects.
Response StatusResponse(const grpc::Status& status);

class RestApi {
 public:
  // `cluster`: slurm.conf as read at start (controllers' addresses, TLS, node hardware).
  explicit RestApi(ClusterConfig cluster);
  RestApi(const RestApi&) = delete;
  RestApi& operator=(const RestApi&) = delete;

  // With TLS: a channel to each controller, made before the server gives up its privileges.
  Status Connect();

  // Thread-safe: each request is served on the server's thread that read it.
  Response Handle(const Request& request);

  // A call to the controller carrying the request's token (the caller is the token's user).
  template <typename In, typename Out>
  grpc::Status Call(const Request& request, std::string_view method,
                    grpc::Status (v1::Controller::Stub::*stub_call)(grpc::ClientContext*, const In&,
                                                                    Out*),
                    const In& in, Out* out);

  // Accounting's Show (associations, QOS, users), as the request's user.
  grpc::Status ShowAccounting(const Request& request, v1::AccountingDatabase* out);

  const ClusterConfig& cluster() const { return cluster_; }

 private:
  LeanMetadata MetadataOf(const Request& request) const;
  // The controller in charge, found again after a failure to reach it (several SlurmctldHost).
  std::string Leader() EXCLUDES(mutex_);
  void LostLeader(const std::string& address) EXCLUDES(mutex_);
  v1::Controller::Stub* StubFor(const std::string& address);  // TLS only; null: none
  // `attempt` at the controller in charge, then at the next while one answers UNAVAILABLE.
  grpc::Status AtLeader(const std::function<grpc::Status(const std::string& address)>& attempt)
      EXCLUDES(mutex_);

  ClusterConfig cluster_;
  std::vector<std::string> addresses_;
  std::vector<std::shared_ptr<grpc::Channel>> channels_;      // with TLS, one an address
  std::vector<std::unique_ptr<v1::Controller::Stub>> stubs_;  // on channels_
  Mutex mutex_;
  std::string leader_ GUARDED_BY(mutex_);
  // ApplyNodeSettings writes the controller's node settings into cluster_: node answers hold it
  // alone, every other answer that reads cluster_ shares it.
  std::shared_mutex cluster_mutex_;
  friend struct Handlers;
};

}  // namespace drover::cli::restd
