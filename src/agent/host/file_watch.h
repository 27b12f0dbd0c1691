// Told when a file of a given name is written into a watched directory (inotify), or when a
// watched process ends (a pidfd): how the agent learns that a job's supervisor wrote its status,
// or died without one, instead of looking at every job directory on a timer.
#pragma once

#include <sys/types.h>
#include <filesystem>
#include <functional>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "common/mutex.h"
#include "common/result.h"

namespace drover::agent {

class FileWatch {
 public:
  // Calls `written` from a thread of its own whenever a file named `name` is closed after
  // writing in a watched directory, or renamed into one (an atomic write), and when the kernel
  // dropped events (its queue overflowed). Null, with the reason, where inotify is unavailable.
  static Result<std::unique_ptr<FileWatch>> Start(std::string name, std::function<void()> written);
  ~FileWatch();  // stops the thread
  FileWatch(const FileWatch&) = delete;
  FileWatch& operator=(const FileWatch&) = delete;

  // Watches `dir` until Unwatch or its removal (the kernel drops the watch then). An error
  // (ENOSPC past fs.inotify.max_user_watches) says why; the caller still finds the file by
  // looking.
  Status Watch(const std::filesystem::path& dir) EXCLUDES(mutex_);
  void Unwatch(const std::filesystem::path& dir) EXCLUDES(mutex_);
  size_t watched() EXCLUDES(mutex_);  // directories watched now

  // Calls `written` too when process `pid` ends, and keeps it for Ended(). kGone: it had ended
  // already; kUnwatched: no pidfd for it, `why` says why (a kernel before 5.3, or the
  // descriptors this watch may hold, half of RLIMIT_NOFILE, all in use), and the caller must
  // look for its end itself.
  enum class ProcessWatch { kWatched, kGone, kUnwatched };
  ProcessWatch WatchProcess(pid_t pid, std::string* why = nullptr) EXCLUDES(mutex_);
  // True once, after `pid`'s end was told: each caller asks of its own processes.
  bool Ended(pid_t pid) EXCLUDES(mutex_);
  // Stops watching `pid` (its end no longer matters) and forgets an end told of it.
  void UnwatchProcess(pid_t pid) EXCLUDES(mutex_);
  size_t processes() EXCLUDES(mutex_);  // processes watched now

 private:
  FileWatch(int inotify, int stop, int poller, std::string name, std::function<void()> written);
  void Run();

  // The inotify instance; an eventfd that ends Run; the epoll instance Run waits on (the two
  // and every pidfd).
  const int inotify_, stop_, poller_;
  const std::string name_;
  const std::function<void()> written_;
  Mutex mutex_;
  std::map<std::string, int> watches_ GUARDED_BY(mutex_);  // directory -> watch descriptor
  // pidfd -> its process, and the generation its epoll entry carries: an event already taken
  // from epoll for a descriptor closed meanwhile (UnwatchProcess) and reused is not its.
  struct Watched {
    pid_t pid;
    uint32_t generation;
  };
  std::map<int, Watched> pidfds_ GUARDED_BY(mutex_);
  uint32_t generations_ GUARDED_BY(mutex_) = 0;
  std::map<pid_t, int> pidfd_of_ GUARDED_BY(mutex_);  // the same, the other way
  std::set<pid_t> ended_ GUARDED_BY(mutex_);          // told, not yet asked of (Ended)
  size_t most_pidfds_ = 0;                            // half of RLIMIT_NOFILE
  std::thread thread_;
};

}  // namespace drover::agent
