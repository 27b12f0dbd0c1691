// sbatch --get-user-env: the job's user's login environment, read as Slurm reads it ("su -
// USER -c env", within a timeout) and merged under the job's own, whose variables win
// (sbatch(1)). When the supervisor is not root it cannot switch users, and the user is its own:
// the user's shell from the passwd database runs instead of su, in the same clean environment.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/host/spawn.h"
#include "common/login_environment.h"
#include "common/result.h"

namespace drover::agent {

// The command's output after its marker line: NAME=value entries, each ended by a NUL.
std::vector<std::string> ParseEnvironmentOutput(std::string_view output);

// The login environment with the job's entries over it: a variable both have takes the job's
// value; the job's others follow.
std::vector<std::string> MergeUnderJobEnvironment(std::vector<std::string> login,
                                                  const std::vector<std::string>& job);

// Runs the login shell for `user_name` (as `user` when switching, see above) and reads its
// environment. Errors: "timed out after 8 s", "su exited with status 1", ...
Result<std::vector<std::string>> LoadLoginEnvironment(const std::string& user_name,
                                                      const std::optional<ProcessUser>& user,
                                                      const UserEnvironmentRequest& request);

}  // namespace drover::agent
