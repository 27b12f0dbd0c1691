// How droverstepd leaves its caller behind (a new session, stdio to stepd.log) so the job
// outlives the agent, and how the agent starts it and learns that it is up. Run by hand it
// detaches (double fork); the agent starts it attached, with one posix_spawn. Nothing here
// touches the job itself.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

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

// droverstepd --attached: the supervisor is the process the agent spawned, already in a session
// of its own (POSIX_SPAWN_SETSID), with /dev/null as stdin, <job_dir>/stepd.log (appended) as
// stdout and stderr, and descriptor kReadyFd a pipe to the agent. Once it has written
// supervisor.pid (or failed before) it reports on that pipe, "+" or "-" and why, and closes it;
// then it takes "/" as its working directory. No fork: the caller reaps it.
inline constexpr int kReadyFd = 3;
Status Attach(const Status& outcome);

// The command line `ps` shows for this process. KeepCommandLine (main, once) remembers where the
// kernel put argv's strings; SetCommandLine writes `title` over them, cut to their length, and
// makes the kernel show it alone (the last byte of the area not NUL: /proc/PID/cmdline then reads
// up to the title's NUL), as setproctitle(3) does. The strings argv pointed to are gone after.
void KeepCommandLine(int argc, char** argv);
void SetCommandLine(std::string_view title);
// What droverstepd shows once it supervises a job, as Slurm's slurmstepd does
// ("slurmstepd: [1234.batch]"): "droverstepd: [1234.batch] node1" (or .extern).
std::string SupervisorTitle(uint64_t job_id, bool extern_step, std::string_view node_name);
// The argument the agent gives its launcher after --serve, so that the command line has room for
// the titles of the supervisors it forks (theirs is the launcher's argv area).
inline constexpr std::string_view kTitleRoomOption = "--title-room";
inline constexpr size_t kTitleRoom = 64;

// Runs `argv` (argv[0] the program's path) in a session of its own with one posix_spawn: /dev/null
// as stdin, `log` (appended) as stdout and stderr unless empty (then the caller's), descriptor
// `fd` as `as` (the caller still closes `fd`), and `environment` (null: this process's). Safe in
// a multi-threaded caller; the pid is the caller's child.
Result<pid_t> SpawnInSession(std::vector<std::string> argv, int fd, int as, const std::string& log,
                             char* const* environment);

// For the agent: runs `binary --attached job_dir` (droverstepd) in a session of its own with one
// posix_spawn and waits until it reports ready on kReadyFd, which it does once it has written
// supervisor.pid. Returns the supervisor's pid: the caller's child, for the caller to reap
// (waitpid) when it ends. Errors hold what it reported ("<dir>/launch:3:
// unknown key 'jobid' (did you mean 'job_id'?)"); the failed child is reaped here. Safe in a
// multi-threaded caller.
Result<pid_t> StartSupervisor(const std::filesystem::path& binary,
                              const std::filesystem::path& job_dir);

// Why a supervisor did not get to report ready: what it said on the ready pipe ("-why"), else
// how `who` ended (its wait status) and the log to look at.
std::string NotReadyReason(std::string_view said, int wait_status, std::string_view who,
                           const std::string& log);

}  // namespace drover::agent
