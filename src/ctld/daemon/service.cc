// The service's handlers that queue engine events; see service.h. Each validates its request,
// turns it into an event and answers with the engine's committed reply.
#include "ctld/daemon/service.h"

#include <atomic>

#include "auth/job_credential.h"
#include "common/log.h"
#include "common/slurm_conf.h"
#include "common/submission_bounds.h"
#include "common/text.h"
#include "ctld/daemon/requests.h"
#include "ctld/records.h"
#include "ctld/views/jobs.h"
#include "ctld/views/steps.h"
#include "wire/job_listing_codec.h"
#include "wire/job_spec_codec.h"
#include "wire/usage_codec.h"

namespace drover::ctld {

ControllerService::ControllerService(EngineLoop& loop, auth::Authenticator& authenticator,
                                     auth::Settings auth_settings, std::unique_ptr<Store> history,
                                     std::string conf_path)
    : loop_(loop),
      authenticator_(authenticator),
      auth_settings_(std::move(auth_settings)),
      callers_(loop.snapshot()->cluster->settings),
      rate_limiter_(MakeRateLimiter(loop.snapshot()->cluster->settings)),
      conf_path_(std::move(conf_path)),
      history_(std::move(history)) {}

ControllerService::Reactor* ControllerService::Submit(Context* context,
                                                      const v1::SubmitRequest* request,
                                                      v1::SubmitReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  auto spec = wire::FromProto(request->spec());
  if (!spec) return Finished(context, Invalid(spec.error()));
  if (Status s = CheckSubmission(*spec, request->script(), loop_.snapshot()->cluster->settings); !s)
    return Finished(context, Invalid(s.error()));
  Reactor* reactor = context->DefaultReactor();
  if (request->test_only()) {
    auto will_run = std::make_shared<WillRun>();
    loop_.Submit(WillRunJob{0, caller, std::move(*spec), will_run},
                 [this, reactor, reply, will_run](const Reply& result) {
                   if (result.ok) {
                     reply->set_job_id(will_run->next_job_id);
                     wire::ToProto(views::WillRunOf(*will_run, *loop_.snapshot()->cluster),
                                   reply->mutable_will_run());
                   }
                   reactor->Finish(FromReply(result));
                 });
    return reactor;
  }
  loop_.Submit(SubmitJob{0, caller, std::move(*spec), request->array(), request->script()},
               [this, context, caller, reactor, reply](const Reply& result) {
                 if (result.busy) HoldForRetry(context, caller);  // the command retries
                 if (result.ok) reply->set_job_id(result.job_ids.front());
                 reactor->Finish(FromReply(result));
               });
  return reactor;
}

ControllerService::Reactor* ControllerService::SubmitMany(Context* context,
                                                          const v1::SubmitManyRequest* request,
                                                          v1::SubmitManyReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  // Queued together, so they land in one engine batch and one commit. Each result is filled in
  // by its own reply; the last one to arrive finishes the call.
  Reactor* reactor = context->DefaultReactor();
  for (int i = 0; i < request->jobs_size(); ++i) reply->add_results();
  auto remaining = std::make_shared<std::atomic<int>>(request->jobs_size() + 1);
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();  // holds the settings below
  const ClusterSettings& settings = snapshot->cluster->settings;
  auto arrived = [reactor, remaining] {
    if (remaining->fetch_sub(1) == 1) reactor->Finish(grpc::Status::OK);
  };
  for (int i = 0; i < request->jobs_size(); ++i) {
    const v1::SubmitRequest& one = request->jobs(i);
    v1::SubmitManyReply::Result* result = reply->mutable_results(i);
    auto spec = wire::FromProto(one.spec());
    Status bounded = spec ? CheckSubmission(*spec, one.script(), settings) : OkStatus();
    if (!spec || !bounded) {
      result->set_error(spec ? bounded.error() : spec.error());
      arrived();
      continue;
    }
    loop_.Submit(SubmitJob{0, caller, std::move(*spec), one.array(), one.script()},
                 [result, arrived](const Reply& outcome) {
                   if (outcome.ok)
                     result->set_job_id(outcome.job_ids.front());
                   else
                     result->set_error(outcome.error);
                   arrived();
                 });
  }
  arrived();  // the loop's own share: the call cannot finish before every job is queued
  return reactor;
}

ControllerService::Reactor* ControllerService::Act(Context* context, Event event,
                                                   v1::ActionReply* reply) {
  Reactor* reactor = context->DefaultReactor();
  Caller caller = std::visit(
      [](const auto& e) -> Caller {
        if constexpr (requires { e.caller; }) return e.caller;
        return Caller{};
      },
      event);
  loop_.Submit(std::move(event), [this, context, caller, reactor, reply](const Reply& result) {
    if (result.busy) HoldForRetry(context, caller);  // a full queue: the command retries
    for (uint64_t id : result.job_ids) reply->add_job_ids(id);
    reply->set_message(result.message);
    reactor->Finish(FromReply(result));
  });
  return reactor;
}

ControllerService::Reactor* ControllerService::Tell(Context* context, Event event) {
  Reactor* reactor = context->DefaultReactor();
  loop_.Submit(std::move(event),
               [reactor](const Reply& result) { reactor->Finish(FromReply(result)); });
  return reactor;
}

namespace {
// scancel -f includes what -b asks for (Slurm ignores -b with -f).
SignalScope CancelScope(const v1::CancelRequest& request) {
  return request.full()         ? SignalScope::kFull
         : request.batch_only() ? SignalScope::kBatch
                                : SignalScope::kSteps;
}
}  // namespace

ControllerService::Reactor* ControllerService::Cancel(Context* context,
                                                      const v1::CancelRequest* request,
                                                      v1::ActionReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  auto filter = FilterOf(request->filter());
  if (!filter) return Finished(context, Invalid(filter.error()));
  CancelJobs cancel{0, caller, std::move(*filter), request->signal(), CancelScope(*request)};
  for (const v1::StepTarget& step : request->steps())
    cancel.steps.push_back({step.job_id(), step.task_id(), step.step_id()});
  return Act(context, std::move(cancel), reply);
}

ControllerService::Reactor* ControllerService::Hold(Context* context,
                                                    const v1::HoldRequest* request,
                                                    v1::ActionReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  auto filter = FilterOf(request->filter());
  if (!filter) return Finished(context, Invalid(filter.error()));
  return Act(context, HoldJobs{0, caller, std::move(*filter), request->release()}, reply);
}

ControllerService::Reactor* ControllerService::Requeue(Context* context,
                                                       const v1::RequeueRequest* request,
                                                       v1::ActionReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  auto filter = FilterOf(request->filter());
  if (!filter) return Finished(context, Invalid(filter.error()));
  return Act(context, RequeueJobs{0, caller, std::move(*filter), request->hold()}, reply);
}

ControllerService::Reactor* ControllerService::UpdateNode(Context* context,
                                                          const v1::UpdateNodeRequest* request,
                                                          v1::ActionReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  auto event = UpdateNodeOf(*request, caller);
  if (!event) return Finished(context, Invalid(event.error()));
  return Act(context, std::move(*event), reply);
}

ControllerService::Reactor* ControllerService::RebootNodes(Context* context,
                                                           const v1::RebootRequest* request,
                                                           v1::ActionReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  auto event = RebootNodesOf(*request, caller);
  if (!event) return Finished(context, Invalid(event.error()));
  return Act(context, std::move(*event), reply);
}

// scontrol notify, as slurmctld's job_notify: the job's owner or SlurmUser/root, a running
// batch job (its first node runs the script); the agent writes the message to its stderr.
ControllerService::Reactor* ControllerService::Notify(Context* context,
                                                      const v1::NotifyRequest* request,
                                                      v1::ActionReply*) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  const JobPtr* found = snapshot->jobs.Find(request->job_id());
  if (!found) return Finished(context, Invalid("Invalid job id specified"));
  const Job& job = **found;
  bool daemon = caller.uid == 0 || caller.user == snapshot->cluster->settings.slurm_user;
  if (job.spec.uid != caller.uid && !daemon)
    return Finished(context, grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "Invalid user id"));
  if (job.state != JobState::kRunning || job.allocation.nodes.empty())
    return Finished(context, Invalid("Job/step already completing or completed"));
  if (job.spec.interactive)
    return Finished(context, Invalid("Drover cannot reach an salloc or srun with a message yet: "
                                     "only batch jobs are notified"));
  if (request->message().size() > 4096)
    return Finished(context, Invalid("the message is longer than 4096 bytes"));
  if (agents_) agents_->Notify(job.BatchNode(), job.spec.job_id, request->message());
  return Finished(context, grpc::Status::OK);
}

ControllerService::Reactor* ControllerService::UpdatePartition(
    Context* context, const v1::UpdatePartitionRequest* request, v1::ActionReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  using Kind = ChangePartition::Kind;
  std::vector<std::string> settings(request->settings().begin(), request->settings().end());
  return Act(
      context,
      ChangePartition{0, caller, request->name(), request->create() ? Kind::kCreate : Kind::kUpdate,
                      std::move(settings)},
      reply);
}

ControllerService::Reactor* ControllerService::DeletePartition(
    Context* context, const v1::DeletePartitionRequest* request, v1::ActionReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  return Act(context,
             ChangePartition{0, caller, request->name(), ChangePartition::Kind::kDelete, {}},
             reply);
}

ControllerService::Reactor* ControllerService::UpdateJob(Context* context,
                                                         const v1::UpdateJobRequest* request,
                                                         v1::ActionReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  if (Status s = CheckUpdateJob(*request); !s) return Finished(context, Invalid(s.error()));
  auto event = UpdateJobOf(*request, caller);
  if (!event) return Finished(context, Invalid(event.error()));
  return Act(context, std::move(*event), reply);
}

ControllerService::Reactor* ControllerService::Suspend(Context* context,
                                                       const v1::SuspendRequest* request,
                                                       v1::ActionReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  auto filter = FilterOf(request->filter());
  if (!filter) return Finished(context, Invalid(filter.error()));
  return Act(context, SuspendJobs{0, caller, std::move(*filter), request->resume()}, reply);
}

ControllerService::Reactor* ControllerService::CreateStep(Context* context,
                                                          const v1::CreateStepRequest* request,
                                                          v1::CreateStepReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  if (Status s = CheckCreateStep(*request); !s) return Finished(context, Invalid(s.error()));
  auto event = CreateStepOf(*request, caller);
  if (!event) return Finished(context, Invalid(event.error()));
  Reactor* reactor = context->DefaultReactor();
  loop_.Submit(std::move(*event), [this, reactor, reply](const Reply& result) {
    if (result.ok && result.job) {
      const ClusterConfig& cluster = *loop_.snapshot()->cluster;
      ToProto(*result.job, cluster, reply->mutable_job());
      wire::ToProto(
          views::StepLayoutOf(result, cluster,
                              [this](int node) { return agents_ ? agents_->AddressOf(node) : ""; }),
          reply);
      if (grpc::Status sealed = SealStep(reply); !sealed.ok()) return reactor->Finish(sealed);
    }
    reactor->Finish(FromReply(result));
  });
  return reactor;
}

grpc::Status ControllerService::SealStep(v1::CreateStepReply* reply) {
  reply->set_job_bytes(reply->job().SerializeAsString());
  v1::JobCredential claims;
  claims.set_job_id(reply->job().spec().job_id());
  claims.set_step_id(reply->step_id());
  claims.set_uid(reply->job().spec().uid());
  claims.set_gid(reply->job().spec().gid());
  claims.set_restart_count(reply->job().restart_count());
  claims.set_job_digest(auth::Sha256(reply->job_bytes()));
  for (const v1::StepNode& node : reply->nodes()) claims.add_nodes(node.name());
  Result<std::string> sealed = auth::SealJobCredential(authenticator_, claims);
  if (!sealed) return grpc::Status(grpc::StatusCode::INTERNAL, sealed.error());
  reply->set_credential(std::move(*sealed));
  return grpc::Status::OK;
}

ControllerService::Reactor* ControllerService::StepEnded(Context* context,
                                                         const v1::StepEndedRequest* request,
                                                         v1::ActionReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  return Act(
      context,
      drover::ctld::StepEnded{0, caller, request->job_id(), request->step_id(),
                              request->exit_code(), request->exit_signal(), request->cancelled(),
                              request->cpu_seconds(), request->max_rss_mib(),
                              request->restart_count(), wire::FromProto(request->usage())},
      reply);
}

ControllerService::Reactor* ControllerService::Release(Context* context,
                                                       const v1::ReleaseRequest* request,
                                                       v1::ActionReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  return Act(context,
             ReleaseJob{0, caller, request->job_id(), request->exit_code(), request->exit_signal()},
             reply);
}

ControllerService::Reactor* ControllerService::ChangeReservation(Context* context, Event event,
                                                                 v1::ReservationReply* reply) {
  Reactor* reactor = context->DefaultReactor();
  loop_.Submit(std::move(event), [reactor, reply](const Reply& result) {
    reply->set_name(result.name);
    reactor->Finish(FromReply(result));
  });
  return reactor;
}

ControllerService::Reactor* ControllerService::CreateReservation(
    Context* context, const v1::ReservationRequest* request, v1::ReservationReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  if (Status s = CheckReservation(*request); !s) return Finished(context, Invalid(s.error()));
  return ChangeReservation(
      context,
      drover::ctld::CreateReservation{0, caller, request->name(), ReservationFieldsOf(*request)},
      reply);
}

ControllerService::Reactor* ControllerService::UpdateReservation(
    Context* context, const v1::ReservationRequest* request, v1::ReservationReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  if (request->name().empty())
    return Finished(context, Invalid("Requested reservation is invalid (give its name)"));
  if (Status s = CheckReservation(*request); !s) return Finished(context, Invalid(s.error()));
  return ChangeReservation(
      context,
      drover::ctld::UpdateReservation{0, caller, request->name(), ReservationFieldsOf(*request)},
      reply);
}

ControllerService::Reactor* ControllerService::DeleteReservation(
    Context* context, const v1::DeleteReservationRequest* request, v1::ActionReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  return Act(context, drover::ctld::DeleteReservation{0, caller, request->name()}, reply);
}

ControllerService::Reactor* ControllerService::Top(Context* context, const v1::TopRequest* request,
                                                   v1::ActionReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  auto event = TopJobsOf(*request, caller);
  if (!event) return Finished(context, Invalid(event.error()));
  return Act(context, std::move(*event), reply);
}

ControllerService::Reactor* ControllerService::Reconfigure(Context* context,
                                                           const v1::ReconfigureRequest*,
                                                           v1::ActionReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  if (conf_path_.empty())
    return Finished(context, Invalid("this controller was started without a slurm.conf path"));
  // Read on a query thread: the engine thread only swaps the result in.
  return Query(context, caller, [this, caller = caller, reply] {
    ConfigLoad load = LoadClusterConfig(conf_path_);
    if (!load.ok())
      return Invalid(
          fmt::format("{} has errors; nothing changed:\n{}", conf_path_, load.ErrorText()));
    auto config = std::make_shared<const ClusterConfig>(std::move(load.config));
    Reply result = loop_.Submit(drover::ctld::Reconfigure{0, caller, std::move(config)}).get();
    reply->set_message(result.message);
    return FromReply(result);
  });
}

ControllerService::Reactor* ControllerService::Register(Context* context,
                                                        const v1::RegisterRequest* request,
                                                        v1::RegisterReply*) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kDaemon, caller); !refused.ok())
    return Finished(context, refused);
  int node = loop_.snapshot()->cluster->FindNode(request->node());
  if (node < 0)
    return Finished(context,
                    Invalid("node " + request->node() + " is not in this cluster's slurm.conf"));
  if (agents_ && !request->address().empty()) {
    // The agent says on which port it listens; the host is the configuration's (NodeAddr) or,
    // for a node without one, the address the registration came from: a node cannot point
    // another node's launches elsewhere.
    Result<std::string> address =
        AgentAddress(*loop_.snapshot()->cluster, node, context->peer(), request->address());
    if (!address)
      return Finished(context, grpc::Status(grpc::StatusCode::PERMISSION_DENIED, address.error()));
    agents_->SetAddress(node, std::move(*address));
  }
  log::Verbose("node {} registered from {}", request->node(), context->peer());
  return Tell(context, NodeRegisteredOf(*request));
}

ControllerService::Reactor* ControllerService::Heartbeat(Context* context,
                                                         const v1::HeartbeatRequest* request,
                                                         v1::HeartbeatReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kDaemon, caller); !refused.ok())
    return Finished(context, refused);
  bool reregister = false;
  auto event = HeartbeatFor(*loop_.snapshot(), *request, reregister);
  if (!event) return Finished(context, Invalid(event.error()));
  reply->set_reregister(reregister);
  return Tell(context, std::move(*event));
}

// A node's heartbeat as the engine's event; `reregister` when the controller does not count the
// node registered (after a restart every node waits for its agent to register again).
Result<drover::ctld::Heartbeat> ControllerService::HeartbeatFor(const Snapshot& snapshot,
                                                                const v1::HeartbeatRequest& request,
                                                                bool& reregister) {
  int node = snapshot.cluster->FindNode(request.node());
  if (node < 0)
    return MakeError("node " + request.node().substr(0, 64) +
                     " is not in this cluster's slurm.conf");
  // Not registered (after a restart or a failover), or a launch to look for again is due.
  if (static_cast<size_t>(node) < snapshot.nodes.size()) {
    const NodeStatus& status = snapshot.nodes[node];
    reregister = !status.registered ||
                 (status.recheck_jobs_at != 0 && snapshot.time >= status.recheck_jobs_at);
  }
  return HeartbeatOf(request);
}

// The heartbeats of every node of one agent process: one event each, one reply once all of them
// are applied.
ControllerService::Reactor* ControllerService::Heartbeats(Context* context,
                                                          const v1::HeartbeatBatch* request,
                                                          v1::HeartbeatBatchReply* reply) {
  constexpr int kMostNodes = 100000;
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kDaemon, caller); !refused.ok())
    return Finished(context, refused);
  if (request->nodes_size() > kMostNodes)
    return Finished(context, Invalid(fmt::format("{} heartbeats in one call; at most {}",
                                                 request->nodes_size(), kMostNodes)));
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  std::vector<drover::ctld::Heartbeat> events;
  events.reserve(static_cast<size_t>(request->nodes_size()));
  for (const v1::HeartbeatRequest& heartbeat : request->nodes()) {
    bool reregister = false;
    auto event = HeartbeatFor(*snapshot, heartbeat, reregister);
    if (!event) return Finished(context, Invalid(event.error()));
    if (reregister) reply->add_reregister(heartbeat.node());
    events.push_back(std::move(*event));
  }
  Reactor* reactor = context->DefaultReactor();
  if (events.empty()) {
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  auto left = std::make_shared<std::atomic<size_t>>(events.size());
  for (drover::ctld::Heartbeat& event : events)
    loop_.Submit(std::move(event), [reactor, left](const Reply&) {
      if (left->fetch_sub(1) == 1) reactor->Finish(grpc::Status::OK);
    });
  return reactor;
}

drover::ctld::JobEnded ControllerService::JobEndedOf(const v1::JobEndedRequest& request) {
  return drover::ctld::JobEnded{
      request.job_id(),        request.node(),          request.exit_code(),
      request.signal(),        request.out_of_memory(), request.prolog_failed(),
      request.epilog_failed(), request.restart_count(), request.reason(),
      request.cpu_seconds(),   request.max_rss_mib(),   wire::FromProto(request.batch_usage())};
}

ControllerService::Reactor* ControllerService::JobEnded(Context* context,
                                                        const v1::JobEndedRequest* request,
                                                        v1::JobEndedReply*) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kDaemon, caller); !refused.ok())
    return Finished(context, refused);
  // The reply leaves after the end is committed: the agent may then forget it.
  return Tell(context, JobEndedOf(*request));
}

// Every end an agent process has, queued together so they share the engine's batch and commit;
// the reply leaves once all are applied, with each one's outcome.
ControllerService::Reactor* ControllerService::JobsEnded(Context* context,
                                                         const v1::JobEndedBatch* request,
                                                         v1::JobEndedBatchReply* reply) {
  constexpr int kMostEnds = 2000;  // an agent sends at most this many a round
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kDaemon, caller); !refused.ok())
    return Finished(context, refused);
  if (request->ends_size() > kMostEnds)
    return Finished(context, Invalid(fmt::format("{} job ends in one call; at most {}",
                                                 request->ends_size(), kMostEnds)));
  Reactor* reactor = context->DefaultReactor();
  for (int i = 0; i < request->ends_size(); ++i) reply->add_errors();
  auto left = std::make_shared<std::atomic<int>>(request->ends_size() + 1);
  auto arrived = [reactor, left] {
    if (left->fetch_sub(1) == 1) reactor->Finish(grpc::Status::OK);
  };
  for (int i = 0; i < request->ends_size(); ++i) {
    std::string* error = reply->mutable_errors(i);
    loop_.Submit(JobEndedOf(request->ends(i)), [error, arrived](const Reply& result) {
      if (!result.ok) *error = result.error.empty() ? "not applied" : result.error;
      arrived();
    });
  }
  arrived();  // the loop's own share: the call cannot finish before every end is queued
  return reactor;
}

}  // namespace drover::ctld
