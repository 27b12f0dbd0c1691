// droverctld: the controller daemon. Reads the configuration, opens the store under
// StateSaveLocation, reloads every job, node and usage record, and serves the gRPC API.
//   droverctld [--conf FILE] [--state DIR] [--listen HOST:PORT] [--port-file FILE]
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>

#include "ctld/daemon/agent_dispatch.h"
#include "ctld/daemon/engine_loop.h"
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
};

constexpr const char* kUsage =
    "Usage: droverctld [--conf FILE] [--state DIR] [--listen HOST:PORT] [--port-file FILE]\n";

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

std::atomic<bool> stopping{false};

}  // namespace

int main(int argc, char** argv) {
  using namespace drover;
  Options options;
  if (!ParseOptions(argc, argv, options)) return 2;
  std::string path = ResolveConfPath(options.conf);
  ConfigLoad load = LoadClusterConfig(path);
  for (const Diagnostic& error : load.diagnostics.errors())
    fmt::print(stderr, "droverctld: error: {}\n", error.ToString());
  if (!load.ok()) return 1;
  const ClusterConfig& cluster = load.config;
  std::string state = options.state.empty() ? cluster.settings.state_save_location : options.state;
  auto store = ctld::OpenSqliteStore(state);
  if (!store) {
    fmt::print(stderr, "droverctld: error: {}\n", store.error());
    return 1;
  }
  SystemClock clock;
  ctld::AgentDispatcher agents(cluster);
  ctld::EngineLoop loop(cluster, std::move(*store), clock, agents);
  if (Status restored = loop.Restore(); !restored) {
    fmt::print(stderr, "droverctld: error: {}\n", restored.error());
    return 1;
  }
  loop.Start();
  ctld::ControllerService service(cluster, loop);
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
  fmt::print(stderr, "droverctld: cluster {} listening on port {}, state in {}\n",
             cluster.settings.cluster_name, port, state);
  std::signal(SIGTERM, [](int) { stopping = true; });
  std::signal(SIGINT, [](int) { stopping = true; });
  while (!stopping) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  loop.Stop();
  return 0;
}
