// droverctld: the controller daemon. Reads the configuration, opens the store under
// StateSaveLocation, reloads every job, node and usage record, and serves the gRPC API and HTTP
// (/metrics).
// With the state in PostgreSQL it leads through the database's lease (leadership.h): with
// several SlurmctldHost lines, the one that does not lead is a standby until the lease is free.
//   droverctld [--conf FILE] [--state DIR] [--listen HOST:PORT] [--port-file FILE]
//              [--http-listen HOST:PORT] [--http-port-file FILE] [--name NAME]
//   droverctld [--conf FILE] --migrate-from DIR   (drover storage migrate: storage_migrate.h)
#include <fmt/format.h>
#include <google/protobuf/descriptor.h>
#include <grpcpp/grpcpp.h>

#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "auth/daemon_auth.h"
#include "auth/jwt.h"
#include "auth/tls.h"
#include "cli/restd/rest_api.h"
#include "cli/restd/rest_http.h"
#include "common/getopt.h"
#include "common/log.h"
#include "common/process_file.h"
#include "common/sd_notify.h"
#include "ctld/daemon/accounting_service.h"
#include "ctld/daemon/agent_dispatch.h"
#include "ctld/daemon/engine_loop.h"
#include "ctld/daemon/http_server.h"
#include "ctld/daemon/leadership.h"
#include "ctld/daemon/metrics.h"
#include "ctld/daemon/rpc_stats.h"
#include "ctld/daemon/service.h"
#include "ctld/daemon/storage_migrate.h"

namespace {

using drover::FirstRefused;
using drover::OptionScan;
using drover::OptionSpec;
using drover::OptionUse;
using drover::ScanOptions;

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
  std::string name;          // which SlurmctldHost line this controller is
  std::string migrate_from;  // a SQLite state to copy into PostgreSQL, then exit
};

constexpr const char* kUsage =
    "Usage: droverctld [--conf FILE] [--state DIR] [--listen HOST:PORT] [--port-file FILE]\n"
    "                  [--http-listen HOST:PORT] [--http-port-file FILE] [--name NAME]\n"
    "       droverctld [--conf FILE] --migrate-from DIR\n";

constexpr OptionSpec kOptions[] = {
    {'f', "conf", OptionSpec::kRequired},
    {0, "state", OptionSpec::kRequired},
    {0, "listen", OptionSpec::kRequired},
    {0, "port-file", OptionSpec::kRequired},
    {0, "http-listen", OptionSpec::kRequired},
    {0, "http-port-file", OptionSpec::kRequired},
    {0, "name", OptionSpec::kRequired},
    {0, "migrate-from", OptionSpec::kRequired},
    {'D', "", OptionSpec::kNone},  // always in the foreground
};

// Errors as droverctld has always worded them: "unexpected argument 'ARG'" (the first operand,
// or the option that is unknown or lacks its value), the usage, exit 2.
bool ReadOptions(int argc, char** argv, Options& options) {
  std::vector<std::string> args(argv + 1, argv + argc);
  OptionScan scan = ScanOptions(args, kOptions);
  if (std::optional<size_t> refused = FirstRefused(scan)) {
    fmt::print(stderr, "droverctld: error: unexpected argument '{}'\n{}", args[*refused], kUsage);
    return false;
  }
  const std::map<std::string_view, std::string*> targets = {
      {"conf", &options.conf},
      {"state", &options.state},
      {"listen", &options.listen},
      {"port-file", &options.port_file},
      {"http-listen", &options.http_listen},
      {"http-port-file", &options.http_port_file},
      {"name", &options.name},
      {"migrate-from", &options.migrate_from},
  };
  for (const OptionUse& use : scan.uses)  // a repeated option: the last one counts
    if (auto target = targets.find(use.spec->long_name); target != targets.end())
      *target->second = *use.value;
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

constexpr int kDefaultHttpPort = 7820;  // Drover's HTTP port

std::atomic<bool> stopping{false};
// scontrol takeover: the backup that takes over; the controller then comes back as a standby.
std::mutex handover_mutex;
std::string handover_to;

// glibc's defaults hand large blocks back to the kernel as soon as they are freed, so every
// full-queue query (100,000 records, tens of MiB of messages) faults its memory in again, and
// each thread's arena keeps its own free space. Keep freed memory for reuse, in few arenas.
void TuneMalloc() {
  mallopt(M_ARENA_MAX, 4);
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

// TLS credentials, when slurm.conf asks for TLS: the gRPC port's (the channels to the agents
// get theirs in auth::NewChannel).
struct Credentials {
  std::shared_ptr<grpc::ServerCredentials> server;
};

// Read before anything starts: a TLS file that cannot be read stops the controller, saying why.
std::optional<Credentials> LoadCredentials(const drover::ClusterConfig& cluster) {
  auto server = drover::auth::ServerCredentials(cluster);
  auto agents = drover::auth::ChannelCredentials(cluster);
  const std::string* error = !server ? &server.error() : !agents ? &agents.error() : nullptr;
  if (error) {
    drover::log::Error("{}", *error);
    return std::nullopt;
  }
  return Credentials{*server};
}

// The gRPC server on `listen`; null, having said why, when it cannot listen there.
std::unique_ptr<grpc::Server> StartGrpc(drover::ctld::ControllerService& service,
                                        drover::ctld::AccountingService& accounting,
                                        drover::ctld::RpcStats& rpc_stats,
                                        const drover::ClusterConfig& cluster,
                                        const Credentials& credentials, const std::string& listen,
                                        int& port) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, credentials.server, &port);
  builder.RegisterService(&service);
  builder.RegisterService(&accounting);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> creators;
  creators.push_back(rpc_stats.InterceptorFactory());  // sdiag's counts of every call
  builder.experimental().SetInterceptorCreators(std::move(creators));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server && port != 0) return server;
  drover::log::Error("cannot listen on {}; is another controller running?{}", listen,
                     cluster.settings.tls.enabled()
                         ? " Or does DroverTLSKeyFile not hold the key of DroverTLSCertFile?"
                         : "");
  return nullptr;
}

// /metrics on --http-listen, else on Drover's HTTP port at DroverControllerListen's address;
// false when the controller must not start.
bool StartHttp(drover::ctld::HttpServer& http, const Options& options,
               const drover::ClusterSettings& settings) {
  std::string host =
      settings.controller_listen_host.empty() ? "0.0.0.0" : settings.controller_listen_host;
  int port = kDefaultHttpPort;
  std::string listen =
      options.http_listen.empty() ? fmt::format("{}:{}", host, port) : options.http_listen;
  drover::Status started = options.http_listen.empty() || SplitHostPort(listen, host, port)
                               ? http.Start(host, port)
                               : drover::MakeError("--http-listen wants HOST:PORT, not " + listen);
  // Only an explicit --http-listen is fatal: on the default port, a busy port (tests, a second
  // controller on the host) leaves the controller serving gRPC without /metrics.
  if (!started && !options.http_listen.empty()) {
    drover::log::Error("{}", started.error());
    return false;
  }
  if (!started) drover::log::Warning("{}", started.error());
  if (!options.http_port_file.empty()) std::ofstream(options.http_port_file) << http.port() << "\n";
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace drover;
  TuneMalloc();
  log::SetProgram("droverctld");
  Options options;
  if (!ReadOptions(argc, argv, options)) return 2;
  std::string path = std::filesystem::absolute(ResolveConfPath(options.conf)).string();
  ConfigLoad load = LoadClusterConfig(path);
  for (const Diagnostic& error : load.diagnostics.errors()) log::Error("{}", error.ToString());
  if (!load.ok()) return 1;
  if (!options.migrate_from.empty()) {
    Status migrated =
        ctld::MigrateSqliteToPostgres(options.migrate_from, load.config.settings.storage,
                                      [](const std::string& line) { fmt::print("{}\n", line); });
    if (!migrated) {
      log::Error("{}", migrated.error());
      return 1;
    }
    fmt::print("the state in {} is now in PostgreSQL database {}; start droverctld on it\n",
               options.migrate_from, load.config.settings.storage.database);
    return 0;
  }
  // SlurmctldLogFile (or journald), reopened on SIGUSR2 and SIGHUP.
  if (Status logging = log::SetUpDaemonLog(load.config.settings.controller_log_file); !logging) {
    log::Error("{}", logging.error());
    return 1;
  }
  // SlurmctldDebug, checked when read; `scontrol setdebug` changes it while running.
  log::SetLevel(log::ParseLevel(load.config.settings.controller_debug).value_or(log::Level::kInfo));
  auto shared = std::make_shared<const ClusterConfig>(std::move(load.config));
  const ClusterConfig& cluster = *shared;  // as started; scontrol reconfigure may replace it
  std::optional<Credentials> credentials = LoadCredentials(cluster);
  if (!credentials) return 1;
  std::string state = options.state.empty() ? cluster.settings.state_save_location : options.state;
  const StorageSettings& storage = cluster.settings.storage;
  char hostname[256] = {};
  gethostname(hostname, sizeof hostname - 1);
  Result<ctld::ControllerSelf> self = ctld::FindSelf(cluster.settings, options.name, hostname);
  if (!self) {
    log::Error("{}", self.error());
    return 1;
  }
  if (cluster.settings.controller_hosts.size() > 1 && storage.kind == StorageKind::kSqlite) {
    log::Error(
        "slurm.conf names {} SlurmctldHost lines (a controller and its backups), and the state is "
        "in SQLite, which one controller on one disk writes: backups need StorageType=postgresql "
        "(docs/configuration.md), or keep one SlurmctldHost line",
        cluster.settings.controller_hosts.size());
    return 1;
  }
  std::signal(SIGTERM, [](int) { stopping = true; });
  std::signal(SIGINT, [](int) { stopping = true; });
  std::error_code ignored;
  if (cluster.settings.controller_pid_file_set)
    if (Status written = WritePidFile(cluster.settings.controller_pid_file); !written) {
      log::Error("SlurmctldPidFile: {}", written.error());
      return 1;
    }
  auto authenticator = drover::auth::StartDaemonAuth("droverctld", cluster);
  if (!authenticator) return 1;
  // AuthAltTypes=auth/jwt: the key is read once, here; a controller that cannot use it does not
  // start (its tokens would all be refused).
  std::string jwt_key;
  if (authenticator->settings.jwt) {
    Result<std::string> key = drover::auth::ReadJwtKey(authenticator->settings.jwt_key_path);
    if (!key) {
      log::Error("{}", key.error());
      return 1;
    }
    jwt_key = std::move(*key);
  }
  // --listen, else DroverControllerListen's address with this line's own port or SlurmctldPort.
  std::string listen = options.listen.empty()
                           ? ControllerListenAddress(cluster.settings, self->port)
                           : options.listen;
  // On PostgreSQL the controller leads through the database's lease, fencing every commit with
  // its term; it waits as a standby while another leads.
  std::unique_ptr<ctld::Leadership> leadership;
  if (storage.kind == StorageKind::kPostgres) {
    Result<std::string> conninfo = ctld::PostgresConnInfo(storage);
    if (!conninfo) {
      log::Error("{}", conninfo.error());
      return 1;
    }
    int standby_port = 0;
    auto led = ctld::Leadership::Wait(cluster, *self, *conninfo, listen, credentials->server,
                                      *authenticator->authenticator, stopping, standby_port);
    if (!led) {
      log::Error("{}", led.error());
      return 1;
    }
    if (!*led) {  // stopped while a standby
      if (cluster.settings.controller_pid_file_set)
        std::filesystem::remove(cluster.settings.controller_pid_file, ignored);
      return 0;
    }
    leadership = std::move(**led);
    // The standby's port, again: a --listen of port 0 got one, and the others know it now.
    listen = listen.substr(0, listen.rfind(':') + 1) + std::to_string(standby_port);
  }
  std::optional<int64_t> fence;
  if (leadership) fence = leadership->term();
  auto store = ctld::OpenConfiguredStore(storage, state, fence);
  if (!store) {
    log::Error("{}", store.error());
    return 1;
  }
  SystemClock clock;
  ctld::AgentDispatcher agents(shared, *authenticator->authenticator, authenticator->settings);
  ctld::EngineLoop loop(shared, std::move(*store), clock, agents);
  if (Status restored = loop.Restore(); !restored) {
    log::Error("{}", restored.error());
    return 1;
  }
  // a second connection, for sacct's reads
  auto history = ctld::OpenConfiguredStore(storage, state, fence);
  if (history)
    if (Status indexed = ctld::IndexHistory(**history); !indexed) {
      log::Error("{}", indexed.error());
      return 1;
    }
  loop.Start();
  ctld::ControllerService service(loop, *authenticator->authenticator, authenticator->settings,
                                  history ? std::move(*history) : std::unique_ptr<ctld::Store>(),
                                  path);
  service.SetAgents(&agents);
  service.SetName(self->name);
  if (!jwt_key.empty()) service.SetJwtKey(std::move(jwt_key));
  // sdiag's counts, of the methods the controller serves (each "/drover.v1.Service/Method").
  std::vector<std::string> served_methods;
  for (const char* name : {"drover.v1.Controller", "drover.v1.Accounting"})
    if (const google::protobuf::ServiceDescriptor* described =
            google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name))
      for (int i = 0; i < described->method_count(); ++i)
        served_methods.push_back("/" + described->full_name() + "/" + described->method(i)->name());
  ctld::RpcStats rpc_stats(std::move(served_methods));
  service.SetRpcStats(&rpc_stats);
  if (leadership && cluster.settings.controller_hosts.size() > 1)
    service.SetHandover([](const std::string& to) {
      {
        std::lock_guard lock(handover_mutex);
        handover_to = to;
      }
      stopping = true;
    });
  int port = 0;
  ctld::AccountingService accounting(service);
  std::unique_ptr<grpc::Server> server =
      StartGrpc(service, accounting, rpc_stats, cluster, *credentials, listen, port);
  if (!server) return 1;
  if (leadership) leadership->StartRenewing();
  if (!options.port_file.empty()) std::ofstream(options.port_file) << port << "\n";
  // The REST API and the web dashboard on the HTTP port, as `drover restd` serves them: each
  // request's token goes with its calls to the controller, which answers as the token's user.
  auto rest = std::make_shared<cli::restd::RestApi>(cluster);
  if (Status connected = rest->Connect(); !connected)
    log::Warning("the REST API on the HTTP port cannot reach the controller over TLS: {}",
                 connected.error());
  ctld::HttpServer http(
      [&loop] {
        std::shared_ptr<const ctld::Snapshot> snapshot = loop.snapshot();
        return ctld::RenderMetrics(*snapshot->cluster, *snapshot, loop.stats());
      },
      [rest](httplib::Server& http_server) { cli::restd::MountRestApi(http_server, rest, ""); });
  if (!StartHttp(http, options, cluster.settings)) return 1;
  log::Info("cluster {} listening on port {} (HTTP {}), state in {}", cluster.settings.cluster_name,
            port, http.port(),
            storage.kind == StorageKind::kSqlite
                ? state
                : fmt::format("PostgreSQL database {} on {}:{}", storage.database, storage.host,
                              storage.port));
  NotifySystemd(fmt::format(
      "READY=1\nSTATUS={} serving cluster {}{}", self->name, cluster.settings.cluster_name,
      leadership ? fmt::format(" (leader, term {})", leadership->term()) : ""));
  // PurgeJobAfter is looked at once a minute; it purges when its cutoff has moved on.
  for (int tick = 0; !stopping; tick = (tick + 1) % 600) {
    if (tick == 0) service.PurgeHistoryIfDue(clock.Now());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  NotifySystemd("STOPPING=1");
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  http.Stop();
  loop.Stop();
  std::string to;
  {
    std::lock_guard lock(handover_mutex);
    to = handover_to;
  }
  if (leadership) leadership->Release(to);  // a standby takes over at once (`to`, if named)
  if (!to.empty()) {
    // scontrol takeover: this process starts again, the same pid (systemd's main process), as a
    // standby; the lease is `to`'s alone for a lease.
    log::Info("handed control to {}; starting again as a standby", to);
    leadership.reset();
    ::execv("/proc/self/exe", argv);
    log::Error("cannot start again as a standby: {}", std::strerror(errno));
    return 1;
  }
  if (cluster.settings.controller_pid_file_set)
    std::filesystem::remove(cluster.settings.controller_pid_file, ignored);
  return 0;
}
