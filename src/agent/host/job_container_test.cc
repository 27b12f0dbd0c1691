// A job's private /tmp: made under a BasePath of the test's own, entered by a child with setns
// as the job's processes enter it, invisible from outside, and removed with what the job left.
// Needs root (mount namespaces): skipped otherwise.
#include "agent/host/job_container.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "testing/temp_dir.h"

namespace drover::agent {
namespace {

namespace fs = std::filesystem;

// Runs `body` in a child that entered the namespace `fd`; its exit code (0: body returned true).
int InNamespace(int fd, const std::function<bool()>& body) {
  pid_t child = ::fork();
  if (child == 0) {
    if (::setns(fd, CLONE_NEWNS) != 0) ::_exit(2);
    ::_exit(body() ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 3;
}

TEST(JobContainer, PrivateTmpIsTheJobsAndGoesWithIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root for mount namespaces";
  testing::TempDir dir("job_container_test");
  JobContainer container{(dir.path() / "base").string(),
                         (dir.path() / "base" / "7").string(),
                         {"/tmp", "/dev/shm"},
                         true};
  ASSERT_TRUE(CreateJobContainer(container).ok());
  EXPECT_TRUE(IsJobNamespace(container));
  auto fd = OpenJobNamespace(container);
  ASSERT_TRUE(fd.ok()) << fd.error();
  std::string marker = "/tmp/drover_job_container_test_" + std::to_string(::getpid());
  EXPECT_EQ(InNamespace(*fd,
                        [&] {
                          std::ofstream(marker) << "mine";
                          std::ofstream("/dev/shm/segment") << "x";
                          return fs::exists(marker);
                        }),
            0);
  EXPECT_FALSE(fs::exists(marker)) << "the job's /tmp is not the host's";
  EXPECT_TRUE(fs::exists(PrivateCopyOf(container, "/tmp") + marker.substr(4)));
  // A second process of the job sees the same /tmp.
  EXPECT_EQ(InNamespace(*fd, [&] { return fs::exists(marker); }), 0);
  ::close(*fd);
  ASSERT_TRUE(RemoveJobContainer(container).ok());
  EXPECT_FALSE(fs::exists(container.job_dir));
  ::umount2(container.base.c_str(), MNT_DETACH);  // BasePath stays a mount on a node
}

TEST(JobContainer, AMissingBasePathSaysWhatToDo) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root for mount namespaces";
  testing::TempDir dir("job_container_test");
  JobContainer container{
      (dir.path() / "none").string(), (dir.path() / "none" / "7").string(), {"/tmp"}, false};
  Status made = CreateJobContainer(container);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.error(), "BasePath " + container.base +
                              " does not exist (create it, or set AutoBasePath=true in "
                              "job_container.conf)");
}

TEST(JobContainer, PrivateCopiesAreNamedByTheirPath) {
  JobContainer container{"/b", "/b/12", {}, false};
  EXPECT_EQ(PrivateCopyOf(container, "/tmp"), "/b/12/tmp");
  EXPECT_EQ(PrivateCopyOf(container, "/var/tmp"), "/b/12/var_tmp");
}

}  // namespace
}  // namespace drover::agent
