// Job events: submit (plain and arrays), cancel and signal, hold and release, requeue, and the
// end of a job reported by its agent. Each handler changes records through Mutable() so the
// batch knows what to persist.

#include <fmt/format.h>

#include <algorithm>
#include <csignal>

#include "common/array_spec.h"
#include "common/gres_conf.h"
#include "common/resource_limits.h"
#include "ctld/engine/engine.h"

namespace drover::ctld {
namespace {

Reply Error(uint64_t token, std::string message) {
  return Reply{token, false, std::move(message), {}, {}};
}

}  // namespace

std::string Engine::Validate(const JobSpec& spec, size_t tasks) const {
  const ClusterSettings& settings = cluster().settings;
  if (jobs_.size() + tasks > settings.max_job_count)
    return fmt::format(
        "Slurm temporarily unable to accept job (MaxJobCount={} reached); try "
        "again later",
        settings.max_job_count);
  // GPUs and their shares (shard, mps) are scheduled: another GRES (nic, ...) would be carried
  // and never given, so it is refused, in Slurm's words for a GRES it cannot give.
  int sharing = 0;
  for (const GresSpec& gres : spec.other_gres) {
    if (gres.name == "nvme") {
      if (std::none_of(cluster().nodes.begin(), cluster().nodes.end(),
                       [](const NodeConfig& node) { return !node.nvme.empty(); }))
        return "Invalid generic resource (gres) specification: nvme: no node has NVMe drives "
               "(slurm.conf Gres=nvme:N)";
      continue;
    }
    if (!IsGpuSharing(gres.name))
      return fmt::format(
          "Invalid generic resource (gres) specification: {}{}: Drover schedules gres/gpu, "
          "gres/shard, gres/mps and gres/nvme only; ask for GPUs with --gpus or --gres=gpu",
          gres.name, gres.type.empty() ? "" : ":" + gres.type);
    if (++sharing > 1)
      return "Invalid generic resource (gres) specification: ask for shard or mps once, not "
             "both (a job shares one GPU per node one way)";
    bool configured =
        std::any_of(cluster().nodes.begin(), cluster().nodes.end(),
                    [&](const NodeConfig& node) { return node.gpu_sharing == gres.name; });
    if (!configured)
      return fmt::format(
          "Invalid generic resource (gres) specification: {}: no node shares its GPUs as {} "
          "(slurm.conf Gres=gpu:N,{}:M); ask for whole GPUs with --gpus",
          gres.name, gres.name, gres.name);
    if (spec.gpus || spec.gpus_per_node || spec.gpus_per_task || !spec.gpu_type.empty())
      return fmt::format(
          "Invalid generic resource (gres) specification: {} with GPUs: a job asks for whole "
          "GPUs or for {} of one, not both",
          gres.name, gres.name == "mps" ? "MPS units" : "shards");
  }
  if (Status ok = sched::CheckSatisfiable(cluster(), spec, Maxima()); !ok) return ok.error();
  if (!spec.reservation.empty()) {
    auto reservation = reservations_->find(spec.reservation);
    if (reservation == reservations_->end())
      return fmt::format(
          "Requested reservation is invalid (no reservation {}; see scontrol "
          "show reservation)",
          spec.reservation);
    if (!reservation->second.Admits(spec.user, spec.account))
      return "Access denied to requested reservation";
  }
  for (const DependencyTerm& term : spec.dependency.terms) {
    if (term.type != DependencyType::kSingleton && !jobs_.count(term.job_id) &&
        !purged_outcomes_.count(term.job_id))
      return fmt::format("Job dependency problem: job {} is not known to this controller",
                         term.job_id);
    // N_T: a live array N must have task T.
    if (term.array_task_id != kNoArrayTask && jobs_.count(term.job_id) &&
        !array_tasks_.count({term.job_id, term.array_task_id}))
      return fmt::format("Job dependency problem: job {}_{} is not known to this controller",
                         term.job_id, term.array_task_id);
  }
  if (settings.enforce_part_limits == EnforcePartLimits::kNo || spec.time_limit_seconds == 0)
    return "";
  // A QOS with Flags=PartitionTimeLimit may run past its partitions' MaxTime.
  if (const acct::Qos* qos = accounting_->FindQos(spec.qos);
      qos && (qos->flags & acct::kPartitionTimeLimit) && EnforcedAccountingOf(settings).limits)
    return "";
  std::vector<int> partitions;
  for (const std::string& name : spec.partitions)
    partitions.push_back(cluster().FindPartition(name));
  if (spec.partitions.empty()) partitions.push_back(cluster().DefaultPartition());
  for (int p : partitions) {
    if (p < 0 || spec.time_limit_seconds <= cluster().partitions[p].max_time_seconds) continue;
    return fmt::format(
        "Requested time limit is invalid (missing or exceeds some limit): "
        "partition {} has MaxTime={}",
        cluster().partitions[p].name, FormatDuration(cluster().partitions[p].max_time_seconds));
  }
  return "";
}

// --mail-type without --mail-user mails the job's user (at MailDomain), named when the job is
// submitted or updated, as Slurm names it (scontrol's MailUser=).
void Engine::NameMailUser(JobSpec& spec) const {
  if (!spec.mail_type.empty() && spec.mail_user.empty())
    spec.mail_user = cluster().settings.mail_domain.empty()
                         ? spec.user
                         : spec.user + "@" + cluster().settings.mail_domain;
}

void Engine::On(const SubmitJob& event, EngineOutput& out) {
  // Permission first: the owner and partitions are settled before the array is expanded.
  JobSpec spec = event.spec;
  if (std::string refusal = Admit(event.caller, spec); !refusal.empty())
    return out.effects.push_back(Error(event.token, std::move(refusal)));
  NameMailUser(spec);
  // MailProg gets the recipient as an argument: nothing that a mail program could read as an
  // option, a pipe or a file address.
  if (!spec.mail_user.empty() && !IsSafeMailUser(spec.mail_user))
    return out.effects.push_back(
        Error(event.token, "Invalid --mail-user: use a mail address or a user name"));
  std::vector<uint32_t> tasks;
  uint32_t max_running = 0;
  if (!event.array.empty()) {
    auto array = ParseArraySpec(event.array, cluster().settings.max_array_size);
    if (!array) return out.effects.push_back(Error(event.token, array.error()));
    tasks = std::move(array->indexes);
    max_running = array->max_running;
  }
  if (std::string error = Validate(spec, std::max<size_t>(tasks.size(), 1)); !error.empty())
    return out.effects.push_back(Error(event.token, std::move(error)));
  if (std::string error = CheckSubmitLimits(spec, std::max<size_t>(tasks.size(), 1));
      !error.empty())
    return out.effects.push_back(Error(event.token, std::move(error)));
  uint64_t first = next_job_id_;
  size_t count = std::max<size_t>(tasks.size(), 1);
  // The environment (often kilobytes) goes to the store with the script, not into the record
  // kept in memory; the launch reads both back.
  JobSpec shared = std::move(spec);
  std::vector<std::string> environment = std::move(shared.environment);
  shared.environment.clear();
  // So do the propagated limits (16 by default), which every listing would otherwise parse.
  for (const std::string& limit : shared.rlimits)
    environment.push_back(std::string(kStoredLimitPrefix) + limit);
  shared.rlimits.clear();
  for (size_t i = 0; i < count; ++i) {
    auto job = std::make_shared<Job>();
    job->spec = shared;
    job->spec.job_id = next_job_id_++;
    job->spec.submit_time = clock_.Now();
    job->spec.requeue = shared.requeue && cluster().settings.job_requeue;
    if (!tasks.empty()) {
      job->spec.array_job_id = first;
      job->spec.array_task_id = tasks[i];
      job->spec.array_max_running = max_running;
      array_tasks_[{first, tasks[i]}] = job->spec.job_id;
    }
    Association(job->spec.account, job->spec.user);
    CountActive(job->spec, 1);
    out.changed_jobs.push_back(job->spec.job_id);
    uint64_t id = job->spec.job_id;
    unseen_.insert(id);
    job->revision.Set(++revisions_);
    jobs_.Set(id, std::move(job));
    ++submitted_total_;
  }
  out.new_scripts.push_back({first, event.script, std::move(environment)});
  out.effects.push_back(Reply{event.token, true, "", {first}, {}});
  schedule_requested_ = true;
}

void Engine::ActOnJobs(uint64_t token, const Caller& caller, const JobFilter& filter,
                       EngineOutput& out, const JobAction& act) {
  std::vector<uint64_t> ids = Select(filter);
  if (ids.empty()) return out.effects.push_back(Error(token, "Invalid job id specified"));
  Reply reply{token, true, "", {}, {}};
  for (uint64_t id : ids) {
    JobPtr held = jobs_.at(id);  // keeps the record alive while `act` replaces it
    if (!MayAct(caller, *held)) {
      reply = Error(token, "Access/permission denied");
      continue;
    }
    std::optional<std::string> refused = act(id, *held, ids.size());
    if (!refused) {
      reply.job_ids.push_back(id);
    } else if (!refused->empty()) {
      reply = Error(token, std::move(*refused));
    }
  }
  out.effects.push_back(std::move(reply));
}

// scancel N.S: the step's tasks get the signal (a cancel: SIGCONT and SIGTERM); the job goes on.
void Engine::CancelSteps(const CancelJobs& event, EngineOutput& out) {
  Reply reply{event.token, true, "", {}, {}};
  for (const StepTarget& target : event.steps) {
    uint64_t id = target.job_id;
    if (target.task_id != kNoArrayTask) {
      auto task = array_tasks_.find({target.job_id, target.task_id});
      id = task == array_tasks_.end() ? 0 : task->second;
    }
    auto it = jobs_.find(id);
    if (it == jobs_.end()) {
      reply = Error(event.token, "Invalid job id specified");
      continue;
    }
    const Job& job = *it->second;
    if (!MayAct(event.caller, job)) {
      reply = Error(event.token, "Access/permission denied");
      continue;
    }
    auto step = std::find_if(job.steps.begin(), job.steps.end(),
                             [&](const Step& s) { return s.step_id == target.step_id; });
    bool active = job.state == JobState::kRunning || job.state == JobState::kSuspended;
    if (!active || step == job.steps.end() || step->end_time != 0) {
      reply = Error(event.token, "Job/step already completing or completed");
      continue;
    }
    std::vector<int> nodes = step->nodes.empty() ? job.NodeIndexes() : step->nodes;
    if (event.signal == 0) {
      out.effects.push_back(SignalJob{id, nodes, SIGCONT, SignalScope::kSteps, {target.step_id}});
      // As Slurm: SIGKILL KillWait seconds after the SIGTERM, if the step has not ended.
      Job& changed = MutableTransient(id, out);
      for (Step& s : changed.steps)
        if (s.step_id == target.step_id)
          s.kill_at = clock_.Now() + cluster().settings.kill_wait_seconds;
    }
    out.effects.push_back(SignalJob{
        id, nodes, event.signal ? event.signal : SIGTERM, SignalScope::kSteps, {target.step_id}});
    reply.job_ids.push_back(id);
  }
  out.effects.push_back(std::move(reply));
}

void Engine::On(const CancelJobs& event, EngineOutput& out) {
  if (!event.steps.empty()) return CancelSteps(event, out);
  ActOnJobs(
      event.token, event.caller, event.filter, out,
      [&](uint64_t id, const Job& current, size_t selected) -> std::optional<std::string> {
        if (IsFinal(current.state))
          return !event.filter.job_ids.empty() && selected == 1
                     ? "Job/step already completing or completed"
                     : "";
        std::vector<int> nodes = current.NodeIndexes();
        bool active = current.state == JobState::kRunning || current.state == JobState::kSuspended;
        // SIGKILL to a job (not to its batch shell alone) cancels it, as in Slurm.
        bool kill = event.signal == SIGKILL && event.scope != SignalScope::kBatch;
        if (event.signal != 0 && !kill) {
          if (active) out.effects.push_back(SignalJob{id, nodes, event.signal, event.scope});
          return std::nullopt;
        }
        if (kill && active)
          out.effects.push_back(SignalJob{id, nodes, SIGKILL, SignalScope::kFull});
        Job& job = Mutable(id, out);
        job.cancelled_by = event.caller.uid;
        if (job.state == JobState::kPending) {
          Finish(job, JobState::kCancelled);
        } else if (job.cancel_requested_at == 0) {
          job.cancel_requested_at = clock_.Now();
          out.effects.push_back(TerminateJob{id, nodes, cluster().settings.kill_wait_seconds});
        }
        return std::nullopt;
      });
}

void Engine::On(const HoldJobs& event, EngineOutput& out) {
  bool admin = IsOperator(event.caller);
  ActOnJobs(
      event.token, event.caller, event.filter, out,
      [&](uint64_t id, const Job& current, size_t) -> std::optional<std::string> {
        if (event.release && current.spec.hold == HoldKind::kAdmin && !admin)
          return "Access/permission denied";
        if (current.state != JobState::kPending) return "Job is no longer pending execution";
        JobSpec& spec = Mutable(id, out).spec;
        // As Slurm's release: a held job's priority is computed again (a priority set by
        // an operator or `scontrol update Priority=` is dropped).
        if (event.release && spec.hold != HoldKind::kNone) spec.priority = 0;
        spec.hold = event.release ? HoldKind::kNone : admin ? HoldKind::kAdmin : HoldKind::kUser;
        return std::nullopt;
      });
  schedule_requested_ = true;
}

void Engine::Requeue(Job& job, JobState run_state, EngineOutput& out) {
  std::vector<int> nodes = job.NodeIndexes();
  if (job.state == JobState::kRunning || job.state == JobState::kSuspended) {
    out.effects.push_back(
        TerminateJob{job.spec.job_id, nodes, cluster().settings.kill_wait_seconds});
    Release(job);
  }
  job.history.push_back(JobRun{job.start_time, clock_.Now(), run_state, job.exit_code,
                               job.exit_signal, nodes, job.restart_count});
  if (IsFinal(job.state)) CountActive(job.spec, 1);  // back in the queue
  job.state = JobState::kPending;
  job.reason = sched::PendingReason::kNone;
  job.allocation = {};
  job.gpu_uuids.clear();
  job.partition = -1;
  job.start_time = job.end_time = 0;
  job.exit_code = job.exit_signal = 0;
  job.cancel_requested_at = job.time_limit_signalled_at = 0;
  job.suspend_time = job.suspended_seconds = 0;
  job.preempted_at = job.preempt_deadline = 0;
  job.preempt_cancel = false;
  job.user_signal_sent = false;
  job.sched_by.clear();
  job.steps.clear();  // the next run numbers its steps from 0 again
  job.next_step_id = 0;
  job.batch_usage = {};
  job.released = false;
  ++job.restart_count;
  schedule_requested_ = true;
}

void Engine::On(const RequeueJobs& event, EngineOutput& out) {
  ActOnJobs(event.token, event.caller, event.filter, out,
            [&](uint64_t id, const Job& current, size_t) -> std::optional<std::string> {
              if (current.state == JobState::kPending) return "Job is pending execution";
              Job& job = Mutable(id, out);
              Requeue(job, JobState::kRequeued, out);
              if (event.hold) job.spec.hold = HoldKind::kUser;
              return std::nullopt;
            });
}

// One job's update; the message of the first refusal, or "".
std::string Engine::UpdateOne(const UpdateJob& event, Job& job) {
  bool admin = IsOperator(event.caller);
  bool pending = job.state == JobState::kPending;
  if (event.time_limit_seconds) {
    if (!admin && *event.time_limit_seconds > job.spec.time_limit_seconds &&
        job.spec.time_limit_seconds != 0)
      return "Access/permission denied (only an operator may lengthen a time limit)";
    job.spec.time_limit_seconds = *event.time_limit_seconds;
    if (!pending) {
      job.time_limit_seconds = *event.time_limit_seconds;
      int64_t begin = job.start_time + job.suspended_seconds;
      job.end_time = *event.time_limit_seconds >= kUnlimitedSeconds - begin
                         ? kUnlimitedSeconds
                         : begin + *event.time_limit_seconds;
    }
  }
  if (event.nice) {
    if (!admin && *event.nice < 0) return "Access/permission denied (negative nice)";
    job.spec.nice = *event.nice;
  }
  if (event.name) job.spec.name = *event.name;
  if ((event.partition || event.qos) && !pending) return "Job is no longer pending execution";
  if (event.partition) {
    int p = cluster().FindPartition(*event.partition);
    if (p < 0) return "Invalid partition name specified";
    job.spec.partitions = {*event.partition};
  }
  if (event.qos) job.spec.qos = *event.qos;
  if (Updates(event.update, JobField::kPriority) && pending) {
    // Slurm: only an operator may raise a priority; 0 holds the job (an operator's hold is
    // the administrator's); a set priority replaces the computed one and clears nice.
    uint32_t wanted = event.update.values.priority;
    if (!admin && wanted != 0 && wanted >= PriorityNow(job))
      return "Access/permission denied (only an operator may raise a priority)";
    if (wanted == 0) job.spec.hold = admin ? HoldKind::kAdmin : HoldKind::kUser;
    if (wanted != 0) job.spec.nice = 0;
  }
  if (std::string error = ApplyJobUpdate(event.update, pending, admin, job.spec); !error.empty())
    return error;
  NameMailUser(job.spec);
  // A changed job is checked as a submission is: its partition must still be able to run it,
  // its reservation admit it and its dependencies name known jobs.
  if (!event.update.fields.empty())
    if (std::string error = Validate(job.spec, 0); !error.empty()) return error;
  // The owner's access to the partition, as at submission (an operator's update is checked
  // against the owner's account and QOS, not the operator's groups).
  if (event.partition || event.qos || !event.update.fields.empty())
    return UpdatedPartitionRefusal(event.caller, job.spec);
  return "";
}

void Engine::On(const UpdateJob& event, EngineOutput& out) {
  ActOnJobs(event.token, event.caller, event.filter, out,
            [&](uint64_t id, const Job& current, size_t) -> std::optional<std::string> {
              Job updated = current;
              if (std::string error = UpdateOne(event, updated); !error.empty()) return error;
              if (!IsFinal(current.state)) {  // its account, user or QOS may have changed
                CountActive(current.spec, -1);
                CountActive(updated.spec, 1);
              }
              Mutable(id, out) = std::move(updated);
              return std::nullopt;
            });
  schedule_requested_ = true;
}

void Engine::On(const JobEnded& event, EngineOutput& out) {
  auto it = jobs_.find(event.job_id);
  // Reports are resent until committed: one for a job that already ended is a duplicate.
  if (it == jobs_.end() ||
      (it->second->state != JobState::kRunning && it->second->state != JobState::kSuspended) ||
      it->second->restart_count != event.restart_count)
    return;
  int reporter = cluster().FindNode(event.node);
  // A node reports only the jobs it runs: a report about another node's job changes nothing.
  const auto& held = it->second->allocation.nodes;
  if (std::none_of(held.begin(), held.end(),
                   [reporter](const auto& node) { return node.node == reporter; }))
    return;
  if (event.epilog_failed) {
    NodeStatus& node = nodes_[reporter];
    node.drain = true;
    node.reason = event.reason.empty() ? "Epilog error" : "Epilog error: " + event.reason;
    node.reason_time = clock_.Now();
    out.changed_nodes.push_back(reporter);
  }
  // A batch job ends with its script, on its batch node (the first unless --batch chose); the other
  // nodes only hold the allocation for srun's steps, and their holder's end (once the job is over)
  // says nothing.
  const Job& reported = *it->second;
  if (!reported.spec.interactive && !event.prolog_failed && !reported.allocation.nodes.empty() &&
      reporter != reported.BatchNode())
    return;
  Job& job = Mutable(event.job_id, out);
  if (event.prolog_failed) {
    NodeStatus& node = nodes_[reporter];
    node.drain = true;
    node.reason = event.reason.empty() ? "Prolog error" : "Prolog error: " + event.reason;
    node.reason_time = clock_.Now();
    out.changed_nodes.push_back(reporter);
    return Requeue(job, JobState::kRequeued, out);
  }
  job.exit_code = event.exit_code;
  job.exit_signal = event.signal;
  job.cpu_seconds = event.cpu_seconds;
  job.max_rss_mib = event.max_rss_mib;
  if (!job.spec.interactive) job.batch_usage = event.batch_usage;  // salloc's holder is no step
  if (job.preempted_at) return EndPreempted(job, out);             // it ended in its grace time
  JobState state = JobState::kFailed;
  if (job.released) {
    job.exit_code = job.release_exit_code;
    job.exit_signal = job.release_signal;
    state = job.exit_code == 0 && job.exit_signal == 0 ? JobState::kCompleted : JobState::kFailed;
  } else if (job.cancel_requested_at) {
    state = JobState::kCancelled;
  } else if (job.time_limit_signalled_at) {
    state = JobState::kTimeout;
  } else if (event.out_of_memory) {
    state = JobState::kOutOfMemory;
  } else if (event.exit_code == 0 && event.signal == 0) {
    state = JobState::kCompleted;
  }
  std::vector<int> others;
  for (const auto& part : job.allocation.nodes)
    if (part.node != reporter) others.push_back(part.node);
  if (!others.empty()) out.effects.push_back(TerminateJob{job.spec.job_id, others, 0});
  Finish(job, state);
}

}  // namespace drover::ctld
