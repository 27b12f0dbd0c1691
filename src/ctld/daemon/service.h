// The controller's gRPC service: validates each request at the boundary, turns it into an engine
// event, and waits for the committed reply; queries read the latest snapshot and never wait.
#pragma once

#include <grpcpp/grpcpp.h>

#include <mutex>

#include "common/cluster_config.h"
#include "ctld/daemon/engine_loop.h"
#include "proto/drover.grpc.pb.h"

namespace drover::ctld {

class ControllerService final : public v1::Controller::Service {
 public:
  // `history` is a second, read-only use of the store for job history (may be null).
  ControllerService(const ClusterConfig& cluster, EngineLoop& loop,
                    std::unique_ptr<Store> history = nullptr);

  grpc::Status Submit(grpc::ServerContext*, const v1::SubmitRequest*, v1::SubmitReply*) override;
  grpc::Status SubmitMany(grpc::ServerContext*, const v1::SubmitManyRequest*,
                          v1::SubmitManyReply*) override;
  grpc::Status Cancel(grpc::ServerContext*, const v1::CancelRequest*, v1::ActionReply*) override;
  grpc::Status Hold(grpc::ServerContext*, const v1::HoldRequest*, v1::ActionReply*) override;
  grpc::Status Requeue(grpc::ServerContext*, const v1::RequeueRequest*, v1::ActionReply*) override;
  grpc::Status UpdateNode(grpc::ServerContext*, const v1::UpdateNodeRequest*,
                          v1::ActionReply*) override;
  grpc::Status ListJobs(grpc::ServerContext*, const v1::JobQuery*, v1::JobList*) override;
  grpc::Status ListNodes(grpc::ServerContext*, const v1::NodeQuery*, v1::NodeList*) override;
  grpc::Status Ping(grpc::ServerContext*, const v1::PingRequest*, v1::PingReply*) override;
  grpc::Status History(grpc::ServerContext*, const v1::HistoryQuery*, v1::JobList*) override;
  grpc::Status Priorities(grpc::ServerContext*, const v1::PriorityQuery*,
                          v1::PriorityList*) override;
  grpc::Status Shares(grpc::ServerContext*, const v1::ShareQuery*, v1::ShareList*) override;
  grpc::Status UpdateJob(grpc::ServerContext*, const v1::UpdateJobRequest*,
                         v1::ActionReply*) override;
  grpc::Status Register(grpc::ServerContext*, const v1::RegisterRequest*,
                        v1::RegisterReply*) override;
  grpc::Status Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest*,
                         v1::HeartbeatReply*) override;
  grpc::Status JobEnded(grpc::ServerContext*, const v1::JobEndedRequest*,
                        v1::JobEndedReply*) override;

 private:
  grpc::Status Act(Event event, v1::ActionReply* reply);

  const ClusterConfig& cluster_;
  EngineLoop& loop_;
  std::mutex history_mutex_;  // the store is not thread-safe; gRPC handlers are concurrent
  std::unique_ptr<Store> history_;
};

}  // namespace drover::ctld
