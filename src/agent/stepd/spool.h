// The job directory the agent and the step supervisor (droverstepd) share: what to run, written
// by the agent, and how it ended, written by the supervisor. The only channel between the two,
// so a restarted agent finds everything here; nothing in it is trusted from the job's user.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/host/device_filter.h"
#include "common/process_file.h"  // supervisor.pid and job.pid: WriteProcessFile, ...
#include "common/result.h"

namespace drover::agent {

// <spool>/job_<id>/ holds, owned by the agent's user (root in production) and mode 0711 so the
// job's user can reach its script but neither list nor change anything:
//
//   script          the batch script, owned by the job's user, mode 0700; exec'd directly,
//                   so its #! line picks the interpreter              (agent: WriteScript)
//   environ         the script's whole environment, NAME=value entries each ended by a NUL
//                   (BuildBatchEnvironment's output)                  (agent: WriteEnvironment)
//   launch          what to run and how, below                          (agent: WriteLaunch)
//   supervisor.pid  "pid=N" and "started=T" (field 22 of /proc/N/stat), once the supervisor
//                   has daemonized; T tells a reused pid from it    (supervisor; SupervisorAlive)
//   job.pid         the same for the batch shell, once forked     (supervisor; ReadProcessFile)
//   held            instead of a supervisor: a node that runs no batch script and has nothing
//                   to hold (no cgroup, prolog, epilog, job container, NVMe or MPS) runs no
//                   process for the job; the agent ends it itself                (agent)
//   ending          a held job the controller ended: the agent finishes it     (agent)
//   status          how the job ended, below; written last, atomically  (supervisor or agent)
//   stepd.log       the supervisor's own messages, and the prolog's and epilog's output
//
// `launch` and `status` are text, one key=value per line; '#' starts a comment line. Values
// escape '\' as "\\", a newline as "\n", a tab as "\t" and other control bytes as "\xHH".
//
// launch, keys in any order (* required):
//   job_id*  uid*  gid*  user*      the job and the account it runs as
//   node_name*                      this node, as slurm.conf names it (the cgroup's parent)
//   work_dir*                       the script's working directory (/tmp if chdir fails)
//   stdout*  stderr*  stdin*        absolute paths, patterns already expanded
//   open_mode=truncate|append       how stdout/stderr are opened (default truncate)
//   cgroup_mode=auto|v1|v2|none     auto: whatever the host has; v1/v2: expect that, else
//                                   fall back to none; none: track by session (default auto)
//   cgroup_root=/sys/fs/cgroup      where the hierarchy is mounted
//   cgroup_parent=NAME              the job's cgroup is <root>/drover/NAME/job_<id> (default:
//                                   node_name; emulated agents sharing a host add their own)
//   cpus=0-3,8                      OS CPU ids of the job's cores (CpusOfCores); empty: all
//   memory_limit_mib=N              the cgroup's RAM limit; 0: none (default)
//   memory_and_swap_limit_mib=N     the cgroup's RAM+swap limit; 0: swap not limited (default)
//   over_memory_kill_mib=N          OverMemoryKill: the job is killed once its processes' RSS
//                                   passes N; 0: not watched (default)
//   memory_poll_seconds=N           how often that RSS is looked at (default 30)
//   devices_denied=195:2,195:3      character devices the job may not open (the node's GPUs
//                                   it was not given; ConstrainDevices). An older agent's
//                                   gpu_minors_denied=2,3 reads as 195:2,195:3
//                                   (gpu_minors, the given ones, is ignored)
//   container_base=/var/nvme/jobs   JobContainerType=job_container/tmpfs: BasePath, and
//   container_dir=/var/nvme/jobs/12 the job's directory under it; the job runs in a mount
//   container_dirs=/tmp,/dev/shm    namespace of its own in which these are private
//   container_auto_base=1           (job_container.h); AutoBasePath. Empty base: none
//   prolog=/path  epilog=/path      run as the supervisor's user (root) before / after
//   kill_wait=30                    seconds from SIGTERM to SIGKILL on cancel (KillWait)
//   prolog_epilog_timeout=N         PrologEpilogTimeout: the prolog or epilog is killed and has
//                                   failed after N seconds; 0: no limit (default)
//   rlimits=NOFILE=U256:4096,...    limits carried from the submitting shell, set in the batch
//                                   shell as the user (common/resource_limits.h's entries)
//   get_user_env=8L                 sbatch --get-user-env: the user's login environment is
//                                   read (within 8 s; S: su without "-") under the job's
//   arg=...                         the script's arguments, one line each, in order
//
// status keys: exit_code, signal (0 unless the batch shell died of one), out_of_memory,
// cancelled, launch_failed (the script never ran: exit_code is 1, or errno when execve failed,
// as with Slurm), prolog_failed, epilog_failed, cpu_seconds (three decimals), max_rss_mib (the
// cgroup's peak, page cache included; without a cgroup the largest ru_maxrss of the job's
// processes), batch_user_cpu and batch_system_cpu (seconds, six decimals) and batch_rss_kib
// (the batch script's own processes, from wait4: srun's steps are not among them), start_time
// and end_time (Unix seconds, of the batch shell; 0 when none was
// started), cgroup_mode (v1, v2, none), and reason (what went wrong, for a person; empty when
// nothing did).

enum class OpenMode { kTruncate, kAppend };

struct BatchLaunch {
  uint64_t job_id = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string user;
  std::string node_name;
  std::string work_dir;
  std::string stdout_path, stderr_path, stdin_path;
  OpenMode open_mode = OpenMode::kTruncate;
  std::string cgroup_mode = "auto";
  std::string cgroup_root = "/sys/fs/cgroup";
  std::string cgroup_parent;  // empty: node_name
  std::vector<int> cpus;
  uint64_t memory_limit_mib = 0;
  uint64_t memory_and_swap_limit_mib = 0;
  uint64_t over_memory_kill_mib = 0;
  uint64_t memory_poll_seconds = 30;
  std::vector<DeviceNumber> devices_denied;
  std::string container_base, container_dir;  // job_container/tmpfs; empty base: none
  std::vector<std::string> container_dirs;
  bool container_auto_base = false;
  std::string prolog, epilog;  // empty: none
  uint32_t kill_wait_seconds = 30;
  uint32_t prolog_epilog_timeout_seconds = 0;
  std::vector<std::string> rlimits;  // "NAME=soft:hard" (--propagate, PropagateResourceLimits)
  std::string get_user_env;          // "[timeout][S|L]" (--get-user-env); empty: not asked
  std::vector<std::string> arguments;
  // The process holds the job's allocation on a node that runs no batch script (Slurm's extern
  // step), not the batch script: "step=extern" in the file, named so in `ps`.
  bool extern_step = false;
  bool operator==(const BatchLaunch&) const = default;
};

struct BatchStatus {
  int exit_code = 0;
  int signal = 0;
  bool out_of_memory = false;
  bool cancelled = false;
  bool launch_failed = false;
  bool prolog_failed = false;
  bool epilog_failed = false;
  double cpu_seconds = 0;
  uint64_t max_rss_mib = 0;
  double batch_user_cpu = 0, batch_system_cpu = 0;
  uint64_t batch_rss_kib = 0;
  int64_t start_time = 0, end_time = 0;
  std::string cgroup_mode = "none";
  std::string reason;
  bool operator==(const BatchStatus&) const = default;
};

std::filesystem::path JobDirectory(const std::filesystem::path& spool, uint64_t job_id);

// Agent side: makes <spool>/job_<id> with mode 0711. An existing one is an error, so a live
// supervisor's files are never written over; the agent removes a finished job's directory
// once it has read the status.
Result<std::filesystem::path> CreateJobDirectory(const std::filesystem::path& spool,
                                                 uint64_t job_id);

// Agent side. Each writes its file atomically (temporary file, rename); only the status is also
// fsynced (it is the record of how the job ended until the controller has it).
Status WriteLaunch(const std::filesystem::path& job_dir, const BatchLaunch& launch);
Status WriteEnvironment(const std::filesystem::path& job_dir,
                        const std::vector<std::string>& environment);
// Mode 0700; when the caller is root, owned by uid:gid.
Status WriteScript(const std::filesystem::path& job_dir, std::string_view text, uid_t uid,
                   gid_t gid);

// Errors name the file and line: "<dir>/launch:3: unknown key 'jobid' (did you mean
// 'job_id'?)", "<dir>/launch: missing work_dir", "<dir>/environ: entry 2 'x' is not NAME=value".
Result<BatchLaunch> ReadLaunch(const std::filesystem::path& job_dir);
Result<std::vector<std::string>> ReadEnvironment(const std::filesystem::path& job_dir);
// Both, as a supervisor reads them before it reports ready: the first error.
struct SupervisorInput {
  BatchLaunch launch;
  std::vector<std::string> environment;
};
Result<SupervisorInput> ReadSupervisorInput(const std::filesystem::path& job_dir);

// supervisor.pid and job.pid are process files (common/process_file.h), named here as before.
using drover::ProcessAlive;
using drover::ProcessRecord;
using drover::ProcessStartTime;
using drover::ReadProcessFile;
using drover::WriteProcessFile;

// Supervisor side.
Status WriteStatus(const std::filesystem::path& job_dir, const BatchStatus& status);

// For the agent. ReadStatus fails (the message says why) until the supervisor has finished.
Result<BatchStatus> ReadStatus(const std::filesystem::path& job_dir);
// Whether <job_dir>/supervisor.pid names a live supervisor. False before it has started, after
// it has exited, and when it died: a job directory with neither a live supervisor nor a status
// is a job whose fate is unknown, and the agent kills what is left of it.
bool SupervisorAlive(const std::filesystem::path& job_dir);

// The "held" marker of a processless hold: written (last, atomically) with the time the hold
// began; nullopt when the directory has none.
Status WriteHeld(const std::filesystem::path& job_dir, int64_t since);
std::optional<int64_t> ReadHeld(const std::filesystem::path& job_dir);
// "ending": the controller ended a processless hold, which the agent finishes (after KillWait
// for its steps' tasks) even across a restart of its own.
Status WriteHoldEnding(const std::filesystem::path& job_dir);
bool HoldEnding(const std::filesystem::path& job_dir);

}  // namespace drover::agent
