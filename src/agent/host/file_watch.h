// Told when a file of a given name is written into a watched directory (inotify): how the agent
// learns that a job's supervisor wrote its status, instead of looking at every job directory on
// a short timer.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
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

 private:
  FileWatch(int inotify, int stop, std::string name, std::function<void()> written);
  void Run();

  const int inotify_, stop_;  // the inotify instance; an eventfd that ends Run
  const std::string name_;
  const std::function<void()> written_;
  Mutex mutex_;
  std::map<std::string, int> watches_ GUARDED_BY(mutex_);  // directory -> watch descriptor
  std::thread thread_;
};

}  // namespace drover::agent
