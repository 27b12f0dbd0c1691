// droverd: the node agent. `droverd -N NAME [options]` runs the jobs the controller launches on
// node NAME of the configuration, each under its own step supervisor (droverstepd).
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "agent/daemon/agent.h"
#include "agent/daemon/controller_link.h"
#include "agent/daemon/daemon_options.h"
#include "agent/host/cgroup.h"
#include "auth/tls.h"
#include "common/cluster_config.h"
#include "common/mutex.h"
#include "proto/drover.grpc.pb.h"

namespace {

namespace fs = std::filesystem;
using namespace drover;

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

class AgentService final : public v1::Agent::Service {
 public:
  AgentService(agent::Agent& agent, agent::ControllerLink& link) : agent_(agent), link_(link) {}

  grpc::Status Launch(grpc::ServerContext*, const v1::LaunchRequest* request,
                      v1::AgentReply*) override {
    Status launched = agent_.Launch(*request);
    link_.Wake();  // a launch that failed at once has a status to report
    return launched ? grpc::Status::OK
                    : grpc::Status(grpc::StatusCode::UNAVAILABLE, launched.error());
  }
  grpc::Status Signal(grpc::ServerContext*, const v1::SignalRequest* request,
                      v1::AgentReply*) override {
    Status sent = agent_.Signal(request->job_id(), request->signal(), request->batch_only());
    return sent ? grpc::Status::OK : grpc::Status(grpc::StatusCode::INTERNAL, sent.error());
  }
  grpc::Status RunStep(grpc::ServerContext* context,
                       grpc::ServerReaderWriter<v1::StepOutput, v1::StepInput>* stream) override {
    v1::StepInput first;
    if (!stream->Read(&first) || !first.has_launch())
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "RunStep: the first message must describe the step (launch)");
    Mutex write_mutex;  // the session writes from one thread today; the stream allows one
    auto write = [&](const v1::StepOutput& message) {
      MutexLock lock(write_mutex);
      return stream->Write(message);
    };
    auto read = [&](v1::StepInput* message) { return stream->Read(message); };
    Status ran = agent_.RunStep(first.launch(), write, read, [context] { context->TryCancel(); });
    return ran ? grpc::Status::OK
               : grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, ran.error());
  }
  grpc::Status Terminate(grpc::ServerContext*, const v1::TerminateRequest* request,
                         v1::AgentReply*) override {
    Status sent = agent_.Terminate(request->job_id());
    return sent ? grpc::Status::OK : grpc::Status(grpc::StatusCode::INTERNAL, sent.error());
  }

 private:
  agent::Agent& agent_;
  agent::ControllerLink& link_;
};

std::atomic<bool> stopping{false};

// The host's CPUs and memory; an emulated node's are slurm.conf's.
Result<agent::HostInfo> HostFor(const agent::DaemonOptions& options, const NodeConfig& config) {
  if (!options.emulate) return agent::ReadHostInfo();
  agent::HostInfo host;
  host.sockets = config.sockets;
  host.cores_per_socket = config.cores_per_socket;
  host.threads_per_core = config.threads_per_core;
  host.cpus = config.cpus;
  host.memory_mb = config.real_memory_mb;
  return host;
}

// The agent's options; its spool directory is made here.
Result<agent::AgentOptions> AgentOptionsFor(const agent::DaemonOptions& options,
                                            const ClusterConfig& cluster,
                                            const std::string& conf_path) {
  agent::AgentOptions agent_options;
  agent_options.spool = options.spool.empty()
                            ? Replace(cluster.settings.slurmd_spool_dir, "%n", options.node)
                            : options.spool;
  agent_options.conf_path = fs::absolute(conf_path).string();
  agent_options.emulated = options.emulate;
  agent_options.stepd = options.stepd.empty()
                            ? fs::read_symlink("/proc/self/exe").parent_path() / "droverstepd"
                            : fs::path(options.stepd);
  std::error_code error;
  fs::create_directories(agent_options.spool, error);
  if (error)
    return MakeError(fmt::format("cannot create the spool directory {}: {}",
                                 agent_options.spool.string(), error.message()));
  return agent_options;
}

void PrintNodeSummary(const std::string& node, const agent::HostInfo& host,
                      const agent::GpuDiscovery& gpus, const agent::AgentOptions& agent_options) {
  agent::CgroupHierarchy cgroups = agent::DetectCgroups(agent_options.cgroup_root);
  fmt::print(stderr, "droverd: node {}: {} CPUs, {} MiB, {} GPUs ({}{}{}); cgroups: {}{}{}\n", node,
             host.cpus, host.memory_mb, gpus.gpus.size(), agent::GpuSourceName(gpus.source),
             gpus.note.empty() ? "" : ": ", gpus.note, agent::CgroupModeName(cgroups.mode),
             cgroups.reason.empty() ? "" : " — ", cgroups.reason);
  if (geteuid() != 0)
    fmt::print(stderr,
               "droverd: running as uid {}, not root: only uid {}'s jobs can run here; others "
               "fail with that reason\n",
               geteuid(), geteuid());
}

agent::LinkOptions LinkOptionsFor(const agent::DaemonOptions& options,
                                  const ClusterConfig& cluster) {
  agent::LinkOptions link_options;
  link_options.controller =
      options.controller.empty() ? ControllerAddress(cluster.settings) : options.controller;
  int64_t timeout = cluster.settings.slurmd_timeout_seconds;
  link_options.heartbeat = std::chrono::milliseconds(
      std::clamp<int64_t>(timeout > 0 ? timeout * 1000 / 3 : 30000, 1000, 30000));
  link_options.health_program = cluster.settings.health_check_program;
  link_options.health_interval =
      std::chrono::seconds(cluster.settings.health_check_interval_seconds);
  return link_options;
}

// The agent's TLS credentials, both ways, when slurm.conf asks for TLS; false, having said
// why, when a file cannot be read.
bool LoadTls(const ClusterConfig& cluster, std::shared_ptr<grpc::ServerCredentials>& server,
             std::shared_ptr<grpc::ChannelCredentials>& channel) {
  auto server_credentials = auth::ServerCredentials(cluster);
  auto channel_credentials = auth::ChannelCredentials(cluster);
  const std::string* error = !server_credentials    ? &server_credentials.error()
                             : !channel_credentials ? &channel_credentials.error()
                                                    : nullptr;
  if (error) {
    fmt::print(stderr, "droverd: error: {}\n", *error);
    return false;
  }
  server = *server_credentials;
  channel = *channel_credentials;
  return true;
}

// Serves the agent's API and talks to the controller until SIGTERM or SIGINT; the exit code.
int Serve(const agent::DaemonOptions& options, const ClusterConfig& cluster,
          const NodeConfig& config, agent::Agent& agent) {
  std::string listen =
      options.listen.empty() ? AgentListenAddress(cluster.settings, config) : options.listen;
  std::shared_ptr<grpc::ServerCredentials> server_credentials;
  agent::LinkOptions link_options = LinkOptionsFor(options, cluster);
  if (!LoadTls(cluster, server_credentials, link_options.credentials)) return 1;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, server_credentials, &port);
  agent::ControllerLink link(agent, link_options);
  AgentService service(agent, link);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    fmt::print(stderr, "droverd: error: cannot listen on {}; is another agent running?{}\n", listen,
               cluster.settings.tls.enabled()
                   ? " Or does DroverTLSKeyFile not hold the key of DroverTLSCertFile?"
                   : "");
    return 1;
  }
  std::string host_part = listen.substr(0, listen.rfind(':'));
  // An agent on every interface registers with the address slurm.conf gives its node.
  if (host_part == "0.0.0.0" || host_part == "[::]" || host_part.empty())
    host_part = config.address.empty() ? config.name : config.address;
  link.SetAddress(fmt::format("{}:{}", host_part, port));
  if (!options.port_file.empty()) {
    std::ofstream(options.port_file) << port << "\n";
  }
  fmt::print(stderr, "droverd: node {} listening on {}:{}, controller {}\n", options.node,
             host_part, port, link_options.controller);
  link.Start();

  struct sigaction action {};
  action.sa_handler = [](int) { stopping = true; };
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  while (!stopping) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // Jobs keep running under their supervisors: a restarted agent re-adopts them.
  link.Stop();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // A step task that closes its stdin must not take the agent down with the next write.
  ::signal(SIGPIPE, SIG_IGN);
  agent::DaemonOptions options;
  if (!agent::ParseDaemonOptions(std::vector<std::string>(argv + 1, argv + argc), options))
    return 2;
  std::string path = ResolveConfPath(options.conf);
  ConfigLoad load = LoadClusterConfig(path);
  for (const Diagnostic& error : load.diagnostics.errors())
    fmt::print(stderr, "droverd: error: {}\n", error.ToString());
  if (!load.ok()) return 1;
  const ClusterConfig& cluster = load.config;
  int node = cluster.FindNode(options.node);
  if (node < 0) {
    fmt::print(stderr, "droverd: error: node {} is not in {}; give -N one of its NodeName=s\n",
               options.node, path);
    return 1;
  }
  const NodeConfig& config = cluster.nodes[node];
  auto host = HostFor(options, config);
  if (!host) {
    fmt::print(stderr, "droverd: error: {}\n", host.error());
    return 1;
  }
  agent::GpuDiscoveryOptions gpu_options;
  gpu_options.emulated = options.emulate;
  gpu_options.core_cpus = host->core_cpus;
  agent::GpuDiscovery gpus = agent::DiscoverGpus(config, gpu_options);
  auto agent_options = AgentOptionsFor(options, cluster, path);
  if (!agent_options) {
    fmt::print(stderr, "droverd: error: {}\n", agent_options.error());
    return 1;
  }
  PrintNodeSummary(options.node, *host, gpus, *agent_options);
  agent::Agent agent(cluster, node, *host, gpus, *agent_options);
  return Serve(options, cluster, config, agent);
}
