// The environment a batch job gets (sbatch's output environment): --export-file's entries, then
// the caller's variables as --export chooses. Files are read only through Inputs::read_file.
#pragma once

#include <string>
#include <vector>

#include "cli/sbatch/sbatch_settings.h"
#include "common/result.h"

namespace drover::cli::sbatch {

// NAME=value lines: ALL (the default) copies the caller's variables; NONE and a list keep only
// SLURM_* besides what they name.
Result<std::vector<std::string>> BuildEnvironment(const Settings& s, const Inputs& in);

}  // namespace drover::cli::sbatch
