// droverctld: the controller daemon. Reads the configuration, opens the store under
// StateSaveLocation, reloads every job, node and usage record, and serves the gRPC API and HTTP
// (/metrics).
//   droverctld [--conf FILE] [--state DIR] [--listen HOST:PORT] [--port-file FILE]
//              [--http-listen HOST:PORT] [--http-port-file FILE]
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <malloc.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include "ctld/daemon/agent_dispatch.h"
#include "ctld/daemon/engine_loop.h"
#include "ctld/daemon/http_server.h"
#include "ctld/daemon/metrics.h"
#include "ctld/daemon/service.h"

namespace {

class SystemClock : public drover::ctld::Clock {
 public:
  int64_t Now() const override {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

struct Options {
  std::string conf, state, listen, port_file;
  std::string http_listen, http_port_file;
};

constexpr const char* kUsage =
    "Usage: droverctld [--conf FILE] [--state DIR] [--listen HOST:PORT] [--port-file FILE]\n"
    "                  [--http-listen HOST:PORT] [--http-port-file FILE]\n";

bool ParseOptions(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    bool ok = true;
    if (arg == "--conf" || arg == "-f")
      ok = value(options.conf);
    else if (arg == "--state")
      ok = value(options.state);
    else if (arg == "--listen")
      ok = value(options.listen);
    else if (arg == "--port-file")
      ok = value(options.port_file);
    else if (arg == "--http-listen")
      ok = value(options.http_listen);
    else if (arg == "--http-port-file")
      ok = value(options.http_port_file);
    else if (arg == "-D")
      continue;  // always in the foreground
    else
      ok = false;
    if (!ok) {
      fmt::print(stderr, "droverctld: error: unexpected argument '{}'\n{}", arg, kUsage);
      return false;
    }
  }
  return true;
}

// "HOST:PORT" (the host may be "[v6]") split at the last colon; false when malformed.
bool SplitHostPort(const std::string& listen, std::string& host, int& port) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return false;
  host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  const char* end = listen.data() + listen.size();
  auto [rest, error] = std::from_chars(listen.data() + colon + 1, end, port);
  return error == std::errc() && rest == end && port >= 0 && port <= 65535;
}

constexpr const char* kDefaultHttpListen = "0.0.0.0:7820";  // Drover's HTTP port

std::atomic<bool> stopping{false};

// glibc's defaults hand large blocks back to the kernel as soon as they are freed, so every
// full-queue query (100,000 records, tens of MiB of messages) faults its memory in again, and
// each thread's arena keeps its own free space. Keep freed memory for reuse, in few arenas.
void TuneMalloc() {
  mallopt(M_ARENA_MAX, 4);
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace drover;
  TuneMalloc();
  Options options;
  if (!ParseOptions(argc, argv, options)) return 2;
  std::string path = std::filesystem::absolute(ResolveConfPath(options.conf)).string();
  ConfigLoad load = LoadClusterConfig(path);
  for (const Diagnostic& error : load.diagnostics.errors())
    fmt::print(stderr, "droverctld: error: {}\n", error.ToString());
  if (!load.ok()) return 1;
  auto shared = std::make_shared<const ClusterConfig>(std::move(load.config));
  const ClusterConfig& cluster = *shared;  // as started; scontrol reconfigure may replace it
  std::string state = options.state.empty() ? cluster.settings.state_save_location : options.state;
  auto store = ctld::OpenSqliteStore(state);
  if (!store) {
    fmt::print(stderr, "droverctld: error: {}\n", store.error());
    return 1;
  }
  SystemClock clock;
  ctld::AgentDispatcher agents(shared);
  ctld::EngineLoop loop(shared, std::move(*store), clock, agents);
  if (Status restored = loop.Restore(); !restored) {
    fmt::print(stderr, "droverctld: error: {}\n", restored.error());
    return 1;
  }
  loop.Start();
  auto history = ctld::OpenSqliteStore(state);  // a second connection, for sacct's reads
  ctld::ControllerService service(
      loop, history ? std::move(*history) : std::unique_ptr<ctld::Store>(), path);
  service.SetAgents(&agents);
  std::string listen = options.listen.empty()
                           ? fmt::format("0.0.0.0:{}", cluster.settings.controller_port)
                           : options.listen;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    fmt::print(stderr, "droverctld: error: cannot listen on {}; is another controller running?\n",
               listen);
    return 1;
  }
  if (!options.port_file.empty()) std::ofstream(options.port_file) << port << "\n";
  ctld::HttpServer http([&loop] {
    std::shared_ptr<const ctld::Snapshot> snapshot = loop.snapshot();
    return ctld::RenderMetrics(*snapshot->cluster, *snapshot, loop.stats());
  });
  std::string http_listen = options.http_listen.empty() ? kDefaultHttpListen : options.http_listen;
  std::string http_host;
  int http_port = 0;
  Status http_started = SplitHostPort(http_listen, http_host, http_port)
                            ? http.Start(http_host, http_port)
                            : MakeError("--http-listen wants HOST:PORT, not " + http_listen);
  // Only an explicit --http-listen is fatal: on the default port, a busy port (tests, a second
  // controller on the host) leaves the controller serving gRPC without /metrics.
  if (!http_started && !options.http_listen.empty()) {
    fmt::print(stderr, "droverctld: error: {}\n", http_started.error());
    return 1;
  }
  if (!http_started) fmt::print(stderr, "droverctld: warning: {}\n", http_started.error());
  if (!options.http_port_file.empty()) std::ofstream(options.http_port_file) << http.port() << "\n";
  fmt::print(stderr, "droverctld: cluster {} listening on port {} (HTTP {}), state in {}\n",
             cluster.settings.cluster_name, port, http.port(), state);
  std::signal(SIGTERM, [](int) { stopping = true; });
  std::signal(SIGINT, [](int) { stopping = true; });
  while (!stopping) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  http.Stop();
  loop.Stop();
  return 0;
}
