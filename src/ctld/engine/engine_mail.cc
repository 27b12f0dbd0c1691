// --mail-type: which of a job's changes Slurm mails about, and when. The engine only decides;
// MailJob effects carry the mail to the daemon, which runs MailProg off the engine thread.
#include <algorithm>

#include "ctld/engine/engine.h"

namespace drover::ctld {
namespace {

uint32_t MailTypes(const Job& job) {
  return job.spec.mail_type.empty() ? 0 : ParseMailTypes(job.spec.mail_type).value_or(0);
}

// A run began: DEADLINE and a cancelled pending job end without one.
bool Began(JobState was, const Job& job) {
  return was == JobState::kPending && job.state != JobState::kPending &&
         job.state != JobState::kDeadline && job.start_time != 0;
}

// Slurm mails END for a job that completed or was cancelled, FAIL (or END without FAIL) for
// every other end; a requeue is REQUEUE when the run ended that way, else as a failure.
MailType EndEvent(JobState ended, uint32_t types, bool requeued) {
  bool ok = ended == JobState::kCompleted || ended == JobState::kCancelled ||
            ended == JobState::kRequeued;
  if (ok) return requeued && (types & kMailRequeue) ? kMailRequeue : kMailEnd;
  return types & kMailFail ? kMailFail : kMailEnd;
}

}  // namespace

void Engine::NoteForMail(const Job& before) {
  if (before.spec.mail_type.empty()) return;
  mail_watch_.emplace(before.spec.job_id, std::pair(before.state, before.restart_count));
}

void Engine::MailChanges(EngineOutput& out) {
  for (const auto& [id, before] : mail_watch_) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) continue;
    const Job& job = *it->second;
    auto [was, run] = before;
    uint32_t types = MailTypes(job);
    if (job.restart_count != run) {  // requeued: its last run ended
      const JobRun& last = job.history.back();
      if (was == JobState::kPending) Mail(job, kMailBegin, out);
      MailType event = EndEvent(last.state, types, true);
      if (types & event) Mail(job, event, out);
      continue;
    }
    if (Began(was, job)) Mail(job, kMailBegin, out);
    if (!IsFinal(was) && IsFinal(job.state)) Mail(job, EndEvent(job.state, types, false), out);
  }
  mail_watch_.clear();
}

void Engine::MailTimeLimits(uint64_t id, const Job& job, int64_t now, EngineOutput& out) {
  constexpr std::pair<MailType, int> kMarks[] = {{kMailTimeLimit, 100},
                                                 {kMailTimeLimit90, 90},
                                                 {kMailTimeLimit80, 80},
                                                 {kMailTimeLimit50, 50}};
  const uint32_t types = MailTypes(job);
  const uint32_t wanted =
      types & (kMailTimeLimit | kMailTimeLimit90 | kMailTimeLimit80 | kMailTimeLimit50);
  if (!wanted || job.time_limit_seconds <= 0) return;
  int64_t elapsed = now - job.start_time - job.suspended_seconds;
  for (const auto& [event, percent] : kMarks) {
    if (!(wanted & event) || elapsed * 100 < job.time_limit_seconds * percent) continue;
    Mail(job, event, out);
    // As Slurm's slurmctld does, the mark leaves the job's (stored) MailType once mailed, so no
    // restart or requeue mails it again; the highest mark reached speaks for the lower ones,
    // which are not sent late.
    uint32_t left = types;
    for (const auto& [lower, lower_percent] : kMarks)
      if (lower_percent <= percent) left &= ~static_cast<uint32_t>(lower);
    Mutable(id, out).spec.mail_type = left ? MailTypeText(left) : "";
    return;
  }
}

void Engine::Mail(const Job& job, MailType event, EngineOutput& out) {
  uint32_t types = MailTypes(job);
  if (!(types & event)) return;
  const int64_t now = clock_.Now();
  if (!job.spec.array_job_id || (types & kMailArrayTasks))
    return out.effects.push_back(BuildMail(job, event, cluster(), now));
  if (event == kMailBegin) {
    if (FirstOfArrayToStart(job))
      out.effects.push_back(BuildMail(job, event, cluster(), now, ArraySummary{}));
    return;
  }
  if (event == kMailEnd || event == kMailFail) {
    if (std::optional<ArraySummary> summary = ArrayEnded(job))
      out.effects.push_back(BuildMail(job, event, cluster(), now, summary));
    return;
  }
  out.effects.push_back(BuildMail(job, event, cluster(), now));
}

bool Engine::FirstOfArrayToStart(const Job& job) const {
  uint64_t array = job.spec.array_job_id;
  for (auto it = array_tasks_.lower_bound({array, 0});
       it != array_tasks_.end() && it->first.first == array; ++it) {
    if (it->second == job.spec.job_id) continue;
    const Job& task = *jobs_.at(it->second);
    // Tasks started in the same cycle: the lowest ID speaks for them.
    bool earlier = task.start_time && std::pair(task.start_time, task.spec.job_id) <
                                          std::pair(job.start_time, job.spec.job_id);
    if (earlier || !task.history.empty()) return false;
  }
  return true;
}

std::optional<ArraySummary> Engine::ArrayEnded(const Job& job) const {
  uint64_t array = job.spec.array_job_id;
  ArraySummary summary{INT32_MAX, 0, 0};
  for (auto it = array_tasks_.lower_bound({array, 0});
       it != array_tasks_.end() && it->first.first == array; ++it) {
    const Job& task = *jobs_.at(it->second);
    if (!IsFinal(task.state)) return std::nullopt;
    // Tasks that ended in the same batch: the one ending last (then the highest ID) speaks.
    if (std::pair(task.end_time, task.spec.job_id) > std::pair(job.end_time, job.spec.job_id))
      return std::nullopt;
    summary.min_exit_code = std::min(summary.min_exit_code, task.exit_code);
    summary.max_exit_code = std::max(summary.max_exit_code, task.exit_code);
    summary.max_signal = std::max(summary.max_signal, task.exit_signal);
  }
  if (summary.min_exit_code == INT32_MAX) summary.min_exit_code = 0;
  return summary;
}

}  // namespace drover::ctld
