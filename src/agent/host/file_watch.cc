// See file_watch.h.
#include "agent/host/file_watch.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace drover::agent {

Result<std::unique_ptr<FileWatch>> FileWatch::Start(std::string name,
                                                    std::function<void()> written) {
  int inotify = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (inotify < 0) return MakeError(fmt::format("inotify_init1: {}", std::strerror(errno)));
  int stop = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop < 0) {
    int error = errno;
    ::close(inotify);
    return MakeError(fmt::format("eventfd: {}", std::strerror(error)));
  }
  return std::unique_ptr<FileWatch>(
      new FileWatch(inotify, stop, std::move(name), std::move(written)));
}

FileWatch::FileWatch(int inotify, int stop, std::string name, std::function<void()> written)
    : inotify_(inotify), stop_(stop), name_(std::move(name)), written_(std::move(written)) {
  thread_ = std::thread([this] { Run(); });
}

FileWatch::~FileWatch() {
  uint64_t one = 1;
  while (::write(stop_, &one, sizeof one) < 0 && errno == EINTR) {
  }
  thread_.join();
  ::close(inotify_);
  ::close(stop_);
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

void FileWatch::Run() {
  alignas(inotify_event) char buffer[16 * 1024];
  for (;;) {
    pollfd watched[2] = {{inotify_, POLLIN, 0}, {stop_, POLLIN, 0}};
    if (::poll(watched, 2, -1) < 0 && errno != EINTR) return;
    if (watched[1].revents) return;
    if (!(watched[0].revents & POLLIN)) continue;
    bool seen = false;
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
