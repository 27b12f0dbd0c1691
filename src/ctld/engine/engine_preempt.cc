// Preemption carried out. The scheduler chose the victims (src/sched/preemption.cc); here each
// gets its notice at once — SIGCONT, then SIGTERM or the signal it asked for with --signal — its
// end moves to now + GraceTime, and when it ends, or when the grace time is over, it is
// requeued (same ID, one more restart, the run recorded as PREEMPTED) or, with PreemptMode
// CANCEL or --no-requeue, ends PREEMPTED. With PreemptMode SUSPEND the victim is stopped at
// once (SIGSTOP) and keeps only its memory; it resumes (SIGCONT) when its cores and GPUs are
// free again, its time limit moved by the time it spent suspended.
#include <algorithm>
#include <csignal>
#include <map>
#include <set>
#include <utility>

#include "ctld/engine/engine.h"
#include "sched/preemption.h"

namespace drover::ctld {

void Engine::Preempt(const sched::PreemptDecision& decision, EngineOutput& out) {
  auto it = jobs_.find(decision.victim);
  if (it == jobs_.end() || it->second->preempted_at ||
      (it->second->state != JobState::kRunning && it->second->state != JobState::kSuspended))
    return;
  // The same mode and grace the scheduler planned with (its QOS's under preempt/qos).
  const Job& victim = *it->second;
  PreemptMode mode = sched::VictimMode(cluster(), qos_, victim.partition, victim.spec.qos);
  int64_t grace = sched::VictimGraceSeconds(cluster(), qos_, victim.partition, victim.spec.qos);
  int64_t now = clock_.Now();
  Job& job = Mutable(decision.victim, out);
  if (mode.base == PreemptMode::Base::kSuspend) {
    if (job.state != JobState::kRunning) return;  // suspended by an operator: it holds nothing
    job.preempted_at = now;
    job.preempt_deadline = 0;
    job.state = JobState::kSuspended;
    job.suspend_time = now;
    job.suspended_for = decision.preemptor;
    out.effects.push_back(
        SignalJob{job.spec.job_id, job.NodeIndexes(), SIGSTOP, SignalScope::kFull});
    schedule_requested_ = true;  // its cores and GPUs are the preemptor's from the next cycle
    return;
  }
  job.preempted_at = now;
  job.preempt_deadline = now + grace;
  job.preempt_cancel = mode.base == PreemptMode::Base::kCancel || !job.spec.requeue;
  if (grace <= 0) return EndPreempted(job, out);
  if (job.end_time > job.preempt_deadline) job.end_time = job.preempt_deadline;
  std::vector<int> nodes = job.NodeIndexes();
  out.effects.push_back(SignalJob{job.spec.job_id, nodes, SIGCONT, SignalScope::kFull});
  int notice = job.spec.signal_number ? job.spec.signal_number : SIGTERM;
  job.user_signal_sent = true;  // its --signal is this notice, not a second one before the end
  // The job's --signal goes where it says; without one, SIGTERM reaches all of the job.
  out.effects.push_back(
      SignalJob{job.spec.job_id, nodes, notice,
                job.spec.signal_number ? UserSignalScope(job.spec) : SignalScope::kFull});
  if (job.state == JobState::kSuspended) {  // SIGCONT woke it: its clock runs again
    job.suspended_seconds += std::max<int64_t>(now - job.suspend_time, 0);
    job.state = JobState::kRunning;
  }
}

void Engine::ResumeSuspendedVictims(EngineOutput& out) {
  // Every cycle calls this, and almost always nothing is suspended: find the victims first.
  std::vector<std::pair<int64_t, uint64_t>> victims;  // the longest suspended first
  for (const auto& [id, job] : jobs_)
    if (job->state == JobState::kSuspended && job->preempted_at)
      victims.emplace_back(job->preempted_at, id);
  if (victims.empty()) return;
  // The cores and GPUs running jobs hold on the victims' nodes: GPUs whole, and the shares of
  // shared ones. Other nodes do not matter.
  std::vector<char> wanted(nodes_.size(), 0);
  for (const auto& [since, id] : victims)
    for (const sched::NodeAllocation& part : jobs_.at(id)->allocation.nodes)
      if (part.node >= 0 && static_cast<size_t>(part.node) < nodes_.size()) wanted[part.node] = 1;
  std::map<int, std::set<int>> cores, gpus;
  std::map<int, std::map<int, uint64_t>> shares;
  auto hold = [&](const Job& job) {
    for (const sched::NodeAllocation& part : job.allocation.nodes) {
      if (part.node < 0 || static_cast<size_t>(part.node) >= nodes_.size() || !wanted[part.node])
        continue;
      cores[part.node].insert(part.cores.begin(), part.cores.end());
      for (int gpu : part.gpus) {
        if (part.shares)
          shares[part.node][gpu] += part.shares;
        else
          gpus[part.node].insert(gpu);
      }
    }
  };
  // Whether GPU `gpu` of `node` is free for `part`: not held whole, and (shared) with room.
  auto gpu_free = [&](const sched::NodeAllocation& part, int gpu) {
    if (gpus[part.node].count(gpu)) return false;
    auto shared = shares[part.node].find(gpu);
    if (shared == shares[part.node].end()) return true;
    return part.shares > 0 &&
           shared->second + part.shares <= cluster().nodes[part.node].gpu_shares(gpu);
  };
  for (const auto& [id, job] : jobs_)
    if (job->state == JobState::kRunning) hold(*job);
  std::sort(victims.begin(), victims.end());
  int64_t now = clock_.Now();
  for (const auto& [since, id] : victims) {
    const Job& current = *jobs_.at(id);
    // Its preemptor has yet to take the resources: they are not free for it to run on.
    if (const Job* preemptor = FindJob(current.suspended_for);
        preemptor && preemptor->state == JobState::kPending)
      continue;
    bool free = std::all_of(
        current.allocation.nodes.begin(), current.allocation.nodes.end(),
        [&](const sched::NodeAllocation& part) {
          if (part.node < 0 || static_cast<size_t>(part.node) >= nodes_.size()) return false;
          return std::none_of(part.cores.begin(), part.cores.end(),
                              [&](int core) { return cores[part.node].count(core) > 0; }) &&
                 std::all_of(part.gpus.begin(), part.gpus.end(),
                             [&](int gpu) { return gpu_free(part, gpu); });
        });
    if (!free) continue;
    Job& job = Mutable(id, out);
    int64_t paused = std::max<int64_t>(now - job.suspend_time, 0);
    job.suspended_seconds += paused;
    if (job.end_time < kUnlimitedSeconds) job.end_time += paused;
    job.state = JobState::kRunning;
    job.preempted_at = 0;
    job.suspended_for = 0;
    job.suspend_time = now;
    out.effects.push_back(SignalJob{id, job.NodeIndexes(), SIGCONT, SignalScope::kFull});
    hold(job);
  }
}

void Engine::EnforcePreemptions(const std::vector<uint64_t>& holding, EngineOutput& out) {
  int64_t now = clock_.Now();
  std::vector<uint64_t> due;
  for (uint64_t id : holding)
    if (const Job& job = *jobs_.at(id);
        job.preempted_at && job.state == JobState::kRunning && now >= job.preempt_deadline)
      due.push_back(id);
  for (uint64_t id : due) EndPreempted(Mutable(id, out), out);
}

void Engine::EndPreempted(Job& job, EngineOutput& out) {
  // A job its user cancelled in its grace time stays cancelled.
  bool cancelled = job.cancel_requested_at != 0;
  if (!job.preempt_cancel && !cancelled) return Requeue(job, JobState::kPreempted, out);
  std::vector<int> nodes = job.NodeIndexes();
  out.effects.push_back(TerminateJob{job.spec.job_id, nodes, cluster().settings.kill_wait_seconds});
  Finish(job, cancelled ? JobState::kCancelled : JobState::kPreempted);
}

}  // namespace drover::ctld
