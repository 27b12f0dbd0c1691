// gRPC handlers; see service.h. The caller's uid/gid come from the request until credentials
// are built (planned: docs/design.md, Security): CallerOf() is the one place that will change.
#include "ctld/daemon/service.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <set>
#include <unordered_map>

#include "common/hostlist.h"
#include "common/slurm_conf.h"
#include "common/text.h"
#include "ctld/daemon/node_usage.h"
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
          MutexLock lock(mutex_);
          wake_.Wait(mutex_, [&]() REQUIRES(mutex_) { return stop_ || !queue_.empty(); });
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
    MutexLock lock(mutex_);
    stop_ = true;
  }
  wake_.NotifyAll();
  for (std::thread& thread : threads_) thread.join();
}

void QueryPool::Run(std::function<void()> work) {
  {
    MutexLock lock(mutex_);
    queue_.push_back(std::move(work));
  }
  wake_.NotifyOne();
}

ControllerService::ControllerService(EngineLoop& loop, std::unique_ptr<Store> history,
                                     std::string conf_path)
    : loop_(loop), conf_path_(std::move(conf_path)), history_(std::move(history)) {}

ControllerService::Reactor* ControllerService::Query(Context* context,
                                                     std::function<grpc::Status()> query) {
  Reactor* reactor = context->DefaultReactor();
  queries_.Run([reactor, query = std::move(query)] { reactor->Finish(query()); });
  return reactor;
}

ControllerService::Reactor* ControllerService::Submit(Context* context,
                                                      const v1::SubmitRequest* request,
                                                      v1::SubmitReply* reply) {
  auto spec = wire::FromProto(request->spec());
  if (!spec) return Finished(context, Invalid(spec.error()));
  Reactor* reactor = context->DefaultReactor();
  if (request->test_only()) {
    auto will_run = std::make_shared<WillRun>();
    loop_.Submit(WillRunJob{0, CallerOf(request->caller()), std::move(*spec), will_run},
                 [this, reactor, reply, will_run](const Reply& result) {
                   if (result.ok) {
                     reply->set_job_id(will_run->next_job_id);
                     ToProto(*will_run, *loop_.snapshot()->cluster, reply->mutable_will_run());
                   }
                   reactor->Finish(FromReply(result));
                 });
    return reactor;
  }
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
    auto spec = wire::FromProto(one.spec());
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
  std::set<std::pair<uint64_t, uint32_t>> tasks(filter->array_tasks.begin(),
                                                filter->array_tasks.end());
  const bool by_id = !ids.empty() || !tasks.empty();
  v1::Job record;
  const std::vector<sched::PlannedStart>& plan = *snapshot->plan;  // by job ID
  auto planned = plan.begin();
  for (const JobPtr& job : snapshot->jobs) {
    const JobSpec& spec = job->spec;
    if (by_id && !ids.count(spec.job_id) && !ids.count(spec.array_job_id) &&
        !tasks.count({spec.array_job_id, spec.array_task_id}))
      continue;
    if (!filter->user.empty() && spec.user != filter->user) continue;
    if (filter->state && job->state != *filter->state) continue;
    // Finished jobs only when asked for: by ID, by their state, or all_states.
    if (!query->all_states() && IsFinal(job->state) && !by_id && !filter->state) continue;
    if (query->with_plan() && job->state == JobState::kPending) {
      // Jobs come in ID order, as the plan does: one walk through both.
      planned = std::lower_bound(planned, plan.end(), spec.job_id,
                                 [](const auto& p, uint64_t id) { return p.job_id < id; });
      if (planned != plan.end() && planned->job_id == spec.job_id)
        ToProto(*planned, *snapshot->cluster, reply->add_planned());
    }
    if (const auto& bytes = job->wire.get()) {
      reply->add_jobs(*bytes);
    } else {  // a record the engine has not encoded (none yet; kept for safety)
      record.Clear();
      ToProto(*job, *snapshot->cluster, &record);
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
    MutexLock lock(history_mutex_);
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
    ToProto(*job, *snapshot->cluster, &record);
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
  const ClusterConfig& cluster = *snapshot->cluster;
  std::unordered_map<uint64_t, const Job*> jobs;
  for (const JobPtr& job : snapshot->jobs) jobs[job->spec.job_id] = job.get();
  for (const sched::PriorityFactors& factors : *snapshot->priorities) {
    auto it = jobs.find(factors.job_id);
    if (it == jobs.end() || it->second->state != JobState::kPending) continue;
    const JobSpec& spec = it->second->spec;
    // As Slurm's sprio: held jobs (their priority is 0) are not listed.
    if (spec.hold != HoldKind::kNone) continue;
    if (!filter->job_ids.empty() && std::find(filter->job_ids.begin(), filter->job_ids.end(),
                                              spec.job_id) == filter->job_ids.end())
      continue;
    if (!filter->user.empty() && spec.user != filter->user) continue;
    v1::JobPriority* out = reply->add_jobs();
    out->set_job_id(spec.job_id);
    out->set_user(spec.user);
    out->set_account(spec.account);
    int p = spec.partitions.empty() ? cluster.DefaultPartition()
                                    : cluster.FindPartition(spec.partitions.front());
    out->set_partition(p >= 0 ? cluster.partitions[p].name : "");
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
  const ClusterSettings& s = cluster.settings;
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
  const ClusterConfig& cluster = *snapshot->cluster;
  std::vector<NodeUsage> usage = UsageByNode(cluster, *snapshot);
  // Nodes in an advance reservation's window now: RESERVED, or MAINT for maintenance.
  std::vector<std::string> reserved(cluster.nodes.size());
  for (const auto& [name, reservation] : *snapshot->reservations)
    if (reservation.start_time <= snapshot->time && snapshot->time < reservation.end_time)
      for (int node : reservation.nodes)
        if (reserved[node] != "MAINT")
          reserved[node] = reservation.Has("MAINT") ? "MAINT" : "RESERVED";
  for (size_t i = 0; i < snapshot->nodes.size() && i < cluster.nodes.size(); ++i) {
    v1::NodeStatus* out = reply->add_nodes();
    ToProto(snapshot->nodes[i], cluster.nodes[i].name, FullyAllocated(cluster, usage, i), out);
    out->set_reservation(reserved[i]);
    // sinfo shows an idle reserved node as resv (or maint), as Slurm does.
    if (!reserved[i].empty() && out->state().starts_with("IDLE"))
      out->set_state(reserved[i] + out->state().substr(4));
  }
  return grpc::Status::OK;
}

ControllerService::Reactor* ControllerService::Suspend(Context* context,
                                                       const v1::SuspendRequest* request,
                                                       v1::ActionReply* reply) {
  auto filter = FilterOf(request->filter());
  if (!filter) return Finished(context, Invalid(filter.error()));
  return Act(context,
             SuspendJobs{0, CallerOf(request->caller()), std::move(*filter), request->resume()},
             reply);
}

ControllerService::Reactor* ControllerService::CreateStep(Context* context,
                                                          const v1::CreateStepRequest* request,
                                                          v1::CreateStepReply* reply) {
  if (request->job_id() == 0) return Finished(context, Invalid("CreateStep: no job ID given"));
  if (request->ntasks() > 1'000'000 || request->nodes() > 100'000 ||
      request->ntasks_per_node() > 100'000 || request->cpus_per_task() > 100'000)
    return Finished(context, Invalid("CreateStep: a count out of range"));
  drover::ctld::CreateStep event{0,
                                 CallerOf(request->caller()),
                                 request->job_id(),
                                 request->name(),
                                 request->nodes(),
                                 request->ntasks(),
                                 request->ntasks_per_node(),
                                 request->cpus_per_task(),
                                 {request->nodelist().begin(), request->nodelist().end()}};
  Reactor* reactor = context->DefaultReactor();
  loop_.Submit(std::move(event), [this, reactor, reply](const Reply& result) {
    if (result.ok && result.job) {
      std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
      const ClusterConfig& cluster = *snapshot->cluster;
      reply->set_step_id(result.step_id);
      ToProto(*result.job, cluster, reply->mutable_job());
      std::vector<std::string> names;
      uint32_t next_task = 0;
      for (size_t i = 0; i < result.step_nodes.size(); ++i) {
        int node = result.step_nodes[i];
        v1::StepNode* out = reply->add_nodes();
        out->set_name(cluster.nodes[node].name);
        out->set_address(agents_ ? agents_->AddressOf(node) : "");
        for (size_t k = 0; k < result.job->allocation.nodes.size(); ++k)
          if (result.job->allocation.nodes[k].node == node)
            out->set_node_index(static_cast<uint32_t>(k));
        for (uint32_t t = 0; t < result.step_tasks[i]; ++t) out->add_tasks(next_task++);
        names.push_back(cluster.nodes[node].name);
      }
      reply->set_ntasks(next_task);
      reply->set_node_list(CompressHostlist(names));
    }
    reactor->Finish(FromReply(result));
  });
  return reactor;
}

ControllerService::Reactor* ControllerService::StepEnded(Context* context,
                                                         const v1::StepEndedRequest* request,
                                                         v1::ActionReply* reply) {
  return Act(context,
             drover::ctld::StepEnded{
                 0, CallerOf(request->caller()), request->job_id(), request->step_id(),
                 request->exit_code(), request->exit_signal(), request->cancelled(),
                 request->cpu_seconds(), request->max_rss_mib(), request->restart_count()},
             reply);
}

ControllerService::Reactor* ControllerService::Release(Context* context,
                                                       const v1::ReleaseRequest* request,
                                                       v1::ActionReply* reply) {
  return Act(context,
             ReleaseJob{0, CallerOf(request->caller()), request->job_id(), request->exit_code(),
                        request->exit_signal()},
             reply);
}

ControllerService::Reactor* ControllerService::ListPartitions(Context* context,
                                                              const v1::PartitionQuery*,
                                                              v1::PartitionList* reply) {
  return Query(context, [this, reply] { return DoListPartitions(reply); });
}

namespace {

std::string OverSubscribeText(const OverSubscribe& over) {
  switch (over.mode) {
    case OverSubscribe::Mode::kNo:
      return "NO";
    case OverSubscribe::Mode::kExclusive:
      return "EXCLUSIVE";
    case OverSubscribe::Mode::kYes:
      return fmt::format("YES:{}", over.max_share);
    case OverSubscribe::Mode::kForce:
      return fmt::format("FORCE:{}", over.max_share);
  }
  return "NO";
}

}  // namespace

grpc::Status ControllerService::DoListPartitions(v1::PartitionList* reply) {
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  const ClusterConfig& cluster = *snapshot->cluster;
  std::vector<NodeUsage> usage = UsageByNode(cluster, *snapshot);
  std::vector<uint32_t> pending(cluster.partitions.size()), running(cluster.partitions.size());
  for (const JobPtr& job : snapshot->jobs) {
    int p = job->partition;
    if (job->state == JobState::kPending)
      p = job->spec.partitions.empty() ? cluster.DefaultPartition()
                                       : cluster.FindPartition(job->spec.partitions.front());
    if (p < 0) continue;
    if (job->state == JobState::kPending) ++pending[p];
    if (HoldsAllocation(*job)) ++running[p];
  }
  for (size_t p = 0; p < cluster.partitions.size(); ++p) {
    const PartitionConfig& config = cluster.partitions[p];
    v1::Partition* out = reply->add_partitions();
    out->set_name(config.name);
    static constexpr std::string_view kStates[] = {"UP", "DOWN", "DRAIN", "INACTIVE"};
    out->set_state(std::string(kStates[static_cast<int>(config.state)]));
    out->set_is_default(config.is_default);
    std::vector<std::string> names;
    uint32_t cpus = 0, gpus = 0, allocated = 0, idle = 0, other = 0, cpus_used = 0, gpus_used = 0;
    for (int node : config.nodes) {
      const NodeConfig& n = cluster.nodes[node];
      names.push_back(n.name);
      cpus += n.cpus;
      gpus += n.gpus.size();
      cpus_used += AllocatedCpus(n, usage[node]);
      gpus_used += usage[node].gpus.size();
      const NodeStatus& status = snapshot->nodes[node];
      if (status.down || status.not_responding || !status.registered ||
          (status.drain && usage[node].cores.empty()))
        ++other;
      else if (!usage[node].cores.empty())
        ++allocated;
      else
        ++idle;
    }
    out->set_node_list(CompressHostlist(names));
    out->set_total_nodes(config.nodes.size());
    out->set_total_cpus(cpus);
    out->set_total_gpus(gpus);
    out->set_max_time_seconds(
        config.max_time_seconds >= kUnlimitedSeconds ? -1 : config.max_time_seconds);
    out->set_default_time_seconds(config.default_time_seconds.value_or(-1));
    out->set_max_nodes(config.max_nodes >= kUnlimitedCount ? 0 : config.max_nodes);
    out->set_min_nodes(config.min_nodes);
    out->set_priority_tier(config.priority_tier);
    out->set_priority_job_factor(config.priority_job_factor);
    out->set_over_subscribe(OverSubscribeText(config.over_subscribe));
    out->set_preempt_mode(
        FormatPreemptMode(config.preempt_mode.value_or(cluster.settings.preempt_mode)));
    out->set_grace_time_seconds(config.grace_time_seconds);
    for (const std::string& account : config.allow_accounts) out->add_allow_accounts(account);
    for (const std::string& qos : config.allow_qos) out->add_allow_qos(qos);
    out->set_qos(config.qos);
    out->set_hidden(config.hidden);
    out->set_root_only(config.root_only);
    out->set_nodes_allocated(allocated);
    out->set_nodes_idle(idle);
    out->set_nodes_other(other);
    out->set_cpus_allocated(cpus_used);
    out->set_gpus_allocated(gpus_used);
    out->set_pending_jobs(pending[p]);
    out->set_running_jobs(running[p]);
  }
  return grpc::Status::OK;
}

namespace {

ReservationFields FieldsOf(const v1::ReservationRequest& request) {
  ReservationFields fields;
  if (request.has_start_time()) fields.start_time = request.start_time();
  if (request.has_end_time()) fields.end_time = request.end_time();
  if (request.has_duration_seconds()) fields.duration_seconds = request.duration_seconds();
  if (request.has_node_list()) fields.node_list = request.node_list();
  if (request.has_node_count()) fields.node_count = request.node_count();
  if (request.has_tres()) fields.tres = request.tres();
  if (request.has_users()) fields.users = request.users();
  if (request.has_accounts()) fields.accounts = request.accounts();
  if (request.has_flags()) fields.flags = request.flags();
  if (request.has_partition()) fields.partition = request.partition();
  return fields;
}

}  // namespace

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
  return ChangeReservation(context,
                           drover::ctld::CreateReservation{0, CallerOf(request->caller()),
                                                           request->name(), FieldsOf(*request)},
                           reply);
}

ControllerService::Reactor* ControllerService::UpdateReservation(
    Context* context, const v1::ReservationRequest* request, v1::ReservationReply* reply) {
  if (request->name().empty())
    return Finished(context, Invalid("Requested reservation is invalid (give its name)"));
  return ChangeReservation(context,
                           drover::ctld::UpdateReservation{0, CallerOf(request->caller()),
                                                           request->name(), FieldsOf(*request)},
                           reply);
}

ControllerService::Reactor* ControllerService::DeleteReservation(
    Context* context, const v1::DeleteReservationRequest* request, v1::ActionReply* reply) {
  return Act(context,
             drover::ctld::DeleteReservation{0, CallerOf(request->caller()), request->name()},
             reply);
}

ControllerService::Reactor* ControllerService::ListReservations(Context* context,
                                                                const v1::ReservationQuery* query,
                                                                v1::ReservationList* reply) {
  return Query(context, [this, query, reply] { return DoListReservations(query, reply); });
}

grpc::Status ControllerService::DoListReservations(const v1::ReservationQuery* query,
                                                   v1::ReservationList* reply) {
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  reply->set_time(snapshot->time);
  if (!snapshot->reservations) return grpc::Status::OK;
  for (const auto& [name, reservation] : *snapshot->reservations)
    if (query->name().empty() || query->name() == name)
      ToProto(reservation, *snapshot->cluster, reply->add_reservations());
  if (!query->name().empty() && reply->reservations_size() == 0)
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "Reservation " + query->name() + " not found");
  return grpc::Status::OK;
}

ControllerService::Reactor* ControllerService::Top(Context* context, const v1::TopRequest* request,
                                                   v1::ActionReply* reply) {
  if (request->jobs_size() == 0) return Finished(context, Invalid("Invalid job id specified"));
  TopJobs event{0, CallerOf(request->caller()), {}};
  for (const auto& job : request->jobs())
    event.jobs.emplace_back(job.array_job_id(), job.task_id());
  return Act(context, std::move(event), reply);
}

ControllerService::Reactor* ControllerService::Reconfigure(Context* context,
                                                           const v1::ReconfigureRequest* request,
                                                           v1::ActionReply* reply) {
  if (conf_path_.empty())
    return Finished(context, Invalid("this controller was started without a slurm.conf path"));
  // Read on a query thread: the engine thread only swaps the result in.
  return Query(context, [this, caller = CallerOf(request->caller()), reply] {
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

ControllerService::Reactor* ControllerService::Ping(Context* context, const v1::PingRequest*,
                                                    v1::PingReply* reply) {
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  reply->set_cluster_name(snapshot->cluster->settings.cluster_name);
  reply->set_host(host);
  reply->set_time(snapshot->time);
  reply->set_jobs(snapshot->jobs.size());
  return Finished(context, grpc::Status::OK);
}

ControllerService::Reactor* ControllerService::Register(Context* context,
                                                        const v1::RegisterRequest* request,
                                                        v1::RegisterReply*) {
  int node = loop_.snapshot()->cluster->FindNode(request->node());
  if (node < 0)
    return Finished(context,
                    Invalid("node " + request->node() + " is not in this cluster's slurm.conf"));
  if (agents_ && !request->address().empty()) agents_->SetAddress(node, request->address());
  NodeRegistered event{request->node(), {}};
  event.running_jobs.assign(request->running_jobs().begin(), request->running_jobs().end());
  if (request->cpus() || request->memory_mb() || !request->gpu_source().empty())
    event.resources = NodeResources{request->cpus(), request->memory_mb(), request->gpus()};
  return Tell(context, std::move(event));
}

ControllerService::Reactor* ControllerService::Heartbeat(Context* context,
                                                         const v1::HeartbeatRequest* request,
                                                         v1::HeartbeatReply* reply) {
  // After a controller restart every node waits for its agent to register again.
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  int node = snapshot->cluster->FindNode(request->node());
  if (node < 0)
    return Finished(context,
                    Invalid("node " + request->node() + " is not in this cluster's slurm.conf"));
  if (static_cast<size_t>(node) < snapshot->nodes.size() && !snapshot->nodes[node].registered)
    reply->set_reregister(true);
  return Tell(context, drover::ctld::Heartbeat{request->node(), request->healthy(),
                                               request->health_output()});
}

ControllerService::Reactor* ControllerService::JobEnded(Context* context,
                                                        const v1::JobEndedRequest* request,
                                                        v1::JobEndedReply*) {
  // The reply leaves after the end is committed: the agent may then forget it.
  drover::ctld::JobEnded event{
      request->job_id(),        request->node(),          request->exit_code(),
      request->signal(),        request->out_of_memory(), request->prolog_failed(),
      request->epilog_failed(), request->restart_count(), request->reason(),
      request->cpu_seconds(),   request->max_rss_mib()};
  return Tell(context, std::move(event));
}

}  // namespace drover::ctld
