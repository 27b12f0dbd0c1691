// MailProg runs as Slurm runs it (`MailProg -s SUBJECT USER`, the mail's environment, as
// SlurmUser), a stuck one is killed at its bound and the mail after it still goes, a missing one
// is only logged.
#include "ctld/daemon/mailer.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "testing/temp_dir.h"

namespace drover::ctld {
namespace {

std::string Read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A MailProg that appends its arguments and two variables to `log`, or first runs `before`.
std::shared_ptr<const ClusterConfig> WithMailProg(const std::filesystem::path& dir,
                                                  const std::string& before = "") {
  std::filesystem::path program = dir / "mail.sh";
  std::ofstream(program) << "#!/bin/sh\n"
                         << before << "\nprintf '%s|%s|%s|%s|%s\\n' \"$1\" \"$2\" \"$3\" "
                         << "\"$SLURM_JOB_ID\" \"$SLURM_JOB_MAIL_TYPE\" >> " << (dir / "log")
                         << "\n";
  chmod(program.c_str(), 0755);
  auto cluster = std::make_shared<ClusterConfig>();
  cluster->settings.mail_prog = program.string();
  return cluster;
}

MailJob Mail(uint64_t id, std::string subject) {
  return MailJob{id,
                 "alice@example.org",
                 std::move(subject),
                 {"SLURM_JOB_ID=" + std::to_string(id), "SLURM_JOB_MAIL_TYPE=Began"}};
}

TEST(Mailer, RunsMailProgWithSlurmsArgumentsAndEnvironment) {
  testing::TempDir dir;
  {
    Mailer mailer(WithMailProg(dir.path()));
    mailer.Send(Mail(12, "Slurm Job_id=12 Name=x Began, Queued time 00:00:01"));
    mailer.Send(Mail(13, "Slurm Job_id=13 Name=y Began, Queued time 00:00:00"));
  }  // sends what is queued before it stops
  EXPECT_EQ(Read(dir.path() / "log"),
            "-s|Slurm Job_id=12 Name=x Began, Queued time 00:00:01|alice@example.org|12|Began\n"
            "-s|Slurm Job_id=13 Name=y Began, Queued time 00:00:00|alice@example.org|13|Began\n");
}

TEST(Mailer, AStuckMailProgIsKilledAndTheNextMailStillGoes) {
  testing::TempDir dir;
  // The first run hangs (its marker file does not exist yet); later runs do not.
  std::string hang = "if [ ! -e " + (dir.path() / "once").string() + " ]; then touch " +
                     (dir.path() / "once").string() + "; exec sleep 600; fi";
  {
    Mailer mailer(WithMailProg(dir.path(), hang), std::chrono::milliseconds(200));
    mailer.Send(Mail(1, "stuck"));
    mailer.Send(Mail(2, "after"));
  }
  EXPECT_EQ(Read(dir.path() / "log"), "-s|after|alice@example.org|2|Began\n");
}

TEST(Mailer, AMissingMailProgIsLoggedNotFatal) {
  auto cluster = std::make_shared<ClusterConfig>();
  cluster->settings.mail_prog = "/nonexistent/mail";
  ::testing::internal::CaptureStderr();
  { Mailer(cluster).Send(Mail(7, "x")); }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "droverctld: mail for job 7 to alice@example.org not sent: MailProg "
            "/nonexistent/mail: No such file or directory\n");
}

// slurmctld runs as SlurmUser and its MailProg with it: a root droverctld switches first, so a
// mailer never runs as root on a job's behalf.
TEST(Mailer, RunsAsSlurmUserWhenTheDaemonIsRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to switch to SlurmUser";
  passwd* nobody = getpwnam("nobody");
  ASSERT_NE(nobody, nullptr);
  testing::TempDir dir;
  chmod(dir.path().c_str(), 0777);
  std::filesystem::path program = dir.path() / "mail.sh";
  std::ofstream(program) << "#!/bin/sh\nid -u >> " << (dir.path() / "log") << "\n";
  chmod(program.c_str(), 0755);
  auto cluster = std::make_shared<ClusterConfig>();
  cluster->settings.mail_prog = program.string();
  cluster->settings.slurm_user = "nobody";
  { Mailer(cluster).Send(Mail(3, "x")); }
  EXPECT_EQ(Read(dir.path() / "log"), std::to_string(nobody->pw_uid) + "\n");

  auto unknown = std::make_shared<ClusterConfig>();
  unknown->settings.mail_prog = program.string();
  unknown->settings.slurm_user = "no-such-user-here";
  ::testing::internal::CaptureStderr();
  { Mailer(unknown).Send(Mail(4, "x")); }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "droverctld: mail for job 4 to alice@example.org not sent: SlurmUser "
            "no-such-user-here is not a user of this host\n");
}

}  // namespace
}  // namespace drover::ctld
