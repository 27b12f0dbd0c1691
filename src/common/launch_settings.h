// The slurm.conf keys only the launching commands act on: PropagateResourceLimits[Except]
// (sbatch and srun --propagate's default) and BcastParameters, BcastExclude (srun --bcast's).
// slurm.conf's loader checks them as it checks every key (slurm_conf.cc); the commands read
// them from the same file with ReadLaunchSettings.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/conf_fields.h"
#include "common/conf_reader.h"

namespace drover {

struct LaunchSettings {
  // PropagateResourceLimits (none given: ALL) and PropagateResourceLimitsExcept: the limits
  // sbatch and srun carry to the job when --propagate is not given (common/resource_limits.h).
  std::optional<std::string> propagate_resource_limits;
  std::string propagate_resource_limits_except;
  // BcastParameters (DestDir=, Compression=, send_libs) and BcastExclude.
  std::string bcast_dest_dir, bcast_compression;
  bool bcast_send_libs = false;
  std::string bcast_exclude = "/lib,/usr/lib,/lib64,/usr/lib64";
  // MpiDefault: the PMI a step gets without srun --mpi (none, pmi2 or pmix).
  std::string mpi_default = "none";
};

const std::vector<ConfField<LaunchSettings>>& LaunchSettingsFields();

// The keys from slurm.conf's lines; values the loader would refuse are left at their defaults.
LaunchSettings LaunchSettingsOf(const std::vector<ConfLine>& lines);
// The same from the file (with its Includes); defaults when it cannot be read.
LaunchSettings ReadLaunchSettings(const std::string& slurm_conf);

}  // namespace drover
