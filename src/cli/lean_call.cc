// See lean_call.h. A blocking loop around an nghttp2 client session: write what the session
// wants written, wait for the socket (never past the deadline), feed what arrives back.
#include "cli/lean_call.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include <fmt/format.h>

namespace drover::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kWindow = 1U << 30;    // HTTP/2 flow-control window we offer
constexpr uint32_t kMaxFrame = 1U << 20;  // the largest frame we accept

grpc::Status Unavailable(const std::string& why) {
  return grpc::Status(grpc::StatusCode::UNAVAILABLE, why);
}

// A socket closed when it goes out of scope.
class Socket {
 public:
  explicit Socket(int fd = -1) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

int MillisecondsLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

// A connected TCP socket to the target (each of its addresses in turn), blocking again once
// connected; the error says why none answered.
grpc::Status Dial(const LeanTarget& target, Clock::time_point deadline, Socket& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::string port = std::to_string(target.port);
  if (int code = getaddrinfo(target.host.c_str(), port.c_str(), &hints, &found); code != 0)
    return Unavailable(fmt::format("cannot resolve {}: {}", target.host, gai_strerror(code)));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addresses(found, freeaddrinfo);
  std::string last = "no address";
  for (addrinfo* address = found; address; address = address->ai_next) {
    Socket fd(socket(address->ai_family, address->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                     address->ai_protocol));
    if (fd.get() < 0) {
      last = std::strerror(errno);
      continue;
    }
    int result = connect(fd.get(), address->ai_addr, address->ai_addrlen);
    if (result != 0 && errno == EINPROGRESS) {
      pollfd wait{fd.get(), POLLOUT, 0};
      if (poll(&wait, 1, MillisecondsLeft(deadline)) == 1) {
        int error = 0;
        socklen_t size = sizeof(error);
        getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &size);
        errno = error;
        result = error == 0 ? 0 : -1;
      } else {
        errno = ETIMEDOUT;
      }
    }
    if (result != 0) {
      last = std::strerror(errno);
      continue;
    }
    int flags = fcntl(fd.get(), F_GETFL);
    fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
    int one = 1;
    setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    out.reset(fd.release());
    return grpc::Status::OK;
  }
  return Unavailable(fmt::format("cannot connect to {}:{}: {}", target.host, target.port, last));
}

// One call's exchange: what nghttp2 asks to send, and what comes back on the call's stream.
struct Exchange {
  std::string out;       // bytes to write
  std::string body;      // the request's gRPC message, framed
  size_t body_sent = 0;  // of `body`
  int32_t stream = -1;
  std::string response;  // the reply's framed message(s)
  std::string http_status;
  std::optional<int> grpc_status;
  std::string grpc_message;
  bool closed = false;
  uint32_t reset_code = 0;
};

ssize_t OnSend(nghttp2_session*, const uint8_t* data, size_t length, int, void* user) {
  static_cast<Exchange*>(user)->out.append(reinterpret_cast<const char*>(data), length);
  return static_cast<ssize_t>(length);
}

ssize_t ReadBody(nghttp2_session*, int32_t, uint8_t* buffer, size_t length, uint32_t* flags,
                 nghttp2_data_source*, void* user) {
  auto* exchange = static_cast<Exchange*>(user);
  size_t count = std::min(length, exchange->body.size() - exchange->body_sent);
  std::memcpy(buffer, exchange->body.data() + exchange->body_sent, count);
  exchange->body_sent += count;
  if (exchange->body_sent == exchange->body.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
  return static_cast<ssize_t>(count);
}

int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name, size_t name_length,
             const uint8_t* value, size_t value_length, uint8_t, void* user) {
  auto* exchange = static_cast<Exchange*>(user);
  if (frame->hd.type != NGHTTP2_HEADERS || frame->hd.stream_id != exchange->stream) return 0;
  std::string_view key(reinterpret_cast<const char*>(name), name_length);
  std::string_view text(reinterpret_cast<const char*>(value), value_length);
  if (key == ":status") {
    exchange->http_status = text;
  } else if (key == "grpc-status") {
    int code = 0;
    for (char digit : text) code = digit >= '0' && digit <= '9' ? code * 10 + (digit - '0') : -1;
    exchange->grpc_status = code;
  } else if (key == "grpc-message") {
    exchange->grpc_message = PercentDecode(text);
  }
  return 0;
}

int OnData(nghttp2_session*, uint8_t, int32_t stream, const uint8_t* data, size_t length,
           void* user) {
  auto* exchange = static_cast<Exchange*>(user);
  if (stream == exchange->stream)
    exchange->response.append(reinterpret_cast<const char*>(data), length);
  return 0;
}

int OnClose(nghttp2_session*, int32_t stream, uint32_t error_code, void* user) {
  auto* exchange = static_cast<Exchange*>(user);
  if (stream == exchange->stream) {
    exchange->closed = true;
    exchange->reset_code = error_code;
  }
  return 0;
}

struct SessionDeleter {
  void operator()(nghttp2_session* session) const { nghttp2_session_del(session); }
};

bool WriteAll(int fd, std::string& out) {
  size_t written = 0;
  while (written < out.size()) {
    ssize_t n = ::send(fd, out.data() + written, out.size() - written, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<size_t>(n);
  }
  out.clear();
  return true;
}

// One attempt: its own connection, one stream.
grpc::Status Attempt(const LeanTarget& target, std::string_view method, const std::string& body,
                     const LeanMetadata metadata, Clock::time_point deadline,
                     std::string& response) {
  Socket fd;
  if (grpc::Status dialed = Dial(target, deadline, fd); !dialed.ok()) return dialed;
  nghttp2_session_callbacks* callbacks = nullptr;
  if (nghttp2_session_callbacks_new(&callbacks) != 0)
    return grpc::Status(grpc::StatusCode::INTERNAL, "out of memory");
  nghttp2_session_callbacks_set_send_callback(callbacks, OnSend);
  nghttp2_session_callbacks_set_on_header_callback(callbacks, OnHeader);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, OnData);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, OnClose);
  Exchange exchange;
  exchange.body = body;
  nghttp2_session* raw = nullptr;
  int created = nghttp2_session_client_new(&raw, callbacks, &exchange);
  nghttp2_session_callbacks_del(callbacks);
  if (created != 0) return grpc::Status(grpc::StatusCode::INTERNAL, nghttp2_strerror(created));
  std::unique_ptr<nghttp2_session, SessionDeleter> session(raw);

  std::string authority = fmt::format("{}:{}", target.host, target.port);
  int seconds = std::max(1, MillisecondsLeft(deadline) / 1000);
  std::string timeout = fmt::format("{}S", seconds);
  std::vector<std::pair<std::string_view, std::string_view>> headers = {
      {":method", "POST"},
      {":scheme", "http"},
      {":path", method},
      {":authority", authority},
      {"content-type", "application/grpc"},
      {"te", "trailers"},
      {"grpc-timeout", timeout},
      {"user-agent", "drover-lean"}};
  for (const auto& [name, value] : metadata) headers.emplace_back(name, value);
  std::vector<nghttp2_nv> fields;
  for (const auto& [name, value] : headers)
    fields.push_back({const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>(name.data())),
                      const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>(value.data())),
                      name.size(), value.size(), NGHTTP2_NV_FLAG_NONE});
  nghttp2_data_provider provider{};
  provider.read_callback = ReadBody;
  // Large replies (a listing of 100,000 jobs is tens of MB) in large frames and without waiting
  // for window updates every 64 KiB: a window of 1 GiB for the call and the connection.
  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kWindow},
      {NGHTTP2_SETTINGS_MAX_FRAME_SIZE, kMaxFrame},
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
  };
  nghttp2_submit_settings(session.get(), NGHTTP2_FLAG_NONE, settings, std::size(settings));
  nghttp2_session_set_local_window_size(session.get(), NGHTTP2_FLAG_NONE, 0, kWindow);
  exchange.stream = nghttp2_submit_request(session.get(), nullptr, fields.data(), fields.size(),
                                           &provider, nullptr);
  if (exchange.stream < 0)
    return grpc::Status(grpc::StatusCode::INTERNAL, nghttp2_strerror(exchange.stream));

  std::vector<char> buffer(256 * 1024);
  while (!exchange.closed) {
    if (int sent = nghttp2_session_send(session.get()); sent != 0)
      return Unavailable(fmt::format("HTTP/2 error: {}", nghttp2_strerror(sent)));
    if (!WriteAll(fd.get(), exchange.out))
      return Unavailable(fmt::format("cannot send to {}: {}", authority, std::strerror(errno)));
    if (exchange.closed) break;
    pollfd wait{fd.get(), POLLIN, 0};
    int ready = poll(&wait, 1, MillisecondsLeft(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded");
    ssize_t n = ::recv(fd.get(), buffer.data(), buffer.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Unavailable(fmt::format("{} closed the connection", authority));
    ssize_t used = nghttp2_session_mem_recv(
        session.get(), reinterpret_cast<uint8_t*>(buffer.data()), static_cast<size_t>(n));
    if (used < 0)
      return Unavailable(fmt::format("HTTP/2 error: {}", nghttp2_strerror(static_cast<int>(used))));
  }
  // Say goodbye so the controller drops the connection at once; nothing waits for it.
  nghttp2_session_terminate_session(session.get(), NGHTTP2_NO_ERROR);
  nghttp2_session_send(session.get());
  WriteAll(fd.get(), exchange.out);

  if (!exchange.grpc_status) {
    if (exchange.reset_code != 0)
      return Unavailable(fmt::format("the call was reset (HTTP/2 error {})", exchange.reset_code));
    return grpc::Status(grpc::StatusCode::INTERNAL,
                        fmt::format("not a gRPC answer (HTTP status {})",
                                    exchange.http_status.empty() ? "none" : exchange.http_status));
  }
  if (*exchange.grpc_status != 0) {
    int code = *exchange.grpc_status;
    if (code < 0 || code > grpc::StatusCode::UNAUTHENTICATED) code = grpc::StatusCode::UNKNOWN;
    return grpc::Status(static_cast<grpc::StatusCode>(code), exchange.grpc_message);
  }
  // One length-prefixed, uncompressed message (we never offer compression).
  const std::string& framed = exchange.response;
  if (framed.size() < 5 || framed[0] != 0)
    return grpc::Status(grpc::StatusCode::INTERNAL, "a reply without a message");
  uint32_t length = 0;
  for (int i = 1; i <= 4; ++i) length = length << 8 | static_cast<uint8_t>(framed[i]);
  if (framed.size() != 5 + static_cast<size_t>(length))
    return grpc::Status(grpc::StatusCode::INTERNAL, "a reply of the wrong length");
  response.assign(framed, 5, length);
  return grpc::Status::OK;
}

}  // namespace

std::string PercentDecode(std::string_view text) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 && hex(text[i + 2]) >= 0) {
      out += static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

grpc::Status LeanUnaryCall(const LeanTarget& target, std::string_view method,
                           const google::protobuf::MessageLite& request,
                           google::protobuf::MessageLite* reply,
                           const std::function<LeanMetadata()>& metadata, int deadline_seconds) {
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(deadline_seconds);
  std::string message = request.SerializeAsString();
  if (message.size() > UINT32_MAX)
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the request is too large");
  std::string body(5, '\0');
  auto size = static_cast<uint32_t>(message.size());
  for (int i = 0; i < 4; ++i) body[4 - i] = static_cast<char>(size >> (8 * i) & 0xff);
  body += message;
  // As the gRPC channel's retry policy (client.cc): RESOURCE_EXHAUSTED (a busy controller or
  // its rate limit) is tried again, at most 5 attempts, after a jittered, doubling backoff.
  std::mt19937 random(std::random_device{}());
  double backoff = 0.5;
  for (int attempt = 1;; ++attempt) {
    std::string response;
    grpc::Status status = Attempt(target, method, body, metadata(), deadline, response);
    if (status.ok()) {
      if (!reply->ParseFromString(response))
        return grpc::Status(grpc::StatusCode::INTERNAL, "an unreadable reply");
      return status;
    }
    if (status.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED || attempt == 5) return status;
    auto pause =
        std::chrono::duration<double>(std::uniform_real_distribution<double>(0, backoff)(random));
    if (Clock::now() + pause >= deadline) return status;
    std::this_thread::sleep_for(pause);
    backoff = std::min(backoff * 2, 4.0);
  }
}

}  // namespace drover::cli
