// FileWatch: told of a file of the watched name written into a watched directory, by a rename
// (an atomic write) or a close after writing; not of other names, nor once unwatched; and of a
// watched process's end, whether or not its parent has reaped it yet.
#include "agent/host/file_watch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testing/temp_dir.h"

namespace drover::agent {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

bool WaitFor(const std::function<bool()>& done) {
  for (auto deadline = std::chrono::steady_clock::now() + 5s;
       std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(5ms))
    if (done()) return true;
  return done();
}

TEST(FileWatch, ToldOfTheNamedFileWrittenIntoAWatchedDirectoryOnly) {
  drover::testing::TempDir root;
  const fs::path job = root.path() / "job_1", other = root.path() / "job_2";
  fs::create_directories(job);
  fs::create_directories(other);
  std::atomic<int> told{0};
  auto watch = FileWatch::Start("status", [&] { ++told; });
  ASSERT_TRUE(watch.ok()) << watch.error();
  ASSERT_TRUE((*watch)->Watch(job).ok());

  std::ofstream(job / "stepd.log") << "not the status\n";  // another name
  std::ofstream(other / "status") << "exit_code=0\n";      // a directory not watched
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(told.load(), 0);

  std::ofstream(job / "status.tmp") << "exit_code=0\n";  // as WriteAtomically writes it
  fs::rename(job / "status.tmp", job / "status");
  EXPECT_TRUE(WaitFor([&] { return told.load() == 1; })) << told.load();

  std::ofstream(job / "status") << "exit_code=1\n";  // written in place, then closed
  EXPECT_TRUE(WaitFor([&] { return told.load() == 2; })) << told.load();

  (*watch)->Unwatch(job);
  std::ofstream(job / "status") << "exit_code=2\n";
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(told.load(), 2);
}

TEST(FileWatch, ARemovedDirectoryDropsItsWatchAndAMissingOneSaysWhy) {
  drover::testing::TempDir root;
  const fs::path job = root.path() / "job_1";
  fs::create_directories(job);
  std::atomic<int> told{0};
  auto watch = FileWatch::Start("status", [&] { ++told; });
  ASSERT_TRUE(watch.ok()) << watch.error();
  ASSERT_TRUE((*watch)->Watch(job).ok());
  EXPECT_EQ((*watch)->watched(), 1u);
  fs::remove_all(job);
  EXPECT_TRUE(WaitFor([&] { return (*watch)->watched() == 0; })) << "the removed one is kept";
  // The same path made again is another directory: watched only once watched again.
  fs::create_directories(job);
  std::ofstream(job / "status") << "exit_code=0\n";
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(told.load(), 0);
  ASSERT_TRUE((*watch)->Watch(job).ok());
  std::ofstream(job / "status") << "exit_code=0\n";
  EXPECT_TRUE(WaitFor([&] { return told.load() == 1; }));
  // A directory moved away and another made at its path: watching the path again watches the
  // new one alone.
  fs::rename(job, root.path() / "moved");
  fs::create_directories(job);
  ASSERT_TRUE((*watch)->Watch(job).ok());
  EXPECT_EQ((*watch)->watched(), 1u);
  std::ofstream(root.path() / "moved" / "status") << "exit_code=0\n";
  std::ofstream(job / "status") << "exit_code=0\n";
  EXPECT_TRUE(WaitFor([&] { return told.load() >= 2; }));
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(told.load(), 2) << "the moved directory is still watched";

  Status missing = (*watch)->Watch(root.path() / "job_9");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("job_9"), std::string::npos) << missing.error();
}

TEST(FileWatch, ToldOfAWatchedProcesssEndOnceAndNotOfOneLetGo) {
  std::atomic<int> told{0};
  auto watch = FileWatch::Start("status", [&] { ++told; });
  ASSERT_TRUE(watch.ok()) << watch.error();
  auto child = [] {
    pid_t pid = ::fork();
    if (pid == 0) {
      ::pause();
      ::_exit(0);
    }
    return pid;
  };
  const pid_t first = child(), second = child();
  ASSERT_GT(first, 0);
  ASSERT_GT(second, 0);
  std::string why;
  auto watched = (*watch)->WatchProcess(first, &why);
  if (watched == FileWatch::ProcessWatch::kUnwatched) {
    for (pid_t pid : {first, second}) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    GTEST_SKIP() << why;
  }
  ASSERT_EQ(watched, FileWatch::ProcessWatch::kWatched);
  ASSERT_EQ((*watch)->WatchProcess(second), FileWatch::ProcessWatch::kWatched);
  EXPECT_EQ((*watch)->processes(), 2u);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(told.load(), 0) << "told while the processes run";
  EXPECT_FALSE((*watch)->Ended(first));
  // One let go is not told of; the other is, at its end, before this test (its parent) reaps it.
  (*watch)->UnwatchProcess(second);
  EXPECT_EQ((*watch)->processes(), 1u);
  ASSERT_EQ(::kill(second, SIGKILL), 0);
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  EXPECT_TRUE(WaitFor([&] { return told.load() == 1; })) << told.load();
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(told.load(), 1) << "told of the process let go";
  EXPECT_TRUE((*watch)->Ended(first));
  EXPECT_FALSE((*watch)->Ended(first)) << "told twice";
  EXPECT_FALSE((*watch)->Ended(second));
  EXPECT_EQ((*watch)->processes(), 0u);
  for (pid_t pid : {first, second}) ASSERT_EQ(::waitpid(pid, nullptr, 0), pid);
  // A process that is gone already says so.
  EXPECT_EQ((*watch)->WatchProcess(first), FileWatch::ProcessWatch::kGone);
}

}  // namespace
}  // namespace drover::agent
