// A job's private /tmp and /dev/shm; see job_container.h.
#include "agent/host/job_container.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace drover::agent {
namespace {

namespace fs = std::filesystem;

std::string Errno(const char* call) {
  return fmt::format("{}: {}", call, std::strerror(errno));
}

// mountinfo writes a space, tab, newline and backslash in a path as \040, \011, \012, \134.
std::string Unescape(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size()) {
      int value = 0;
      bool octal = true;
      for (size_t k = 1; k <= 3; ++k) {
        char c = text[i + k];
        octal = octal && c >= '0' && c <= '7';
        value = value * 8 + (c - '0');
      }
      if (octal) {
        out += static_cast<char>(value);
        i += 3;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

// `path` (canonical) is a mount point whose propagation is private (no "shared:" in its
// mountinfo line).
bool PrivateMountPoint(const std::string& path) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  bool found = false, shared = false;
  while (std::getline(in, line)) {
    // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - ...
    std::istringstream words(line);
    std::string id, parent, device, root, point;
    words >> id >> parent >> device >> root >> point;
    if (Unescape(point) != path) continue;
    found = true;  // the last line for a point is the mount on top
    shared = line.find(" shared:") != std::string::npos && line.find(" shared:") < line.find(" - ");
  }
  return found && !shared;
}

// BasePath as a private mount of itself, once: the namespace files bound under it must not
// propagate to other namespaces (the kernel refuses that loop), as Slurm's plugin does.
Status MakeBasePrivate(const std::string& base) {
  // Supervisors of jobs starting together take turns, so the bind is made once.
  int lock = ::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lock < 0)
    return MakeError(fmt::format("cannot open BasePath {}: {}", base, std::strerror(errno)));
  struct Unlock {
    int fd;
    ~Unlock() { ::close(fd); }  // closing drops the flock
  } unlock{lock};
  while (::flock(lock, LOCK_EX) != 0)
    if (errno != EINTR)
      return MakeError(fmt::format("cannot lock BasePath {}: {}", base, std::strerror(errno)));
  if (PrivateMountPoint(base)) return OkStatus();
  if (::mount(base.c_str(), base.c_str(), nullptr, MS_BIND, nullptr) != 0)
    return MakeError(
        fmt::format("cannot bind BasePath {} onto itself: {}", base, std::strerror(errno)));
  if (::mount(nullptr, base.c_str(), nullptr, MS_PRIVATE, nullptr) != 0)
    return MakeError(
        fmt::format("cannot make BasePath {} a private mount: {}", base, std::strerror(errno)));
  return OkStatus();
}

// The child's part: a new mount namespace that sees the host's mounts (slave) and puts the
// job's own directories over the configured ones. Async-signal-safe calls only; returns 0 or
// the step that failed (1-based) for the parent's message.
int BuildNamespace(const JobContainer& container, const std::vector<std::string>& copies) {
  if (::unshare(CLONE_NEWNS) != 0) return 1;
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) return 2;
  for (size_t i = 0; i < container.dirs.size(); ++i) {
    const std::string& dir = container.dirs[i];
    if (dir == "/dev/shm") {
      if (::mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0) return 3;
    } else if (::mount(copies[i].c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) != 0) {
      return 4;
    }
  }
  return 0;
}

}  // namespace

std::string PrivateCopyOf(const JobContainer& container, const std::string& dir) {
  std::string name = dir.substr(1);
  for (char& c : name)
    if (c == '/') c = '_';
  return container.job_dir + "/" + name;
}

// BasePath must be root's and no one else's to write: jobs' directories are made in it as root,
// and a path another user could change under them would let that user redirect root's chmod
// and mounts.
Status CheckRootFolder(const std::string& base, std::string_view what) {
  struct stat info {};
  if (::lstat(base.c_str(), &info) != 0)
    return MakeError(fmt::format("cannot examine {} {}: {}", what, base, std::strerror(errno)));
  if (S_ISLNK(info.st_mode)) {
    // A symbolic link the site made (root's) is followed; anyone else's is refused.
    if (info.st_uid != 0)
      return MakeError(
          fmt::format("{} {} is a symbolic link owned by uid {}: make it "
                      "root's or name its target",
                      what, base, info.st_uid));
    if (::stat(base.c_str(), &info) != 0)
      return MakeError(fmt::format("cannot follow {} {}: {}", what, base, std::strerror(errno)));
  }
  if (!S_ISDIR(info.st_mode)) return MakeError(fmt::format("{} {} is not a directory", what, base));
  if (info.st_uid != ::geteuid() || (info.st_mode & (S_IWGRP | S_IWOTH)))
    return MakeError(
        fmt::format("{} {} must be owned by root and writable by no one else "
                    "(chown root {}; chmod go-w {})",
                    what, base, base, base));
  return OkStatus();
}

Status CreateJobContainer(const JobContainer& container) {
  std::error_code error;
  if (!fs::is_directory(container.base, error)) {
    if (!container.auto_base)
      return MakeError(
          fmt::format("BasePath {} does not exist (create it, or set "
                      "AutoBasePath=true in job_container.conf)",
                      container.base));
    fs::create_directories(container.base, error);
    if (error)
      return MakeError(
          fmt::format("cannot create BasePath {}: {}", container.base, error.message()));
    ::chmod(container.base.c_str(), 0755);
  }
  if (Status safe = CheckRootFolder(container.base, "BasePath"); !safe) return safe;
  char real[PATH_MAX];
  if (!::realpath(container.base.c_str(), real))
    return MakeError(
        fmt::format("cannot resolve BasePath {}: {}", container.base, std::strerror(errno)));
  if (Status made = MakeBasePrivate(real); !made) return made;
  // A directory left by an earlier run of the job (a restart of the node) is not handed on.
  if (fs::exists(fs::symlink_status(container.job_dir, error)))
    if (Status removed = RemoveJobContainer(container); !removed) return removed;
  fs::create_directories(fs::path(container.job_dir).parent_path(), error);  // emulated nodes
  if (::mkdir(container.job_dir.c_str(), 0700) != 0)
    return MakeError(fmt::format("cannot create {}: {}", container.job_dir, std::strerror(errno)));
  std::vector<std::string> copies;
  for (const std::string& dir : container.dirs) {
    copies.push_back(PrivateCopyOf(container, dir));
    if (dir == "/dev/shm") continue;
    if (::mkdir(copies.back().c_str(), 01777) != 0 && errno != EEXIST)
      return MakeError(fmt::format("cannot create {}: {}", copies.back(), std::strerror(errno)));
    ::chmod(copies.back().c_str(), 01777);  // as /tmp: anyone writes, only owners delete
  }
  std::string ns = container.NamespaceFile();
  int fd = ::open(ns.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return MakeError(fmt::format("cannot create {}: {}", ns, std::strerror(errno)));
  ::close(fd);
  int ready[2], done[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return MakeError(Errno("pipe"));
  if (::pipe2(done, O_CLOEXEC) != 0) {
    ::close(ready[0]);
    ::close(ready[1]);
    return MakeError(Errno("pipe"));
  }
  pid_t child = ::fork();
  if (child < 0) {
    std::string failure = Errno("fork");
    for (int end : {ready[0], ready[1], done[0], done[1]}) ::close(end);
    return MakeError(failure);
  }
  if (child == 0) {
    ::close(ready[0]);
    ::close(done[1]);
    char step = static_cast<char>(BuildNamespace(container, copies));
    int saved = errno;
    (void)!::write(ready[1], &step, 1);
    (void)!::write(ready[1], &saved, sizeof saved);
    char wait = 0;
    (void)!::read(done[0], &wait, 1);  // held until the parent has bound the namespace
    ::_exit(step);
  }
  ::close(ready[1]);
  ::close(done[0]);
  char step = 1;
  int saved = EIO;
  bool told = ::read(ready[0], &step, 1) == 1 &&
              ::read(ready[0], &saved, sizeof saved) == static_cast<ssize_t>(sizeof saved);
  ::close(ready[0]);
  std::string failure;
  if (!told || step != 0) {
    static constexpr const char* kSteps[] = {"", "unshare(CLONE_NEWNS)", "mount --make-rslave /",
                                             "mount tmpfs on /dev/shm", "bind mount"};
    failure = fmt::format("cannot make the job's namespace: {}: {}",
                          told && step > 0 && step < 5 ? kSteps[static_cast<int>(step)] : "child",
                          std::strerror(saved));
  } else {
    std::string source = fmt::format("/proc/{}/ns/mnt", child);
    if (::mount(source.c_str(), ns.c_str(), nullptr, MS_BIND, nullptr) != 0)
      failure = fmt::format("cannot hold the job's namespace at {}: {}", ns, std::strerror(errno));
  }
  ::close(done[1]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!failure.empty()) {
    (void)RemoveJobContainer(container);  // the failure above is what to say
    return MakeError(failure);
  }
  return OkStatus();
}

bool IsJobNamespace(const JobContainer& container) {
  struct statfs info {};
  constexpr decltype(info.f_type) kNsfsMagic = 0x6e736673;  // NSFS_MAGIC
  return ::statfs(container.NamespaceFile().c_str(), &info) == 0 && info.f_type == kNsfsMagic;
}

Result<int> OpenJobNamespace(const JobContainer& container) {
  std::string ns = container.NamespaceFile();
  int fd = ::open(ns.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return MakeError(
        fmt::format("cannot open the job's namespace {}: {}", ns, std::strerror(errno)));
  return fd;
}

Status RemoveJobContainer(const JobContainer& container) {
  std::string ns = container.NamespaceFile();
  // EINVAL: not a mount (never bound); but still a namespace there means it could not be let go.
  if (::umount2(ns.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) != 0 &&
      ((errno != EINVAL && errno != ENOENT) || IsJobNamespace(container)))
    return MakeError(fmt::format("cannot unmount {}: {}", ns, std::strerror(errno)));
  std::error_code error;
  fs::remove_all(container.job_dir, error);
  if (error)
    return MakeError(fmt::format("cannot remove {}: {}", container.job_dir, error.message()));
  return OkStatus();
}

}  // namespace drover::agent
