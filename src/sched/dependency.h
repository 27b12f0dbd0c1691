// Whether a job's --dependency allows it to start now, judged against the outcomes of the jobs
// it names. Pure: the caller hands in the time, the outcomes and the singleton state.
#pragma once

#include <cstdint>

#include "common/job_spec.h"
#include "sched/model.h"

namespace drover::sched {

enum class DependencyStatus { kSatisfied, kWaiting, kNeverSatisfied };

// `others` may be null (every named job unknown). `singleton_blocked` tells whether another job
// with the same name and user is running or was submitted earlier and is still pending (the
// caller knows the queue; pass false when the job has no singleton term).
DependencyStatus EvaluateDependencies(const JobSpec& job, const JobOutcomes* others, int64_t now,
                                      bool singleton_blocked);

}  // namespace drover::sched
