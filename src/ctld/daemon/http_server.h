// The controller's HTTP endpoint: GET /metrics (Prometheus) and GET / (a one-line banner, or
// the dashboard for a browser), served by cpp-httplib on threads of its own; `mount` adds the
// other routes (droverctld mounts the REST API and the web dashboard, cli/restd/rest_http.h).
// httplib stays out of this header: it is heavy, and only http_server.cc needs it.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "common/result.h"

namespace httplib {
class Server;
}

namespace drover::ctld {

class HttpServer {
 public:
  // `metrics` renders the /metrics body; it runs on the server's threads, once per scrape.
  explicit HttpServer(std::function<std::string()> metrics,
                      const std::function<void(httplib::Server&)>& mount = nullptr);
  ~HttpServer();  // stops
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds host:port (port 0: any free port) and serves until Stop. Connections that arrive
  // before the serving thread runs wait in the listen backlog.
  Status Start(const std::string& host, int port);
  void Stop();
  int port() const { return port_; }  // the bound port, once started

 private:
  std::function<std::string()> metrics_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::atomic<bool> serving_done_{false};
  int port_ = 0;
};

}  // namespace drover::ctld
