// Time passing: time limits (SIGTERM at the limit plus OverTimeLimit, SIGKILL KillWait later),
// --signal before the limit, node liveness, fair-share usage (charged in billing TRES x seconds
// and decayed by PriorityDecayHalfLife), purging finished jobs from the live queue after
// MinJobAge, and scheduling cycles.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <span>

#include <fmt/format.h>

#include "common/text.h"
#include "ctld/engine/engine.h"
#include "sched/billing.h"

namespace drover::ctld {

void Engine::On(const Tick&, EngineOutput& out) {
  // The jobs holding nodes as the tick begins: none starts during it, and each check below
  // looks at a job's state again, so that one a check before ended is skipped.
  const std::vector<uint64_t> holding = HoldingJobs();
  EnforcePreemptions(holding, out);  // first: a victim whose grace is over is requeued
  EnforceTimeLimits(holding, out);
  EnforceRunningLimits(holding, out);
  KillCancelledSteps(holding, out);
  CheckNodeLiveness(out);
  CheckReboots(out);
  IssueReboots(out);  // to the nodes whose jobs have ended
  AccrueUsage(holding);
  out.changed_usage = true;
  PurgeOldJobs(out);
  ExpireReservations(out);
}

std::vector<uint64_t> Engine::HoldingJobs() const {
  std::vector<uint64_t> ids;
  for (const NodeStatus& node : nodes_) ids.insert(ids.end(), node.jobs.begin(), node.jobs.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

void Engine::EnforceTimeLimits(const std::vector<uint64_t>& holding, EngineOutput& out) {
  int64_t now = clock_.Now();
  const ClusterSettings& s = cluster().settings;
  int64_t over = s.over_time_limit_minutes >= kUnlimitedSeconds / 60
                     ? kUnlimitedSeconds
                     : s.over_time_limit_minutes * 60;
  std::vector<uint64_t> running;
  for (uint64_t id : holding)
    if (const Job& job = *jobs_.at(id);
        job.state == JobState::kRunning && job.end_time < kUnlimitedSeconds)
      running.push_back(id);
  for (uint64_t id : running) {
    JobPtr held = jobs_.at(id);  // keeps the record alive across Mutable()
    const Job& current = *held;
    std::vector<int> nodes = current.NodeIndexes();
    if (current.spec.signal_number && !current.user_signal_sent &&
        now >= current.end_time - current.spec.signal_seconds) {
      Job& job = Mutable(id, out);
      job.user_signal_sent = true;
      out.effects.push_back(
          SignalJob{id, nodes, current.spec.signal_number, UserSignalScope(current.spec)});
    }
    MailTimeLimits(id, current, now, out);
    if (over < kUnlimitedSeconds && !current.time_limit_signalled_at &&
        now >= current.end_time + over) {
      Job& job = Mutable(id, out);
      job.time_limit_signalled_at = now;
      out.effects.push_back(TerminateJob{id, nodes, s.kill_wait_seconds});
    }
  }
}

// AccountingStorageEnforce=limits on running jobs, as Slurm's acct_policy_job_time_out: a job
// whose GrpTRESMins budget (or GrpWall) is used up, or whose own TRES x run time passes a
// MaxTRESMinsPerJob, is timed out; its Reason names the limit. Without such limits (or without
// `limits`, which leaves every limit unset) nothing is looked at; with `safe` neither, as in
// Slurm: a job was started only if it could finish within its budgets, and a limit lowered
// since does not end it.
void Engine::EnforceRunningLimits(const std::vector<uint64_t>& holding, EngineOutput& out) {
  if (EnforcedAccountingOf(cluster().settings).safe) return;
  auto has_budget = [](const sched::Limits& limits) {
    return !limits.grp_tres_mins.empty() || !limits.max_tres_mins_per_job.empty() ||
           limits.grp_wall_seconds != sched::kNoLimit;
  };
  bool any = std::any_of(associations_.begin(), associations_.end(),
                         [&](const sched::Association& a) { return has_budget(a.limits); }) ||
             std::any_of(qos_.begin(), qos_.end(),
                         [&](const sched::Qos& q) { return has_budget(q.limits); });
  if (!any) return;
  int64_t now = clock_.Now();
  sched::LimitTracker tracker(associations_, qos_);
  std::vector<std::pair<uint64_t, sched::PendingReason>> over;
  for (uint64_t id : holding) {
    const JobPtr& job = jobs_.at(id);
    if (job->state != JobState::kRunning || job->time_limit_signalled_at ||
        job->cancel_requested_at || job->preempted_at || job->partition < 0)
      continue;
    const PartitionConfig& partition = cluster().partitions[job->partition];
    sched::JobUsage usage = sched::UsageOf(cluster(), job->allocation);
    usage.billing = static_cast<uint64_t>(
        std::ceil(sched::BillingOf(partition.billing_weights, usage, job->spec.gpu_type)));
    int partition_qos = partition.qos.empty() ? -1 : std::max(tracker.FindQos(partition.qos), -1);
    auto found = association_index_.find({job->spec.account, job->spec.user});
    int association = found == association_index_.end() ? -1 : found->second;
    int64_t run = now - job->start_time - job->suspended_seconds;
    sched::PendingReason reason = tracker.CheckRunning(std::max(tracker.FindQos(job->spec.qos), -1),
                                                       partition_qos, association, usage, run);
    if (reason != sched::PendingReason::kNone) over.emplace_back(id, reason);
  }
  for (const auto& [id, reason] : over) {
    Job& job = Mutable(id, out);
    job.time_limit_signalled_at = now;
    job.reason = reason;
    out.effects.push_back(
        TerminateJob{id, job.NodeIndexes(), cluster().settings.kill_wait_seconds});
  }
}

void Engine::KillCancelledSteps(const std::vector<uint64_t>& holding, EngineOutput& out) {
  int64_t now = clock_.Now();
  std::vector<uint64_t> due;
  auto is_due = [now](const Step& step) {
    return step.kill_at && step.end_time == 0 && now >= step.kill_at;
  };
  for (uint64_t id : holding)
    if (const Job& job = *jobs_.at(id);
        (job.state == JobState::kRunning || job.state == JobState::kSuspended) &&
        std::any_of(job.steps.begin(), job.steps.end(), is_due))
      due.push_back(id);
  for (uint64_t id : due) {
    Job& job = MutableTransient(id, out);
    for (Step& step : job.steps) {
      if (!is_due(step)) continue;
      step.kill_at = 0;
      std::vector<int> nodes = step.nodes.empty() ? job.NodeIndexes() : step.nodes;
      out.effects.push_back(SignalJob{id, nodes, SIGKILL, SignalScope::kSteps, {step.step_id}});
    }
  }
}

void Engine::AccrueUsage(const std::vector<uint64_t>& holding) {
  int64_t now = clock_.Now();
  int64_t elapsed = now - last_accrual_;
  if (elapsed <= 0) return;
  last_accrual_ = now;
  ResetUsageIfDue();
  int64_t half_life = cluster().settings.decay_half_life_seconds;
  double decay = sched::DecayUsage(1.0, elapsed, half_life);
  for (sched::Association& association : associations_) {
    association.usage *= decay;
    association.used.Scale(decay);
  }
  // A NoDecay QOS keeps its usage: its GrpTRESMins is a budget that is not replenished.
  for (sched::Qos& qos : qos_)
    if (!(qos.flags & acct::kNoDecay)) qos.used.Scale(decay);
  for (uint64_t id : holding)
    if (const Job& job = *jobs_.at(id); job.state == JobState::kRunning)
      Charge(job, std::min(elapsed, now - job.start_time));
}

namespace {

// The start of the PriorityUsageResetPeriod period that holds `now`, in local time as Slurm
// counts it (weeks begin on Sunday); 0 for NONE and NOW.
int64_t PeriodStart(UsageResetPeriod period, int64_t now) {
  if (period == UsageResetPeriod::kNone || period == UsageResetPeriod::kNow) return 0;
  time_t clock = static_cast<time_t>(now);
  struct tm local {};
  localtime_r(&clock, &local);
  local.tm_sec = local.tm_min = local.tm_hour = 0;
  local.tm_isdst = -1;
  switch (period) {
    case UsageResetPeriod::kWeekly:
      local.tm_mday -= local.tm_wday;
      break;
    case UsageResetPeriod::kMonthly:
      local.tm_mday = 1;
      break;
    case UsageResetPeriod::kQuarterly:
      local.tm_mday = 1;
      local.tm_mon -= local.tm_mon % 3;
      break;
    case UsageResetPeriod::kYearly:
      local.tm_mday = 1;
      local.tm_mon = 0;
      break;
    default:
      break;
  }
  return static_cast<int64_t>(mktime(&local));
}

}  // namespace

void Engine::ResetUsageIfDue() {
  UsageResetPeriod period = cluster().settings.usage_reset;
  int64_t now = clock_.Now();
  bool due = false;
  if (period == UsageResetPeriod::kNow) {
    // NOW: once, when the controller starts with it (Slurm's advice: set it back afterwards).
    due = !usage_reset_now_done_;
    usage_reset_now_done_ = true;
  } else if (period != UsageResetPeriod::kNone) {
    int64_t start = PeriodStart(period, now);
    // A controller's first reading only notes the period; usage is cleared when one ends.
    if (last_usage_reset_ == 0) last_usage_reset_ = start;
    due = start > last_usage_reset_;
    if (due) last_usage_reset_ = start;
  }
  if (!due) return;
  usage_reset_changed_ = true;
  for (sched::Association& association : associations_) {
    association.usage = 0;
    association.used = sched::TresSeconds();
  }
  for (sched::Qos& qos : qos_)
    if (!(qos.flags & acct::kNoDecay)) qos.used = sched::TresSeconds();
}

void Engine::Charge(const Job& job, int64_t seconds) {
  if (job.partition < 0 || seconds <= 0) return;
  sched::JobUsage usage = sched::UsageOf(cluster(), job.allocation);
  double billing = sched::BillingOf(cluster().partitions[job.partition].billing_weights, usage,
                                    job.spec.gpu_type);
  // A QOS's UsageFactor scales what its jobs are charged (0: nothing).
  std::string qos_name = job.spec.qos.empty() ? "normal" : job.spec.qos;
  sched::Qos* qos = nullptr;
  for (sched::Qos& entry : qos_)
    if (entry.name == qos_name) qos = &entry;
  double factor = qos ? qos->usage_factor : 1.0;
  double time = factor * static_cast<double>(seconds);
  sched::TresSeconds used = sched::TresSecondsOf(usage, billing, time);
  sched::Association& association = associations_[Association(job.spec.account, job.spec.user)];
  association.usage += billing * time;
  association.used.Add(used);
  if (qos) qos->used.Add(used);
}

void Engine::PurgeOldJobs(EngineOutput& out) {
  int64_t now = clock_.Now();
  std::vector<uint64_t> old;
  for (const auto& [id, job] : jobs_)
    if (IsFinal(job->state) && now - job->end_time >= cluster().settings.min_job_age_seconds)
      old.push_back(id);
  for (uint64_t id : old) {
    purged_outcomes_[id] = Find(id);
    const Job& job = *jobs_.at(id);
    if (job.spec.array_job_id) array_tasks_.erase({job.spec.array_job_id, job.spec.array_task_id});
    out.purged_records.push_back(jobs_.at(id));
    uint64_t script = job.spec.array_job_id ? job.spec.array_job_id : id;
    jobs_.erase(id);
    out.purged_jobs.push_back(id);
    // An array's script serves every task: it goes with the last one.
    bool needed = false;
    if (job.spec.array_job_id) {
      auto it = array_tasks_.lower_bound({script, 0});
      needed = it != array_tasks_.end() && it->first.first == script;
    }
    if (needed) continue;
    // AccountingStoreFlags keeps them in the job history (sacct -B, --env-vars).
    if (!cluster().settings.store_job_script) out.dropped_scripts.push_back(script);
    if (!cluster().settings.store_job_env) out.dropped_environments.push_back(script);
  }
}

void Engine::MaybeSchedule(EngineOutput& out) {
  int64_t now = clock_.Now();
  int64_t periodic = cluster().settings.scheduler_params.sched_interval_seconds;
  bool due = (schedule_requested_ && now - last_cycle_ >= min_cycle_interval_seconds_) ||
             (periodic > 0 && now - last_cycle_ >= periodic);
  if (due) RunCycle(out);
}

const std::vector<sched::NodeMaxima>& Engine::Maxima() const {
  if (maxima_config_ != config_) {
    maxima_ = sched::MaximaOfPartitions(*config_);
    totals_ = sched::TotalsOf(*config_);
    maxima_config_ = config_;
  }
  return maxima_;
}

const sched::ClusterTotals& Engine::Totals() const {
  Maxima();  // computed with them
  return totals_;
}

std::vector<sched::NodeState> Engine::NodeStates() const {
  std::vector<sched::NodeState> states(nodes_.size(), sched::NodeState::kUp);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const NodeStatus& node = nodes_[i];
    if (node.down || !node.registered || node.reboot_issued)
      states[i] = sched::NodeState::kDown;
    else if (node.drain)
      states[i] = sched::NodeState::kDrain;
  }
  return states;
}

void Engine::RunCycle(EngineOutput& out) {
  int64_t now = clock_.Now();
  last_cycle_ = now;
  schedule_requested_ = false;
  ++cycles_;
  out.scheduled = true;
  sched::SchedulerInput input;
  input.cluster = config_.get();
  input.maxima = &Maxima();
  input.totals = &Totals();
  input.now = now;
  input.outcomes = this;
  input.associations = associations_;
  input.qos = qos_;
  input.node_states = NodeStates();
  input.reservations = SchedulerReservations();
  input.policy = options_.policy;
  input.safe_limits = EnforcedAccountingOf(cluster().settings).safe;
  ExpireDeadlines(out);
  ResumeSuspendedVictims(out);  // before anything else may take their cores
  kept_pool_.Begin(config_, input.node_states);
  for (const auto& [id, job] : jobs_) {
    if (job->state == JobState::kPending) input.pending.push_back(&job->spec);
    // Suspended jobs keep their resources: the scheduler sees them as running. A victim of
    // PreemptMode=SUSPEND keeps only its memory (its processes are stopped, not gone).
    if (job->state != JobState::kRunning && job->state != JobState::kSuspended) continue;
    sched::RunningJob running = RunningOf(*job);
    if (job->state == JobState::kSuspended && job->preempted_at) {
      running.shared_allocation = nullptr;
      running.allocation = job->allocation;
      for (sched::NodeAllocation& part : running.allocation.nodes) {
        part.cores.clear();
        part.gpus.clear();
        part.shares = 0;
      }
      running.allocation.exclusive = false;
    }
    kept_pool_.Add(running);
    input.running.push_back(std::move(running));
  }
  kept_pool_.End();
  input.running_pool = &kept_pool_;
  if (options_.check_kept_pool && !kept_pool_.MatchesFresh(input.running)) {
    fmt::print(stderr, "kept node pool differs from a fresh one at cycle {} ({} running jobs)\n",
               cycles_, input.running.size());
    std::abort();
  }
  sched::Schedule(input, last_result_);
  // The factors are handed to snapshots without copying them: this cycle's go into a buffer no
  // snapshot holds any longer (usually the one from two cycles ago), and that buffer's storage
  // goes back to the result for the next pass to fill without allocating.
  std::shared_ptr<std::vector<sched::PriorityFactors>> fresh;
  if (spare_priorities_.use_count() == 1) {
    std::atomic_thread_fence(std::memory_order_acquire);  // see JobTable::Writable
    fresh = std::move(spare_priorities_);
  } else {
    fresh = std::make_shared<std::vector<sched::PriorityFactors>>();
  }
  fresh->swap(last_result_.priorities);
  spare_priorities_ = std::move(priorities_);
  priorities_ = std::move(fresh);
  considered_total_ += priorities_ ? priorities_->size() : 0;
  // The pass took the waiting jobs in ID order (the table's), so its map from input to priority
  // order is an index by ID.
  priority_by_id_ =
      std::make_shared<const std::vector<uint32_t>>(std::move(last_result_.priority_of_input));
  last_result_.priority_of_input.clear();
  fair_share_ = std::make_shared<const sched::FairShare>(last_result_.fair_share);
  for (const sched::StartDecision& start : last_result_.started) ApplyStart(start, out);
  const auto& dependency_params = cluster().settings.dependency_params;
  const bool kill_invalid =
      std::any_of(dependency_params.begin(), dependency_params.end(),
                  [](const std::string& p) { return EqualsIgnoreCase(p, "kill_invalid_depend"); });
  for (const sched::PendingDecision& pending : last_result_.pending)
    ApplyPending(pending, kill_invalid, out);
  unseen_.clear();
  for (const sched::PreemptDecision& decision : last_result_.preempted) Preempt(decision, out);
  // The plan goes to readers as it is (by job ID), not into the job records: expected starts
  // move whenever a job ends early, and re-encoding 100,000 records for that would be waste.
  auto plan = std::make_shared<std::vector<sched::PlannedStart>>(std::move(last_result_.planned));
  std::sort(plan->begin(), plan->end(),
            [](const auto& a, const auto& b) { return a.job_id < b.job_id; });
  plan_ = std::move(plan);
}

void Engine::ApplyStart(const sched::StartDecision& start, EngineOutput& out) {
  int64_t now = clock_.Now();
  Job& job = Mutable(start.job_id, out);
  job.state = JobState::kRunning;
  job.reason = sched::PendingReason::kNone;
  job.partition = start.partition;
  job.allocation = start.allocation;
  job.gpu_uuids.clear();
  for (const sched::NodeAllocation& part : job.allocation.nodes) {
    const std::vector<GpuDevice>& gpus = cluster().nodes[part.node].gpus;
    std::vector<std::string> uuids;
    for (int index : part.gpus) {
      auto gpu = std::find_if(gpus.begin(), gpus.end(),
                              [&](const GpuDevice& device) { return device.index == index; });
      uuids.push_back(gpu != gpus.end() ? gpu->uuid : "");
    }
    if (std::any_of(uuids.begin(), uuids.end(), [](const auto& uuid) { return !uuid.empty(); }))
      job.gpu_uuids[part.node] = std::move(uuids);
  }
  job.start_time = now;
  ++started_total_;
  // A requeued job waits again from its last run's end, not from its submission.
  const int64_t waiting_since =
      std::max({job.spec.submit_time, job.spec.begin_time,
                job.history.empty() ? int64_t{0} : job.history.back().end_time});
  waits_.Observe(now - waiting_since);
  job.time_limit_seconds = start.time_limit_seconds;
  job.end_time = start.end_time;
  // --deadline: as Slurm, the job's time limit ends at its deadline at the latest.
  if (job.spec.deadline && job.end_time > job.spec.deadline) {
    job.time_limit_seconds = std::max<int64_t>(job.spec.deadline - now, 0);
    job.end_time = job.spec.deadline;
  }
  job.start_priority = start.priority;
  job.batch_node = start.batch_node;
  if (start.backfill) ++backfilled_total_;
  job.sched_by = start.backfill                ? "SchedBackfill"
                 : unseen_.count(start.job_id) ? "SchedSubmit"
                                               : "SchedMain";
  for (const auto& part : job.allocation.nodes) nodes_[part.node].jobs.insert(start.job_id);
  {
    const JobPtr& launched = jobs_.at(start.job_id);
    const bool known = accounting_ && accounting_->FindAccount(launched->spec.account) != nullptr;
    out.effects.push_back(
        Launch{start.job_id, launched, known ? launched->spec.account : std::string("other")});
  }
}

void Engine::ApplyPending(const sched::PendingDecision& pending, bool kill_invalid,
                          EngineOutput& out) {
  const Job& current = *jobs_.at(pending.job_id);
  bool invalid = pending.reason == sched::PendingReason::kDependencyNeverSatisfied;
  if (invalid && current.reason != pending.reason) Mail(current, kMailInvalidDepend, out);
  // A dependency that can never be satisfied cancels the job, as Slurm does, when the job asks
  // (--kill-on-invalid-dep=yes) or DependencyParameters=kill_invalid_depend does and the job
  // does not say no; otherwise it stays pending with DependencyNeverSatisfied.
  int asked = current.spec.kill_on_invalid_dep;
  if (invalid && (asked == 1 || (asked == 0 && kill_invalid))) {
    Job& job = Mutable(pending.job_id, out);
    Finish(job, JobState::kCancelled);
    job.reason = pending.reason;
    return;
  }
  if (current.reason == pending.reason) return;
  MutableTransient(pending.job_id, out).reason = pending.reason;
}

// Slurm's deadline_ok: a pending job that could start now is removed once now plus its minimum
// run (--time-min, else its time limit, else its partition's DefaultTime or MaxTime) passes its
// deadline. Jobs that could not start now anyway (held, before --begin, waiting on a
// dependency) are checked once they could.
void Engine::ExpireDeadlines(EngineOutput& out) {
  int64_t now = clock_.Now();
  std::vector<uint64_t> late;
  for (const auto& [id, job] : jobs_) {
    const JobSpec& spec = job->spec;
    if (job->state != JobState::kPending || !spec.deadline || spec.hold != HoldKind::kNone ||
        spec.begin_time > now || job->reason == sched::PendingReason::kDependency ||
        job->reason == sched::PendingReason::kDependencyNeverSatisfied)
      continue;
    int64_t least = spec.time_min_seconds ? spec.time_min_seconds : spec.time_limit_seconds;
    if (!least) {
      int p = spec.partitions.empty() ? cluster().DefaultPartition()
                                      : cluster().FindPartition(spec.partitions.front());
      if (p >= 0)
        least = cluster().partitions[p].default_time_seconds.value_or(
            cluster().partitions[p].max_time_seconds);
    }
    if (least <= 0 || least >= kUnlimitedSeconds || now + least <= spec.deadline) continue;
    late.push_back(id);
  }
  for (uint64_t id : late) {
    Job& job = Mutable(id, out);
    Finish(job, JobState::kDeadline);
    job.start_time = job.end_time;  // as Slurm, which starts and ends it at once
    job.exit_signal = 1;            // Slurm's raw exit status 1: "0:1"
    job.reason = sched::PendingReason::kDeadline;
  }
}

std::vector<sched::AdvanceReservation> Engine::SchedulerReservations() const {
  std::vector<sched::AdvanceReservation> out;
  for (const auto& [name, reservation] : *reservations_) {
    sched::AdvanceReservation& r = out.emplace_back();
    r.name = name;
    r.start_time = reservation.start_time;
    r.end_time = reservation.end_time;
    r.nodes = reservation.nodes;
    r.users = reservation.users;
    r.accounts = reservation.accounts;
    r.maint = reservation.Has("MAINT");
    r.flex = reservation.Has("FLEX");
    r.repeat_seconds = reservation.RepeatSeconds();
    r.partition = reservation.partition;
  }
  return out;
}

}  // namespace drover::ctld
