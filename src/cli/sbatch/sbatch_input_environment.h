// The SBATCH_* input variables sbatch(1) lists, each standing for an option: applied after the
// #SBATCH lines and before the command line, as in Slurm. Reads only the environment it is given.
#pragma once

#include "cli/sbatch/sbatch_settings.h"
#include "common/result.h"

namespace drover::cli::sbatch {

// Errors end with the variable and its value (" (SBATCH_TIMELIMIT=x)").
Status ApplyEnvironment(const Inputs& in, Settings& s);

}  // namespace drover::cli::sbatch
