// Slurm's compressed count lists ("8(x2),4"), as SLURM_JOB_CPUS_PER_NODE and
// SLURM_TASKS_PER_NODE spell them for the agent's jobs and for srun/salloc. Formatting only.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace drover {

// Runs of equal values as "value(xN)", comma-separated, so {2,2,2} -> "2(x3)" and
// {4,4,2} -> "4(x2),2".
std::string FormatCountList(std::span<const uint32_t> counts);

}  // namespace drover
