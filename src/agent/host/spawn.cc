// The parent's side of Spawn, and the lookups that prepare a description; see spawn.h. The
// child's side is spawn_child.cc.
#include "agent/host/spawn.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "agent/host/job_env.h"
#include "agent/host/spawn_child.h"
#include "common/fd_io.h"
#include "common/text.h"

namespace drover::agent {
namespace {

namespace fs = std::filesystem;

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
  static void Close(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  void Close() {
    Close(read);
    Close(write);
  }
};

// The child is up to the handshake or gone; kill it and say what it said, if anything.
Error GiveUp(pid_t pid, Pipe& ready, Pipe& go, Pipe& report, std::string message) {
  Pipe::Close(ready.read);
  Pipe::Close(go.write);
  if (pid > 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    if (auto failure = ReadSpawnFailure(report.read)) message += ": " + failure->message;
  }
  Pipe::Close(report.read);
  return MakeError(std::move(message));
}

bool ReadByte(int fd) {
  char byte = 0;
  ssize_t got = 0;
  while ((got = ::read(fd, &byte, 1)) < 0 && errno == EINTR) {
  }
  return got == 1;
}

}  // namespace

std::vector<int> EverySignal() {
  std::vector<int> signals;
  for (int signal = 1; signal < NSIG; ++signal) signals.push_back(signal);
  return signals;
}

std::vector<gid_t> GroupsOf(const std::string& user, gid_t gid) {
  int count = 32;
  std::vector<gid_t> groups(count);
  while (::getgrouplist(user.c_str(), gid, groups.data(), &count) < 0)
    groups.resize(count = std::max<int>(count, groups.size() * 2));
  groups.resize(std::max(count, 0));
  if (groups.empty()) groups.push_back(gid);
  return groups;
}

Result<Spawned> Spawn(const ProcessSpec& spec, const std::function<Status(pid_t)>& join) {
  spawn_child::Plan plan = spawn_child::MakePlan(spec);
  Pipe ready, go, report;
  for (Pipe* pipe : {&ready, &go, &report})
    if (Status opened = pipe->Open(); !opened) {
      ready.Close();
      go.Close();
      report.Close();
      return std::move(opened).take_error();
    }
  pid_t pid = ::fork();
  if (pid == 0)
    spawn_child::Run(plan,
                     {ready.write, go.read, report.write, {ready.read, go.write, report.read}});
  int fork_error = errno;
  Pipe::Close(ready.write);
  Pipe::Close(go.read);
  Pipe::Close(report.write);
  if (pid < 0)
    return GiveUp(pid, ready, go, report, fmt::format("fork: {}", std::strerror(fork_error)));
  if (!ReadByte(ready.read))
    return GiveUp(pid, ready, go, report, spec.name + " died before it started");
  if (join)
    if (Status joined = join(pid); !joined) return GiveUp(pid, ready, go, report, joined.error());
  // The go byte, then for a stderr note its length and text (less than a pipe holds).
  std::string go_ahead = "g";
  if (spec.stderr_note) {
    uint32_t size = static_cast<uint32_t>(std::min(spec.stderr_note->size(), kStderrNoteMost));
    go_ahead.append(reinterpret_cast<const char*>(&size), sizeof size);
    go_ahead.append(*spec.stderr_note, 0, size);
  }
  WriteFully(go.write, go_ahead);
  Pipe::Close(go.write);
  Pipe::Close(ready.read);
  return Spawned{pid, report.read};
}

std::optional<SpawnFailure> ReadSpawnFailure(int& report_fd) {
  if (report_fd < 0) return std::nullopt;
  std::string said;
  char buffer[4096];
  ssize_t got = 0;
  while ((got = ::read(report_fd, buffer, sizeof buffer)) > 0 || (got < 0 && errno == EINTR))
    if (got > 0) said.append(buffer, static_cast<size_t>(got));
  Pipe::Close(report_fd);
  spawn_child::ReportHeader header;
  if (said.size() < sizeof header) return std::nullopt;
  std::memcpy(&header, said.data(), sizeof header);
  return SpawnFailure{static_cast<SpawnPhase>(header.phase), header.error,
                      said.substr(sizeof header)};
}

std::string ResolveProgram(const std::string& program,
                           const std::vector<std::string>& environment) {
  if (program.find('/') != std::string::npos) return program;
  std::string path = FindVariable(environment, "PATH").value_or("/usr/local/bin:/usr/bin:/bin");
  for (const std::string& dir : Split(path, ':')) {
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    struct stat info {};
    if (::stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        (info.st_mode & 0111) != 0)
      return candidate.string();
  }
  return "";
}

namespace {

int WriteAllOf(int fd, std::string_view data) {
  for (std::string_view left = data; !left.empty();) {
    ssize_t wrote = ::write(fd, left.data(), left.size());
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return wrote < 0 ? errno : EIO;
    left.remove_prefix(static_cast<size_t>(wrote));
  }
  return 0;
}

// Runs `action` (system calls only: it runs in a child of a multi-threaded process) as `user` in
// a forked child; its result (0 or an errno) comes back through a pipe.
int AsUser(const std::optional<ProcessUser>& user, const std::function<int()>& action) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return errno;
  Pipe report{fds[0], fds[1]};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(report.read);
    SpawnPhase phase;
    int error = user && !spawn_child::SwitchUser(*user, phase) ? errno : action();
    (void)!::write(report.write, &error, sizeof error);
    ::_exit(127);
  }
  int error = pid < 0 ? errno : 0;
  Pipe::Close(report.write);
  if (pid > 0 && ::read(report.read, &error, sizeof error) != sizeof error) error = EIO;
  report.Close();
  if (pid > 0) ::waitpid(pid, nullptr, 0);
  return error;
}

}  // namespace

int CreateFileAsUser(const std::optional<ProcessUser>& user, const std::string& path, int flags) {
  return AsUser(user, [&] {
    int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
    return fd < 0 ? errno : 0;
  });
}

int WriteFileAsUser(const std::optional<ProcessUser>& user, const std::string& path,
                    std::string_view data, mode_t mode) {
  return AsUser(user, [&] {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return errno;
    int error = WriteAllOf(fd, data);
    if (error == 0 && ::fchmod(fd, mode) != 0) error = errno;
    return ::close(fd) == 0 ? error : errno;
  });
}

int AppendFileAsUser(const std::optional<ProcessUser>& user, const std::string& path,
                     std::string_view data) {
  return AsUser(user, [&] {
    // Non-blocking: a full pipe nobody drains must not hold the caller.
    int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return errno;
    int error = WriteAllOf(fd, data);
    return ::close(fd) == 0 || error != 0 ? error : errno;
  });
}

int WritePieceAsUser(const std::optional<ProcessUser>& user, const std::string& path,
                     const FilePiece& piece) {
  return AsUser(user, [&] {
    // Non-blocking open: a FIFO at the path must not hold the agent; only a regular file is
    // written.
    int flags = O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
    if (piece.offset == 0) flags |= O_CREAT | (piece.replace ? O_TRUNC : O_EXCL);
    int fd = ::open(path.c_str(), flags, 0600);
    if (fd < 0) return errno;
    struct stat status {};
    if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode) ||
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
      ::close(fd);
      return EINVAL;
    }
    int error = 0;
    size_t done = 0;
    while (error == 0 && done < piece.data.size()) {
      ssize_t wrote = ::pwrite(fd, piece.data.data() + done, piece.data.size() - done,
                               static_cast<off_t>(piece.offset + done));
      if (wrote < 0 && errno != EINTR) error = errno;
      if (wrote > 0) done += static_cast<size_t>(wrote);
    }
    if (error == 0 && piece.last && ::fchmod(fd, piece.mode & 07777) != 0) error = errno;
    if (error == 0 && piece.last && piece.times) {
      timespec times[2] = {{piece.times->first, 0}, {piece.times->second, 0}};
      if (::futimens(fd, times) != 0) error = errno;
    }
    return ::close(fd) == 0 || error != 0 ? error : errno;
  });
}

int MakeDirectoryAsUser(const std::optional<ProcessUser>& user, const std::string& path) {
  return AsUser(user,
                [&] { return ::mkdir(path.c_str(), 0700) == 0 || errno == EEXIST ? 0 : errno; });
}

}  // namespace drover::agent
