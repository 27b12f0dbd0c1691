// gRPC handlers; see service.h. The caller's uid/gid come from the request until credentials
// land (DESIGN.md, Security): CallerOf() is the one place that will change.
#include "ctld/daemon/service.h"

#include <unistd.h>

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>

#include "common/text.h"
#include "ctld/records.h"

namespace drover::ctld {
namespace {

Caller CallerOf(const v1::Caller& caller) {
  return Caller{caller.uid(), caller.gid(), false};
}

grpc::Status Invalid(const std::string& message) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message);
}

Result<JobFilter> FilterOf(const v1::JobFilter& filter) {
  JobFilter out;
  out.job_ids.assign(filter.job_ids().begin(), filter.job_ids().end());
  for (const auto& task : filter.array_tasks())
    out.array_tasks.emplace_back(task.array_job_id(), task.task_id());
  out.user = filter.user();
  out.name = filter.name();
  out.partition = filter.partition();
  if (!filter.state().empty()) {
    auto state = ParseJobState(filter.state());
    if (!state) return MakeError("Invalid job state specified: " + filter.state());
    out.state = *state;
  }
  return out;
}

grpc::Status FromReply(const Reply& reply) {
  return reply.ok ? grpc::Status::OK : Invalid(reply.error);
}

}  // namespace

ControllerService::ControllerService(const ClusterConfig& cluster, EngineLoop& loop,
                                     std::unique_ptr<Store> history)
    : cluster_(cluster), loop_(loop), history_(std::move(history)) {}

grpc::Status ControllerService::Submit(grpc::ServerContext*, const v1::SubmitRequest* request,
                                       v1::SubmitReply* reply) {
  auto spec = FromProto(request->spec());
  if (!spec) return Invalid(spec.error());
  Reply result = loop_
                     .Submit(SubmitJob{0, CallerOf(request->caller()), std::move(*spec),
                                       request->array(), request->script()})
                     .get();
  if (!result.ok) return Invalid(result.error);
  reply->set_job_id(result.job_ids.front());
  return grpc::Status::OK;
}

grpc::Status ControllerService::SubmitMany(grpc::ServerContext*,
                                           const v1::SubmitManyRequest* request,
                                           v1::SubmitManyReply* reply) {
  // Queued together, so they land in one engine batch and one commit.
  std::vector<std::optional<std::future<Reply>>> pending;
  std::vector<std::string> errors;
  for (const v1::SubmitRequest& one : request->jobs()) {
    auto spec = FromProto(one.spec());
    errors.push_back(spec ? "" : spec.error());
    if (!spec) {
      pending.emplace_back();
      continue;
    }
    pending.emplace_back(loop_.Submit(
        SubmitJob{0, CallerOf(one.caller()), std::move(*spec), one.array(), one.script()}));
  }
  for (size_t i = 0; i < pending.size(); ++i) {
    v1::SubmitManyReply::Result* result = reply->add_results();
    if (!pending[i]) {
      result->set_error(errors[i]);
      continue;
    }
    Reply one = pending[i]->get();
    if (one.ok)
      result->set_job_id(one.job_ids.front());
    else
      result->set_error(one.error);
  }
  return grpc::Status::OK;
}

grpc::Status ControllerService::Act(Event event, v1::ActionReply* reply) {
  Reply result = loop_.Submit(std::move(event)).get();
  for (uint64_t id : result.job_ids) reply->add_job_ids(id);
  return FromReply(result);
}

grpc::Status ControllerService::Cancel(grpc::ServerContext*, const v1::CancelRequest* request,
                                       v1::ActionReply* reply) {
  auto filter = FilterOf(request->filter());
  if (!filter) return Invalid(filter.error());
  return Act(CancelJobs{0, CallerOf(request->caller()), std::move(*filter), request->signal(),
                        request->batch_only()},
             reply);
}

grpc::Status ControllerService::Hold(grpc::ServerContext*, const v1::HoldRequest* request,
                                     v1::ActionReply* reply) {
  auto filter = FilterOf(request->filter());
  if (!filter) return Invalid(filter.error());
  return Act(HoldJobs{0, CallerOf(request->caller()), std::move(*filter), request->release()},
             reply);
}

grpc::Status ControllerService::Requeue(grpc::ServerContext*, const v1::RequeueRequest* request,
                                        v1::ActionReply* reply) {
  auto filter = FilterOf(request->filter());
  if (!filter) return Invalid(filter.error());
  return Act(RequeueJobs{0, CallerOf(request->caller()), std::move(*filter), request->hold()},
             reply);
}

grpc::Status ControllerService::UpdateNode(grpc::ServerContext*,
                                           const v1::UpdateNodeRequest* request,
                                           v1::ActionReply* reply) {
  using Action = drover::ctld::UpdateNode::Action;
  std::string state = ToLower(request->state());
  Action action;
  if (state == "drain")
    action = Action::kDrain;
  else if (state == "resume")
    action = Action::kResume;
  else if (state == "down")
    action = Action::kDown;
  else if (state == "undrain")
    action = Action::kUndrain;
  else
    return Invalid("Invalid node state specified: " + request->state());
  return Act(drover::ctld::UpdateNode{0, CallerOf(request->caller()), request->nodes(), action,
                                      request->reason()},
             reply);
}

grpc::Status ControllerService::ListJobs(grpc::ServerContext*, const v1::JobQuery* query,
                                         v1::JobList* reply) {
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  auto filter = FilterOf(query->filter());
  if (!filter) return Invalid(filter.error());
  reply->set_time(snapshot->time);
  std::set<uint64_t> ids(filter->job_ids.begin(), filter->job_ids.end());
  for (const JobPtr& job : snapshot->jobs) {
    const JobSpec& spec = job->spec;
    if (!ids.empty() && !ids.count(spec.job_id) && !ids.count(spec.array_job_id)) continue;
    if (!filter->user.empty() && spec.user != filter->user) continue;
    if (filter->state && job->state != *filter->state) continue;
    if (!query->all_states() && IsFinal(job->state) && ids.empty()) continue;
    ToProto(*job, cluster_, reply->add_jobs());
  }
  return grpc::Status::OK;
}

namespace {

bool InWindow(const v1::Job& job, const v1::HistoryQuery& query) {
  if (query.start_time() && job.end_time() && job.end_time() < query.start_time()) return false;
  return !query.end_time() || job.spec().submit_time() <= query.end_time();
}

bool Matches(const v1::Job& job, const JobFilter& filter) {
  const v1::JobSpec& spec = job.spec();
  if (!filter.job_ids.empty() &&
      std::find(filter.job_ids.begin(), filter.job_ids.end(), spec.job_id()) ==
          filter.job_ids.end() &&
      std::find(filter.job_ids.begin(), filter.job_ids.end(), spec.array_job_id()) ==
          filter.job_ids.end())
    return false;
  if (!filter.user.empty() && spec.user() != filter.user) return false;
  return !filter.state || job.state() == JobStateName(*filter.state);
}

}  // namespace

grpc::Status ControllerService::History(grpc::ServerContext*, const v1::HistoryQuery* query,
                                        v1::JobList* reply) {
  auto filter = FilterOf(query->filter());
  if (!filter) return Invalid(filter.error());
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  reply->set_time(snapshot->time);
  std::set<uint64_t> live;
  for (const JobPtr& job : snapshot->jobs) live.insert(job->spec.job_id);
  if (history_) {
    std::lock_guard lock(history_mutex_);
    auto rows = history_->Load("job_history");
    if (!rows) return grpc::Status(grpc::StatusCode::INTERNAL, rows.error());
    for (const auto& [key, value] : *rows) {
      v1::Job job;
      if (!job.ParseFromString(value) || live.count(job.spec().job_id())) continue;
      if (InWindow(job, *query) && Matches(job, *filter)) *reply->add_jobs() = std::move(job);
    }
  }
  for (const JobPtr& job : snapshot->jobs) {
    v1::Job record;
    ToProto(*job, cluster_, &record);
    if (InWindow(record, *query) && Matches(record, *filter))
      *reply->add_jobs() = std::move(record);
  }
  return grpc::Status::OK;
}

grpc::Status ControllerService::Priorities(grpc::ServerContext*, const v1::PriorityQuery* query,
                                           v1::PriorityList* reply) {
  auto filter = FilterOf(query->filter());
  if (!filter) return Invalid(filter.error());
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  std::unordered_map<uint64_t, const Job*> jobs;
  for (const JobPtr& job : snapshot->jobs) jobs[job->spec.job_id] = job.get();
  for (const sched::PriorityFactors& factors : *snapshot->priorities) {
    auto it = jobs.find(factors.job_id);
    if (it == jobs.end() || it->second->state != JobState::kPending) continue;
    const JobSpec& spec = it->second->spec;
    if (!filter->job_ids.empty() && std::find(filter->job_ids.begin(), filter->job_ids.end(),
                                              spec.job_id) == filter->job_ids.end())
      continue;
    if (!filter->user.empty() && spec.user != filter->user) continue;
    v1::JobPriority* out = reply->add_jobs();
    out->set_job_id(spec.job_id);
    out->set_user(spec.user);
    out->set_account(spec.account);
    int p = spec.partitions.empty() ? cluster_.DefaultPartition()
                                    : cluster_.FindPartition(spec.partitions.front());
    out->set_partition(p >= 0 ? cluster_.partitions[p].name : "");
    out->set_priority(factors.priority);
    out->set_age(factors.age);
    out->set_fairshare(factors.fairshare);
    out->set_job_size(factors.job_size);
    out->set_partition_factor(factors.partition);
    out->set_qos(factors.qos);
    out->set_assoc(factors.assoc);
    out->set_nice(factors.nice);
    for (const auto& [name, value] : factors.tres) (*out->mutable_tres())[name] = value;
  }
  const ClusterSettings& s = cluster_.settings;
  auto& weights = *reply->mutable_weights();
  weights["age"] = s.weight_age;
  weights["fairshare"] = s.weight_fairshare;
  weights["jobsize"] = s.weight_job_size;
  weights["partition"] = s.weight_partition;
  weights["qos"] = s.weight_qos;
  weights["assoc"] = s.weight_assoc;
  return grpc::Status::OK;
}

grpc::Status ControllerService::Shares(grpc::ServerContext*, const v1::ShareQuery*,
                                       v1::ShareList* reply) {
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  const auto& tree = snapshot->associations;
  const sched::FairShare& fair = *snapshot->fair_share;
  auto at = [](const std::vector<double>& values, size_t i) {
    return i < values.size() ? values[i] : 0.0;
  };
  for (size_t i = 0; i < tree.size(); ++i) {
    v1::Share* share = reply->add_shares();
    share->set_account(tree[i].account);
    share->set_user(tree[i].user);
    if (tree[i].parent >= 0) share->set_parent(tree[tree[i].parent].account);
    share->set_raw_shares(tree[i].shares);
    share->set_raw_usage(tree[i].usage);
    share->set_norm_shares(at(fair.norm_shares, i));
    share->set_norm_usage(at(fair.norm_usage, i));
    share->set_effective_usage(at(fair.effective_usage, i));
    share->set_level_fs(at(fair.level_fs, i));
    share->set_fairshare(at(fair.factor, i));
  }
  return grpc::Status::OK;
}

grpc::Status ControllerService::UpdateJob(grpc::ServerContext*, const v1::UpdateJobRequest* request,
                                          v1::ActionReply* reply) {
  auto filter = FilterOf(request->filter());
  if (!filter) return Invalid(filter.error());
  drover::ctld::UpdateJob event{0, CallerOf(request->caller()), std::move(*filter), {}, {}, {}, {},
                                {}};
  if (request->has_time_limit_seconds()) {
    if (request->time_limit_seconds() <= 0) return Invalid("Invalid time limit specified");
    event.time_limit_seconds = request->time_limit_seconds();
  }
  if (request->has_nice()) event.nice = request->nice();
  if (request->has_partition()) event.partition = request->partition();
  if (request->has_name()) event.name = request->name();
  if (request->has_qos()) event.qos = request->qos();
  return Act(std::move(event), reply);
}

grpc::Status ControllerService::ListNodes(grpc::ServerContext*, const v1::NodeQuery*,
                                          v1::NodeList* reply) {
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  reply->set_time(snapshot->time);
  for (size_t i = 0; i < snapshot->nodes.size(); ++i)
    ToProto(snapshot->nodes[i], cluster_.nodes[i].name, false, reply->add_nodes());
  return grpc::Status::OK;
}

grpc::Status ControllerService::Ping(grpc::ServerContext*, const v1::PingRequest*,
                                     v1::PingReply* reply) {
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  reply->set_cluster_name(cluster_.settings.cluster_name);
  reply->set_host(host);
  reply->set_time(snapshot->time);
  reply->set_jobs(snapshot->jobs.size());
  return grpc::Status::OK;
}

grpc::Status ControllerService::Register(grpc::ServerContext*, const v1::RegisterRequest* request,
                                         v1::RegisterReply*) {
  if (cluster_.FindNode(request->node()) < 0)
    return Invalid("node " + request->node() + " is not in this cluster's slurm.conf");
  NodeRegistered event{request->node(), {}};
  event.running_jobs.assign(request->running_jobs().begin(), request->running_jobs().end());
  return FromReply(loop_.Submit(std::move(event)).get());
}

grpc::Status ControllerService::Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest* request,
                                          v1::HeartbeatReply*) {
  return FromReply(loop_
                       .Submit(drover::ctld::Heartbeat{request->node(), request->healthy(),
                                                       request->health_output()})
                       .get());
}

grpc::Status ControllerService::JobEnded(grpc::ServerContext*, const v1::JobEndedRequest* request,
                                         v1::JobEndedReply*) {
  // The reply leaves after the end is committed: the agent may then forget it.
  return FromReply(loop_
                       .Submit(drover::ctld::JobEnded{
                           request->job_id(), request->node(), request->exit_code(),
                           request->signal(), request->out_of_memory(), request->prolog_failed()})
                       .get());
}

}  // namespace drover::ctld
