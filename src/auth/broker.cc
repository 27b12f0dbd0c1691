// The auth/slurm broker: a Unix stream socket that anyone on the host may connect to. The
// kernel tells it who connected (SO_PEERCRED), it mints a credential for exactly that uid/gid
// and writes it back. Bounded: one thread, no reads from clients, a write timeout and a
// per-uid token bucket, so a user looping on it slows only themselves.
#include "auth/broker.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "auth/auth.h"
#include "auth/schemes.h"
#include "auth/slurm_auth.h"

namespace drover::auth {
namespace {

constexpr int kAcceptsPerWake = 64;
constexpr int kClientTimeoutMs = 5000;

std::string Errno(int error) {
  return std::strerror(error);
}

std::string SocketPath(const std::string& configured) {
  return configured.empty() ? kDefaultBrokerSocket : configured;
}

Result<sockaddr_un> AddressOf(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof(address.sun_path))
    return MakeError(fmt::format("socket path {} is too long ({} bytes; at most {})", path,
                                 path.size(), sizeof(address.sun_path) - 1));
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  return address;
}

timeval Timeval(int milliseconds) {
  return timeval{milliseconds / 1000, (milliseconds % 1000) * 1000};
}

class SocketBroker final : public Broker {
 public:
  SocketBroker(SlurmAuthenticator& authenticator, std::string path, int lock_fd, int listen_fd,
               int stop_read, int stop_write)
      : authenticator_(authenticator),
        path_(std::move(path)),
        lock_fd_(lock_fd),
        listen_fd_(listen_fd),
        stop_read_(stop_read),
        stop_write_(stop_write),
        thread_([this] { Serve(); }) {}

  ~SocketBroker() override {
    char byte = 0;
    while (write(stop_write_, &byte, 1) < 0 && errno == EINTR) {
    }
    thread_.join();
    unlink(path_.c_str());  // while still holding the lock: no live broker's socket goes
    for (int fd : {listen_fd_, stop_read_, stop_write_, lock_fd_}) close(fd);
  }

  std::string path() const override { return path_; }

 private:
  void Serve() {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_read_, POLLIN, 0}};
    while (true) {
      if (poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        fmt::print(stderr, "drover auth broker: poll failed ({}); the broker stops\n",
                   Errno(errno));
        return;
      }
      if (fds[1].revents) return;
      for (int i = 0; i < kAcceptsPerWake; ++i) {
        int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (client < 0) break;  // EAGAIN: all taken; others are the client's problem
        Answer(client);
        close(client);
      }
    }
  }

  void Answer(int client) {
    ucred peer{};
    socklen_t length = sizeof(peer);
    if (getsockopt(client, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0) return;
    if (!limit_.Allow(peer.uid, SteadyClock::now())) return;  // closing without a token refuses
    timeval timeout = Timeval(1000);
    setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    auto token = authenticator_.MintFor({peer.uid, peer.gid});
    if (!token) {
      fmt::print(stderr, "drover auth broker: {}\n", token.error());
      return;
    }
    std::string line = *token + "\n";
    size_t sent = 0;
    while (sent < line.size()) {
      ssize_t n = send(client, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // the client left, or would not read within the timeout
      sent += size_t(n);
    }
  }

  SlurmAuthenticator& authenticator_;
  const std::string path_;
  const int lock_fd_, listen_fd_, stop_read_, stop_write_;
  BrokerRateLimit limit_;  // the serving thread's alone
  std::thread thread_;
};

// The folder of the socket, made 0755 when missing so every user can reach the socket.
Status MakeFolder(const std::string& path) {
  std::filesystem::path folder = std::filesystem::path(path).parent_path();
  if (folder.empty()) return OkStatus();
  std::error_code error;
  if (std::filesystem::create_directories(folder, error))
    std::filesystem::permissions(folder, std::filesystem::perms(0755), error);
  if (error)
    return MakeError(fmt::format("cannot create {} for the auth broker's socket ({})",
                                 folder.string(), error.message()));
  return OkStatus();
}

// The listening socket: any stale one is ours to replace, since we hold the lock.
Result<int> Listen(const std::string& path) {
  auto address = AddressOf(path);
  if (!address) return std::move(address).take_error();
  if (unlink(path.c_str()) != 0 && errno != ENOENT)
    return MakeError(fmt::format("cannot remove the stale socket {} ({})", path, Errno(errno)));
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return MakeError(fmt::format("cannot create a Unix socket ({})", Errno(errno)));
  if (bind(fd, reinterpret_cast<const sockaddr*>(&*address), sizeof(*address)) != 0 ||
      chmod(path.c_str(), 0666) != 0 || listen(fd, 128) != 0) {
    int error = errno;
    close(fd);
    return MakeError(fmt::format("cannot serve the auth broker on {} ({})", path, Errno(error)));
  }
  return fd;
}

}  // namespace

bool BrokerRateLimit::Allow(uint32_t uid, SteadyClock::time_point now) {
  if (buckets_.size() >= kMaxBuckets) buckets_.clear();  // forgetting only lets more through
  auto [it, fresh] = buckets_.try_emplace(uid, Bucket{kBurst, now});
  Bucket& bucket = it->second;
  if (!fresh) {
    double elapsed = std::chrono::duration<double>(now - bucket.last).count();
    bucket.tokens = std::min(kBurst, bucket.tokens + elapsed * kTokensPerSecond);
    bucket.last = now;
  }
  if (bucket.tokens < 1) return false;
  bucket.tokens -= 1;
  return true;
}

Result<std::unique_ptr<Broker>> StartBroker(const Settings& settings,
                                            Authenticator& authenticator) {
  auto* slurm = dynamic_cast<SlurmAuthenticator*>(&authenticator);
  if (!slurm || !slurm->has_key())
    return MakeError(
        "the auth broker serves auth/slurm credentials and needs a daemon's authenticator that "
        "can read the cluster key");
  std::string path = SocketPath(settings.socket);
  if (Status made = MakeFolder(path); !made) return std::move(made).take_error();
  std::string lock_path = path + ".lock";
  int lock_fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd < 0) return MakeError(fmt::format("cannot open {} ({})", lock_path, Errno(errno)));
  if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    int error = errno;
    close(lock_fd);
    if (error == EWOULDBLOCK) return std::unique_ptr<Broker>();  // another broker serves it
    return MakeError(fmt::format("cannot lock {} ({})", lock_path, Errno(error)));
  }
  auto listen_fd = Listen(path);
  int stop[2] = {-1, -1};
  if (listen_fd && pipe2(stop, O_CLOEXEC | O_NONBLOCK) != 0) {
    close(*listen_fd);
    listen_fd = MakeError(fmt::format("cannot create a pipe ({})", Errno(errno)));
  }
  if (!listen_fd) {
    close(lock_fd);
    return std::move(listen_fd).take_error();
  }
  return std::unique_ptr<Broker>(
      std::make_unique<SocketBroker>(*slurm, path, lock_fd, *listen_fd, stop[0], stop[1]));
}

Result<std::string> RequestToken(const std::string& socket_path) {
  std::string path = SocketPath(socket_path);
  auto address = AddressOf(path);
  if (!address) return std::move(address).take_error();
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return MakeError(fmt::format("cannot create a Unix socket ({})", Errno(errno)));
  timeval timeout = Timeval(kClientTimeoutMs);  // bounds connect() on a full backlog
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  if (connect(fd, reinterpret_cast<const sockaddr*>(&*address), sizeof(*address)) != 0) {
    int error = errno;
    close(fd);
    return MakeError(fmt::format("no broker answers on {} ({})", path, Errno(error)));
  }
  std::string line;
  auto deadline = SteadyClock::now() + std::chrono::milliseconds(kClientTimeoutMs);
  std::string error;
  while (line.find('\n') == std::string::npos && error.empty()) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
    pollfd readable{fd, POLLIN, 0};
    int ready = left.count() > 0 ? poll(&readable, 1, int(left.count())) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      error =
          fmt::format("the broker on {} did not answer within {} s", path, kClientTimeoutMs / 1000);
      break;
    }
    char buffer[512];
    ssize_t n = ready < 0 ? -1 : read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = fmt::format("cannot read from the broker on {} ({})", path, Errno(errno));
    if (n == 0)
      error = fmt::format(
          "the broker on {} closed without a token (it refuses a user who asks too often; "
          "retry in a moment)",
          path);
    if (n > 0) line.append(buffer, size_t(n));
    if (line.size() > kMaxCredentialBytes + 1)
      error = fmt::format("the broker on {} sent an over-long answer", path);
  }
  close(fd);
  if (!error.empty()) return MakeError(error);
  line.resize(line.find('\n'));
  if (line.empty()) return MakeError(fmt::format("the broker on {} sent an empty token", path));
  return line;
}

}  // namespace drover::auth
