// The programs the step supervisor starts, described for Spawn (agent/host/spawn.h): the batch
// shell (its own session, the job's cgroup, the user's credentials, stdio files, working
// directory, environment) and the prolog and epilog. Never used in a multi-threaded process.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agent/host/spawn.h"
#include "agent/stepd/spool.h"
#include "common/result.h"

namespace drover::agent {

// Who the batch shell runs as: none when the supervisor's own uid and gid already are the job's.
// Only root switches users; anyone else runs its own jobs only. Errors, worded for the job's
// status: "cannot switch to uid 1001 (user bob): droverstepd runs as uid 1000, not root, so it
// runs only that user's jobs", "user 'bob' is unknown on this node", "user 'bob' is uid 1002 on
// this node, not 1001".
Result<std::optional<ProcessUser>> CredentialsFor(const BatchLaunch& launch);

struct ShellPlan {
  std::string script;                    // <job dir>/script, exec'd directly
  std::vector<std::string> arguments;    // after argv[0], which is `script`
  std::vector<std::string> environment;  // SLURM_TASK_PID is added in the child
  std::optional<ProcessUser> user;
  std::string work_dir;
  std::string stdout_path, stderr_path, stdin_path;
  OpenMode open_mode = OpenMode::kTruncate;
  std::vector<PropagatedLimit> limits;  // --propagate, PropagateResourceLimits
  int mount_namespace = -1;             // the job's private /tmp (job_container.h); -1: none
};

// Forks the batch shell. The child makes its own session, then waits while the parent runs
// `join(pid)` (which puts it into the job's cgroup), then sets umask (SLURM_UMASK, else 022),
// groups, gid and uid, opens stdin/stdout/stderr as the user (stdout and stderr share one open
// file when they name the same path), changes to work_dir (to /tmp when it cannot, as Slurm
// does, saying so on stderr) and execs the script. An error from `join` kills the child.
// The result's report_fd is for ReadLaunchError.
Result<Spawned> ForkBatchShell(const ShellPlan& plan, const std::function<Status(pid_t)>& join);

// After the shell has been reaped: why it never ran the script ("could not open stdout file
// /x/out: Permission denied"), or empty when exec succeeded. Closes the descriptor.
std::string ReadLaunchError(int& report_fd);

// Forks `program` (the prolog or epilog) with `environment`, stdin from /dev/null, stdout and
// stderr where the supervisor's go (stepd.log).
Result<pid_t> ForkProgram(const std::string& program, const std::vector<std::string>& environment);

}  // namespace drover::agent
