// See file_watch.h.
#include "agent/host/file_watch.h"

#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace drover::agent {

Result<std::unique_ptr<FileWatch>> FileWatch::Start(std::string name,
                                                    std::function<void()> written) {
  int inotify = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (inotify < 0) return MakeError(fmt::format("inotify_init1: {}", std::strerror(errno)));
  int stop = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  int poller = stop < 0 ? -1 : ::epoll_create1(EPOLL_CLOEXEC);
  epoll_event in{};  // these two carry their descriptors alone, a pidfd its generation besides
  in.events = EPOLLIN;
  in.data.u64 = static_cast<uint64_t>(inotify);
  epoll_event stopped{};
  stopped.events = EPOLLIN;
  stopped.data.u64 = static_cast<uint64_t>(stop);
  if (poller < 0 || ::epoll_ctl(poller, EPOLL_CTL_ADD, inotify, &in) < 0 ||
      ::epoll_ctl(poller, EPOLL_CTL_ADD, stop, &stopped) < 0) {
    int error = errno;
    for (int fd : {inotify, stop, poller})
      if (fd >= 0) ::close(fd);
    return MakeError(fmt::format("{}: {}", stop < 0 ? "eventfd" : "epoll", std::strerror(error)));
  }
  return std::unique_ptr<FileWatch>(
      new FileWatch(inotify, stop, poller, std::move(name), std::move(written)));
}

FileWatch::FileWatch(int inotify, int stop, int poller, std::string name,
                     std::function<void()> written)
    : inotify_(inotify),
      stop_(stop),
      poller_(poller),
      name_(std::move(name)),
      written_(std::move(written)) {
  rlimit files{};
  most_pidfds_ = ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY
                     ? static_cast<size_t>(files.rlim_cur / 2)
                     : size_t{1} << 20;
  thread_ = std::thread([this] { Run(); });
}

FileWatch::~FileWatch() {
  uint64_t one = 1;
  while (::write(stop_, &one, sizeof one) < 0 && errno == EINTR) {
  }
  thread_.join();
  ::close(inotify_);
  ::close(stop_);
  ::close(poller_);
  MutexLock lock(mutex_);
  for (const auto& [pidfd, watched] : pidfds_) ::close(pidfd);
}

Status FileWatch::Watch(const std::filesystem::path& dir) {
  int watch = ::inotify_add_watch(inotify_, dir.c_str(), IN_CLOSE_WRITE | IN_MOVED_TO);
  if (watch < 0)
    return MakeError(fmt::format("cannot watch {}: {}{}", dir.string(), std::strerror(errno),
                                 errno == ENOSPC ? " (fs.inotify.max_user_watches)" : ""));
  MutexLock lock(mutex_);
  auto [it, added] = watches_.try_emplace(dir.string(), watch);
  if (!added && it->second != watch) {  // the path is another directory now: drop the old one's
    ::inotify_rm_watch(inotify_, it->second);
    it->second = watch;
  }
  return OkStatus();
}

void FileWatch::Unwatch(const std::filesystem::path& dir) {
  MutexLock lock(mutex_);
  auto it = watches_.find(dir.string());
  if (it == watches_.end()) return;
  ::inotify_rm_watch(inotify_, it->second);  // fails harmlessly if the kernel dropped it
  watches_.erase(it);
}

size_t FileWatch::watched() {
  MutexLock lock(mutex_);
  return watches_.size();
}

FileWatch::ProcessWatch FileWatch::WatchProcess(pid_t pid, std::string* why) {
  {
    MutexLock lock(mutex_);
    if (pidfds_.size() >= most_pidfds_) {
      if (why)
        *why = fmt::format("{} processes watched, half of this process's RLIMIT_NOFILE",
                           pidfds_.size());
      return ProcessWatch::kUnwatched;
    }
  }
#ifdef SYS_pidfd_open
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  int pidfd = -1;
  errno = ENOSYS;
#endif
  if (pidfd < 0 && errno == ESRCH) return ProcessWatch::kGone;
  if (pidfd < 0) {
    if (why)
      *why = errno == ENOSYS ? "no pidfd_open on this kernel (Linux 5.3 and later have it)"
                             : fmt::format("pidfd_open: {}", std::strerror(errno));
    return ProcessWatch::kUnwatched;
  }
  // pidfd_open's descriptor is close-on-exec: supervisors started later do not inherit it.
  MutexLock lock(mutex_);
  const uint32_t generation = ++generations_;
  epoll_event ended{};
  ended.events = EPOLLIN;
  ended.data.u64 = (uint64_t{generation} << 32) | static_cast<uint32_t>(pidfd);
  if (::epoll_ctl(poller_, EPOLL_CTL_ADD, pidfd, &ended) < 0) {
    if (why) *why = fmt::format("epoll_ctl: {}", std::strerror(errno));
    ::close(pidfd);
    return ProcessWatch::kUnwatched;
  }
  if (auto old = pidfd_of_.find(pid); old != pidfd_of_.end()) {  // a pid used again
    ::epoll_ctl(poller_, EPOLL_CTL_DEL, old->second, nullptr);
    ::close(old->second);
    pidfds_.erase(old->second);
  }
  pidfds_[pidfd] = {pid, generation};
  pidfd_of_[pid] = pidfd;
  ended_.erase(pid);  // its earlier process's end is old news
  return ProcessWatch::kWatched;
}

bool FileWatch::Ended(pid_t pid) {
  MutexLock lock(mutex_);
  return ended_.erase(pid) > 0;
}

void FileWatch::UnwatchProcess(pid_t pid) {
  MutexLock lock(mutex_);
  ended_.erase(pid);
  auto it = pidfd_of_.find(pid);
  if (it == pidfd_of_.end()) return;
  ::epoll_ctl(poller_, EPOLL_CTL_DEL, it->second, nullptr);
  ::close(it->second);
  pidfds_.erase(it->second);
  pidfd_of_.erase(it);
}

size_t FileWatch::processes() {
  MutexLock lock(mutex_);
  return pidfds_.size();
}

void FileWatch::Run() {
  alignas(inotify_event) char buffer[16 * 1024];
  epoll_event events[64];
  for (;;) {
    int ready = ::epoll_wait(poller_, events, 64, -1);
    if (ready < 0 && errno != EINTR) return;
    bool seen = false, written = false;
    for (int i = 0; i < ready; ++i) {
      const uint64_t data = events[i].data.u64;
      const int fd = static_cast<int>(data & 0xffffffff);
      if (data == static_cast<uint64_t>(stop_)) return;
      if (data == static_cast<uint64_t>(inotify_)) {
        written = true;
        continue;
      }
      // A pidfd: its process ended, unless the descriptor was let go since.
      MutexLock lock(mutex_);
      auto it = pidfds_.find(fd);
      if (it == pidfds_.end() || it->second.generation != static_cast<uint32_t>(data >> 32))
        continue;
      ::epoll_ctl(poller_, EPOLL_CTL_DEL, fd, nullptr);
      ::close(fd);
      ended_.insert(it->second.pid);
      pidfd_of_.erase(it->second.pid);
      pidfds_.erase(it);
      seen = true;
    }
    if (!written) {
      if (seen) written_();
      continue;
    }
    ssize_t got = 0;
    while ((got = ::read(inotify_, buffer, sizeof buffer)) > 0) {
      for (ssize_t at = 0; at + static_cast<ssize_t>(sizeof(inotify_event)) <= got;) {
        const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
        at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
        if (event->mask & IN_Q_OVERFLOW) seen = true;
        if (event->len > 0 && name_ == event->name) seen = true;
        if (event->mask & IN_IGNORED) {  // the directory went: forget its watch
          MutexLock lock(mutex_);
          std::erase_if(watches_, [&](const auto& entry) { return entry.second == event->wd; });
        }
      }
    }
    if (seen) written_();
  }
}

}  // namespace drover::agent
