// The supervisor launcher (droverstepd --serve) and the agent's side of it; see launcher.h.
#include "agent/stepd/launcher.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "agent/stepd/detach.h"
#include "agent/stepd/spool.h"
#include "agent/stepd/supervisor.h"
#include "common/fd_io.h"
#include "common/log.h"
#include "common/process_file.h"
#include "common/text.h"

extern char** environ;

namespace drover::agent {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr size_t kMostAnswer = 4096;  // "+<pid>", or "-<why>" cut to this
// How long a supervisor may take to report ready before the launcher is given up (killed).
constexpr auto kReadyWait = std::chrono::seconds(10);
// How long a supervisor orphaned by a launcher that ended mid-launch has to write its pid.
constexpr auto kOrphanWait = std::chrono::seconds(5);
// How long the agent waits before it tries again to spawn a launcher that would not start.
constexpr auto kRespawnWait = std::chrono::seconds(60);

// In the forked child: the descriptors and session `droverstepd --attached` gets from the
// agent's posix_spawn (detach.cc), then the supervisor. Never returns.
[[noreturn]] void BecomeSupervisor(const fs::path& job_dir, int ready_write,
                                   const sigset_t& original_mask) {
  ::sigprocmask(SIG_SETMASK, &original_mask, nullptr);
  // The ready pipe above every descriptor the launcher had open, then on kReadyFd alone.
  int ready = ::fcntl(ready_write, F_DUPFD_CLOEXEC, 64);
  if (ready < 0) ::_exit(1);
  ::close_range(kReadyFd, static_cast<unsigned>(ready) - 1, 0);
  ::close_range(static_cast<unsigned>(ready) + 1, ~0U, 0);
  if (::dup2(ready, kReadyFd) < 0) ::_exit(1);
  ::close(ready);
  ::setsid();  // its own session, as POSIX_SPAWN_SETSID gives the spawned one
  const std::string log = (job_dir / "stepd.log").string();
  int null = ::open("/dev/null", O_RDONLY);
  int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (null < 0 || out < 0) {
    WriteFully(kReadyFd, fmt::format("-cannot open {}: {}", null < 0 ? "/dev/null" : log,
                                     std::strerror(errno)));
    ::_exit(1);
  }
  ::dup2(null, STDIN_FILENO);
  ::dup2(out, STDOUT_FILENO);
  ::dup2(out, STDERR_FILENO);
  if (null > STDERR_FILENO) ::close(null);
  if (out > STDERR_FILENO) ::close(out);
  std::exit(SuperviseAttached(job_dir));
}

// One launch in the launcher: the answer for the agent.
std::string Launch(const std::string& job_dir, const sigset_t& original_mask) {
  if (job_dir.empty() || job_dir.front() != '/' || job_dir.find('\0') != std::string::npos)
    return fmt::format("-not an absolute job directory: '{}'", job_dir);
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return fmt::format("-pipe: {}", std::strerror(errno));
  pid_t pid = ::fork();
  if (pid == 0) BecomeSupervisor(job_dir, ready[1], original_mask);
  ::close(ready[1]);
  if (pid < 0) {
    int error = errno;
    ::close(ready[0]);
    return fmt::format("-fork: {}", std::strerror(error));
  }
  std::string said = ReadToEnd(ready[0]);  // to the pipe's end: ready, or gone
  ::close(ready[0]);
  if (said == "+") return fmt::format("+{}", pid);
  int wait_status = 0;
  while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  return "-" + NotReadyReason(said, wait_status, "the supervisor",
                              (fs::path(job_dir) / "stepd.log").string());
}

}  // namespace

int SuperviseAttached(const fs::path& job_dir) {
  auto input = ReadSupervisorInput(job_dir);
  // One process from the agent's request to the job's end: no forks to detach. A launch the
  // agent gave up (its launcher ended and no supervisor showed in time) has its status already:
  // it never runs then.
  Status ready = !input ? Status(MakeError(input.error()))
                 : ::access((job_dir / "status").c_str(), F_OK) == 0
                     ? Status(MakeError("the agent gave this launch up; it has a status"))
                     : WriteProcessFile(job_dir / "supervisor.pid", ::getpid());
  if (!Attach(ready)) return 1;
  SuperviseBatchJob(job_dir, input->launch, input->environment);
  return 0;
}

int ServeLaunches(int socket) {
  ::unsetenv("LD_BIND_NOW");  // see SupervisorLauncher::Spawn
  int type = 0;
  socklen_t size = sizeof type;
  if (::getsockopt(socket, SOL_SOCKET, SO_TYPE, &type, &size) != 0 || type != SOCK_SEQPACKET) {
    fmt::print(stderr, "droverstepd: error: --serve needs the agent's socket on descriptor {}\n",
               socket);
    return 2;
  }
  // What every supervisor would otherwise load on its own, loaded once here and inherited: the
  // name service modules a look-up of the job's user and groups opens (getpwnam, getgrouplist).
  // The binary is linked with -z now and started with LD_BIND_NOW, so its symbols and its
  // libraries' are bound here too, not in each child.
  if (const passwd* root = ::getpwuid(0)) {
    gid_t groups[64];
    int count = 64;
    (void)::getgrouplist(root->pw_name, root->pw_gid, groups, &count);
  }
  (void)::getgrgid(0);
  // SIGCHLD is read from a descriptor, so supervisors are reaped as they end while the
  // launcher waits for the agent; each supervisor gets back the mask the launcher started with.
  sigset_t child_signal, original_mask;
  sigemptyset(&child_signal);
  sigaddset(&child_signal, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &child_signal, &original_mask);
  ::signal(SIGPIPE, SIG_IGN);
  int children = ::signalfd(-1, &child_signal, SFD_CLOEXEC | SFD_NONBLOCK);
  if (children < 0) {
    fmt::print(stderr, "droverstepd: error: signalfd: {}\n", std::strerror(errno));
    return 1;
  }
  std::string request(PATH_MAX + 1, '\0');
  for (;;) {
    pollfd watched[2] = {{socket, POLLIN, 0}, {children, POLLIN, 0}};
    if (::poll(watched, 2, -1) < 0) {
      if (errno == EINTR) continue;
      fmt::print(stderr, "droverstepd: error: poll: {}\n", std::strerror(errno));
      return 1;
    }
    if (watched[1].revents & POLLIN) {
      signalfd_siginfo info;
      while (::read(children, &info, sizeof info) == sizeof info) {
      }
      while (::waitpid(-1, nullptr, WNOHANG) > 0) {
      }
    }
    if (watched[0].revents & POLLIN) {
      ssize_t got = ::recv(socket, request.data(), request.size(), MSG_TRUNC);
      if (got == 0) return 0;  // the agent closed its end, or died
      if (got < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return 0;
      }
      // The receipt first: a launcher that ends before it is sent forked nothing for this
      // request, and the agent may ask another.
      if (::send(socket, ".", 1, MSG_NOSIGNAL) < 0) return 0;
      std::string answer = static_cast<size_t>(got) >= request.size()
                               ? fmt::format("-a job directory longer than {} bytes", PATH_MAX)
                               : Launch(request.substr(0, static_cast<size_t>(got)), original_mask);
      if (answer.size() > kMostAnswer) answer.resize(kMostAnswer);
      if (::send(socket, answer.data(), answer.size(), MSG_NOSIGNAL) < 0) return 0;
    } else if (watched[0].revents & (POLLHUP | POLLERR | POLLNVAL)) {
      return 0;
    }
  }
}

SupervisorLauncher::~SupervisorLauncher() {
  MutexLock lock(mutex_);
  Stop(/*kill=*/false);
}

pid_t SupervisorLauncher::launcher_pid() {
  MutexLock lock(mutex_);
  return launcher_;
}

void SupervisorLauncher::Stop(bool kill) {
  if (socket_ >= 0) ::close(socket_);
  socket_ = -1;
  if (launcher_ > 0) {  // it ends at the socket's end of file, unless stuck in a launch
    if (kill) ::kill(launcher_, SIGKILL);
    while (::waitpid(launcher_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  launcher_ = 0;
}

Status SupervisorLauncher::Spawn() {
  if (spawn_failed_ && Clock::now() < *spawn_failed_ + kRespawnWait)
    return MakeError("the launcher did not start lately");
  Status spawned = SpawnNow();
  if (!spawned) NotStarted(spawned.error());
  return spawned;
}

void SupervisorLauncher::NotStarted(const std::string& why) {
  if (!spawn_failed_)
    log::Warning(
        "{}; supervisors are spawned one exec each until it starts (tried again every {} s)", why,
        std::chrono::seconds(kRespawnWait).count());
  spawn_failed_ = Clock::now();
}

std::optional<SupervisorLauncher::FileIdentity> SupervisorLauncher::StepdIdentity() const {
  struct stat info {};
  if (::stat(stepd_.c_str(), &info) != 0) return std::nullopt;
  return FileIdentity{
      info.st_dev, info.st_ino, info.st_size,
      static_cast<int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec};
}

void SupervisorLauncher::RetireIfReplaced() {
  if (socket_ < 0 || !started_from_) return;
  // One stat a launch. A file that is gone for now (mid-upgrade) keeps the launcher: the next
  // launch looks again.
  std::optional<FileIdentity> now = StepdIdentity();
  if (!now || *now == *started_from_) return;
  log::Info("{} was replaced since launcher {} started: a new launcher runs the next jobs",
            stepd_.string(), launcher_);
  Stop(/*kill=*/false);
}

Status SupervisorLauncher::SpawnNow() {
  // Taken before the exec: a file replaced in between is seen as replaced at the next launch,
  // which then starts one launcher more, never one less.
  started_from_ = StepdIdentity();
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0)
    return MakeError(fmt::format("socketpair: {}", std::strerror(errno)));
  // LD_BIND_NOW: the loader binds every library's symbols at the launcher's start, not only the
  // binary's (-z now), so that no supervisor binds them again on first call. The launcher
  // removes it from its environment at once: the supervisors and their jobs do not see it.
  std::vector<char*> environment;
  std::string bind_now = "LD_BIND_NOW=1";
  for (char** entry = environ; *entry; ++entry)
    if (!std::string_view(*entry).starts_with("LD_BIND_NOW=")) environment.push_back(*entry);
  environment.push_back(bind_now.data());
  environment.push_back(nullptr);
  // Its stdout and stderr are the agent's (its log); it ends when the agent does, at its
  // socket's end of file.
  const std::string room = fmt::format("{}={}", kTitleRoomOption, std::string(kTitleRoom, ' '));
  auto spawned =
      SpawnInSession({stepd_.string(), "--serve", room}, ends[1], kServeFd, "", environment.data());
  ::close(ends[1]);
  if (!spawned) {
    ::close(ends[0]);
    return MakeError(spawned.error());
  }
  socket_ = ends[0];
  launcher_ = *spawned;
  return OkStatus();
}

// The next message from the launcher within kReadyWait.
Result<std::string> SupervisorLauncher::Receive() {
  pollfd answered{socket_, POLLIN, 0};
  int ready = 0;
  const auto deadline = Clock::now() + kReadyWait;
  do {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    ready = ::poll(&answered, 1, static_cast<int>(std::max<int64_t>(left.count(), 0)));
  } while (ready < 0 && errno == EINTR);
  if (ready == 0)
    return MakeError(fmt::format("no answer from the launcher within {} s",
                                 std::chrono::seconds(kReadyWait).count()));
  std::string answer(kMostAnswer, '\0');
  ssize_t got = 0;
  while ((got = ::recv(socket_, answer.data(), answer.size(), MSG_TRUNC)) < 0 && errno == EINTR) {
  }
  if (got <= 0)
    return MakeError(got == 0 ? std::string("the launcher ended")
                              : fmt::format("recv: {}", std::strerror(errno)));
  answer.resize(std::min(static_cast<size_t>(got), answer.size()));
  return answer;
}

Result<std::string> SupervisorLauncher::Ask(const std::string& job_dir, bool& taken) {
  taken = false;
  if (::send(socket_, job_dir.data(), job_dir.size(), MSG_NOSIGNAL) < 0)
    return MakeError(fmt::format("send: {}", std::strerror(errno)));
  Result<std::string> receipt = Receive();  // "." before it forks anything
  if (!receipt) return receipt;
  if (*receipt != ".") return MakeError(fmt::format("the launcher said '{}', not '.'", *receipt));
  taken = true;
  return Receive();
}

// A launcher that ended (or was given up) after it got the request may have forked the
// supervisor first: the job then runs under it, and a second must never start. Its pid, once it
// has written supervisor.pid; nullopt if none did within kOrphanWait (SuperviseAttached refuses to
// start a job whose launch was given up: it has a status by then). A supervisor that wrote its
// pid and has ended already (a short job, run to its end before this look) counts too: the job
// ran, and the agent finds its status as for any supervisor that ended. The agent removes a job
// directory's files before a launch, so the pid file is this launch's.
std::optional<pid_t> FindOrphan(const fs::path& job_dir) {
  for (auto deadline = Clock::now() + kOrphanWait;;) {
    if (auto record = ReadProcessFile(job_dir / "supervisor.pid")) return record->pid;
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Result<SupervisorLauncher::Started> SupervisorLauncher::Start(const fs::path& job_dir) {
  const std::string dir = fs::absolute(job_dir).string();
  MutexLock lock(mutex_);
  Result<std::string> answer = MakeError("no launcher");
  // A launcher that ended (killed, or out of memory) before it got the request is started
  // again once.
  RetireIfReplaced();
  for (int attempt = 0; attempt < 2 && !answer; ++attempt) {
    const bool fresh = socket_ < 0;
    if (fresh && !Spawn()) break;
    bool taken = false;
    answer = Ask(dir, taken);
    if (answer) {
      if (fresh) spawn_failed_.reset();  // a launcher has started once it answers
      break;
    }
    Stop(/*kill=*/true);  // gone, or stuck: reaped either way
    if (!taken && fresh) {
      // A launcher that ends before its first request is not one that can run (a droverstepd
      // that does not know --serve's arguments, say): as one that could not be spawned.
      NotStarted(
          fmt::format("the launcher ({} --serve) ended before its first launch: {}; its "
                      "output is in this log",
                      stepd_.string(), answer.error()));
      break;
    }
    if (!taken) continue;
    if (std::optional<pid_t> orphan = FindOrphan(dir)) return Started{*orphan, false};
    return MakeError(
        fmt::format("{} during the launch, and no supervisor wrote its pid within {} s",
                    answer.error(), std::chrono::seconds(kOrphanWait).count()));
  }
  if (!answer) {  // no launcher: one spawn and exec for this job, as before launchers
    auto pid = StartSupervisor(stepd_, job_dir);
    if (!pid) return MakeError(pid.error());
    return Started{*pid, true};
  }
  if (answer->starts_with("+"))
    if (auto pid = ParseInt64(answer->substr(1)); pid && *pid > 0)
      return Started{static_cast<pid_t>(*pid), false};
  if (answer->starts_with("-")) return MakeError(answer->substr(1));
  return MakeError(fmt::format("the launcher's answer '{}' is not a pid", *answer));
}

}  // namespace drover::agent
