// The billing TRES of a job: what fair-share usage is charged in (billing x seconds). With a
// partition's TRESBillingWeights it is the weighted sum of the job's TRES, as Slurm computes it
// by default; without weights it is the job's CPU count.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sched/limits.h"

namespace drover::sched {

// `weights` as ParseTresWeights gives them (mem per MB); `gpu_type` counts for "gres/gpu:TYPE".
double BillingOf(const std::vector<std::pair<std::string, double>>& weights, const JobUsage& usage,
                 const std::string& gpu_type = "");

}  // namespace drover::sched
