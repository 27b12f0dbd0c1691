// auth/munge against a real munged, started here with its own key, socket, pid, log and seed
// files under a temporary folder, and stopped by its PID at the end.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <munge.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "auth/auth.h"

namespace drover::auth {
namespace {

constexpr char kMunged[] = "/usr/sbin/munged";

class MungeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (access(kMunged, X_OK) != 0) return;
    char pattern[] = "/tmp/drover-munge-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    std::string key = dir_ + "/munge.key";
    WriteRandomKey(key);
    socket_ = dir_ + "/munge.socket";
    std::vector<std::string> args = {kMunged,
                                     "--foreground",
                                     "--force",
                                     "--key-file=" + key,
                                     "--socket=" + socket_,
                                     "--pid-file=" + dir_ + "/munged.pid",
                                     "--log-file=" + dir_ + "/munged.log",
                                     "--seed-file=" + dir_ + "/munged.seed"};
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    pid_ = fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      execv(kMunged, argv.data());
      _exit(127);
    }
    WaitUntilServing();
  }

  static void TearDownTestSuite() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
      pid_ = 0;
    }
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  void SetUp() override {
    if (access(kMunged, X_OK) != 0) GTEST_SKIP() << kMunged << " is not installed (apt munge)";
    settings_.scheme = Scheme::kMunge;
    settings_.socket = socket_;
  }

  static void WriteRandomKey(const std::string& path) {
    int in = open("/dev/urandom", O_RDONLY);
    int out = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    ASSERT_TRUE(in >= 0 && out >= 0);
    char buffer[1024];
    ASSERT_EQ(read(in, buffer, sizeof(buffer)), ssize_t(sizeof(buffer)));
    ASSERT_EQ(write(out, buffer, sizeof(buffer)), ssize_t(sizeof(buffer)));
    close(in);
    close(out);
  }

  // munged is ready when it answers; it gives up within a few seconds if it cannot start.
  static void WaitUntilServing() {
    munge_ctx_t ctx = munge_ctx_create();
    munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket_.c_str());
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      char* credential = nullptr;
      if (munge_encode(&credential, ctx, nullptr, 0) == EMUNGE_SUCCESS) {
        free(credential);
        break;
      }
      ASSERT_EQ(waitpid(pid_, nullptr, WNOHANG), 0) << "munged exited; see " << dir_;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    munge_ctx_destroy(ctx);
  }

  static inline std::string dir_, socket_;
  static inline pid_t pid_ = 0;
  Settings settings_;
};

TEST_F(MungeTest, CredentialVerifiesOnceToThisProcess) {
  auto auth = Create(settings_, Role::kDaemon);  // the self-check runs against munged
  ASSERT_TRUE(auth.ok()) << auth.error();
  auto credential = (*auth)->Credential();
  ASSERT_TRUE(credential.ok()) << credential.error();
  EXPECT_TRUE(credential->starts_with("MUNGE:"));
  auto who = (*auth)->Verify(*credential);
  ASSERT_TRUE(who.ok()) << who.error();
  EXPECT_EQ(*who, (Identity{geteuid(), getegid()}));
  auto replayed = (*auth)->Verify(*credential);
  ASSERT_FALSE(replayed.ok());
  EXPECT_EQ(replayed.error(), "replayed credential");
  EXPECT_FALSE((*auth)->Verify("MUNGE:garbage:").ok());
}

TEST_F(MungeTest, SealedClaimsOpenRepeatedlyAndKindsStayApart) {
  auto auth = Create(settings_, Role::kDaemon);
  ASSERT_TRUE(auth.ok()) << auth.error();
  auto sealed = (*auth)->Seal("job 7 nodes n1", 60);
  ASSERT_TRUE(sealed.ok()) << sealed.error();
  for (int i = 0; i < 3; ++i) {
    auto opened = (*auth)->Open(*sealed);
    ASSERT_TRUE(opened.ok()) << opened.error();
    EXPECT_EQ(opened->payload, "job 7 nodes n1");
    EXPECT_EQ(opened->sealer, (Identity{geteuid(), getegid()}));
  }
  auto as_credential = (*auth)->Verify(*(*auth)->Seal("claim", 60));
  ASSERT_FALSE(as_credential.ok());
  EXPECT_EQ(as_credential.error(), "a sealed job claim is not a credential");
  auto as_claim = (*auth)->Open(*(*auth)->Credential());
  ASSERT_FALSE(as_claim.ok());
  EXPECT_EQ(as_claim.error(), "a credential is not a sealed job claim");
}

TEST_F(MungeTest, NoMungedOnTheSocketSaysHowToStartIt) {
  settings_.socket = dir_ + "/absent.socket";
  auto auth = Create(settings_, Role::kDaemon);
  ASSERT_FALSE(auth.ok());
  EXPECT_NE(auth.error().find("cannot reach munged on " + settings_.socket), std::string::npos)
      << auth.error();
  EXPECT_NE(auth.error().find("(start munged: systemctl start munge)"), std::string::npos)
      << auth.error();
}

}  // namespace
}  // namespace drover::auth
