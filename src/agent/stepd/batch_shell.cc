// Forking the batch shell, the prolog and the epilog; see batch_shell.h.
#include "agent/stepd/batch_shell.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent/host/job_env.h"
#include "common/fd_io.h"

namespace drover::agent {
namespace {

void ResetSignals() {
  for (int signal = 1; signal < NSIG; ++signal) ::signal(signal, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// In the child: says why to the supervisor (through `error_fd`) and on stderr, which is the
// job's stderr file once that is open (so the user sees it, as with Slurm) and stepd.log before.
[[noreturn]] void Fail(int error_fd, int exit_code, const std::string& message) {
  WriteFully(error_fd, message);
  WriteFully(STDERR_FILENO, fmt::format("droverstepd: error: {}\n", message));
  ::_exit(exit_code);
}

mode_t UmaskFor(const std::vector<std::string>& environment) {
  auto text = FindVariable(environment, "SLURM_UMASK");
  if (!text || text->empty() || text->size() > 4) return 022;
  mode_t mask = 0;
  for (char digit : *text) {
    if (digit < '0' || digit > '7') return 022;
    mask = mask * 8 + (digit - '0');
  }
  return mask;
}

void SwitchUser(const Credentials& credentials, int error_fd) {
  if (!credentials.switch_user) return;
  if (::setgroups(credentials.groups.size(), credentials.groups.data()) != 0)
    Fail(error_fd, 1,
         fmt::format("cannot set the groups of user {}: {}", credentials.user,
                     std::strerror(errno)));
  if (::setgid(credentials.gid) != 0)
    Fail(error_fd, 1,
         fmt::format("cannot switch to gid {}: {}", credentials.gid, std::strerror(errno)));
  if (::setuid(credentials.uid) != 0)
    Fail(error_fd, 1,
         fmt::format("cannot switch to uid {} (user {}): {}", credentials.uid, credentials.user,
                     std::strerror(errno)));
}

int OpenOutput(const std::string& path, OpenMode mode) {
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (mode == OpenMode::kAppend ? O_APPEND : O_TRUNC);
  return ::open(path.c_str(), flags, 0644);
}

// Opens the three files as the user (so they are created with the user's ownership and only
// where the user may write) and makes them fds 0, 1 and 2.
void OpenStdio(const ShellPlan& plan, int error_fd) {
  int out = OpenOutput(plan.stdout_path, plan.open_mode);
  if (out < 0)
    Fail(error_fd, 1,
         fmt::format("could not open stdout file {}: {}", plan.stdout_path, std::strerror(errno)));
  int err = plan.stderr_path == plan.stdout_path ? ::fcntl(out, F_DUPFD_CLOEXEC, 0)
                                                 : OpenOutput(plan.stderr_path, plan.open_mode);
  if (err < 0)
    Fail(error_fd, 1,
         fmt::format("could not open stderr file {}: {}", plan.stderr_path, std::strerror(errno)));
  if (::dup2(out, STDOUT_FILENO) < 0 || ::dup2(err, STDERR_FILENO) < 0)
    Fail(error_fd, 1, fmt::format("dup2: {}", std::strerror(errno)));
  int in = ::open(plan.stdin_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0)
    Fail(error_fd, 1,
         fmt::format("could not open stdin file {}: {}", plan.stdin_path, std::strerror(errno)));
  if (::dup2(in, STDIN_FILENO) < 0)
    Fail(error_fd, 1, fmt::format("dup2: {}", std::strerror(errno)));
  ::close(out);
  ::close(err);
  ::close(in);
}

void ChangeDirectory(const std::string& work_dir, int error_fd) {
  if (::chdir(work_dir.c_str()) == 0) return;
  // Slurm's words and Slurm's fallback, so scripts and users see what they know.
  WriteFully(STDERR_FILENO,
             fmt::format("droverstepd: error: couldn't chdir to `{}': {}: going to /tmp instead\n",
                         work_dir, std::strerror(errno)));
  if (::chdir("/tmp") != 0) Fail(error_fd, 1, "couldn't chdir to /tmp either. dying.");
}

[[noreturn]] void Exec(const std::string& program, const std::vector<std::string>& arguments,
                       const std::vector<std::string>& environment, int error_fd) {
  std::vector<char*> argv{const_cast<char*>(program.c_str())};
  for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& entry : environment) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);
  ::execve(program.c_str(), argv.data(), envp.data());
  int error = errno;
  // Slurm exits with errno when execve fails.
  Fail(error_fd, error, fmt::format("execve(): {}: {}", program, std::strerror(error)));
}

[[noreturn]] void RunShellChild(const ShellPlan& plan, int ready_fd, int go_fd, int error_fd) {
  ResetSignals();
  if (::setsid() < 0) Fail(error_fd, 1, fmt::format("setsid: {}", std::strerror(errno)));
  WriteFully(ready_fd, "r");
  ::close(ready_fd);
  char go = 0;
  ssize_t got = 0;
  while ((got = ::read(go_fd, &go, 1)) < 0 && errno == EINTR) {
  }
  if (got != 1) ::_exit(1);  // the supervisor gave up on us; it already knows why
  ::close(go_fd);
  ::umask(UmaskFor(plan.environment));
  SwitchUser(plan.credentials, error_fd);
  OpenStdio(plan, error_fd);
  ChangeDirectory(plan.work_dir, error_fd);
  std::vector<std::string> environment = plan.environment;
  SetVariable(environment, "SLURM_TASK_PID", std::to_string(::getpid()));
  Exec(plan.script, plan.arguments, environment, error_fd);
}

struct Pipe {
  int read = -1, write = -1;
  Status Open() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
      return MakeError(fmt::format("pipe: {}", std::strerror(errno)));
    read = fds[0];
    write = fds[1];
    return OkStatus();
  }
  void Close() {
    if (read >= 0) ::close(read);
    if (write >= 0) ::close(write);
    read = write = -1;
  }
};

}  // namespace

Result<Credentials> CredentialsFor(const BatchLaunch& launch) {
  Credentials credentials;
  credentials.user = launch.user;
  credentials.uid = launch.uid;
  credentials.gid = launch.gid;
  if (::geteuid() != 0) {
    if (launch.uid != ::geteuid() || launch.gid != ::getegid())
      return MakeError(fmt::format(
          "cannot switch to uid {} gid {} (user {}): droverstepd runs as uid {} gid {}, not "
          "root, so it runs only that user's jobs",
          launch.uid, launch.gid, launch.user, ::geteuid(), ::getegid()));
    return credentials;
  }
  passwd entry{}, *found = nullptr;
  std::vector<char> buffer(16384);
  int error = ::getpwnam_r(launch.user.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (!found)
    return MakeError(
        error ? fmt::format("cannot look up user '{}': {}", launch.user, std::strerror(error))
              : fmt::format("user '{}' is unknown on this node", launch.user));
  if (found->pw_uid != launch.uid)
    return MakeError(fmt::format("user '{}' is uid {} on this node, not {}", launch.user,
                                 found->pw_uid, launch.uid));
  int count = 32;
  std::vector<gid_t> groups(count);
  while (::getgrouplist(launch.user.c_str(), launch.gid, groups.data(), &count) < 0)
    groups.resize(count = std::max<int>(count, groups.size() * 2));
  groups.resize(count);
  credentials.switch_user = true;
  credentials.groups = std::move(groups);
  return credentials;
}

Result<StartedShell> ForkBatchShell(const ShellPlan& plan,
                                    const std::function<Status(pid_t)>& join) {
  Pipe ready, go, error;
  for (Pipe* pipe : {&ready, &go, &error})
    if (Status ok = pipe->Open(); !ok) {
      ready.Close();
      go.Close();
      error.Close();
      return std::move(ok).take_error();
    }
  pid_t pid = ::fork();
  if (pid == 0) RunShellChild(plan, ready.write, go.read, error.write);
  int fork_error = errno;
  ::close(ready.write);
  ::close(go.read);
  ::close(error.write);
  auto give_up = [&](std::string message) -> Result<StartedShell> {
    ::close(ready.read);
    ::close(go.write);
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      std::string said = ReadLaunchError(error.read);
      if (!said.empty()) message += ": " + said;
    } else {
      ::close(error.read);
    }
    return MakeError(std::move(message));
  };
  if (pid < 0) return give_up(fmt::format("fork: {}", std::strerror(fork_error)));
  char byte = 0;
  ssize_t got = 0;
  while ((got = ::read(ready.read, &byte, 1)) < 0 && errno == EINTR) {
  }
  if (got != 1) return give_up("the batch shell died before it started");
  if (Status joined = join(pid); !joined) return give_up(joined.error());
  WriteFully(go.write, "g");
  ::close(go.write);
  ::close(ready.read);
  ::fcntl(error.read, F_SETFL, ::fcntl(error.read, F_GETFL) | O_NONBLOCK);
  return StartedShell{pid, error.read};
}

std::string ReadLaunchError(int& error_fd) {
  if (error_fd < 0) return {};
  std::string said;
  char buffer[1024];
  ssize_t got = 0;
  while ((got = ::read(error_fd, buffer, sizeof buffer)) > 0 || (got < 0 && errno == EINTR))
    if (got > 0) said.append(buffer, got);
  ::close(error_fd);
  error_fd = -1;
  return said;
}

Result<pid_t> ForkProgram(const std::string& program, const std::vector<std::string>& environment) {
  pid_t pid = ::fork();
  if (pid < 0) return MakeError(fmt::format("fork: {}", std::strerror(errno)));
  if (pid > 0) return pid;
  ResetSignals();
  int in = ::open("/dev/null", O_RDONLY);
  if (in >= 0 && in != STDIN_FILENO) {
    ::dup2(in, STDIN_FILENO);
    ::close(in);
  }
  int no_report = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  Exec(program, {}, environment, no_report);
}

}  // namespace drover::agent
