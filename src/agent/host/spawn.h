// Starting a process on a node — a job's batch shell, its prolog and epilog, an srun step's
// tasks — from one description (user, descriptors, directory, environment, session, limits) by
// one fork-and-exec that reports which phase failed and why. Nothing between fork and exec
// allocates or takes a lock, so the multi-threaded agent uses it too. It never decides whose
// process may start: callers refuse before they describe.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/resource_limits.h"
#include "common/result.h"

namespace drover::agent {

// The account a process becomes: supplementary groups, then gid, then uid (in that order, while
// it still may). Only root can switch; the caller decides whether to.
struct ProcessUser {
  std::string name;  // for messages and the group database
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups
};

// `user`'s groups from the group database (getgrouplist), `gid` among them; {gid} alone when the
// database does not know the user.
std::vector<gid_t> GroupsOf(const std::string& user, gid_t gid);

// Where one of the standard descriptors (0, 1, 2) comes from in the child.
struct StdioSource {
  enum Kind {
    kInherit,       // the caller's
    kDescriptor,    // `fd`, an open descriptor of the caller's (a pipe end, a terminal)
    kFile,          // `path`, opened with `flags` (and mode 0644) after the user switch
    kSameAsStdout,  // stderr only: the same open file as stdout
  };
  Kind kind = kInherit;
  int fd = -1;
  std::string path;
  int flags = 0;

  static StdioSource Descriptor(int fd) { return {kDescriptor, fd, "", 0}; }
  static StdioSource File(std::string path, int flags) {
    return {kFile, -1, std::move(path), flags};
  }
  static StdioSource SameAsStdout() { return {kSameAsStdout, -1, "", 0}; }
};

// What the child's process group and session become.
enum class SessionKind {
  kInherit,       // the caller's
  kProcessGroup,  // a process group of its own (setpgid)
  kSession,       // a session of its own (setsid): a job's leader
  kTerminal,      // a session whose controlling terminal is `terminal` (srun --pty)
};

struct ResourceLimit {
  int resource = 0;  // RLIMIT_*
  rlim_t soft = 0, hard = 0;
};

// 1 to NSIG - 1: every disposition back to SIG_DFL.
std::vector<int> EverySignal();

struct ProcessSpec {
  std::string name = "the process";  // in "... died before it started"
  std::string program;               // the file exec'd; empty: fails as execve's ENOENT
  std::vector<std::string> argv;     // argv[0] included
  std::vector<std::string> environment;
  // SLURM_TASK_PID=<the child's pid> (set as SetVariable does: in place, else appended).
  bool task_pid_variable = false;
  std::optional<ProcessUser> user;  // none: the caller's credentials
  StdioSource stdin_source, stdout_source, stderr_source;
  // None: the caller's. One the user cannot enter (an empty one included) falls back to /tmp, as
  // Slurm's does; a /tmp it cannot enter either fails the start, unless `work_dir_optional`.
  std::optional<std::string> work_dir;
  bool work_dir_optional = false;  // srun's tasks run wherever they are left, as they always did
  SessionKind session = SessionKind::kInherit;
  int terminal = -1;            // kTerminal: the pseudo-terminal's slave side
  std::optional<mode_t> umask;  // none: the caller's
  std::vector<ResourceLimit> limits;
  // Limits carried from the submitting shell (--propagate, PropagateResourceLimits), set as
  // Slurm's slurmstepd sets them: as the user (after the switch), the soft limit, and the hard
  // one raised to it when below. One that cannot be set does not stop the start; one the user
  // asked for is said on stderr (Slurm's "Can't propagate RLIMIT_NOFILE of 8192 from submit
  // host: Operation not permitted", after `propagate_prefix`).
  std::vector<PropagatedLimit> propagated_limits;
  std::string propagate_prefix = "droverstepd: error: ";
  std::vector<int> default_signals = EverySignal();  // reset to SIG_DFL; the mask is emptied
  // An open mount namespace (the job's private /tmp, job_container.h) the child enters with
  // setns(2) once joined, before it becomes the user; -1: the caller's.
  int mount_namespace = -1;
  // srun --mem-bind: set_mempolicy(2) before exec; `nodes` is the NUMA node mask (nodes 0-63).
  struct MemoryPolicy {
    int mode = 0;  // MPOL_BIND or MPOL_PREFERRED
    unsigned long nodes = 0;
  };
  std::optional<MemoryPolicy> memory_policy;
  // Non-empty ("droverstepd: error: "): failures, and the fallback to /tmp, are also printed on
  // the child's stderr with this prefix, so a job's own error file tells its user.
  std::string stderr_prefix;
  // Set: the parent fills the string during `join` (srun --cpu-bind=verbose's lines, which name
  // the child's pid) and the child writes it on its stderr once that is in place, as the user,
  // so the text lands only where the task itself may write. At most kStderrNoteMost bytes.
  std::string* stderr_note = nullptr;
  // Open descriptors of the caller's that the program keeps, under the same numbers (a step's
  // PMI socket, PMI_FD); every other beyond 0, 1 and 2 is closed on exec.
  std::vector<int> kept_descriptors;
};
inline constexpr size_t kStderrNoteMost = 4096;

// The phases of the child, in order; a failure names the first that failed.
enum class SpawnPhase : int {
  kSession,
  kLimits,
  kGroups,
  kGid,
  kUid,
  kStdout,
  kStderr,
  kStdin,
  kRedirect,  // dup2 onto 0, 1 or 2
  kWorkDir,
  kExec,
};

struct SpawnFailure {
  SpawnPhase phase = SpawnPhase::kExec;
  int error = 0;        // errno
  std::string message;  // "could not open stdout file /x/out: Permission denied"
};

struct Spawned {
  pid_t pid = -1;
  // Readable once the child has exec'd (nothing) or failed (the failure); see ReadSpawnFailure.
  // The caller reads it or keeps it open until the child is reaped.
  int report_fd = -1;
};

// Forks the process. The child resets its signals and makes its session, then waits while the
// parent runs `join(pid)` (put it into the job's cgroup, record its process group), then sets
// umask and limits, becomes the user, opens stdout, stderr and stdin, changes directory and
// execs. A failure there ends the child with exit code 1 (execve's own: errno, as Slurm's
// slurmstepd does). An error from `join` kills the child; the error says so. Errors: "pipe: ...",
// "fork: ...", "<name> died before it started: setsid: ...".
Result<Spawned> Spawn(const ProcessSpec& spec, const std::function<Status(pid_t)>& join = {});

// Blocks until the child has exec'd (none) or failed; closes `report_fd` and sets it to -1.
std::optional<SpawnFailure> ReadSpawnFailure(int& report_fd);

// `program` as execvp would find it, but along the PATH of `environment` (the job's, not the
// caller's); a name with a slash is itself; empty when no executable file is found.
std::string ResolveProgram(const std::string& program, const std::vector<std::string>& environment);

// Creates or opens `path` with `flags` (and mode 0644) as `user` (none: the caller) in a forked
// child, so the file is the user's and only where the user may write; 0 or the errno.
int CreateFileAsUser(const std::optional<ProcessUser>& user, const std::string& path, int flags);

// Writes `data` to `path` (created or truncated, then given `mode`) as `user`, in a forked child
// as CreateFileAsUser does: srun --bcast's copies belong to the job's user. 0 or the errno.
int WriteFileAsUser(const std::optional<ProcessUser>& user, const std::string& path,
                    std::string_view data, mode_t mode);
// Appends `data` to `path`, which must exist, as `user` (scontrol notify writes into a batch
// shell's /proc/PID/fd/2 this way: only where the shell's user may write). Never blocks on a
// full pipe (EAGAIN). 0 or the errno.
int AppendFileAsUser(const std::optional<ProcessUser>& user, const std::string& path,
                     std::string_view data);
// Makes directory `path` (mode 0700) as `user`; one that exists is fine. 0 or the errno.
int MakeDirectoryAsUser(const std::optional<ProcessUser>& user, const std::string& path);

// sbcast: a piece of a file written at `offset` as `user`. The first piece (offset 0) creates
// the file (O_EXCL unless `replace`, which truncates one that exists); the last gives it `mode`
// and, when set, `times` (access, modification). 0 or the errno.
struct FilePiece {
  uint64_t offset = 0;
  std::string_view data;
  bool last = false, replace = false;
  mode_t mode = 0600;
  std::optional<std::pair<int64_t, int64_t>> times;
};
int WritePieceAsUser(const std::optional<ProcessUser>& user, const std::string& path,
                     const FilePiece& piece);

}  // namespace drover::agent
