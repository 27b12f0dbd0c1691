// sbatch --get-user-env[=timeout][S|L]: the value a job carries (JobSpec.get_user_env), checked
// by sbatch and again by the agent that loads the user's login environment for the job.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace drover {

struct UserEnvironmentRequest {
  int timeout_seconds = 8;  // sbatch(1)'s default
  char mode = 'L';          // S: su without "-"; L: a login shell ("su -")
};

// nullopt for an empty value; "8" for --get-user-env alone; an error for one that is not
// [digits][S|L] (the option's text in the message).
Result<std::optional<UserEnvironmentRequest>> ParseUserEnvironmentRequest(std::string_view text);

}  // namespace drover
