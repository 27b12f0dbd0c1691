// HttpServer (see http_server.h) on cpp-httplib: the routes, binding, and a Stop that cannot race
// the serving thread's start.
#include "ctld/daemon/http_server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <sys/socket.h>

#include <chrono>

namespace drover::ctld {
namespace {

// Scrapes are rare and cheap, but the dashboard's pages poll and a REST call may wait on the
// controller: a few threads more than httplib's default (one per core) on a small machine.
constexpr size_t kServerThreads = 8;

}  // namespace

HttpServer::HttpServer(std::function<std::string()> metrics,
                       const std::function<void(httplib::Server&)>& mount)
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
  const bool mounted = static_cast<bool>(mount);
  server_->Get("/", [mounted](const httplib::Request& request, httplib::Response& response) {
    if (mounted && request.get_header_value("Accept").find("text/html") != std::string::npos)
      return response.set_redirect("/ui/");
    response.set_content(mounted ? "droverctld: Prometheus metrics at /metrics, the web dashboard "
                                   "at /ui/, the REST API at /slurm/v0.0.38/ (GET /openapi/v3)\n"
                                 : "droverctld: Prometheus metrics at /metrics\n",
                         "text/plain");
  });
  if (mount) mount(*server_);
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
