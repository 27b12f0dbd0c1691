// Combines the validated options into the JobSpec and the request, as Slurm's _opt_verify does:
// options that exclude each other (the later source wins, the same source is an error), the job's
// shape, memory, CPUs, GPUs and sharing. Reads nothing but the Settings and Inputs.
#pragma once

#include "cli/sbatch/sbatch_options.h"
#include "cli/sbatch/sbatch_settings.h"
#include "common/result.h"

namespace drover::cli::sbatch {

// Fills `request` (all but the name and the caller's identity) and moves the notices into it.
Status Finish(Settings& s, const Inputs& in, SbatchRequest& request);

}  // namespace drover::cli::sbatch
