// sbatch --test-only: when and where a job would start if it were submitted now. The answer is
// the scheduler's own pass with this job alone pending, run at the times the running jobs'
// limits end; like Slurm's will-run test it does not queue behind pending jobs. Nothing changes.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/duration.h"
#include "ctld/engine/engine.h"

namespace drover::ctld {
namespace {

// The job as the scheduler should weigh it: eligible now (the caller's hold and dependencies
// are for the real submission; --begin moves the first time tried instead).
JobSpec Probe(JobSpec probe, uint64_t job_id, int64_t now) {
  probe.job_id = job_id;
  probe.submit_time = now;
  probe.hold = HoldKind::kNone;
  probe.dependency = DependencySpec{};
  probe.begin_time = 0;
  return probe;
}

}  // namespace

void Engine::On(const WillRunJob& event, EngineOutput& out) {
  JobSpec spec = event.spec;
  std::string error = Admit(event.caller, spec);
  if (error.empty()) error = Validate(spec, 1);
  if (!error.empty())
    return out.effects.push_back(Reply{event.token, false, std::move(error), {}, {}});
  const int64_t now = clock_.Now();
  const int64_t earliest = std::max(now, spec.begin_time);
  JobSpec probe = Probe(spec, next_job_id_, now);

  std::vector<sched::RunningJob> running;
  for (const auto& [id, job] : jobs_)
    if (job->state == JobState::kRunning) running.push_back(RunningOf(*job));
  std::sort(running.begin(), running.end(),
            [](const auto& a, const auto& b) { return a.end_time < b.end_time; });
  // The times worth trying: the earliest start, then each later end of a limited job.
  std::vector<int64_t> times{earliest};
  for (const sched::RunningJob& job : running)
    if (job.end_time > times.back() && job.end_time != kUnlimitedSeconds)
      times.push_back(job.end_time);

  sched::SchedulerInput input;
  input.cluster = config_.get();
  input.maxima = &Maxima();
  input.outcomes = this;
  input.associations = associations_;
  input.qos = qos_;
  input.node_states = NodeStates();
  input.pending = {&probe};
  // Whether the job starts at `times[i]`, with the jobs ended by then gone. A lone job that fits
  // with some jobs running fits with fewer, so the first such time is found by bisection: a
  // few passes even with thousands of running jobs.
  auto starts_at = [&](size_t i) {
    input.now = times[i];
    auto gone = std::upper_bound(
        running.begin(), running.end(), times[i],
        [](int64_t time, const sched::RunningJob& job) { return time < job.end_time; });
    input.running.assign(gone, running.end());
    sched::SchedulerResult result = sched::Schedule(input);
    if (result.started.empty()) return std::optional<sched::StartDecision>();
    return std::optional<sched::StartDecision>(std::move(result.started.front()));
  };
  std::optional<sched::StartDecision> start = starts_at(times.size() - 1);
  if (!start)
    return out.effects.push_back(
        Reply{event.token, false, "Requested node configuration is not available", {}, {}});
  size_t low = 0, high = times.size() - 1;  // the job starts at times[high]
  while (low < high) {
    size_t middle = low + (high - low) / 2;
    if (std::optional<sched::StartDecision> found = starts_at(middle)) {
      high = middle;
      start = std::move(found);
    } else {
      low = middle + 1;
    }
  }
  *event.result =
      WillRun{times[high], start->partition, std::move(start->allocation), next_job_id_};
  out.effects.push_back(Reply{event.token, true, "", {}, {}});
}

}  // namespace drover::ctld
