// Preemption carried out. The scheduler chose the victims (src/sched/preemption.cc); here each
// gets its notice at once — SIGCONT, then SIGTERM or the signal it asked for with --signal — its
// end moves to now + GraceTime, and when it ends, or when the grace time is over, it is
// requeued (same ID, one more restart, the run recorded as PREEMPTED) or, with PreemptMode
// CANCEL or --no-requeue, ends PREEMPTED. PreemptMode SUSPEND is carried out as REQUEUE.
#include <csignal>

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

void Engine::EnforcePreemptions(EngineOutput& out) {
  int64_t now = clock_.Now();
  std::vector<uint64_t> due;
  for (const auto& [id, job] : jobs_)
    if (job->preempted_at && job->state == JobState::kRunning && now >= job->preempt_deadline)
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
