// What srun tells a step's agents beside StepLaunch's fields.
#pragma once

#include <cstdint>
#include <string_view>

namespace drover {

// An entry of StepLaunch.environment that srun -E/--preserve-env adds and the agent removes: the
// tasks keep srun's SLURM_NNODES, SLURM_NTASKS and SLURM_NPROCS (srun(1)) instead of the step's.
inline constexpr std::string_view kPreserveEnvMarker = "DROVER_PRESERVE_ENV=1";

// Entries "NAME=program" of StepLaunch.environment that srun --task-prolog/--task-epilog add and
// the agent removes: it runs the program as the job's user before (its stdout read as Slurm's
// slurmstepd reads it) and after each task, with the task's environment.
inline constexpr std::string_view kTaskPrologVariable = "DROVER_TASK_PROLOG";
inline constexpr std::string_view kTaskEpilogVariable = "DROVER_TASK_EPILOG";

// srun --bcast: the most a step's launch carries in files (StepLaunch.bcast); the agents accept
// launches this much larger than gRPC's default.
inline constexpr uint64_t kMostBcastBytes = uint64_t{64} << 20;

}  // namespace drover
