// The step supervisor's life: prolog, cgroup, batch shell, signals, cleanup, epilog, status.
// See supervisor.h.
#include "agent/stepd/supervisor.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <optional>
#include <thread>

#include "agent/host/cgroup.h"
#include "agent/host/job_container.h"
#include "agent/host/job_env.h"
#include "agent/stepd/batch_shell.h"
#include "agent/stepd/detach.h"
#include "agent/stepd/user_environment.h"
#include "common/text.h"

namespace drover::agent {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// How long the final SIGKILLs may take before the supervisor gives up and reports.
constexpr auto kFinalKillBound = std::chrono::seconds(10);
constexpr uint64_t kMiB = 1 << 20;
constexpr auto kRemoveWait = std::chrono::seconds(2);
constexpr auto kRemovePoll = std::chrono::milliseconds(20);

// The signals the supervisor keeps for itself, besides SIGTERM; see supervisor.h.
bool OwnSignal(int signal) {
  switch (signal) {
    case SIGKILL:
    case SIGSTOP:
    case SIGCHLD:
    case SIGPIPE:
    case SIGSEGV:
    case SIGBUS:
    case SIGFPE:
    case SIGILL:
    case SIGABRT:
    case SIGTRAP:
    case SIGSYS:
      return true;
    default:
      return signal >= 32 && signal < SIGRTMIN;  // glibc's own real-time signals
  }
}

std::string Timestamp() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  ::localtime_r(&now, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &local);
  return text;
}

std::string DescribeWait(int wait_status) {
  if (WIFEXITED(wait_status)) return fmt::format("exited with code {}", WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status))
    return fmt::format("was killed by signal {} ({})", WTERMSIG(wait_status),
                       ::strsignal(WTERMSIG(wait_status)));
  return fmt::format("ended with wait status {}", wait_status);
}

// The state and parent of process `pid` (/proc/<pid>/stat); nullopt once it is gone.
std::optional<std::pair<char, long>> StateAndParent(pid_t pid) {
  int fd = ::open(fmt::format("/proc/{}/stat", pid).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buffer[1024];
  ssize_t got = ::read(fd, buffer, sizeof buffer - 1);
  ::close(fd);
  if (got <= 0) return std::nullopt;
  std::string_view text(buffer, got);
  size_t close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  char state = 0;
  long parent = 0;
  if (std::sscanf(std::string(text.substr(close + 1)).c_str(), " %c %ld", &state, &parent) != 2)
    return std::nullopt;
  return std::pair{state, parent};
}

// The children the kernel lists for this process's threads (/proc/self/task/<tid>/children;
// an orphan a subreaper inherits becomes one of its threads' children), zombies among them.
// False where the kernel keeps no such lists (built without CONFIG_PROC_CHILDREN).
bool ListedChildren(std::vector<pid_t>& children) {
  bool listed = false;
  std::error_code error;
  for (const auto& task : fs::directory_iterator("/proc/self/task", error)) {
    int fd = ::open((task.path() / "children").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    listed = true;
    std::string text;
    char buffer[4096];
    ssize_t got = 0;
    while ((got = ::read(fd, buffer, sizeof buffer)) > 0 || (got < 0 && errno == EINTR))
      if (got > 0) text.append(buffer, got);
    ::close(fd);
    for (const std::string& word : Split(Trim(text), ' '))  // "12 34 "
      if (auto pid = ParseInt64(word); pid && *pid > 0)
        children.push_back(static_cast<pid_t>(*pid));
  }
  return listed;
}

// This process's children that are still running (not zombies). From the kernel's lists of
// them: a look at every process in /proc took ~90 reads a job's end on an idle machine, and one
// per process on a busy one. The walk of /proc where the kernel keeps no lists.
std::vector<pid_t> LiveChildren() {
  const pid_t self = ::getpid();
  auto live = [self](pid_t pid) {
    auto seen = StateAndParent(pid);
    return seen && seen->second == self && seen->first != 'Z' && seen->first != 'X';
  };
  std::vector<pid_t> children;
  if (ListedChildren(children)) {
    std::erase_if(children, [&](pid_t pid) { return !live(pid); });
    return children;
  }
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/proc", error)) {
    auto pid = ParseInt64(entry.path().filename().string());
    if (pid && *pid > 0 && live(static_cast<pid_t>(*pid)))
      children.push_back(static_cast<pid_t>(*pid));
  }
  return children;
}

// Environment variables of the job that the prolog and epilog also get, as Slurm passes them.
const char* const kProgramVariables[] = {
    "SLURM_JOB_NAME",      "SLURM_JOB_PARTITION",  "SLURM_JOB_ACCOUNT",
    "SLURM_CLUSTER_NAME",  "SLURM_JOB_NODELIST",   "SLURM_ARRAY_JOB_ID",
    "SLURM_ARRAY_TASK_ID", "CUDA_VISIBLE_DEVICES", "SLURM_JOB_GPUS"};

class Supervisor {
 public:
  Supervisor(fs::path job_dir, BatchLaunch launch, std::vector<std::string> environment)
      : job_dir_(std::move(job_dir)),
        launch_(std::move(launch)),
        environment_(std::move(environment)) {}

  BatchStatus Run();

 private:
  enum class Phase { kPrologue, kJob, kEpilogue };

  template <typename... Args>
  void Log(fmt::format_string<Args...> format, Args&&... args) {
    fmt::print(stderr, "{} droverstepd[{}]: job {}: {}\n", Timestamp(), ::getpid(), launch_.job_id,
               fmt::format(format, std::forward<Args>(args)...));
  }

  void BlockSignals();
  int NextSignal(std::optional<Clock::time_point> deadline);
  void OnSignal(int signal);
  void Reap();
  std::string RunProgram(const std::string& program, std::string_view context);
  std::vector<std::string> ProgramEnvironment(std::string_view context) const;
  void SetUpCgroup();
  std::string SetUpContainer();
  void RemoveContainer();
  Status Join(pid_t pid);
  void RunJob(const std::optional<ProcessUser>& user, BatchStatus& status);
  std::vector<std::string> JobEnvironment(const std::optional<ProcessUser>& user);
  void WaitForShell();
  void WatchMemory();
  void SignalJob(int signal);
  void KillEverything();
  void RecordUsage(BatchStatus& status);
  void RemoveCgroup();

  const fs::path job_dir_;
  const std::string& CgroupParent() const {
    return launch_.cgroup_parent.empty() ? launch_.node_name : launch_.cgroup_parent;
  }

  const BatchLaunch launch_;
  const std::vector<std::string> environment_;
  sigset_t signals_{};
  Phase phase_ = Phase::kPrologue;
  CgroupHierarchy hierarchy_;
  std::optional<JobCgroup> cgroup_;
  std::optional<JobContainer> container_;  // job_container/tmpfs, once made
  int mount_namespace_ = -1;               // the container's, open for the batch shell
  bool cancelled_ = false;
  std::optional<Clock::time_point> kill_deadline_;
  std::optional<Clock::time_point> memory_check_at_;  // OverMemoryKill's next look
  uint64_t over_memory_rss_mib_ = 0;                  // the RSS it was killed at; 0: it was not
  pid_t shell_pid_ = 0, program_pid_ = 0;
  std::optional<int> shell_status_, program_status_;
  // What wait4 reports for every process of the job reaped here: the shell (with what it
  // reaped) and the orphans this subreaper inherits. Used where the cgroup cannot tell.
  double job_cpu_seconds_ = 0;
  double job_user_cpu_seconds_ = 0, job_system_cpu_seconds_ = 0;
  uint64_t job_max_rss_kib_ = 0;
};

void Supervisor::BlockSignals() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGCHLD);
  sigaddset(&signals_, SIGTERM);
  for (int signal = 1; signal <= SIGRTMAX; ++signal)
    if (!OwnSignal(signal)) sigaddset(&signals_, signal);
  ::sigprocmask(SIG_BLOCK, &signals_, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

// The next signal, or 0 once `deadline` has passed.
int Supervisor::NextSignal(std::optional<Clock::time_point> deadline) {
  for (;;) {
    int signal = 0;
    if (!deadline) {
      signal = ::sigwaitinfo(&signals_, nullptr);
    } else {
      auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(*deadline - Clock::now());
      if (left.count() <= 0) return 0;
      timespec wait{static_cast<time_t>(left.count() / 1'000'000'000),
                    static_cast<long>(left.count() % 1'000'000'000)};
      signal = ::sigtimedwait(&signals_, nullptr, &wait);
      if (signal < 0 && errno == EAGAIN) return 0;
    }
    if (signal > 0) return signal;
  }
}

void Supervisor::OnSignal(int signal) {
  if (signal == SIGCHLD) return Reap();
  if (phase_ != Phase::kJob) {
    if (signal == SIGTERM && phase_ == Phase::kPrologue && !cancelled_) {
      cancelled_ = true;
      Log("cancelled during the prolog: the batch script will not be started");
    } else {
      Log("signal {} ({}) dropped: the batch script is not running", signal, ::strsignal(signal));
    }
    return;
  }
  if (signal != SIGTERM) {
    Log("delivering signal {} ({}) to the job's processes", signal, ::strsignal(signal));
    return SignalJob(signal);
  }
  if (cancelled_) return;
  cancelled_ = true;
  Log("cancelled: SIGCONT and SIGTERM to the job's processes, SIGKILL in {} s",
      launch_.kill_wait_seconds);
  SignalJob(SIGCONT);
  SignalJob(SIGTERM);
  kill_deadline_ = Clock::now() + std::chrono::seconds(launch_.kill_wait_seconds);
}

void Supervisor::Reap() {
  for (;;) {
    int wait_status = 0;
    rusage usage{};
    pid_t pid = ::wait4(-1, &wait_status, WNOHANG, &usage);
    if (pid <= 0) return;
    if (pid == program_pid_) {
      program_status_ = wait_status;
      continue;
    }
    if (phase_ == Phase::kJob) {
      double user = static_cast<double>(usage.ru_utime.tv_sec) +
                    static_cast<double>(usage.ru_utime.tv_usec) / 1e6;
      double system = static_cast<double>(usage.ru_stime.tv_sec) +
                      static_cast<double>(usage.ru_stime.tv_usec) / 1e6;
      job_user_cpu_seconds_ += user;
      job_system_cpu_seconds_ += system;
      job_cpu_seconds_ += user + system;
      job_max_rss_kib_ = std::max<uint64_t>(job_max_rss_kib_, usage.ru_maxrss);
    }
    if (pid == shell_pid_) shell_status_ = wait_status;
  }
}

std::vector<std::string> Supervisor::ProgramEnvironment(std::string_view context) const {
  // Like Slurm's: no PATH, so a prolog names what it runs in full.
  std::vector<std::string> environment;
  SetVariable(environment, "SLURM_JOB_ID", std::to_string(launch_.job_id));
  SetVariable(environment, "SLURM_JOBID", std::to_string(launch_.job_id));
  SetVariable(environment, "SLURM_JOB_UID", std::to_string(launch_.uid));
  SetVariable(environment, "SLURM_JOB_GID", std::to_string(launch_.gid));
  SetVariable(environment, "SLURM_JOB_USER", launch_.user);
  SetVariable(environment, "SLURMD_NODENAME", launch_.node_name);
  SetVariable(environment, "SLURM_SCRIPT_CONTEXT", context);
  for (const char* name : kProgramVariables)
    if (auto value = FindVariable(environment_, name)) SetVariable(environment, name, *value);
  return environment;
}

// Runs the prolog or epilog to its end; empty when it succeeded, else what went wrong.
std::string Supervisor::RunProgram(const std::string& program, std::string_view context) {
  const char* what = phase_ == Phase::kPrologue ? "prolog" : "epilog";
  auto pid = ForkProgram(program, ProgramEnvironment(context));
  if (!pid) return fmt::format("{} {} could not be started: {}", what, program, pid.error());
  program_pid_ = *pid;
  program_status_.reset();
  // PrologEpilogTimeout: past it the program and what it started are killed, and it failed.
  std::optional<Clock::time_point> deadline;
  if (launch_.prolog_epilog_timeout_seconds)
    deadline = Clock::now() + std::chrono::seconds(launch_.prolog_epilog_timeout_seconds);
  bool timed_out = false;
  while (!program_status_) {
    int signal = NextSignal(timed_out ? std::nullopt : deadline);
    if (signal == 0) {
      timed_out = true;
      ::kill(-program_pid_, SIGKILL);
      ::kill(program_pid_, SIGKILL);
      continue;
    }
    OnSignal(signal);
  }
  program_pid_ = 0;
  if (timed_out) {
    std::string failure =
        fmt::format("{} {} timed out after {} s (PrologEpilogTimeout) and was killed", what,
                    program, launch_.prolog_epilog_timeout_seconds);
    Log("{}", failure);
    return failure;
  }
  if (WIFEXITED(*program_status_) && WEXITSTATUS(*program_status_) == 0) return {};
  std::string failure = fmt::format("{} {} {}", what, program, DescribeWait(*program_status_));
  Log("{}", failure);
  return failure;
}

void Supervisor::SetUpCgroup() {
  JobCgroupSetUp made =
      SetUpJobCgroup(launch_, [this](const std::string& line) { Log("{}", line); });
  hierarchy_ = std::move(made.hierarchy);
  cgroup_ = std::move(made.cgroup);
}

// JobContainerType=job_container/tmpfs: the job's private /tmp and /dev/shm. Empty when made (or
// not asked for); else why not, which fails the job as a failed prolog does (the node drains).
std::string Supervisor::SetUpContainer() {
  if (launch_.container_base.empty()) return "";
  JobContainer container{launch_.container_base, launch_.container_dir, launch_.container_dirs,
                         launch_.container_auto_base};
  if (Status made = CreateJobContainer(container); !made)
    return fmt::format("job_container/tmpfs: {}", made.error());
  container_ = std::move(container);
  auto opened = OpenJobNamespace(*container_);
  if (!opened) {
    RemoveContainer();
    return fmt::format("job_container/tmpfs: {}", opened.error());
  }
  mount_namespace_ = *opened;
  Log("private {} under {}", drover::Join(launch_.container_dirs, ","), launch_.container_dir);
  return "";
}

void Supervisor::RemoveContainer() {
  if (mount_namespace_ >= 0) ::close(mount_namespace_);
  mount_namespace_ = -1;
  if (!container_) return;
  if (Status removed = RemoveJobContainer(*container_); !removed) Log("{}", removed.error());
  container_.reset();
}

// Puts the batch shell into the job's cgroup; where that fails, tracks it by session instead.
Status Supervisor::Join(pid_t pid) {
  Status added = cgroup_->AddProcess(pid);
  if (added || cgroup_->mode() == CgroupMode::kNone) return added;
  Log("cannot put the batch shell into the job's cgroup, tracking it by session instead: {}",
      added.error());
  if (Status removed = cgroup_->Remove(); !removed) Log("{}", removed.error());
  cgroup_ = JobCgroup::Untracked(hierarchy_, CgroupParent(), launch_.job_id, added.error());
  return cgroup_->AddProcess(pid);
}

// JobAcctGatherParams=OverMemoryKill: the job's processes' resident memory, summed as Slurm's
// jobacct_gather/linux does, against the job's memory on this node; past it, the job is killed
// and ends OUT_OF_MEMORY.
void Supervisor::WatchMemory() {
  memory_check_at_ = Clock::now() + std::chrono::seconds(launch_.memory_poll_seconds);
  auto pids = cgroup_->Pids();
  if (!pids) return Log("cannot list the job's processes: {}", pids.error());
  uint64_t rss_pages = 0;
  for (pid_t pid : *pids) {
    std::ifstream statm(fmt::format("/proc/{}/statm", pid));
    uint64_t size = 0, resident = 0;
    if (statm >> size >> resident) rss_pages += resident;
  }
  uint64_t rss_mib = rss_pages * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)) / kMiB;
  if (rss_mib <= launch_.over_memory_kill_mib) return;
  over_memory_rss_mib_ = rss_mib;
  memory_check_at_.reset();
  Log("the job exceeded its memory ({} MiB > {} MiB) and is killed (OverMemoryKill)", rss_mib,
      launch_.over_memory_kill_mib);
  if (Status killed = cgroup_->KillAll(kFinalKillBound); !killed) Log("{}", killed.error());
}

void Supervisor::SignalJob(int signal) {
  auto pids = cgroup_->Pids();
  if (!pids) return Log("cannot list the job's processes: {}", pids.error());
  for (pid_t pid : *pids) ::kill(pid, signal);
}

void Supervisor::WaitForShell() {
  if (launch_.over_memory_kill_mib)
    memory_check_at_ = Clock::now() + std::chrono::seconds(launch_.memory_poll_seconds);
  while (!shell_status_) {
    std::optional<Clock::time_point> wake = kill_deadline_;
    if (memory_check_at_ && (!wake || *memory_check_at_ < *wake)) wake = memory_check_at_;
    int signal = NextSignal(wake);
    if (signal) {
      OnSignal(signal);
      continue;
    }
    if (memory_check_at_ && Clock::now() >= *memory_check_at_) {
      WatchMemory();
      continue;
    }
    kill_deadline_.reset();
    Log("the job outlived kill_wait ({} s): SIGKILL", launch_.kill_wait_seconds);
    if (Status killed = cgroup_->KillAll(kFinalKillBound); !killed) Log("{}", killed.error());
  }
}

// Once the shell has exited: SIGKILL for everything left of the job, in its cgroup or session
// and among the orphans this subreaper inherited (which escapes a session with setsid()).
void Supervisor::KillEverything() {
  const auto deadline = Clock::now() + kFinalKillBound;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (Status killed = cgroup_->KillAll(std::max(left, std::chrono::milliseconds(0))); !killed)
      Log("{}", killed.error());
    std::vector<pid_t> children = LiveChildren();
    for (pid_t child : children) ::kill(child, SIGKILL);
    Reap();
    if (children.empty()) break;
    if (Clock::now() > deadline) {
      Log("{} orphaned processes survived SIGKILL", children.size());
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Reap();
}

void Supervisor::RecordUsage(BatchStatus& status) {
  status.cpu_seconds = job_cpu_seconds_;
  status.max_rss_mib = (job_max_rss_kib_ + 1023) / 1024;
  status.batch_user_cpu = job_user_cpu_seconds_;
  status.batch_system_cpu = job_system_cpu_seconds_;
  status.batch_rss_kib = job_max_rss_kib_;
  if (cgroup_->mode() == CgroupMode::kNone) return;
  if (auto cpu = cgroup_->CpuTimeNanoseconds())
    status.cpu_seconds = static_cast<double>(*cpu) / 1e9;
  else
    Log("CPU time from wait4 instead of the cgroup: {}", cpu.error());
  if (auto peak = cgroup_->PeakMemoryBytes())
    status.max_rss_mib = (*peak + kMiB - 1) / kMiB;
  else
    Log("peak memory from wait4 instead of the cgroup: {}", peak.error());
  if (auto oom = cgroup_->OomKilled())
    status.out_of_memory = *oom;
  else
    Log("cannot tell whether the job ran out of memory: {}", oom.error());
}

void Supervisor::RemoveCgroup() {
  // Just after its last process died, a v1 cgroup can still refuse rmdir (EBUSY) for a moment
  // while the kernel lets go of the dead tasks.
  for (auto deadline = Clock::now() + kRemoveWait;; std::this_thread::sleep_for(kRemovePoll)) {
    Status removed = cgroup_->Remove();
    if (removed) return;
    if (Clock::now() > deadline) return Log("{}", removed.error());
  }
}

// The batch shell's environment: the job's, over the user's login environment with
// --get-user-env. A login environment that cannot be read leaves the job's alone, as Slurm's
// slurmd runs "only with passed environment".
std::vector<std::string> Supervisor::JobEnvironment(const std::optional<ProcessUser>& user) {
  auto request = ParseUserEnvironmentRequest(launch_.get_user_env);  // ReadLaunch checked it
  if (!request || !*request) return environment_;
  auto login = LoadLoginEnvironment(launch_.user, user, **request);
  if (!login) {
    Log("cannot read the login environment of {} (--get-user-env): {}; running only with the "
        "job's environment",
        launch_.user, login.error());
    return environment_;
  }
  return MergeUnderJobEnvironment(std::move(*login), environment_);
}

void Supervisor::RunJob(const std::optional<ProcessUser>& user, BatchStatus& status) {
  ShellPlan plan{(job_dir_ / "script").string(),
                 launch_.arguments,
                 JobEnvironment(user),
                 user,
                 launch_.work_dir,
                 launch_.stdout_path,
                 launch_.stderr_path,
                 launch_.stdin_path,
                 launch_.open_mode,
                 {}};
  // ReadLaunch checked every entry.
  for (const std::string& entry : launch_.rlimits)
    if (auto limit = ParsePropagatedLimit(entry)) plan.limits.push_back(std::move(*limit));
  plan.mount_namespace = mount_namespace_;
  phase_ = Phase::kJob;
  status.start_time = std::time(nullptr);
  auto shell = ForkBatchShell(plan, [this](pid_t pid) { return Join(pid); });
  if (!shell) {
    status.launch_failed = true;
    status.exit_code = 1;
    status.reason = shell.error();
    status.end_time = std::time(nullptr);
    Log("the batch script was not started: {}", shell.error());
    return;
  }
  shell_pid_ = shell->pid;
  int report_fd = shell->report_fd;
  Log("batch shell {} started", shell_pid_);
  if (Status written = WriteProcessFile(job_dir_ / "job.pid", shell_pid_); !written)
    Log("{}", written.error());
  WaitForShell();
  status.end_time = std::time(nullptr);
  Log("batch shell {}", DescribeWait(*shell_status_));
  KillEverything();
  if (WIFEXITED(*shell_status_)) status.exit_code = WEXITSTATUS(*shell_status_);
  if (WIFSIGNALED(*shell_status_)) status.signal = WTERMSIG(*shell_status_);
  if (std::string said = ReadLaunchError(report_fd); !said.empty()) {
    status.launch_failed = true;
    status.reason = said;
  }
  status.cancelled = cancelled_;
  RecordUsage(status);
  if (over_memory_rss_mib_) {
    status.out_of_memory = true;
    status.reason = fmt::format("the job exceeded its memory limit ({} > {} MiB) and was killed",
                                over_memory_rss_mib_, launch_.over_memory_kill_mib);
  }
  if (status.out_of_memory && status.reason.empty())
    status.reason =
        fmt::format("out of memory: the kernel killed a process of the job at its limit of {} MiB",
                    launch_.memory_limit_mib);
  status.cgroup_mode = CgroupModeName(cgroup_->mode());
  phase_ = Phase::kEpilogue;
}

BatchStatus Supervisor::Run() {
  BlockSignals();
  // Orphans of the job become ours, so they are reaped and killed here, not by init.
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
    Log("cannot become a child subreaper: {}", std::strerror(errno));
  BatchStatus status;
  auto credentials = CredentialsFor(launch_);
  if (!credentials) {
    status.launch_failed = true;
    status.exit_code = 1;
    status.reason = credentials.error();
    Log("refused: {}", status.reason);
  } else {
    std::string prolog_failure;
    if (!launch_.prolog.empty()) prolog_failure = RunProgram(launch_.prolog, "prolog_slurmd");
    if (!prolog_failure.empty()) {
      status.prolog_failed = true;
      status.reason = prolog_failure;
    } else if (cancelled_) {
      status.cancelled = true;
      status.reason = "cancelled before the batch script started";
    } else if (std::string failure = SetUpContainer(); !failure.empty()) {
      status.prolog_failed = true;  // the node cannot run jobs: drained, the job requeued
      status.reason = failure;
      Log("{}", failure);
    } else {
      SetUpCgroup();
      RunJob(*credentials, status);
    }
    phase_ = Phase::kEpilogue;
    if (!launch_.epilog.empty())
      if (std::string failure = RunProgram(launch_.epilog, "epilog_slurmd"); !failure.empty()) {
        status.epilog_failed = true;
        status.reason = status.reason.empty() ? failure : status.reason + "; " + failure;
      }
  }
  if (cgroup_) RemoveCgroup();
  RemoveContainer();
  if (Status written = WriteStatus(job_dir_, status); !written) Log("{}", written.error());
  Log("done: exit code {}, signal {}{}", status.exit_code, status.signal,
      status.reason.empty() ? "" : ", " + status.reason);
  return status;
}

}  // namespace

JobCgroupSetUp SetUpJobCgroup(const BatchLaunch& launch,
                              const std::function<void(const std::string&)>& log) {
  const std::string& parent =
      launch.cgroup_parent.empty() ? launch.node_name : launch.cgroup_parent;
  const bool wanted = launch.cgroup_mode != "none";
  CgroupHierarchy hierarchy;
  if (wanted) hierarchy = DetectCgroups(launch.cgroup_root);
  if (!wanted) {
    hierarchy.reason = "the launch file says cgroup_mode=none";
  } else if (launch.cgroup_mode != "auto" && CgroupModeName(hierarchy.mode) != launch.cgroup_mode) {
    std::string found = hierarchy.mode == CgroupMode::kNone
                            ? hierarchy.reason
                            : fmt::format("cgroup {}", CgroupModeName(hierarchy.mode));
    hierarchy = CgroupHierarchy{};
    hierarchy.reason = fmt::format("the launch file asks for cgroup {}, but {} has {}",
                                   launch.cgroup_mode, launch.cgroup_root, found);
  }
  auto created = JobCgroup::Create(hierarchy, parent, launch.job_id);
  std::optional<JobCgroup> made;
  if (created) {
    made = std::move(*created);
  } else {
    log(fmt::format("cannot create the job's cgroup: {}", created.error()));
    made = JobCgroup::Untracked(hierarchy, parent, launch.job_id, created.error());
  }
  JobCgroup& cgroup = *made;
  if (cgroup.mode() == CgroupMode::kNone) {
    log(fmt::format("cgroups off, the job is tracked by its session: {}",
                    cgroup.untracked_reason()));
    return {std::move(hierarchy), std::move(cgroup)};
  }
  log(fmt::format("cgroup {} at {}", CgroupModeName(cgroup.mode()), cgroup.path().string()));
  if (launch.memory_limit_mib)
    if (Status ok = cgroup.SetMemoryLimits(launch.memory_limit_mib * kMiB,
                                           launch.memory_and_swap_limit_mib * kMiB);
        !ok)
      log(fmt::format("memory limit not set: {}", ok.error()));
  if (!launch.cpus.empty())
    if (Status ok = cgroup.SetCpus(launch.cpus); !ok)
      log(fmt::format("CPUs not confined: {}", ok.error()));
  if (!launch.devices_denied.empty()) {
    auto isolation = cgroup.RestrictDevices(launch.devices_denied);
    if (!isolation)
      log(fmt::format("GPUs not isolated: {}", isolation.error()));
    else if (!isolation->enforced)
      log(fmt::format("GPUs not isolated: {}", isolation->reason));
  }
  return {std::move(hierarchy), std::move(cgroup)};
}

BatchStatus SuperviseBatchJob(const fs::path& job_dir, const BatchLaunch& launch,
                              const std::vector<std::string>& environment) {
  SetCommandLine(SupervisorTitle(launch.job_id, launch.extern_step, launch.node_name));
  return Supervisor(job_dir, launch, environment).Run();
}

}  // namespace drover::agent
