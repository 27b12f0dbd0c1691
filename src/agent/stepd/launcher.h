// How the agent starts a job's supervisor without an exec per job: one `droverstepd --serve`
// process per agent process (the launcher) forks each supervisor from itself, already loaded and
// linked, where `droverstepd --attached` (detach.h) costs an exec, the dynamic loader and a fresh
// binary's page faults every time. The supervisor a launcher forks is the one --attached runs:
// a session of its own, /dev/null as stdin, <job_dir>/stepd.log as stdout and stderr, nothing
// else of the launcher's or the agent's open, supervisor.pid written before it reports ready.
//
// The launcher is the agent's child, in a session of its own, and ends when the agent closes
// its socket or dies (end of file). The supervisors are the launcher's children: it reaps them
// as they end. When it ends first they are orphaned as the agent's own are when the agent dies,
// and go on (the agent finds them again by their supervisor.pid, as after a restart).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>

#include "common/mutex.h"
#include "common/result.h"

namespace drover::agent {

// The launcher's end of the socket to the agent, as droverstepd --serve receives it.
inline constexpr int kServeFd = 3;

// droverstepd --serve: reads job directories from `socket` (a SOCK_SEQPACKET socket, one
// absolute path a message), sends a receipt (".") before it forks anything, then forks the
// supervisor and answers "+<pid>" once it is ready, or "-<why>" if it failed first (reaped
// here). Returns once the socket is closed.
int ServeLaunches(int socket);

// The supervisor of job_dir, in this process: what `droverstepd --attached` and the launcher's
// child run (stdio and the ready pipe on kReadyFd already set, no other descriptor open). Reads
// the launch and environ files, writes supervisor.pid, reports ready on kReadyFd and runs the
// job; returns the process's exit status.
int SuperviseAttached(const std::filesystem::path& job_dir);

// The agent's side: one per agent process, shared by the nodes it serves. Thread-safe.
class SupervisorLauncher {
 public:
  explicit SupervisorLauncher(std::filesystem::path stepd) : stepd_(std::move(stepd)) {}
  ~SupervisorLauncher();  // closes the socket; the launcher ends, and is reaped here
  SupervisorLauncher(const SupervisorLauncher&) = delete;
  SupervisorLauncher& operator=(const SupervisorLauncher&) = delete;

  // Starts job_dir's supervisor and returns its pid once it is ready (supervisor.pid written);
  // errors hold what it reported, as StartSupervisor's do. Starts the launcher at the first call,
  // and again when it died before it got the request, or when the droverstepd file was replaced
  // since it started (an upgrade: the next jobs run the new binary, as they do with an exec per
  // job; the old launcher ends and its supervisors go on). A launcher that ends, or gives no answer
  // within 10 s (killed then), after it got the request may have forked the supervisor: its pid
  // is taken from supervisor.pid if one appears within 5 s, and the launch fails otherwise;
  // never a second supervisor for the job. Where no launcher can run, it falls back to
  // StartSupervisor (detach.h) and `child` says the pid is the caller's child, to reap.
  struct Started {
    pid_t pid = 0;
    bool child = false;
  };
  Result<Started> Start(const std::filesystem::path& job_dir) EXCLUDES(mutex_);

  // The launcher's pid; 0 before the first Start or after it ended. For tests.
  pid_t launcher_pid() EXCLUDES(mutex_);

 private:
  // Spawns the launcher; after a failure (NotStarted), not again for a minute.
  Status Spawn() REQUIRES(mutex_);
  // The launcher could not be spawned, or ended before it answered its first request: logged
  // (once until a launcher answers) and not tried again for a minute.
  void NotStarted(const std::string& why) REQUIRES(mutex_);
  Status SpawnNow() REQUIRES(mutex_);
  // Closes the socket and reaps the launcher; `kill`: SIGKILL first (it may be stuck in a launch).
  void Stop(bool kill) REQUIRES(mutex_);
  // One request on the launcher's socket: the answer, or an error if the launcher is gone or
  // gave no answer within 10 s. `taken`: the launcher sent its receipt ("."), after which it
  // may have forked the supervisor before it failed; before it, it forked nothing.
  Result<std::string> Ask(const std::string& job_dir, bool& taken) REQUIRES(mutex_);
  Result<std::string> Receive() REQUIRES(mutex_);

  // Which file the launcher was started from: device, inode, size and modification time.
  struct FileIdentity {
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = 0;
    int64_t modified_ns = 0;
    bool operator==(const FileIdentity&) const = default;
  };
  std::optional<FileIdentity> StepdIdentity() const;
  // The launcher was started from another file than the one at stepd_ now: retired (Stop).
  void RetireIfReplaced() REQUIRES(mutex_);

  const std::filesystem::path stepd_;
  Mutex mutex_;
  std::optional<FileIdentity> started_from_ GUARDED_BY(mutex_);
  int socket_ GUARDED_BY(mutex_) = -1;
  pid_t launcher_ GUARDED_BY(mutex_) = 0;
  std::optional<std::chrono::steady_clock::time_point> spawn_failed_ GUARDED_BY(mutex_);
};

}  // namespace drover::agent
