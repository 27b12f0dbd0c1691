// A step session's tasks start: each one's command, environment and descriptors described for
// Spawn (agent/host/spawn.h), joined to the job before it runs anything. See step_session.h.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent/daemon/step_session.h"

namespace drover::agent {
namespace {

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

Status OpenPipe(int (&fds)[2]) {
  if (::pipe2(fds, O_CLOEXEC) != 0) return MakeError(fmt::format("pipe: {}", std::strerror(errno)));
  return OkStatus();
}

}  // namespace

void StepSession::TaskIo::CloseAll() {
  for (int* fd : {&out_pipe[0], &out_pipe[1], &err_pipe[0], &err_pipe[1], &in_pipe[0], &in_pipe[1],
                  &master, &slave})
    CloseFd(*fd);
}

Status StepSession::StartTasks() {
  uint32_t local = 0;
  for (uint32_t rank : launch_.tasks())
    if (Status started = StartTask(rank, local++); !started) return Fail(started.error());
  v1::StepOutput started;
  started.set_started(true);
  write_(started);
  return OkStatus();
}

// srun's command, or this task's line of the --multi-prog file.
std::vector<std::string> StepSession::CommandOf(uint32_t rank) const {
  std::vector<std::string> argv(launch_.argv().begin(), launch_.argv().end());
  if (!bcast_program_.empty() && !argv.empty()) argv[0] = bcast_program_;  // --bcast's copy
  for (const auto& command : launch_.task_commands())
    if (command.task() == rank) argv.assign(command.argv().begin(), command.argv().end());
  return argv;
}

Status StepSession::StartTask(uint32_t rank, uint32_t local) {
  ProcessSpec spec;
  spec.argv = CommandOf(rank);
  if (spec.argv.empty())
    return MakeError(fmt::format("task {}: no command for it in the --multi-prog file", rank));
  spec.environment = environment_;
  Result<TaskBinding> binding = BindingOf(local);
  if (!binding) return MakeError(fmt::format("task {}: {}", rank, binding.error()));
  SetTaskGpus(*binding, spec.environment);
  spec.memory_policy = binding->memory;
  SetVariable(spec.environment, "SLURM_PROCID", std::to_string(rank));
  SetVariable(spec.environment, "SLURM_LOCALID", std::to_string(local));
  if (Status pmi = SetupPmiTask(rank, local, spec); !pmi) return pmi;
  spec.task_pid_variable = true;
  spec.program = ResolveProgram(spec.argv[0], spec.environment);
  spec.user = user_;
  spec.name = fmt::format("task {}", rank);
  spec.work_dir = work_dir_;
  spec.work_dir_optional = true;
  spec.propagated_limits = limits_;
  spec.default_signals = {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2};
  spec.mount_namespace = mount_namespace_;
  TaskIo io;
  if (Status described = DescribeIo(rank, spec, io); !described) {
    io.CloseAll();
    return described;
  }
  if (!task_prolog_.empty()) {
    RunTaskProlog(rank, spec, spec.environment);
    spec.program = ResolveProgram(spec.argv[0], spec.environment);  // PATH may have changed
  }
  std::string verbose;
  spec.stderr_note = &verbose;
  auto spawned = Spawn(spec, [&](pid_t pid) {
    verbose = ApplyBinding(pid, rank, local, *binding);
    return JoinJob(pid, rank, local);
  });
  if (!spawned) {
    io.CloseAll();
    return MakeError(spawned.error());
  }
  PmiTaskSpawned(local);
  Task task;
  task.rank = rank;
  task.pid = spawned->pid;
  if (!task_epilog_.empty()) task.environment = spec.environment;
  KeepOurEnds(task, io);
  std::optional<SpawnFailure> failure = ReadSpawnFailure(spawned->report_fd);
  tasks_.push_back(task);
  {
    MutexLock lock(signal_mutex_);
    live_groups_.push_back(task.pid);
  }
  if (failure) ReportExecFailure(tasks_.back(), spec.argv[0], failure->error);
  return OkStatus();
}

// --task-prolog or --task-epilog: `program` as the job's user in the task's directory and
// environment; returns its stdout (its stderr is discarded, as slurmstepd discards it).
std::string StepSession::RunTaskScript(const std::string& program,
                                       const std::vector<std::string>& env) {
  int out[2] = {-1, -1};
  if (!OpenPipe(out)) return "";
  ProcessSpec spec;
  spec.name = program;
  spec.argv = {program};
  spec.program = ResolveProgram(program, env);
  spec.environment = env;
  spec.user = user_;
  spec.work_dir = work_dir_;
  spec.work_dir_optional = true;
  spec.stdin_source = StdioSource::File("/dev/null", O_RDONLY);
  spec.stdout_source = StdioSource::Descriptor(out[1]);
  spec.stderr_source = StdioSource::File("/dev/null", O_WRONLY);
  spec.mount_namespace = mount_namespace_;
  auto spawned = Spawn(spec);
  CloseFd(out[1]);
  std::string output;
  if (spawned) {
    char buffer[4096];
    for (ssize_t got; (got = ::read(out[0], buffer, sizeof buffer)) != 0;) {
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) break;
      output.append(buffer, static_cast<size_t>(got));
    }
    (void)ReadSpawnFailure(spawned->report_fd);
    while (::waitpid(spawned->pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  CloseFd(out[0]);
  return output;
}

// The task prolog's exports and unsets change `env`; what it prints goes to the task's stdout
// (its file, else srun) before anything the task writes.
void StepSession::RunTaskProlog(uint32_t rank, const ProcessSpec& task,
                                std::vector<std::string>& env) {
  std::string printed = ApplyTaskPrologOutput(RunTaskScript(task_prolog_, env), env);
  if (printed.empty()) return;
  if (task.stdout_source.kind == StdioSource::kFile) {
    int fd = ::open(task.stdout_source.path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd >= 0) (void)!::write(fd, printed.data(), printed.size());
    CloseFd(fd);
    return;
  }
  v1::StepOutput message;
  message.set_task(rank);
  message.set_data(printed);
  write_(message);
}

// Where the task's stdin, stdout and stderr go: srun's --pty terminal for task 0; else the files
// srun named, or pipes to this session.
Status StepSession::DescribeIo(uint32_t rank, ProcessSpec& spec, TaskIo& io) {
  std::string out_path, err_path, in_path;
  if (!launch_.stdout_path().empty())
    if (Status s = PrepareOutputFile(launch_.stdout_path(), rank, out_path); !s) return s;
  if (!launch_.stderr_path().empty())
    if (Status s = PrepareOutputFile(launch_.stderr_path(), rank, err_path); !s) return s;
  if (!launch_.stdin_path().empty()) {
    PatternContext context = pattern_;
    context.task_id = rank;
    auto path = ExpandOutputPattern(launch_.stdin_path(), context);
    if (!path) return MakeError(path.error());
    in_path = *path;
  }
  if (launch_.pty() && rank == 0) return OpenTerminal(spec, io);
  return OpenPipes(rank, out_path, err_path, in_path, spec, io);
}

Status StepSession::OpenTerminal(ProcessSpec& spec, TaskIo& io) {
  // Close-on-exec from the start: other threads' forks must not carry this terminal off.
  io.master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  char name[128] = {};
  if (io.master < 0 || ::grantpt(io.master) != 0 || ::unlockpt(io.master) != 0 ||
      ::ptsname_r(io.master, name, sizeof name) != 0 ||
      (io.slave = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
    return MakeError(fmt::format("pseudo-terminal: {}", std::strerror(errno)));
  (void)!::fchown(io.slave, spec_.uid, static_cast<gid_t>(-1));
  spec.session = SessionKind::kTerminal;
  spec.terminal = io.slave;
  spec.stdin_source = spec.stdout_source = spec.stderr_source = StdioSource::Descriptor(io.slave);
  return OkStatus();
}

Status StepSession::OpenPipes(uint32_t rank, const std::string& out_path,
                              const std::string& err_path, const std::string& in_path,
                              ProcessSpec& spec, TaskIo& io) {
  constexpr int kAppend = O_WRONLY | O_CREAT | O_APPEND;  // made and truncated already
  spec.session = SessionKind::kProcessGroup;
  if (out_path.empty()) {
    if (Status s = OpenPipe(io.out_pipe); !s) return s;
    spec.stdout_source = StdioSource::Descriptor(io.out_pipe[1]);
  } else {
    spec.stdout_source = StdioSource::File(out_path, kAppend);
  }
  if (err_path.empty()) {
    if (Status s = OpenPipe(io.err_pipe); !s) return s;
    spec.stderr_source = StdioSource::Descriptor(io.err_pipe[1]);
  } else {
    spec.stderr_source =
        err_path == out_path ? StdioSource::SameAsStdout() : StdioSource::File(err_path, kAppend);
  }
  if (rank == 0 && in_path.empty()) {
    if (Status s = OpenPipe(io.in_pipe); !s) return s;
    spec.stdin_source = StdioSource::Descriptor(io.in_pipe[0]);
  } else {
    spec.stdin_source = StdioSource::File(in_path.empty() ? "/dev/null" : in_path, O_RDONLY);
  }
  return OkStatus();
}

// While the task waits to run: into the job's cgroup. Signal() reaches it through its process
// group (a signal for the steps must not reach the batch shell, which shares the cgroup), and so
// does Terminate() where the job has no cgroup.
Status StepSession::JoinJob(pid_t pid, uint32_t rank, uint32_t local) {
  if (cgroup_) (void)cgroup_->AddProcessTo(pid, step_cgroup_);
  if (!agent_.AddStepGroup(job_id_, launch_.step_id(), pid, cgroup_.has_value(), local, rank))
    return MakeError(fmt::format("job {} has ended on {}", job_id_, agent_.node_name_));
  return OkStatus();
}

void StepSession::KeepOurEnds(Task& task, TaskIo& io) {
  if (io.master >= 0) {
    CloseFd(io.slave);
    task.out = io.master;
    stdin_fd_ = ::dup(io.master);
    ::fcntl(stdin_fd_, F_SETFD, FD_CLOEXEC);
    task0_here_ = true;
    return;
  }
  CloseFd(io.out_pipe[1]);
  CloseFd(io.err_pipe[1]);
  CloseFd(io.in_pipe[0]);
  task.out = io.out_pipe[0];
  task.err = io.err_pipe[0];
  if (io.in_pipe[1] >= 0) {
    stdin_fd_ = io.in_pipe[1];
    task0_here_ = true;
  }
}

// As slurmstepd says it; the task ends with exit code 2 once reaped.
void StepSession::ReportExecFailure(Task& task, const std::string& program, int error) {
  v1::StepOutput message;
  message.set_task(task.rank);
  message.set_stderr(true);
  message.set_data(
      fmt::format("slurmstepd: error: execve(): {}: {}\n", program, std::strerror(error)));
  write_(message);
  task.ended = true;
  ::waitpid(task.pid, nullptr, 0);
  task.status = 2 << 8;
}

// A task that cannot start ends the step: every task started is killed and reaped.
Status StepSession::Fail(const std::string& message) {
  SignalTasks(SIGKILL);
  for (Task& task : tasks_) {
    if (task.pid > 0) {
      ::waitpid(task.pid, nullptr, 0);
      agent_.ForgetStepGroup(job_id_, task.pid);
    }
    CloseFd(task.out);
    CloseFd(task.err);
  }
  CloseFd(stdin_fd_);
  return MakeError(message);
}

}  // namespace drover::agent
