// How droverstepd leaves its caller behind (double fork, new session, stdio to stepd.log) so the
// job outlives the agent, and how the agent starts it and learns that it is up. Nothing here
// touches the job itself.
#pragma once

#include <filesystem>

#include "common/result.h"

namespace drover::agent {

// Detaches from the caller: fork, setsid, fork; the grandchild (the supervisor) gets /dev/null
// as stdin, <job_dir>/stepd.log (appended) as stdout and stderr, and "/" as working directory.
// In the grandchild, `supervisor` is true and `ready_fd` is where ReportReady answers. In the
// original process, `supervisor` is false and `exit_code` is 0 once the supervisor reported
// ready, 1 (with the reason printed on stderr) if it failed or died first.
struct Detached {
  bool supervisor = false;
  int ready_fd = -1;
  int exit_code = 0;
};
Result<Detached> Daemonize(const std::filesystem::path& job_dir);
void ReportReady(int ready_fd, const Status& outcome);

// For the agent: runs `binary job_dir` (droverstepd) and waits for it to return, which it does
// once the supervisor has detached and written supervisor.pid. Errors hold what it printed
// ("droverstepd: error: <dir>/launch:3: unknown key 'jobid' (did you mean 'job_id'?)").
// Safe in a multi-threaded caller (posix_spawn).
Status StartSupervisor(const std::filesystem::path& binary, const std::filesystem::path& job_dir);

}  // namespace drover::agent
