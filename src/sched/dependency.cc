// Dependency evaluation with Slurm's meanings: each term is satisfied, still waiting, or can
// never be satisfied (the job is then left pending with DependencyNeverSatisfied); the terms
// combine as all (',') or any ('?').
#include "sched/dependency.h"

namespace drover::sched {
namespace {

using State = JobOutcome::State;

bool Ended(State state) {
  return state == State::kCompleted || state == State::kFailed || state == State::kCancelled;
}

// "+time": satisfied once `delay` seconds have passed since `since`. Without a delay the event
// alone is enough, so a start time a little in the future (clock skew) does not hold a job back.
DependencyStatus AfterDelay(int64_t since, int64_t delay, int64_t now) {
  if (delay <= 0) return DependencyStatus::kSatisfied;
  int64_t ready = 0;
  if (__builtin_add_overflow(since, delay, &ready)) return DependencyStatus::kWaiting;
  return now >= ready ? DependencyStatus::kSatisfied : DependencyStatus::kWaiting;
}

// after: the job has started, or was cancelled before starting (then it has no start time and
// its end stands in for it).
DependencyStatus After(const JobOutcome& other, int64_t delay, int64_t now) {
  if (other.state == State::kPending) return DependencyStatus::kWaiting;
  int64_t since = other.start_time != 0 ? other.start_time : other.end_time;
  return AfterDelay(since, delay, now);
}

// afterany / afterok / afternotok: the job has ended, and in a state that `wanted` accepts;
// ended in any other state, it never will.
template <typename Wanted>
DependencyStatus AfterEnd(const JobOutcome& other, int64_t delay, int64_t now, Wanted wanted) {
  if (!Ended(other.state)) return DependencyStatus::kWaiting;
  if (!wanted(other.state)) return DependencyStatus::kNeverSatisfied;
  return AfterDelay(other.end_time, delay, now);
}

bool AnyEnd(State) {
  return true;
}
bool EndedOk(State state) {
  return state == State::kCompleted;
}
bool EndedNotOk(State state) {
  return state == State::kFailed || state == State::kCancelled;
}

// A named job that is gone (purged, or never existed). Slurm refuses unknown ids at submit and
// lifts a dependency whose job has since been purged. We follow that only where the condition
// is about order alone (after, afterany); for afterok, afternotok and aftercorr we cannot know
// how the job ended, so we refuse to guess a success or failure that would start work wrongly.
DependencyStatus Unknown(DependencyType type) {
  return type == DependencyType::kAfter || type == DependencyType::kAfterAny
             ? DependencyStatus::kSatisfied
             : DependencyStatus::kNeverSatisfied;
}

JobOutcome Lookup(const JobSpec& job, const DependencyTerm& term, const JobOutcomes* others) {
  if (others == nullptr) return {};
  if (term.array_task_id != kNoArrayTask)  // afterok:N_T: that one task of array N
    return others->FindArrayTask(term.job_id, term.array_task_id);
  // aftercorr pairs array tasks by index; a job that is not an array task waits on the whole
  // job as afterok would.
  if (term.type == DependencyType::kAfterCorr && job.array_task_id != kNoArrayTask)
    return others->FindArrayTask(term.job_id, job.array_task_id);
  return others->Find(term.job_id);
}

DependencyStatus EvaluateTerm(const JobSpec& job, const DependencyTerm& term,
                              const JobOutcomes* others, int64_t now, bool singleton_blocked) {
  if (term.type == DependencyType::kSingleton)
    return singleton_blocked ? DependencyStatus::kWaiting : DependencyStatus::kSatisfied;
  JobOutcome other = Lookup(job, term, others);
  if (other.state == State::kUnknown) return Unknown(term.type);
  switch (term.type) {
    case DependencyType::kAfter:
      return After(other, term.delay_seconds, now);
    case DependencyType::kAfterAny:
      return AfterEnd(other, term.delay_seconds, now, AnyEnd);
    case DependencyType::kAfterOk:
      return AfterEnd(other, term.delay_seconds, now, EndedOk);
    case DependencyType::kAfterNotOk:
      return AfterEnd(other, term.delay_seconds, now, EndedNotOk);
    case DependencyType::kAfterCorr:
      return AfterEnd(other, 0, now, EndedOk);
    case DependencyType::kSingleton:
      break;  // handled above
  }
  return DependencyStatus::kWaiting;
}

}  // namespace

DependencyStatus EvaluateDependencies(const JobSpec& job, const JobOutcomes* others, int64_t now,
                                      bool singleton_blocked) {
  const DependencySpec& spec = job.dependency;
  if (spec.empty()) return DependencyStatus::kSatisfied;
  bool any_satisfied = false, any_never = false, all_satisfied = true, all_never = true;
  for (const DependencyTerm& term : spec.terms) {
    DependencyStatus status = EvaluateTerm(job, term, others, now, singleton_blocked);
    any_satisfied |= status == DependencyStatus::kSatisfied;
    any_never |= status == DependencyStatus::kNeverSatisfied;
    all_satisfied &= status == DependencyStatus::kSatisfied;
    all_never &= status == DependencyStatus::kNeverSatisfied;
  }
  if (spec.any) {
    if (any_satisfied) return DependencyStatus::kSatisfied;
    return all_never ? DependencyStatus::kNeverSatisfied : DependencyStatus::kWaiting;
  }
  if (any_never) return DependencyStatus::kNeverSatisfied;
  return all_satisfied ? DependencyStatus::kSatisfied : DependencyStatus::kWaiting;
}

}  // namespace drover::sched
