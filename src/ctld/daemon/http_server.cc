// HttpServer (see http_server.h) on cpp-httplib: the routes, binding, and a Stop that cannot race
// the serving thread's start.
#include "ctld/daemon/http_server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <sys/socket.h>

#include <chrono>

namespace drover::ctld {
namespace {

// Scrapes are rare and cheap; httplib's default pool (one thread per core) would idle.
constexpr size_t kServerThreads = 4;

}  // namespace

HttpServer::HttpServer(std::function<std::string()> metrics)
    : metrics_(std::move(metrics)), server_(std::make_unique<httplib::Server>()) {
  server_->new_task_queue = [] { return new httplib::ThreadPool(kServerThreads); };
  // httplib's default SO_REUSEPORT would let a second controller share the port and answer
  // every other scrape; SO_REUSEADDR alone still allows a quick restart.
  server_->set_socket_options([](socket_t socket) {
    int yes = 1;
    setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& response) {
    response.set_content(metrics_(), "text/plain; version=0.0.4");
  });
  server_->Get("/", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("droverctld: Prometheus metrics at /metrics\n", "text/plain");
  });
}

HttpServer::~HttpServer() {
  Stop();
}

Status HttpServer::Start(const std::string& host, int port) {
  if (port == 0)
    port_ = server_->bind_to_any_port(host);  // -1 when it fails
  else
    port_ = server_->bind_to_port(host, port) ? port : -1;
  if (port_ <= 0) {
    port_ = 0;
    return MakeError(fmt::format("cannot listen for HTTP on {}:{}", host, port));
  }
  thread_ = std::thread([this] {
    server_->listen_after_bind();
    serving_done_ = true;
  });
  return OkStatus();
}

// httplib's stop() does nothing until the serving loop runs, and must not be repeated after it
// has closed the socket: wait for the loop to start, then stop it once.
void HttpServer::Stop() {
  if (!thread_.joinable()) return;
  while (!server_->is_running() && !serving_done_)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  server_->stop();
  thread_.join();
}

}  // namespace drover::ctld
