// srun's steps on this node (Agent::RunStep): the tasks start in the job's cgroup, as the job's
// user, with Slurm's per-task environment; their stdout and stderr go back on the RunStep
// stream (or to the files srun named), stdin from srun reaches task 0, and srun's signals reach
// every task. The tasks are children of this agent: a step's I/O runs through the agent, so an
// agent restart ends the step's stream either way (the batch script, under droverstepd, lives on).
#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <poll.h>
#include <pty.h>
#include <pwd.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "agent/daemon/agent.h"
#include "agent/host/cgroup.h"
#include "agent/host/job_env.h"
#include "agent/host/output_path.h"
#include "common/fd_io.h"
#include "common/text.h"
#include "wire/job_spec_codec.h"

namespace drover::agent {
namespace fs = std::filesystem;

namespace {

constexpr size_t kChunk = 32 * 1024;

// One task of the step on this node.
struct Task {
  uint32_t rank = 0;
  pid_t pid = -1;
  int out = -1, err = -1;  // our ends of its stdout/stderr (-1: to a file, or closed)
  bool ended = false;
  int status = 0;
  rusage usage{};
};

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// A program name resolved against the task's PATH, as execvp would (but with the task's PATH,
// not the agent's).
std::string Resolve(const std::string& program, const std::vector<std::string>& env) {
  if (program.find('/') != std::string::npos) return program;
  std::string path = FindVariable(env, "PATH").value_or("/usr/local/bin:/usr/bin:/bin");
  for (const std::string& dir : Split(path, ':')) {
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    struct stat info {};
    if (::stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        (info.st_mode & 0111) != 0)
      return candidate.string();
  }
  return "";
}

// Writes `value` in decimal at `at` (async-signal-safe: used between fork and exec).
void WriteDecimal(char* at, long value) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0 && n < 23);
  for (int i = 0; i < n; ++i) at[i] = digits[n - 1 - i];
  at[n] = '\0';
}

[[noreturn]] void ChildFail(int report, int error) {
  if (report >= 0) (void)!::write(report, &error, sizeof error);
  ::_exit(127);
}

}  // namespace

void Agent::SignalSteps(uint64_t job_id, int signal) {
  std::lock_guard lock(steps_mutex_);
  for (auto [it, end] = step_groups_.equal_range(job_id); it != end; ++it)
    ::kill(-it->second, signal);
}

Status Agent::RunStep(const v1::StepLaunch& launch, const StepWrite& write, const StepRead& read,
                      const std::function<void()>& cancel) {
  const v1::Job& job = launch.job();
  const uint64_t job_id = job.spec().job_id();
  auto spec = wire::FromProto(job.spec());
  if (!spec) return MakeError(fmt::format("job {}: {}", job_id, spec.error()));
  // The controller's launch of the job here may still be on its way (srun can be quicker).
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);;) {
    std::vector<uint64_t> running = RunningJobs();
    bool launching;
    {
      std::lock_guard lock(mutex_);
      launching = launching_.count(job_id) != 0;
    }
    if (!launching && std::binary_search(running.begin(), running.end(), job_id) &&
        (fs::exists(JobDir(job_id) / "job.pid") || ReadStatus(JobDir(job_id))))
      break;
    if (std::chrono::steady_clock::now() > deadline)
      return MakeError(fmt::format("job {} is not running on {}", job_id, node_name_));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // The step runs as the user the controller launched the job for here, whatever srun says.
  auto launched = ReadLaunch(JobDir(job_id));
  if (!launched) return MakeError(fmt::format("job {}: {}", job_id, launched.error()));
  if (launched->uid != spec->uid || launched->gid != spec->gid)
    return MakeError(fmt::format("job {} runs as uid {} on {}, not uid {}", job_id, launched->uid,
                                 node_name_, spec->uid));
  if (geteuid() != 0 && spec->uid != geteuid())
    return MakeError(fmt::format("droverd on {} runs as uid {} and cannot start uid {}'s tasks",
                                 node_name_, geteuid(), spec->uid));
  if (launch.tasks().empty()) return MakeError("no tasks to start on " + node_name_);
  if (launch.argv().empty() && launch.task_commands().empty())
    return MakeError("no command to run: give srun a program");

  // What the tasks share: the user, groups, GPUs, cgroup and environment.
  UserAccount user{spec->user, "/", "/bin/sh"};
  std::vector<gid_t> groups;
  {
    std::vector<char> buffer(16384);
    passwd entry{};
    passwd* found = nullptr;
    if (getpwuid_r(spec->uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found) {
      user.name = found->pw_name;
      user.home = found->pw_dir;
      int count = 64;
      groups.resize(count);
      if (getgrouplist(found->pw_name, spec->gid, groups.data(), &count) < 0) {
        groups.resize(count);
        getgrouplist(found->pw_name, spec->gid, groups.data(), &count);
      }
      groups.resize(std::max(count, 0));
    }
  }
  if (groups.empty()) groups.push_back(spec->gid);
  std::vector<uint32_t> gpus;
  for (const v1::NodeAllocation& part : job.allocation())
    if (part.node() == node_)
      for (int gpu : part.gpus()) gpus.push_back(static_cast<uint32_t>(gpu));
  std::sort(gpus.begin(), gpus.end());
  std::vector<uint32_t> visible = gpus;
  if (!options_.emulated && gpus_.source == GpuSource::kNvml)
    for (size_t i = 0; i < visible.size(); ++i) visible[i] = static_cast<uint32_t>(i);

  std::optional<JobCgroup> cgroup;
  {
    CgroupHierarchy hierarchy = DetectCgroups(options_.cgroup_root);
    fs::path base = hierarchy.mode == CgroupMode::kV1 && hierarchy.controllers.count("memory")
                        ? hierarchy.controllers.at("memory")
                        : hierarchy.root;
    if (hierarchy.mode != CgroupMode::kNone &&
        fs::exists(base / "drover" / CgroupParent() / fmt::format("job_{}", job_id)))
      if (auto made = JobCgroup::Create(hierarchy, CgroupParent(), job_id); made)
        cgroup = std::move(*made);
  }

  std::vector<std::string> base_env(launch.environment().begin(), launch.environment().end());
  std::vector<uint32_t> per_node(launch.tasks_per_node().begin(), launch.tasks_per_node().end());
  std::string step = std::to_string(launch.step_id());
  std::string counts = FormatCountList(per_node);
  std::string gtids;
  for (uint32_t rank : launch.tasks()) gtids += (gtids.empty() ? "" : ",") + std::to_string(rank);
  auto set = [&](std::string_view name, std::string_view value) {
    SetVariable(base_env, name, value);
  };
  set("SLURM_STEP_ID", step);
  set("SLURM_STEPID", step);
  set("SLURM_STEP_NODELIST", launch.node_list());
  set("SLURM_NODELIST", launch.node_list());
  set("SLURM_STEP_NUM_NODES", std::to_string(launch.nnodes()));
  set("SLURM_NNODES", std::to_string(launch.nnodes()));
  set("SLURM_STEP_NUM_TASKS", std::to_string(launch.ntasks()));
  set("SLURM_NTASKS", std::to_string(launch.ntasks()));
  set("SLURM_NPROCS", std::to_string(launch.ntasks()));
  set("SLURM_STEP_TASKS_PER_NODE", counts);
  set("SLURM_TASKS_PER_NODE", counts);
  set("SLURM_NODEID", std::to_string(launch.node_index()));
  set("SLURMD_NODENAME", node_name_);
  set("SLURM_GTIDS", gtids);
  set("SLURM_DISTRIBUTION", "block");
  if (launch.cpus_per_task() > 0)
    set("SLURM_CPUS_PER_TASK", std::to_string(launch.cpus_per_task()));
  if (std::string topology = TopologyAddress(); !topology.empty()) {
    set("SLURM_TOPOLOGY_ADDR", topology);
    size_t levels = static_cast<size_t>(std::count(topology.begin(), topology.end(), '.'));
    std::vector<std::string> pattern(levels, "switch");
    pattern.push_back("node");
    set("SLURM_TOPOLOGY_ADDR_PATTERN", Join(pattern, "."));
  }
  if (!gpus.empty()) {
    std::string list = fmt::format("{}", fmt::join(visible, ","));
    set("SLURM_STEP_GPUS", fmt::format("{}", fmt::join(gpus, ",")));
    set("SLURM_GPUS_ON_NODE", std::to_string(gpus.size()));
    for (std::string_view name :
         {"CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK"})
      set(name, list);
  }
  std::string work_dir = launch.work_dir().empty() ? user.home : launch.work_dir();
  if (::access(work_dir.c_str(), X_OK) != 0) work_dir = "/tmp";

  PatternContext pattern;
  pattern.job_id = job_id;
  pattern.array_job_id = spec->array_task_id != kNoArrayTask ? spec->array_job_id : 0;
  pattern.array_task_id = spec->array_task_id;
  pattern.step_id = launch.step_id();
  pattern.node_id = launch.node_index();
  pattern.node_name = node_name_;
  pattern.user_name = user.name;
  pattern.job_name = spec->name;
  pattern.work_dir = work_dir;

  // The files srun named are made (and truncated once) as the user, before any task writes.
  auto as_user_open = [&](const std::string& path, int flags) -> int {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return -errno;
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      if (::getuid() == 0 && (::setgroups(groups.size(), groups.data()) != 0 ||
                              ::setgid(spec->gid) != 0 || ::setuid(spec->uid) != 0))
        ChildFail(fds[1], errno);
      int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
      ChildFail(fds[1], fd < 0 ? errno : 0);
    }
    ::close(fds[1]);
    int error = 0;
    if (pid < 0)
      error = errno;
    else if (::read(fds[0], &error, sizeof error) != sizeof error)
      error = EIO;
    ::close(fds[0]);
    if (pid > 0) ::waitpid(pid, nullptr, 0);
    return -error;
  };
  std::map<std::string, bool> prepared;
  auto prepare = [&](const std::string& text, uint32_t rank, std::string& resolved) -> Status {
    PatternContext ctx = pattern;
    ctx.task_id = rank;
    auto path = ExpandOutputPattern(text, ctx);
    if (!path) return MakeError(path.error());
    resolved = *path;
    if (prepared.count(resolved) || resolved == "/dev/null") return OkStatus();
    prepared[resolved] = true;
    int flags = O_WRONLY | O_CREAT | (launch.open_append() ? O_APPEND : O_TRUNC);
    if (int error = as_user_open(resolved, flags); error != 0)
      return MakeError(fmt::format("cannot open {}: {}", resolved, std::strerror(-error)));
    return OkStatus();
  };

  // Start the tasks.
  std::vector<Task> tasks;
  int stdin_fd = -1;  // task 0's stdin, fed from srun
  bool task0_here = false;
  std::mutex pids_mutex;  // the input thread signals tasks while this one reaps them
  auto kill_all = [&](int signal) {
    std::lock_guard lock(pids_mutex);
    for (const Task& task : tasks)
      if (task.pid > 0) ::kill(-task.pid, signal);
  };
  // Without a cgroup, Signal() and Terminate() reach the tasks through their process groups.
  auto forget_group = [&](pid_t pid) {
    std::lock_guard lock(steps_mutex_);
    for (auto [it, last] = step_groups_.equal_range(job_id); it != last; ++it)
      if (it->second == pid) {
        step_groups_.erase(it);
        break;
      }
  };
  auto fail = [&](const std::string& message) {
    kill_all(SIGKILL);
    for (Task& task : tasks) {
      if (task.pid > 0) {
        ::waitpid(task.pid, nullptr, 0);
        forget_group(task.pid);
      }
      CloseFd(task.out);
      CloseFd(task.err);
    }
    CloseFd(stdin_fd);
    return MakeError(message);
  };
  uint32_t local = 0;
  for (uint32_t rank : launch.tasks()) {
    std::vector<std::string> argv(launch.argv().begin(), launch.argv().end());
    for (const auto& command : launch.task_commands())
      if (command.task() == rank) argv.assign(command.argv().begin(), command.argv().end());
    if (argv.empty())
      return fail(fmt::format("task {}: no command for it in the --multi-prog file", rank));
    std::vector<std::string> env = base_env;
    SetVariable(env, "SLURM_PROCID", std::to_string(rank));
    SetVariable(env, "SLURM_LOCALID", std::to_string(local++));
    SetVariable(env, "SLURM_TASK_PID", std::string(20, ' '));
    std::string program = Resolve(argv[0], env);

    std::string out_path, err_path, in_path;
    if (!launch.stdout_path().empty())
      if (Status s = prepare(launch.stdout_path(), rank, out_path); !s) return fail(s.error());
    if (!launch.stderr_path().empty())
      if (Status s = prepare(launch.stderr_path(), rank, err_path); !s) return fail(s.error());
    if (!launch.stdin_path().empty()) {
      PatternContext ctx = pattern;
      ctx.task_id = rank;
      auto path = ExpandOutputPattern(launch.stdin_path(), ctx);
      if (!path) return fail(path.error());
      in_path = *path;
    }
    bool pty = launch.pty() && rank == 0;
    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, in_pipe[2] = {-1, -1};
    int master = -1, slave = -1;
    if (pty) {
      // Close-on-exec from the start: other threads' forks must not carry this terminal off.
      master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
      char name[128] = {};
      if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0 ||
          ::ptsname_r(master, name, sizeof name) != 0 ||
          (slave = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
        int error = errno;
        CloseFd(master);
        return fail(fmt::format("pseudo-terminal: {}", std::strerror(error)));
      }
      (void)!::fchown(slave, spec->uid, static_cast<gid_t>(-1));
    } else {
      if (out_path.empty() && ::pipe2(out_pipe, O_CLOEXEC) != 0)
        return fail(fmt::format("pipe: {}", std::strerror(errno)));
      if (err_path.empty() && ::pipe2(err_pipe, O_CLOEXEC) != 0)
        return fail(fmt::format("pipe: {}", std::strerror(errno)));
      if (rank == 0 && in_path.empty() && ::pipe2(in_pipe, O_CLOEXEC) != 0)
        return fail(fmt::format("pipe: {}", std::strerror(errno)));
    }
    int go[2], report[2];
    if (::pipe2(go, O_CLOEXEC) != 0 || ::pipe2(report, O_CLOEXEC) != 0)
      return fail(fmt::format("pipe: {}", std::strerror(errno)));

    // Everything the child needs, prepared before fork (the child may only make system calls).
    std::vector<char*> child_argv;
    for (std::string& arg : argv) child_argv.push_back(arg.data());
    child_argv.push_back(nullptr);
    std::vector<char*> child_env;
    char* task_pid_slot = nullptr;
    for (std::string& entry : env) {
      child_env.push_back(entry.data());
      if (entry.starts_with("SLURM_TASK_PID=")) task_pid_slot = entry.data() + 15;
    }
    child_env.push_back(nullptr);
    const bool root = ::getuid() == 0;
    const int open_flags = O_WRONLY | O_CREAT | O_APPEND;

    pid_t pid = ::fork();
    if (pid < 0) return fail(fmt::format("fork: {}", std::strerror(errno)));
    if (pid == 0) {
      sigset_t all;
      sigemptyset(&all);
      ::sigprocmask(SIG_SETMASK, &all, nullptr);
      for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2})
        ::signal(s, SIG_DFL);
      ::close(go[1]);
      ::close(report[0]);
      char byte = 0;
      if (::read(go[0], &byte, 1) != 1) ::_exit(127);  // the agent gave up on this task
      if (pty) {
        ::setsid();
        ::ioctl(slave, TIOCSCTTY, 0);
        ::dup2(slave, 0);
        ::dup2(slave, 1);
        ::dup2(slave, 2);
      } else {
        ::setpgid(0, 0);
      }
      if (root && (::setgroups(groups.size(), groups.data()) != 0 || ::setgid(spec->gid) != 0 ||
                   ::setuid(spec->uid) != 0))
        ChildFail(report[1], errno);
      if (!pty) {
        int in = in_pipe[0] >= 0    ? in_pipe[0]
                 : !in_path.empty() ? ::open(in_path.c_str(), O_RDONLY)
                                    : ::open("/dev/null", O_RDONLY);
        if (in < 0) ChildFail(report[1], errno);
        int out = out_pipe[1] >= 0 ? out_pipe[1] : ::open(out_path.c_str(), open_flags, 0644);
        if (out < 0) ChildFail(report[1], errno);
        int err = err_pipe[1] >= 0       ? err_pipe[1]
                  : err_path == out_path ? out
                                         : ::open(err_path.c_str(), open_flags, 0644);
        if (err < 0) ChildFail(report[1], errno);
        ::dup2(in, 0);
        ::dup2(out, 1);
        ::dup2(err, 2);
        for (int fd : {in, out, err})
          if (fd > 2) ::close(fd);
      }
      if (::chdir(work_dir.c_str()) != 0) (void)!::chdir("/tmp");
      if (task_pid_slot) WriteDecimal(task_pid_slot, ::getpid());
      if (program.empty()) ChildFail(report[1], ENOENT);
      ::execve(program.c_str(), child_argv.data(), child_env.data());
      ChildFail(report[1], errno);
    }
    ::close(go[0]);
    ::close(report[1]);
    // The task joins the job's cgroup before it runs anything.
    if (cgroup) (void)cgroup->AddProcess(pid);
    if (!pty) ::setpgid(pid, pid);  // the pty's task makes its own session (setsid)
    if (!cgroup) {
      std::lock_guard lock(steps_mutex_);
      step_groups_.emplace(job_id, pid);
    }
    (void)!::write(go[1], "x", 1);
    ::close(go[1]);
    Task task;
    task.rank = rank;
    task.pid = pid;
    if (pty) {
      ::close(slave);
      task.out = master;
      stdin_fd = ::dup(master);
      ::fcntl(stdin_fd, F_SETFD, FD_CLOEXEC);
      task0_here = true;
    } else {
      CloseFd(out_pipe[1]);
      CloseFd(err_pipe[1]);
      CloseFd(in_pipe[0]);
      task.out = out_pipe[0];
      task.err = err_pipe[0];
      if (in_pipe[1] >= 0) {
        stdin_fd = in_pipe[1];
        task0_here = true;
      }
    }
    int error = 0;
    bool exec_failed = ::read(report[0], &error, sizeof error) == sizeof error;
    ::close(report[0]);
    tasks.push_back(task);
    if (exec_failed) {
      // As slurmstepd says it; the task ends with exit code 2 once reaped below.
      v1::StepOutput message;
      message.set_task(rank);
      message.set_stderr(true);
      message.set_data(
          fmt::format("slurmstepd: error: execve(): {}: {}\n", argv[0], std::strerror(error)));
      write(message);
      tasks.back().ended = true;
      ::waitpid(pid, nullptr, 0);
      tasks.back().status = 2 << 8;
    }
  }
  {
    v1::StepOutput started;
    started.set_started(true);
    write(started);
  }

  // srun's input: stdin for task 0, signals for every task. Its end (srun is done, or gone)
  // while tasks still run kills them.
  std::atomic<bool> input_done{false};
  std::atomic<bool> all_ended{false};
  // This thread alone owns stdin_fd from here on.
  std::mutex input_mutex;
  std::condition_variable input_finished;
  std::thread input([&] {
    v1::StepInput message;
    while (read(&message)) {
      if (message.signal() != 0) kill_all(message.signal());
      if (!message.stdin_data().empty() && stdin_fd >= 0 && task0_here)
        if (!WriteFully(stdin_fd, message.stdin_data())) CloseFd(stdin_fd);  // task 0 closed it
      if (message.stdin_closed() && !launch.pty()) CloseFd(stdin_fd);
    }
    CloseFd(stdin_fd);
    if (!all_ended) kill_all(SIGKILL);
    std::lock_guard lock(input_mutex);
    input_done = true;
    input_finished.notify_all();
  });

  // Output and ends.
  char buffer[kChunk];
  auto drain = [&](Task& task, int& fd, bool is_stderr, bool until_empty) {
    while (fd >= 0) {
      ssize_t got = ::read(fd, buffer, sizeof buffer);
      if (got > 0) {
        v1::StepOutput message;
        message.set_task(task.rank);
        message.set_stderr(is_stderr);
        message.set_data(buffer, static_cast<size_t>(got));
        write(message);
        if (!until_empty) return;
        continue;
      }
      if (got < 0 && (errno == EINTR)) continue;
      if (got < 0 && errno == EAGAIN) return;
      CloseFd(fd);  // EOF (or EIO from a pty whose task ended)
    }
  };
  double cpu_seconds = 0;
  uint64_t max_rss_kib = 0;
  while (true) {
    std::vector<pollfd> fds;
    std::vector<std::pair<size_t, bool>> owners;
    for (size_t i = 0; i < tasks.size(); ++i) {
      if (tasks[i].out >= 0) {
        fds.push_back({tasks[i].out, POLLIN, 0});
        owners.emplace_back(i, false);
      }
      if (tasks[i].err >= 0) {
        fds.push_back({tasks[i].err, POLLIN, 0});
        owners.emplace_back(i, true);
      }
    }
    // Nothing to read (every task writes to files): wait all the same, never spin.
    ::poll(fds.empty() ? nullptr : fds.data(), fds.size(), 50);
    for (size_t k = 0; k < fds.size(); ++k)
      if (fds[k].revents != 0) {
        Task& task = tasks[owners[k].first];
        drain(task, owners[k].second ? task.err : task.out, owners[k].second, false);
      }
    v1::StepOutput ends;
    for (Task& task : tasks) {
      if (task.ended && task.pid < 0) continue;
      if (!task.ended) {
        int status = 0;
        rusage usage{};
        pid_t got = ::wait4(task.pid, &status, WNOHANG, &usage);
        if (got != task.pid) continue;
        task.ended = true;
        task.status = status;
        cpu_seconds += static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
        max_rss_kib = std::max<uint64_t>(max_rss_kib, static_cast<uint64_t>(usage.ru_maxrss));
      }
      // What it wrote before it ended is in its pipes: send it, then its end.
      for (int* fd : {&task.out, &task.err})
        if (*fd >= 0) {
          ::fcntl(*fd, F_SETFL, ::fcntl(*fd, F_GETFL) | O_NONBLOCK);
          drain(task, *fd, fd == &task.err, true);
          CloseFd(*fd);
        }
      v1::StepOutput::TaskEnd* end = ends.add_ended();
      end->set_task(task.rank);
      if (WIFSIGNALED(task.status)) {
        end->set_signal(WTERMSIG(task.status));
      } else {
        end->set_exit_code(WEXITSTATUS(task.status));
      }
      forget_group(task.pid);
      std::lock_guard lock(pids_mutex);
      ::kill(-task.pid, SIGKILL);  // what the task left running in its process group
      task.pid = -1;
    }
    bool done = std::all_of(tasks.begin(), tasks.end(), [](const Task& t) { return t.pid < 0; });
    if (done) {
      ends.set_cpu_seconds(cpu_seconds);
      ends.set_max_rss_mib(max_rss_kib / 1024);
    }
    if (ends.ended_size() > 0 || done) write(ends);
    if (done) break;
  }
  all_ended = true;
  {
    // srun closes its side once it has every task's end; one that does not is cut off.
    std::unique_lock lock(input_mutex);
    if (!input_finished.wait_for(lock, std::chrono::seconds(10), [&] { return input_done.load(); }))
      cancel();
  }
  input.join();
  return OkStatus();
}

}  // namespace drover::agent
