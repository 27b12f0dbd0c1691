// The resource limits a job carries from the shell that submitted it (sbatch/srun --propagate,
// slurm.conf PropagateResourceLimits[Except]): Slurm's limit names, the lists that choose them,
// and the "NAME=soft:hard" entries of JobSpec.rlimits and StepLaunch.rlimits. Capturing reads
// this process's limits; applying them is the agent's (agent/host/spawn.h).
#pragma once

#include <sys/resource.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace drover {

// Slurm's limit names, in its order: AS CORE CPU DATA FSIZE MEMLOCK NOFILE NPROC RSS STACK.
const std::vector<std::string_view>& ResourceLimitNames();
// RLIMIT_* for a name of ResourceLimitNames (upper case); nullopt for any other.
std::optional<int> ResourceOfLimit(std::string_view name);

// A list as --propagate and PropagateResourceLimits take it: ALL, NONE, or names separated by
// commas (any case). The names chosen, in Slurm's order. Errors name the first bad word.
Result<std::vector<std::string>> ParseLimitList(std::string_view text);

// The limits a job carries: --propagate's list when given (empty text: ALL), else slurm.conf's
// PropagateResourceLimits, or every limit but PropagateResourceLimitsExcept's.
struct LimitChoice {
  std::vector<std::string> names;
  bool user_requested = false;  // --propagate: a limit that cannot be set is reported
};
Result<LimitChoice> ChooseLimits(const std::optional<std::string>& option,
                                 const std::optional<std::string>& conf_limits,
                                 const std::string& conf_except);

// One entry: NAME=soft:hard, each value a number or "unlimited"; a 'U' before the soft value
// marks one the user asked for (--propagate), as Slurm's SLURM_RLIMIT_NAME=U<value> does.
struct PropagatedLimit {
  std::string name;
  int resource = 0;  // RLIMIT_*
  rlim_t soft = 0, hard = 0;
  bool user_requested = false;
  bool operator==(const PropagatedLimit&) const = default;
};
std::string FormatPropagatedLimit(const PropagatedLimit& limit);
Result<PropagatedLimit> ParsePropagatedLimit(std::string_view entry);

// The controller keeps a batch job's propagated limits with its environment, out of the job
// record every listing carries, each as this prefix then "NAME=soft:hard" (not a name a shell
// can export); the agent takes them out again before the job runs.
inline constexpr std::string_view kStoredLimitPrefix = "DROVER:RLIMIT:";

// This process's limits of `choice`, as entries.
std::vector<std::string> CaptureLimits(const LimitChoice& choice);

}  // namespace drover
