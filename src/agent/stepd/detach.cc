// How droverstepd leaves the agent behind, and how the agent starts it; see detach.h.
#include "agent/stepd/detach.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "common/fd_io.h"
#include "common/text.h"

extern char** environ;

namespace drover::agent {
namespace {

namespace fs = std::filesystem;

}  // namespace

Result<Detached> Daemonize(const fs::path& job_dir) {
  const fs::path log = job_dir / "stepd.log";
  int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log_fd < 0)
    return MakeError(fmt::format("{}: cannot open it: {}", log.string(), std::strerror(errno)));
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) {
    ::close(log_fd);
    return MakeError(fmt::format("pipe: {}", std::strerror(errno)));
  }
  pid_t middle = ::fork();
  if (middle < 0) {
    int error = errno;
    ::close(log_fd);
    ::close(ready[0]);
    ::close(ready[1]);
    return MakeError(fmt::format("fork: {}", std::strerror(error)));
  }
  if (middle > 0) {
    ::close(ready[1]);
    ::close(log_fd);
    ::waitpid(middle, nullptr, 0);
    std::string answer = ReadToEnd(ready[0]);
    ::close(ready[0]);
    Detached caller;
    if (answer == "+") return caller;
    caller.exit_code = 1;
    fmt::print(stderr, "droverstepd: error: {}\n",
               answer.empty()
                   ? fmt::format("the supervisor died before it was ready; see {}", log.string())
                   : answer.substr(1));
    return caller;
  }
  ::close(ready[0]);
  ::setsid();  // a new session: the caller's terminal and process group signals stop here
  pid_t supervisor = ::fork();
  if (supervisor != 0) {
    if (supervisor < 0) WriteFully(ready[1], fmt::format("-fork: {}", std::strerror(errno)));
    ::_exit(supervisor < 0 ? 1 : 0);
  }
  int null = ::open("/dev/null", O_RDONLY);
  if (null >= 0) ::dup2(null, STDIN_FILENO);
  if (null > STDERR_FILENO) ::close(null);
  ::dup2(log_fd, STDOUT_FILENO);
  ::dup2(log_fd, STDERR_FILENO);
  ::close(log_fd);
  if (::chdir("/") != 0) {
  }  // "/" exists; the result only matters to the compiler's warning
  ::umask(022);
  Detached detached;
  detached.supervisor = true;
  detached.ready_fd = ready[1];
  return detached;
}

void ReportReady(int ready_fd, const Status& outcome) {
  WriteFully(ready_fd, outcome ? std::string("+") : "-" + outcome.error());
  ::close(ready_fd);
}

Status Attach(const Status& outcome) {
  WriteFully(kReadyFd, outcome ? std::string("+") : "-" + outcome.error());
  ::close(kReadyFd);
  if (!outcome) return outcome;
  if (::chdir("/") != 0) {
  }  // "/" exists; the result only matters to the compiler's warning
  ::umask(022);
  return OkStatus();
}

Result<pid_t> SpawnInSession(std::vector<std::string> argv, int fd, int as, const std::string& log,
                             char* const* environment) {
  // fd == as needs no care: glibc (2.35 and later) clears close-on-exec on a dup2 onto itself,
  // as POSIX asks (the test HandsOverTheDescriptorEvenWhenItHasTheNumberAlready checks it).
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (!log.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0600);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  }
  posix_spawn_file_actions_adddup2(&actions, fd, as);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // Its own session: the agent's process group and terminal signals stop here, as a detached
  // supervisor's do.
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);
  std::vector<char*> args;
  for (std::string& arg : argv) args.push_back(arg.data());
  args.push_back(nullptr);
  pid_t pid = 0;
  int spawned = ::posix_spawn(&pid, args[0], &actions, &attributes, args.data(),
                              environment ? environment : environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawned != 0)
    return MakeError(fmt::format("cannot run {}: {}", argv[0], std::strerror(spawned)));
  return pid;
}

Result<pid_t> StartSupervisor(const fs::path& binary, const fs::path& job_dir) {
  int output[2];
  if (::pipe2(output, O_CLOEXEC) != 0)
    return MakeError(fmt::format("pipe: {}", std::strerror(errno)));
  const std::string log = (job_dir / "stepd.log").string();
  const std::string program = binary.string();
  auto spawned =
      SpawnInSession({program, "--attached", job_dir.string()}, output[1], kReadyFd, log, nullptr);
  ::close(output[1]);
  if (!spawned) {
    ::close(output[0]);
    return spawned;
  }
  const pid_t pid = *spawned;
  std::string said = ReadToEnd(output[0]);  // to the pipe's end: ready, or gone
  ::close(output[0]);
  if (said == "+") return pid;
  int wait_status = 0;
  while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  return MakeError(NotReadyReason(said, wait_status, program, log));
}

std::string NotReadyReason(std::string_view said, int wait_status, std::string_view who,
                           const std::string& log) {
  std::string message(Trim(said.starts_with("-") ? said.substr(1) : said));
  if (!message.empty()) return message;
  return fmt::format("{} {} before it was ready; see {}", who,
                     WIFSIGNALED(wait_status)
                         ? fmt::format("was killed by signal {}", WTERMSIG(wait_status))
                         : fmt::format("exited with code {}", WEXITSTATUS(wait_status)),
                     log);
}
namespace {
char* command_line = nullptr;  // argv's strings, contiguous as the kernel put them
size_t command_line_size = 0;  // with their NULs
}  // namespace

void KeepCommandLine(int argc, char** argv) {
  if (argc <= 0 || argv == nullptr || argv[0] == nullptr) return;
  char* end = argv[0] + std::strlen(argv[0]) + 1;
  for (int i = 1; i < argc && argv[i] == end; ++i) end = argv[i] + std::strlen(argv[i]) + 1;
  command_line = argv[0];
  command_line_size = static_cast<size_t>(end - argv[0]);
}

void SetCommandLine(std::string_view title) {
  if (command_line == nullptr || command_line_size < 2) return;
  const size_t shown = std::min(title.size(), command_line_size - 1);
  std::memcpy(command_line, title.data(), shown);
  command_line[shown] = '\0';
  // Spaces after it, the last byte too: the kernel then shows the title up to its NUL, not the
  // NULs after it as empty arguments.
  std::memset(command_line + shown + 1, ' ', command_line_size - shown - 1);
}

std::string SupervisorTitle(uint64_t job_id, bool extern_step, std::string_view node_name) {
  return fmt::format("droverstepd: [{}.{}] {}", job_id, extern_step ? "extern" : "batch",
                     node_name);
}

}  // namespace drover::agent
