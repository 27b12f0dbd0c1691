// See user_environment.h.
#include "agent/stepd/user_environment.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>

#include "agent/host/job_env.h"

namespace drover::agent {
namespace {

// Printed before the environment, so whatever a profile prints first is skipped.
constexpr std::string_view kMarker = "DROVER_LOGIN_ENVIRONMENT";

struct Account {
  std::string home, shell;
};

Account AccountOf(const std::string& user_name) {
  passwd entry{}, *found = nullptr;
  std::vector<char> buffer(16384);
  ::getpwnam_r(user_name.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (!found) return {"/", "/bin/sh"};
  return {found->pw_dir, found->pw_shell && *found->pw_shell ? found->pw_shell : "/bin/sh"};
}

ProcessSpec LoginCommand(const std::string& user_name, const std::optional<ProcessUser>& user,
                         const UserEnvironmentRequest& request, int out) {
  std::string command = fmt::format("echo; echo {}; /usr/bin/env -0", kMarker);
  Account account = AccountOf(user_name);
  ProcessSpec spec;
  spec.name = "the login environment's shell";
  if (::geteuid() == 0) {  // su switches itself: the child stays root
    // Only a name the node's database gives the job's own uid: never an option, never another.
    passwd* entry = ::getpwnam(user_name.c_str());
    if (user_name.empty() || user_name[0] == '-' || !entry ||
        entry->pw_uid != (user ? user->uid : ::geteuid()))
      spec.program = "/bin/false";
    spec.program = spec.program.empty() ? "/bin/su" : spec.program;
    spec.argv = {"su"};
    if (request.mode == 'L') spec.argv.emplace_back("-");
    spec.argv.insert(spec.argv.end(), {user_name, "-c", command});
  } else {
    spec.program = account.shell;
    spec.argv = {account.shell};
    if (request.mode == 'L') spec.argv.emplace_back("-l");
    spec.argv.insert(spec.argv.end(), {"-c", command});
    spec.user = user;
  }
  spec.environment = {"HOME=" + account.home, "SHELL=" + account.shell, "USER=" + user_name,
                      "LOGNAME=" + user_name, "PATH=/usr/local/bin:/usr/bin:/bin"};
  spec.work_dir = account.home;
  spec.work_dir_optional = true;
  spec.stdin_source = StdioSource::File("/dev/null", O_RDONLY);
  spec.stdout_source = StdioSource::Descriptor(out);
  spec.stderr_source = StdioSource::File("/dev/null", O_WRONLY);
  spec.session = SessionKind::kSession;  // killed as a group when it takes too long
  return spec;
}

// Reads `fd` to its end or the deadline; false when the deadline came first.
bool ReadUntil(int fd, std::chrono::steady_clock::time_point deadline, std::string& out) {
  char buffer[16384];
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd wait{fd, POLLIN, 0};
    int ready = ::poll(&wait, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return false;
    if (ready < 0) return true;  // nothing more can be read
    ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return true;
    out.append(buffer, static_cast<size_t>(got));
    if (out.size() > (1u << 20)) return false;  // a login environment is kilobytes, not more
  }
}

}  // namespace

std::vector<std::string> ParseEnvironmentOutput(std::string_view output) {
  std::string marker = "\n" + std::string(kMarker) + "\n";
  size_t at = output.find(marker);
  std::vector<std::string> entries;
  if (at == std::string_view::npos) return entries;
  output.remove_prefix(at + marker.size());
  while (!output.empty()) {
    size_t end = output.find('\0');
    std::string_view entry = output.substr(0, end);
    if (size_t eq = entry.find('='); eq != std::string_view::npos && eq > 0)
      entries.emplace_back(entry);
    if (end == std::string_view::npos) break;
    output.remove_prefix(end + 1);
  }
  return entries;
}

std::vector<std::string> MergeUnderJobEnvironment(std::vector<std::string> login,
                                                  const std::vector<std::string>& job) {
  for (const std::string& entry : job) {
    size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    SetVariable(login, std::string_view(entry).substr(0, eq), entry.substr(eq + 1));
  }
  return login;
}

Result<std::vector<std::string>> LoadLoginEnvironment(const std::string& user_name,
                                                      const std::optional<ProcessUser>& user,
                                                      const UserEnvironmentRequest& request) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return MakeError(fmt::format("pipe: {}", std::strerror(errno)));
  ProcessSpec spec = LoginCommand(user_name, user, request, fds[1]);
  auto spawned = Spawn(spec);
  ::close(fds[1]);
  if (!spawned) {
    ::close(fds[0]);
    return std::move(spawned).take_error();
  }
  (void)ReadSpawnFailure(spawned->report_fd);
  std::string output;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(request.timeout_seconds);
  bool finished = ReadUntil(fds[0], deadline, output);
  ::close(fds[0]);
  if (!finished) ::kill(-spawned->pid, SIGKILL);
  int status = 0;
  while (::waitpid(spawned->pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!finished) return MakeError(fmt::format("timed out after {} s", request.timeout_seconds));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return MakeError(fmt::format("{} exited with status {}", spec.argv[0],
                                 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)));
  return ParseEnvironmentOutput(output);
}

}  // namespace drover::agent
