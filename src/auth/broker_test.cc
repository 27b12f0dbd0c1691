// The auth/slurm broker: a process that cannot read the key gets a credential for the uid/gid
// the kernel reports for it (another user's too, when run as root), one broker per socket.
#include "auth/broker.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "auth/slurm_auth.h"

namespace drover::auth {
namespace {

class BrokerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/drover-broker-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    chmod(dir_.c_str(), 0755);  // another user reaches the socket below it
    settings_.scheme = Scheme::kSlurm;
    settings_.key_path = dir_ + "/slurm.key";
    settings_.socket = dir_ + "/run/auth.socket";  // the broker makes run/
    ASSERT_TRUE(WriteKey(settings_.key_path, false).ok());
    auto daemon = SlurmAuthenticator::Load(settings_, Role::kDaemon);
    ASSERT_TRUE(daemon.ok()) << daemon.error();
    daemon_ = std::move(*daemon);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Broker> Start() {
    auto broker = StartBroker(settings_, *daemon_);
    EXPECT_TRUE(broker.ok()) << broker.error();
    return broker ? std::move(*broker) : nullptr;
  }

  std::string dir_;
  Settings settings_;
  std::unique_ptr<SlurmAuthenticator> daemon_;
};

TEST_F(BrokerTest, ClientWithoutTheKeyGetsItsOwnIdentity) {
  auto broker = Start();
  ASSERT_NE(broker, nullptr);
  EXPECT_EQ(broker->path(), settings_.socket);
  struct stat st {};
  ASSERT_EQ(stat(settings_.socket.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u);
  ASSERT_EQ(stat((dir_ + "/run").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);

  Settings client_settings = settings_;
  client_settings.key_path = dir_ + "/unreadable.key";
  auto client = Create(client_settings, Role::kClient);
  ASSERT_TRUE(client.ok()) << client.error();
  for (int i = 0; i < 2; ++i) {
    auto credential = (*client)->Credential();
    ASSERT_TRUE(credential.ok()) << credential.error();
    auto who = daemon_->Verify(*credential);
    ASSERT_TRUE(who.ok()) << who.error();
    EXPECT_EQ(*who, (Identity{geteuid(), getegid()}));
  }
}

// Raw system calls only: the child of a threaded process must not allocate.
void RequestAsNobody(const std::string& socket_path, int out) {
  if (setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, socket_path.c_str(), socket_path.size() + 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) _exit(3);
  char buffer[4200];
  ssize_t total = 0, n = 0;
  while ((n = read(fd, buffer + total, sizeof(buffer) - size_t(total))) > 0) total += n;
  if (write(out, buffer, size_t(total)) != total) _exit(4);
  _exit(0);
}

TEST_F(BrokerTest, AnotherUserGetsTheirIdentityFromTheKernel) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to become nobody (65534)";
  auto broker = Start();
  ASSERT_NE(broker, nullptr);
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) RequestAsNobody(settings_.socket, pipe_fds[1]);
  close(pipe_fds[1]);
  std::string line;
  char buffer[512];
  ssize_t n = 0;
  while ((n = read(pipe_fds[0], buffer, sizeof(buffer))) > 0) line.append(buffer, size_t(n));
  close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ASSERT_FALSE(line.empty());
  ASSERT_EQ(line.back(), '\n');
  line.pop_back();
  auto who = daemon_->Verify(line);
  ASSERT_TRUE(who.ok()) << who.error();
  EXPECT_EQ(*who, (Identity{65534, 65534}));
}

TEST_F(BrokerTest, OneBrokerPerSocket) {
  auto first = Start();
  ASSERT_NE(first, nullptr);
  auto second = StartBroker(settings_, *daemon_);
  ASSERT_TRUE(second.ok()) << second.error();
  EXPECT_EQ(*second, nullptr);
  first.reset();  // its socket goes with it, and its lock
  EXPECT_FALSE(std::filesystem::exists(settings_.socket));
  auto no_broker = RequestToken(settings_.socket);
  ASSERT_FALSE(no_broker.ok());
  EXPECT_NE(no_broker.error().find("no broker answers on " + settings_.socket), std::string::npos);
  auto third = Start();
  ASSERT_NE(third, nullptr);
  EXPECT_TRUE(RequestToken(settings_.socket).ok());
}

TEST_F(BrokerTest, RefusesAnAuthenticatorWithoutTheKey) {
  Settings client_settings = settings_;
  client_settings.key_path = dir_ + "/absent.key";
  auto client = Create(client_settings, Role::kClient);
  ASSERT_TRUE(client.ok()) << client.error();
  auto broker = StartBroker(settings_, **client);
  ASSERT_FALSE(broker.ok());
  EXPECT_NE(broker.error().find("needs a daemon's authenticator"), std::string::npos);
}

TEST(BrokerRateLimit, BurstThenSteadyRatePerUser) {
  BrokerRateLimit limit;
  SteadyClock::time_point t0{};
  for (int i = 0; i < 400; ++i) ASSERT_TRUE(limit.Allow(1000, t0)) << i;
  EXPECT_FALSE(limit.Allow(1000, t0));
  EXPECT_TRUE(limit.Allow(1001, t0));                                 // another user is not slowed
  EXPECT_TRUE(limit.Allow(1000, t0 + std::chrono::milliseconds(5)));  // one token per 5 ms
  EXPECT_FALSE(limit.Allow(1000, t0 + std::chrono::milliseconds(5)));
}

}  // namespace
}  // namespace drover::auth
