// gRPC handlers; see service.h. The caller's uid/gid come from the request until credentials
// land (DESIGN.md, Security): CallerOf() is the one place that will change.
#include "ctld/daemon/service.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
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

grpc::ServerUnaryReactor* Finished(grpc::CallbackServerContext* context, grpc::Status status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(std::move(status));
  return reactor;
}

}  // namespace

QueryPool::QueryPool(int threads) {
  for (int i = 0; i < threads; ++i)
    threads_.emplace_back([this] {
      pthread_setname_np(pthread_self(), "ctld-query");
      while (true) {
        std::function<void()> work;
        {
          std::unique_lock lock(mutex_);
          wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
          if (queue_.empty()) return;
          work = std::move(queue_.front());
          queue_.pop_front();
        }
        work();
      }
    });
}

QueryPool::~QueryPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

void QueryPool::Run(std::function<void()> work) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(work));
  }
  wake_.notify_one();
}

ControllerService::ControllerService(const ClusterConfig& cluster, EngineLoop& loop,
                                     std::unique_ptr<Store> history)
    : cluster_(cluster), loop_(loop), history_(std::move(history)) {}

ControllerService::Reactor* ControllerService::Query(Context* context,
                                                     std::function<grpc::Status()> query) {
  Reactor* reactor = context->DefaultReactor();
  queries_.Run([reactor, query = std::move(query)] { reactor->Finish(query()); });
  return reactor;
}

ControllerService::Reactor* ControllerService::Submit(Context* context,
                                                      const v1::SubmitRequest* request,
                                                      v1::SubmitReply* reply) {
  auto spec = FromProto(request->spec());
  if (!spec) return Finished(context, Invalid(spec.error()));
  Reactor* reactor = context->DefaultReactor();
  loop_.Submit(SubmitJob{0, CallerOf(request->caller()), std::move(*spec), request->array(),
                         request->script()},
               [reactor, reply](const Reply& result) {
                 if (result.ok) reply->set_job_id(result.job_ids.front());
                 reactor->Finish(FromReply(result));
               });
  return reactor;
}

ControllerService::Reactor* ControllerService::SubmitMany(Context* context,
                                                          const v1::SubmitManyRequest* request,
                                                          v1::SubmitManyReply* reply) {
  // Queued together, so they land in one engine batch and one commit. Each result is filled in
  // by its own reply; the last one to arrive finishes the call.
  Reactor* reactor = context->DefaultReactor();
  for (int i = 0; i < request->jobs_size(); ++i) reply->add_results();
  auto remaining = std::make_shared<std::atomic<int>>(request->jobs_size() + 1);
  auto arrived = [reactor, remaining] {
    if (remaining->fetch_sub(1) == 1) reactor->Finish(grpc::Status::OK);
  };
  for (int i = 0; i < request->jobs_size(); ++i) {
    const v1::SubmitRequest& one = request->jobs(i);
    v1::SubmitManyReply::Result* result = reply->mutable_results(i);
    auto spec = FromProto(one.spec());
    if (!spec) {
      result->set_error(spec.error());
      arrived();
      continue;
    }
    loop_.Submit(SubmitJob{0, CallerOf(one.caller()), std::move(*spec), one.array(), one.script()},
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
  loop_.Submit(std::move(event), [reactor, reply](const Reply& result) {
    for (uint64_t id : result.job_ids) reply->add_job_ids(id);
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

ControllerService::Reactor* ControllerService::Cancel(Context* context,
                                                      const v1::CancelRequest* request,
                                                      v1::ActionReply* reply) {
  auto filter = FilterOf(request->filter());
  if (!filter) return Finished(context, Invalid(filter.error()));
  return Act(context,
             CancelJobs{0, CallerOf(request->caller()), std::move(*filter), request->signal(),
                        request->batch_only()},
             reply);
}

ControllerService::Reactor* ControllerService::Hold(Context* context,
                                                    const v1::HoldRequest* request,
                                                    v1::ActionReply* reply) {
  auto filter = FilterOf(request->filter());
  if (!filter) return Finished(context, Invalid(filter.error()));
  return Act(context,
             HoldJobs{0, CallerOf(request->caller()), std::move(*filter), request->release()},
             reply);
}

ControllerService::Reactor* ControllerService::Requeue(Context* context,
                                                       const v1::RequeueRequest* request,
                                                       v1::ActionReply* reply) {
  auto filter = FilterOf(request->filter());
  if (!filter) return Finished(context, Invalid(filter.error()));
  return Act(context,
             RequeueJobs{0, CallerOf(request->caller()), std::move(*filter), request->hold()},
             reply);
}

ControllerService::Reactor* ControllerService::UpdateNode(Context* context,
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
    return Finished(context, Invalid("Invalid node state specified: " + request->state()));
  return Act(context,
             drover::ctld::UpdateNode{0, CallerOf(request->caller()), request->nodes(), action,
                                      request->reason()},
             reply);
}

ControllerService::Reactor* ControllerService::ListJobs(Context* context, const v1::JobQuery* query,
                                                        v1::JobList* reply) {
  return Query(context, [this, query, reply] { return DoListJobs(query, reply); });
}

grpc::Status ControllerService::DoListJobs(const v1::JobQuery* query, v1::JobList* reply) {
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  auto filter = FilterOf(query->filter());
  if (!filter) return Invalid(filter.error());
  reply->set_time(snapshot->time);
  std::set<uint64_t> ids(filter->job_ids.begin(), filter->job_ids.end());
  v1::Job record;
  for (const JobPtr& job : snapshot->jobs) {
    const JobSpec& spec = job->spec;
    if (!ids.empty() && !ids.count(spec.job_id) && !ids.count(spec.array_job_id)) continue;
    if (!filter->user.empty() && spec.user != filter->user) continue;
    if (filter->state && job->state != *filter->state) continue;
    if (!query->all_states() && IsFinal(job->state) && ids.empty()) continue;
    if (const auto& bytes = job->wire.get()) {
      reply->add_jobs(*bytes);
    } else {  // a record the engine has not encoded (none yet; kept for safety)
      record.Clear();
      ToProto(*job, cluster_, &record);
      record.SerializeToString(reply->add_jobs());
    }
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

ControllerService::Reactor* ControllerService::History(Context* context,
                                                       const v1::HistoryQuery* query,
                                                       v1::JobList* reply) {
  return Query(context, [this, query, reply] { return DoHistory(query, reply); });
}

grpc::Status ControllerService::DoHistory(const v1::HistoryQuery* query, v1::JobList* reply) {
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
      if (InWindow(job, *query) && Matches(job, *filter)) reply->add_jobs(value);
    }
  }
  for (const JobPtr& job : snapshot->jobs) {
    v1::Job record;
    ToProto(*job, cluster_, &record);
    if (InWindow(record, *query) && Matches(record, *filter))
      record.SerializeToString(reply->add_jobs());
  }
  return grpc::Status::OK;
}

ControllerService::Reactor* ControllerService::Priorities(Context* context,
                                                          const v1::PriorityQuery* query,
                                                          v1::PriorityList* reply) {
  return Query(context, [this, query, reply] { return DoPriorities(query, reply); });
}

grpc::Status ControllerService::DoPriorities(const v1::PriorityQuery* query,
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

ControllerService::Reactor* ControllerService::Shares(Context* context, const v1::ShareQuery*,
                                                      v1::ShareList* reply) {
  return Query(context, [this, reply] { return DoShares(reply); });
}

grpc::Status ControllerService::DoShares(v1::ShareList* reply) {
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

ControllerService::Reactor* ControllerService::UpdateJob(Context* context,
                                                         const v1::UpdateJobRequest* request,
                                                         v1::ActionReply* reply) {
  auto filter = FilterOf(request->filter());
  if (!filter) return Finished(context, Invalid(filter.error()));
  drover::ctld::UpdateJob event{0, CallerOf(request->caller()), std::move(*filter), {}, {}, {}, {},
                                {}};
  if (request->has_time_limit_seconds()) {
    if (request->time_limit_seconds() <= 0)
      return Finished(context, Invalid("Invalid time limit specified"));
    event.time_limit_seconds = request->time_limit_seconds();
  }
  if (request->has_nice()) event.nice = request->nice();
  if (request->has_partition()) event.partition = request->partition();
  if (request->has_name()) event.name = request->name();
  if (request->has_qos()) event.qos = request->qos();
  return Act(context, std::move(event), reply);
}

ControllerService::Reactor* ControllerService::ListNodes(Context* context, const v1::NodeQuery*,
                                                         v1::NodeList* reply) {
  return Query(context, [this, reply] { return DoListNodes(reply); });
}

grpc::Status ControllerService::DoListNodes(v1::NodeList* reply) {
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  reply->set_time(snapshot->time);
  for (size_t i = 0; i < snapshot->nodes.size(); ++i)
    ToProto(snapshot->nodes[i], cluster_.nodes[i].name, false, reply->add_nodes());
  return grpc::Status::OK;
}

ControllerService::Reactor* ControllerService::Ping(Context* context, const v1::PingRequest*,
                                                    v1::PingReply* reply) {
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  reply->set_cluster_name(cluster_.settings.cluster_name);
  reply->set_host(host);
  reply->set_time(snapshot->time);
  reply->set_jobs(snapshot->jobs.size());
  return Finished(context, grpc::Status::OK);
}

ControllerService::Reactor* ControllerService::Register(Context* context,
                                                        const v1::RegisterRequest* request,
                                                        v1::RegisterReply*) {
  if (cluster_.FindNode(request->node()) < 0)
    return Finished(context,
                    Invalid("node " + request->node() + " is not in this cluster's slurm.conf"));
  NodeRegistered event{request->node(), {}};
  event.running_jobs.assign(request->running_jobs().begin(), request->running_jobs().end());
  return Tell(context, std::move(event));
}

ControllerService::Reactor* ControllerService::Heartbeat(Context* context,
                                                         const v1::HeartbeatRequest* request,
                                                         v1::HeartbeatReply*) {
  return Tell(context, drover::ctld::Heartbeat{request->node(), request->healthy(),
                                               request->health_output()});
}

ControllerService::Reactor* ControllerService::JobEnded(Context* context,
                                                        const v1::JobEndedRequest* request,
                                                        v1::JobEndedReply*) {
  // The reply leaves after the end is committed: the agent may then forget it.
  return Tell(context, drover::ctld::JobEnded{request->job_id(), request->node(),
                                              request->exit_code(), request->signal(),
                                              request->out_of_memory(), request->prolog_failed()});
}

}  // namespace drover::ctld
