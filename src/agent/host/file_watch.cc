// See file_watch.h.
#include "agent/host/file_watch.h"

#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
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
  epoll_event in{};
  in.events = EPOLLIN;
  in.data.fd = inotify;
  epoll_event stopped{};
  stopped.events = EPOLLIN;
  stopped.data.fd = stop;
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
  for (const auto& [pidfd, pid] : pidfds_) ::close(pidfd);
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

FileWatch::ProcessWatch FileWatch::WatchProcess(pid_t pid) {
#ifdef SYS_pidfd_open
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  int pidfd = -1;
  errno = ENOSYS;
#endif
  if (pidfd < 0) return errno == ESRCH ? ProcessWatch::kGone : ProcessWatch::kUnsupported;
  // pidfd_open's descriptor is close-on-exec: supervisors started later do not inherit it.
  MutexLock lock(mutex_);
  epoll_event ended{};
  ended.events = EPOLLIN;
  ended.data.fd = pidfd;
  if (::epoll_ctl(poller_, EPOLL_CTL_ADD, pidfd, &ended) < 0) {
    ::close(pidfd);
    return ProcessWatch::kUnsupported;
  }
  pidfds_[pidfd] = pid;
  return ProcessWatch::kWatched;
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
      const int fd = events[i].data.fd;
      if (fd == stop_) return;
      if (fd == inotify_) {
        written = true;
        continue;
      }
      // A pidfd: its process ended.
      MutexLock lock(mutex_);
      ::epoll_ctl(poller_, EPOLL_CTL_DEL, fd, nullptr);
      ::close(fd);
      pidfds_.erase(fd);
      exits_.fetch_add(1);
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
