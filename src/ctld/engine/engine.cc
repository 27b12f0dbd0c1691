// The engine's core: batching, copy-on-write job records, snapshots, and the helpers every
// handler shares. Handlers live in engine_jobs.cc, engine_nodes.cc and engine_cycle.cc.
#include "ctld/engine/engine.h"

#include <algorithm>

namespace drover::ctld {

bool JobFilter::empty() const {
  return job_ids.empty() && array_tasks.empty() && user.empty() && name.empty() &&
         partition.empty() && !state && !uid && account.empty() && qos.empty() &&
         reservation.empty() && nodes.empty() && !wckey;
}

bool Caller::InGroup(uint32_t group) const {
  return group == gid || std::find(groups.begin(), groups.end(), group) != groups.end();
}

bool Caller::InGroupNamed(const std::string& name) const {
  return std::find(group_names.begin(), group_names.end(), name) != group_names.end();
}

int64_t MinCycleInterval(const EngineOptions& options, const ClusterConfig& cluster) {
  return options.min_cycle_interval_seconds
             ? options.min_cycle_interval_seconds
             : cluster.settings.scheduler_params.sched_min_interval_us / 1'000'000;
}

std::string NodeStateName(const NodeStatus& node, bool fully_allocated) {
  std::string state;
  if (node.down) {
    state = "DOWN";
  } else if (!node.registered) {
    state = "UNKNOWN";
  } else if (node.drain && node.fail) {
    state = node.jobs.empty() ? "FAIL" : "FAILING";
  } else if (node.drain) {
    state = node.jobs.empty() ? "DRAINED" : "DRAINING";
  } else if (node.jobs.empty()) {
    state = "IDLE";
  } else {
    state = fully_allocated ? "ALLOCATED" : "MIXED";
  }
  if (node.reboot_requested) state += "+REBOOT_REQUESTED";
  if (node.reboot_issued) state += "+REBOOT_ISSUED";
  if (node.not_responding) state += "*";
  return state;
}

Engine::Engine(const ClusterConfig& cluster, const Clock& clock, EngineOptions options)
    : Engine(std::shared_ptr<const ClusterConfig>(std::shared_ptr<void>(), &cluster), clock,
             options) {}

Engine::Engine(std::shared_ptr<const ClusterConfig> shared, const Clock& clock,
               EngineOptions options)
    : config_(std::move(shared)),
      base_(config_),
      clock_(clock),
      options_(options),
      nodes_(config_->nodes.size()),
      next_job_id_(config_->settings.first_job_id) {
  const ClusterConfig& cluster = *config_;
  min_cycle_interval_seconds_ = MinCycleInterval(options_, cluster);
  priorities_ = std::make_shared<std::vector<sched::PriorityFactors>>();
  fair_share_ = std::make_shared<const sched::FairShare>();
  reservations_ = std::make_shared<ReservationMap>();
  plan_ = std::make_shared<const std::vector<sched::PlannedStart>>();
  last_accrual_ = clock_.Now();
  accounting_ =
      std::make_shared<const acct::Database>(acct::Database::Initial(AccountingCluster()));
  RebuildAccounting();
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const NodeConfig& config = cluster.nodes[i];
    nodes_[i].last_heard = clock_.Now();
    if (config.state == "DOWN" || config.state == "FAIL") nodes_[i].down = true;
    if (config.state == "DRAIN" || config.state == "FAIL") nodes_[i].drain = true;
    nodes_[i].reason = config.reason;
  }
}

EngineOutput Engine::Apply(std::vector<Event> events, bool may_schedule) {
  EngineOutput out;
  for (const Event& event : events) std::visit([&](const auto& e) { On(e, out); }, event);
  MergeRegisteredGpus(out);
  if (may_schedule) MaybeSchedule(out);
  MailChanges(out);
  std::sort(out.changed_jobs.begin(), out.changed_jobs.end());
  out.changed_jobs.erase(std::unique(out.changed_jobs.begin(), out.changed_jobs.end()),
                         out.changed_jobs.end());
  std::sort(out.changed_nodes.begin(), out.changed_nodes.end());
  out.changed_nodes.erase(std::unique(out.changed_nodes.begin(), out.changed_nodes.end()),
                          out.changed_nodes.end());
  std::sort(out.changed_reservations.begin(), out.changed_reservations.end());
  out.changed_reservations.erase(
      std::unique(out.changed_reservations.begin(), out.changed_reservations.end()),
      out.changed_reservations.end());
  return out;
}

std::shared_ptr<const Snapshot> Engine::Publish() const {
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->time = clock_.Now();
  snapshot->cluster = config_;
  snapshot->jobs = jobs_.Share();
  snapshot->nodes = nodes_;
  snapshot->priorities = priorities_;
  snapshot->priority_by_id = priority_by_id_;
  snapshot->fair_share = fair_share_;
  snapshot->reservations = reservations_;
  snapshot->plan = plan_;
  snapshot->associations = associations_;
  snapshot->accounting = accounting_;
  snapshot->next_job_id = next_job_id_;
  snapshot->cycles = cycles_;
  snapshot->submitted_total = submitted_total_;
  snapshot->finished_total = finished_total_;
  snapshot->started_total = started_total_;
  snapshot->backfilled_total = backfilled_total_;
  snapshot->considered_total = considered_total_;
  snapshot->waits = waits_;
  snapshot->last_cycle_considered = priorities_ ? priorities_->size() : 0;
  return snapshot;
}

void Engine::Restore(std::vector<Job> jobs, uint64_t next_job_id) {
  next_job_id_ = std::max(next_job_id, next_job_id_);
  for (Job& job : jobs) {
    uint64_t id = job.spec.job_id;
    next_job_id_ = std::max(next_job_id_, id + 1);
    if (job.spec.array_job_id) array_tasks_[{job.spec.array_job_id, job.spec.array_task_id}] = id;
    Association(job.spec.account, job.spec.user);
    if (!IsFinal(job.state)) CountActive(job.spec, 1);
    // A suspended job keeps its allocation (Release frees it when the job ends).
    if (job.state == JobState::kRunning || job.state == JobState::kSuspended)
      for (const sched::NodeAllocation& part : job.allocation.nodes)
        nodes_[part.node].jobs.insert(id);
    auto record = std::make_shared<Job>(std::move(job));
    record->revision.Set(++revisions_);  // the record's own: a copy starts without one
    jobs_.Set(id, std::move(record));
  }
  schedule_requested_ = true;
}

void Engine::RestoreNode(int node, const NodeStatus& status) {
  std::set<uint64_t> jobs = std::move(nodes_[node].jobs);
  nodes_[node] = status;
  nodes_[node].jobs = std::move(jobs);
  nodes_[node].registered = false;  // until its agent registers again
  nodes_[node].last_heard = clock_.Now();
  if (status.weight || status.features || status.active_features) {
    auto next = std::make_shared<ClusterConfig>(*config_);
    ApplyNodeOverrides(status, next->nodes[node]);
    config_ = std::move(next);
  }
}

void Engine::RestoreUsage(const std::string& account, const std::string& user,
                          const std::string& usage) {
  sched::Association& association = associations_[Association(account, user)];
  ParseUsage(usage, association.usage, association.used);
}

void Engine::RestoreQosUsage(const std::string& qos, const std::string& usage) {
  for (sched::Qos& entry : qos_) {
    double billing = 0;
    if (entry.name == qos) ParseUsage(usage, billing, entry.used);
  }
}

const Job* Engine::FindJob(uint64_t id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second.get();
}

Job& Engine::Mutable(uint64_t id, EngineOutput& out) {
  out.changed_jobs.push_back(id);
  NoteForMail(*jobs_.at(id));
  return MutableTransient(id, out);
}

Job& Engine::MutableTransient(uint64_t id, EngineOutput& out) {
  out.republished_jobs.push_back(id);
  auto copy = std::make_shared<Job>(*jobs_.at(id));
  copy->revision.Set(++revisions_);
  jobs_.Set(id, copy);
  return *copy;
}

bool Engine::MayAct(const Caller& caller, const Job& job) const {
  return IsOperator(caller) || caller.uid == job.spec.uid;
}

bool JobMatches(const Job& job, const JobFilter& filter, const ClusterConfig& cluster) {
  if (!filter.user.empty() && job.spec.user != filter.user) return false;
  if (filter.uid && job.spec.uid != *filter.uid) return false;
  if (!filter.name.empty() && job.spec.name != filter.name) return false;
  if (!filter.partition.empty() &&
      (job.partition < 0 || static_cast<size_t>(job.partition) >= cluster.partitions.size()
           ? job.spec.partitions.empty() || job.spec.partitions.front() != filter.partition
           : cluster.partitions[job.partition].name != filter.partition))
    return false;
  if (!filter.account.empty() && job.spec.account != filter.account) return false;
  if (!filter.qos.empty() && (job.spec.qos.empty() ? "normal" : job.spec.qos) != filter.qos)
    return false;
  if (!filter.reservation.empty() && job.spec.reservation != filter.reservation) return false;
  if (filter.wckey) return false;
  if (!filter.nodes.empty()) {
    auto on = [&](const sched::NodeAllocation& part) {
      return static_cast<size_t>(part.node) < cluster.nodes.size() &&
             std::find(filter.nodes.begin(), filter.nodes.end(),
                       cluster.nodes[static_cast<size_t>(part.node)].name) != filter.nodes.end();
    };
    if (std::none_of(job.allocation.nodes.begin(), job.allocation.nodes.end(), on)) return false;
  }
  return !filter.state || job.state == *filter.state;
}

std::vector<uint64_t> Engine::Select(const JobFilter& filter) const {
  std::vector<uint64_t> ids;
  auto matches = [&](const Job& job) { return JobMatches(job, filter, cluster()); };
  for (uint64_t id : filter.job_ids) {
    if (auto it = jobs_.find(id); it != jobs_.end() && matches(*it->second)) ids.push_back(id);
    // An array job's ID names every task of the array.
    for (auto it = array_tasks_.lower_bound({id, 0});
         it != array_tasks_.end() && it->first.first == id; ++it)
      if (it->second != id && matches(*jobs_.at(it->second))) ids.push_back(it->second);
  }
  for (const auto& task : filter.array_tasks)
    if (auto it = array_tasks_.find(task);
        it != array_tasks_.end() && matches(*jobs_.at(it->second)))
      ids.push_back(it->second);
  if (filter.job_ids.empty() && filter.array_tasks.empty())
    for (const auto& [id, job] : jobs_)
      if (matches(*job)) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

void Engine::Release(Job& job) {
  // The time since the last accrual is charged now: a job that ends between two ticks pays
  // for all of its run.
  Charge(job, clock_.Now() - std::max(last_accrual_, job.start_time));
  for (const sched::NodeAllocation& part : job.allocation.nodes)
    nodes_[part.node].jobs.erase(job.spec.job_id);
  schedule_requested_ = true;
}

void Engine::Finish(Job& job, JobState state) {
  if (job.state == JobState::kRunning || job.state == JobState::kSuspended) Release(job);
  if (!IsFinal(job.state)) CountActive(job.spec, -1);
  job.state = state;
  ++finished_total_[state];
  job.end_time = clock_.Now();
  // Steps srun has not reported ended with their job.
  for (Step& step : job.steps)
    if (step.end_time == 0) {
      step.end_time = job.end_time;
      step.state = state == JobState::kCompleted ? JobState::kCompleted : JobState::kCancelled;
    }
  // A job timed out by an accounting limit keeps the limit as its reason (EnforceRunningLimits).
  if (state != JobState::kTimeout) job.reason = sched::PendingReason::kNone;
}

sched::JobOutcome Engine::Find(uint64_t job_id) const {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) {
    auto purged = purged_outcomes_.find(job_id);
    return purged == purged_outcomes_.end() ? sched::JobOutcome{} : purged->second;
  }
  const Job& job = *it->second;
  using State = sched::JobOutcome::State;
  State state = State::kFailed;
  switch (job.state) {
    case JobState::kPending:
      state = State::kPending;
      break;
    case JobState::kRunning:
    case JobState::kSuspended:
    case JobState::kCompleting:
      state = State::kRunning;
      break;
    case JobState::kCompleted:
      state = State::kCompleted;
      break;
    case JobState::kCancelled:
      state = State::kCancelled;
      break;
    default:
      state = State::kFailed;
      break;
  }
  return {state, job.start_time, job.end_time};
}

sched::JobOutcome Engine::FindArrayTask(uint64_t array_job_id, uint32_t task_id) const {
  auto it = array_tasks_.find({array_job_id, task_id});
  return it == array_tasks_.end() ? sched::JobOutcome{} : Find(it->second);
}

int Engine::Association(const std::string& account, const std::string& user) {
  // Until accounts are managed explicitly, jobs' accounts and users form the tree.
  auto account_it = association_index_.find({account, ""});
  if (account_it == association_index_.end()) {
    sched::Association made;
    made.account = account;
    made.parent = 0;
    associations_.push_back(std::move(made));
    active_by_association_.resize(associations_.size());
    account_it =
        association_index_
            .emplace(std::pair(account, std::string()), static_cast<int>(associations_.size() - 1))
            .first;
  }
  auto user_it = association_index_.find({account, user});
  if (user_it == association_index_.end()) {
    sched::Association made;
    made.account = account;
    made.user = user;
    made.parent = account_it->second;
    associations_.push_back(std::move(made));
    active_by_association_.resize(associations_.size());
    user_it = association_index_
                  .emplace(std::pair(account, user), static_cast<int>(associations_.size() - 1))
                  .first;
  }
  return user_it->second;
}

}  // namespace drover::ctld
