// The controller's gRPC service (callback API: no thread waits for a commit). It turns a request
// into an engine event or a query, and nothing else. Each request is validated at the boundary;
// an event's reply leaves from the commit thread once the batch holding it is committed. A query
// runs on the service's query threads over the latest snapshot (it never waits for a batch):
// a view (ctld/views) reads the snapshot, a wire codec builds the reply. Handlers that queue
// events are in service.cc, queries in service_queries.cc. Every handler first admits its call
// (service_admission.cc): the caller is the one its credential proves, never the request's
// `caller` field; the agents' RPCs are admitted only from root or SlurmUser.
#pragma once

#include <grpcpp/grpcpp.h>

#include <ctime>
#include <functional>
#include <memory>
#include <string>

#include "auth/auth.h"
#include "common/cluster_config.h"
#include "ctld/daemon/agent_dispatch.h"
#include "ctld/daemon/busy_retries.h"
#include "ctld/daemon/callers.h"
#include "ctld/daemon/engine_loop.h"
#include "ctld/daemon/job_history.h"
#include "ctld/daemon/query_pool.h"
#include "ctld/daemon/rate_limit.h"
#include "ctld/daemon/rpc_stats.h"
#include "proto/drover.grpc.pb.h"

namespace drover::ctld {

class ControllerService final : public v1::Controller::CallbackService {
 public:
  // `authenticator` verifies every call's credential (it outlives the service); `history` is a
  // second, read-only use of the store for job history (may be null). `conf_path` is the
  // slurm.conf that Reconfigure reads again (empty: Reconfigure refuses).
  ControllerService(EngineLoop& loop, auth::Authenticator& authenticator,
                    auth::Settings auth_settings, std::unique_ptr<Store> history = nullptr,
                    std::string conf_path = "");
  // Where registering agents' addresses go (their launches and signals are sent there).
  void SetAgents(AgentDispatcher* agents) { agents_ = agents; }
  // Its SlurmctldHost name, which Ping answers (empty: the host's name). Before serving.
  void SetName(std::string name) { name_ = std::move(name); }
  // scontrol takeover: `handover` is called with the backup's name once the request is checked
  // (the daemon then hands the lease over); unset, Takeover refuses (one controller, SQLite).
  void SetHandover(std::function<void(const std::string&)> handover) {
    handover_ = std::move(handover);
  }
  // AuthAltTypes=auth/jwt: calls may carry a token signed with `key` (auth/jwt.h) instead of a
  // credential, and Token makes them. Before serving; unset, tokens are refused.
  void SetJwtKey(std::string key) { jwt_key_ = std::move(key); }
  // sdiag's RPC counts: admission names each call's user there. Before serving; it outlives
  // the service.
  void SetRpcStats(RpcStats* stats) { rpc_stats_ = stats; }
  // PurgeJobAfter: purges the history when the cutoff has moved on since the last purge (once
  // an hour, a day or a month, as the unit is). Called by the daemon's main thread.
  void PurgeHistoryIfDue(int64_t now);

  using Context = grpc::CallbackServerContext;
  using Reactor = grpc::ServerUnaryReactor;

  Reactor* Submit(Context*, const v1::SubmitRequest*, v1::SubmitReply*) override;
  Reactor* SubmitMany(Context*, const v1::SubmitManyRequest*, v1::SubmitManyReply*) override;
  Reactor* Cancel(Context*, const v1::CancelRequest*, v1::ActionReply*) override;
  Reactor* Hold(Context*, const v1::HoldRequest*, v1::ActionReply*) override;
  Reactor* Requeue(Context*, const v1::RequeueRequest*, v1::ActionReply*) override;
  Reactor* UpdateNode(Context*, const v1::UpdateNodeRequest*, v1::ActionReply*) override;
  Reactor* RebootNodes(Context*, const v1::RebootRequest*, v1::ActionReply*) override;
  Reactor* UpdateJob(Context*, const v1::UpdateJobRequest*, v1::ActionReply*) override;
  Reactor* ListJobs(Context*, const v1::JobQuery*, v1::JobList*) override;
  Reactor* ListNodes(Context*, const v1::NodeQuery*, v1::NodeList*) override;
  Reactor* Ping(Context*, const v1::PingRequest*, v1::PingReply*) override;
  Reactor* History(Context*, const v1::HistoryQuery*, v1::JobList*) override;
  Reactor* JobScript(Context*, const v1::JobScriptRequest*, v1::JobScriptReply*) override;
  Reactor* Priorities(Context*, const v1::PriorityQuery*, v1::PriorityList*) override;
  Reactor* CreateStep(Context*, const v1::CreateStepRequest*, v1::CreateStepReply*) override;
  Reactor* StepEnded(Context*, const v1::StepEndedRequest*, v1::ActionReply*) override;
  Reactor* Release(Context*, const v1::ReleaseRequest*, v1::ActionReply*) override;
  Reactor* Shares(Context*, const v1::ShareQuery*, v1::ShareList*) override;
  Reactor* Register(Context*, const v1::RegisterRequest*, v1::RegisterReply*) override;
  Reactor* Heartbeat(Context*, const v1::HeartbeatRequest*, v1::HeartbeatReply*) override;
  Reactor* Heartbeats(Context*, const v1::HeartbeatBatch*, v1::HeartbeatBatchReply*) override;
  Reactor* JobEnded(Context*, const v1::JobEndedRequest*, v1::JobEndedReply*) override;
  Reactor* JobsEnded(Context*, const v1::JobEndedBatch*, v1::JobEndedBatchReply*) override;
  Reactor* Suspend(Context*, const v1::SuspendRequest*, v1::ActionReply*) override;
  Reactor* ListPartitions(Context*, const v1::PartitionQuery*, v1::PartitionList*) override;
  Reactor* CreateReservation(Context*, const v1::ReservationRequest*,
                             v1::ReservationReply*) override;
  Reactor* UpdateReservation(Context*, const v1::ReservationRequest*,
                             v1::ReservationReply*) override;
  Reactor* DeleteReservation(Context*, const v1::DeleteReservationRequest*,
                             v1::ActionReply*) override;
  Reactor* ListReservations(Context*, const v1::ReservationQuery*, v1::ReservationList*) override;
  Reactor* Top(Context*, const v1::TopRequest*, v1::ActionReply*) override;
  Reactor* Reconfigure(Context*, const v1::ReconfigureRequest*, v1::ActionReply*) override;
  Reactor* UpdatePartition(Context*, const v1::UpdatePartitionRequest*, v1::ActionReply*) override;
  Reactor* DeletePartition(Context*, const v1::DeletePartitionRequest*, v1::ActionReply*) override;
  Reactor* Notify(Context*, const v1::NotifyRequest*, v1::ActionReply*) override;
  Reactor* SetDebug(Context*, const v1::SetDebugRequest*, v1::ActionReply*) override;
  Reactor* Takeover(Context*, const v1::TakeoverRequest*, v1::ActionReply*) override;
  Reactor* Token(Context*, const v1::TokenRequest*, v1::TokenReply*) override;
  Reactor* Diag(Context*, const v1::DiagRequest*, v1::DiagReply*) override;

 private:
  friend class AccountingService;  // sacctmgr's service: admitted and queued as these calls are
  enum class Access {
    kUser,    // any authenticated caller
    kDaemon,  // an agent: root or SlurmUser only
  };
  // Fills `caller` from the call's proven identity, or answers why the call is refused. At
  // debug2 it logs the call, named by the handler it is called from (`handler`, the caller's
  // function name; __builtin_FUNCTION, as clang 14's library has no std::source_location).
  grpc::Status Admit(Context* context, Access access, Caller& caller,
                     const char* handler = __builtin_FUNCTION());
  // The identity a call's JWT proves (x-slurm-user-token, with x-slurm-user-name when sent).
  Result<auth::Identity> AuthenticateToken(Context* context);
  // A call refused as busy: its credential admits its retries (busy_retries.h).
  void HoldForRetry(Context* context, const Caller& caller);
  // The step's credential: the Job bytes the agents will run it from, sealed with its claims.
  grpc::Status SealStep(v1::CreateStepReply* reply);

  // Queues the event; the reactor finishes with the committed reply (job IDs into `reply`).
  Reactor* Act(Context* context, Event event, v1::ActionReply* reply);
  Reactor* Tell(Context* context, Event event);  // agents' events: an empty reply
  static drover::ctld::JobEnded JobEndedOf(const v1::JobEndedRequest& request);
  static Result<drover::ctld::Heartbeat> HeartbeatFor(const Snapshot& snapshot,
                                                      const v1::HeartbeatRequest& request,
                                                      bool& reregister);
  // Runs a query on the query threads.
  Reactor* Query(Context* context, const Caller& caller, std::function<grpc::Status()> query);

  // Queries see what their caller may see (PrivateData, views/privacy.h).
  grpc::Status DoListJobs(const Caller&, const v1::JobQuery*, v1::JobList*);
  grpc::Status DoListNodes(const v1::NodeQuery*, v1::NodeList*);
  grpc::Status DoHistory(const Caller&, const v1::HistoryQuery*, v1::JobList*);
  grpc::Status DoJobScript(const Caller&, const v1::JobScriptRequest*, v1::JobScriptReply*,
                           bool live);
  grpc::Status DoPriorities(const Caller&, const v1::PriorityQuery*, v1::PriorityList*);
  grpc::Status DoShares(const Caller&, v1::ShareList*);
  grpc::Status DoListPartitions(bool configuration_only, v1::PartitionList*);
  grpc::Status DoListReservations(const Caller&, const v1::ReservationQuery*, v1::ReservationList*);
  Reactor* ChangeReservation(Context* context, Event event, v1::ReservationReply* reply);
  // sdiag's counts since the controller started.
  void DiagCounts(v1::DiagReply* reply);

  EngineLoop& loop_;
  auth::Authenticator& authenticator_;
  const auth::Settings auth_settings_;
  std::string jwt_key_;  // empty: tokens are refused
  RpcStats* rpc_stats_ = nullptr;
  // sdiag -r: the counts at the reset, which later answers subtract (as Slurm's reset_stats).
  Mutex diag_mutex_;
  v1::DiagReply diag_baseline_ GUARDED_BY(diag_mutex_);
  const int64_t started_ = static_cast<int64_t>(std::time(nullptr));
  Callers callers_;  // who a proven uid is: name, groups, operator
  std::unique_ptr<RateLimiter> rate_limiter_;
  BusyRetries busy_retries_;
  std::string conf_path_;
  JobHistory history_;
  int64_t purged_up_to_ = INT64_MIN;  // the last cutoff purged (the main thread's)
  QueryPool queries_{2};
  AgentDispatcher* agents_ = nullptr;
  std::string name_;
  std::function<void(const std::string&)> handover_;
};

}  // namespace drover::ctld
