// What every command that talks to the controller shares: finding the cluster (DROVER_CONF,
// then SLURM_CONF, as Slurm's commands find slurm.conf), connecting with this process's
// credentials (every call carries one: auth/grpc_auth.h), and the caller's identity.
#pragma once

#include <grpcpp/grpcpp.h>
#include <cstdint>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/auth.h"
#include "cli/lean_call.h"
#include "common/cluster_config.h"
#include "common/result.h"
#include "proto/drover.grpc.pb.h"

namespace drover::cli {

struct Connection {
  ClusterConfig cluster;
  std::shared_ptr<auth::Authenticator> authenticator;  // for channels to the agents too (srun)
  // Null on a lean connection until EnsureChannel makes them.
  std::unique_ptr<v1::Controller::Stub> stub;
  std::shared_ptr<grpc::Channel> channel;  // the controller's, for its other services (sacctmgr)
  // Set on a lean connection: where LeanCall goes.
  std::optional<LeanTarget> lean;
  // "host:port" of the controller in charge (FindController), where calls go.
  std::string address;
};

// "host:port" or "[v6]:port" as a lean call's target.
LeanTarget LeanTargetOf(const std::string& address);

// With several SlurmctldHost lines, the first in order that answers Ping as the controller in
// charge (not a standby), tried again while a takeover may be under way (SlurmctldTimeout and 5
// s); then the first line's, whose calls fail as unreachable. With one line, that one, unasked.
std::string FindController(const Connection& connection);

// scontrol ping: every SlurmctldHost line, in order, and whether it answered.
struct ControllerPing {
  std::string name, address;
  bool up = false;       // it answered
  bool standby = false;  // as a standby, not the controller in charge
};
std::vector<ControllerPing> PingEveryController(const Connection& connection);

// kLean: a one-shot command's connection, no gRPC channel (its threads, resolver and event
// engine start only if EnsureChannel is called); its calls go through LeanCall. Clusters with
// TLS get the channel whatever is asked.
enum class ConnectMode { kChannel, kLean };

// Errors say which file was read and what to do.
// `find_controller`: with several SlurmctldHost lines, find the one in charge (FindController);
// false: the first line's, unasked (scontrol ping asks each itself).
Result<Connection> Connect(ConnectMode mode = ConnectMode::kChannel, bool find_controller = true);
// The channel and stub of a lean connection, made now (a no-op when they exist).
Status EnsureChannel(Connection& connection);
// One unary call over a lean connection (lean_call.h), with a fresh credential per attempt and
// the channel's retries; `method` is the full name, "/drover.v1.Controller/Submit".
grpc::Status LeanCall(const Connection& connection, std::string_view method,
                      const google::protobuf::MessageLite& request,
                      google::protobuf::MessageLite* reply, int deadline_seconds = 30);
// The channel's settings: no limit on replies, and retries with backoff on RESOURCE_EXHAUSTED.
grpc::ChannelArguments ControllerChannelArguments();

struct Identity {
  uint32_t uid = 0, gid = 0;
  std::string user;
};
Identity Me();
// This host's name up to its first dot, as Slurm's commands name hosts.
std::string ShortHostName();
// The request's uid/gid, for older controllers only: the controller ignores them and takes the
// caller from the call's credential.
void SetCaller(v1::Caller* caller);

std::map<std::string, std::string> Environment();  // this process's environment
std::string CurrentDirectory();

// A deadline for one call: queries and commands are interactive.
void SetDeadline(grpc::ClientContext& context, int seconds = 30);

// One unary call to the controller: lean when the connection is (`method` names it, as
// "/drover.v1.Controller/ListJobs"), else `call` on its channel's stub.
template <typename Request, typename Reply>
grpc::Status Unary(Connection& connection, std::string_view method,
                   grpc::Status (v1::Controller::Stub::*call)(grpc::ClientContext*, const Request&,
                                                              Reply*),
                   const Request& request, Reply* reply, int deadline_seconds = 30) {
  if (connection.lean) return LeanCall(connection, method, request, reply, deadline_seconds);
  grpc::ClientContext context;
  SetDeadline(context, deadline_seconds);
  return (connection.stub.get()->*call)(&context, request, reply);
}

// Every page of a ListJobs listing in `list` (wire/job_pages.h; over a stub: ListJobPages).
grpc::Status ListAllJobs(Connection& connection, const v1::JobQuery& query, v1::JobList* list);
// Slurm's words for a controller that cannot be reached.
std::string Unreachable(const grpc::Status& status);

}  // namespace drover::cli
