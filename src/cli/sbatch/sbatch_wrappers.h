// #PBS and #BSUB lines, which Slurm's sbatch reads after the #SBATCH lines and translates into
// its own options (unless --ignore-pbs, or SBATCH_IGNORE_PBS, says not to): #BSUB lines when
// the script has any, else #PBS lines. Options those systems have and Slurm does not are
// skipped, as Slurm skips them.
#pragma once

#include <string_view>

#include "cli/sbatch/sbatch_settings.h"
#include "common/result.h"

namespace drover::cli::sbatch {

Status ApplyWrapperDirectives(std::string_view script, const Inputs& in, Settings& s);

}  // namespace drover::cli::sbatch
