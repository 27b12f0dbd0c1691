// The readiness message reaches the socket $NOTIFY_SOCKET names, a path or an abstract name, as
// systemd's own socket receives it; without the variable nothing is sent.
#include "common/sd_notify.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <string>

namespace drover {
namespace {

// A datagram socket bound at `name` (a leading '@': abstract); -1 on failure.
int Listen(const std::string& name) {
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, name.data(), name.size());
  if (name[0] == '@') address.sun_path[0] = '\0';
  socklen_t size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), size) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string Receive(int fd) {
  char buffer[256];
  ssize_t got = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
  return got > 0 ? std::string(buffer, static_cast<size_t>(got)) : "";
}

TEST(NotifySystemd, SendsToAPathOrAnAbstractSocketAndNothingWithout) {
  const std::string path = "/tmp/drover_notify_" + std::to_string(::getpid());
  ::unlink(path.c_str());
  int fd = Listen(path);
  ASSERT_GE(fd, 0);
  ::setenv("NOTIFY_SOCKET", path.c_str(), 1);
  EXPECT_TRUE(NotifySystemd("READY=1\nSTATUS=leading"));
  EXPECT_EQ(Receive(fd), "READY=1\nSTATUS=leading");
  ::close(fd);
  ::unlink(path.c_str());

  const std::string abstract = "@drover_notify_" + std::to_string(::getpid());
  fd = Listen(abstract);
  ASSERT_GE(fd, 0);
  ::setenv("NOTIFY_SOCKET", abstract.c_str(), 1);
  EXPECT_TRUE(NotifySystemd("READY=1"));
  EXPECT_EQ(Receive(fd), "READY=1");
  ::close(fd);

  ::unsetenv("NOTIFY_SOCKET");
  EXPECT_FALSE(NotifySystemd("READY=1"));
}

}  // namespace
}  // namespace drover
