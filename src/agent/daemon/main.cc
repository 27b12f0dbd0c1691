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
#include <mutex>
#include <thread>

#include "agent/daemon/agent.h"
#include "agent/daemon/controller_link.h"
#include "agent/host/cgroup.h"
#include "common/cluster_config.h"
#include "proto/drover.grpc.pb.h"

namespace {

namespace fs = std::filesystem;
using namespace drover;

constexpr const char* kUsage =
    "Usage: droverd -N NODE [--conf FILE] [--spool DIR] [--listen ADDR:PORT] [--port-file FILE]\n"
    "               [--controller HOST:PORT] [--emulate] [--stepd PATH]\n"
    "  -N NODE            the node of slurm.conf this agent is\n"
    "  --conf FILE        slurm.conf (default: $DROVER_CONF, $SLURM_CONF, /etc/slurm/slurm.conf)\n"
    "  --spool DIR        job directories (default: SlurmdSpoolDir, %n replaced by NODE)\n"
    "  --listen ADDR:PORT where to listen (default: 0.0.0.0:the node's Port or SlurmdPort;\n"
    "                     port 0 picks a free one, told to the controller at registration)\n"
    "  --port-file FILE   write the port listened on\n"
    "  --controller H:P   the controller (default: SlurmctldHost:SlurmctldPort)\n"
    "  --emulate          an emulated node: resources from slurm.conf, GPUs without devices,\n"
    "                     several agents per host\n"
    "  --stepd PATH       the step supervisor (default: droverstepd beside droverd)\n";

struct Options {
  std::string node, conf, spool, listen, port_file, controller, stepd;
  bool emulate = false;
};

bool ParseOptions(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    bool ok = true;
    if (arg == "-N" || arg == "--node")
      ok = value(options.node);
    else if (arg == "--conf")
      ok = value(options.conf);
    else if (arg == "--spool")
      ok = value(options.spool);
    else if (arg == "--listen")
      ok = value(options.listen);
    else if (arg == "--port-file")
      ok = value(options.port_file);
    else if (arg == "--controller")
      ok = value(options.controller);
    else if (arg == "--stepd")
      ok = value(options.stepd);
    else if (arg == "--emulate")
      options.emulate = true;
    else if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else {
      std::fprintf(stderr, "droverd: unknown option %s\n%s", arg.c_str(), kUsage);
      return false;
    }
    if (!ok) {
      std::fprintf(stderr, "droverd: %s needs a value\n%s", arg.c_str(), kUsage);
      return false;
    }
  }
  if (options.node.empty()) {
    std::fprintf(stderr, "droverd: which node is this? give -N NODE\n%s", kUsage);
    return false;
  }
  return true;
}

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
    std::mutex write_mutex;
    auto write = [&](const v1::StepOutput& message) {
      std::lock_guard lock(write_mutex);
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

}  // namespace

int main(int argc, char** argv) {
  // A step task that closes its stdin must not take the agent down with the next write.
  ::signal(SIGPIPE, SIG_IGN);
  Options options;
  if (!ParseOptions(argc, argv, options)) return 2;
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

  agent::HostInfo host;
  if (options.emulate) {
    host.sockets = config.sockets;
    host.cores_per_socket = config.cores_per_socket;
    host.threads_per_core = config.threads_per_core;
    host.cpus = config.cpus;
    host.memory_mb = config.real_memory_mb;
  } else {
    auto read = agent::ReadHostInfo();
    if (!read) {
      fmt::print(stderr, "droverd: error: {}\n", read.error());
      return 1;
    }
    host = std::move(*read);
  }
  agent::GpuDiscoveryOptions gpu_options;
  gpu_options.emulated = options.emulate;
  gpu_options.core_cpus = host.core_cpus;
  agent::GpuDiscovery gpus = agent::DiscoverGpus(config, gpu_options);

  agent::AgentOptions agent_options;
  agent_options.spool = options.spool.empty()
                            ? Replace(cluster.settings.slurmd_spool_dir, "%n", options.node)
                            : options.spool;
  agent_options.conf_path = fs::absolute(path).string();
  agent_options.emulated = options.emulate;
  agent_options.stepd = options.stepd.empty()
                            ? fs::read_symlink("/proc/self/exe").parent_path() / "droverstepd"
                            : fs::path(options.stepd);
  std::error_code error;
  fs::create_directories(agent_options.spool, error);
  if (error) {
    fmt::print(stderr, "droverd: error: cannot create the spool directory {}: {}\n",
               agent_options.spool.string(), error.message());
    return 1;
  }
  agent::CgroupHierarchy cgroups = agent::DetectCgroups(agent_options.cgroup_root);
  fmt::print(stderr, "droverd: node {}: {} CPUs, {} MiB, {} GPUs ({}{}{}); cgroups: {}{}{}\n",
             options.node, host.cpus, host.memory_mb, gpus.gpus.size(),
             agent::GpuSourceName(gpus.source), gpus.note.empty() ? "" : ": ", gpus.note,
             agent::CgroupModeName(cgroups.mode), cgroups.reason.empty() ? "" : " — ",
             cgroups.reason);
  if (geteuid() != 0)
    fmt::print(stderr,
               "droverd: running as uid {}, not root: only uid {}'s jobs can run here; others "
               "fail with that reason\n",
               geteuid(), geteuid());
  agent::Agent agent(cluster, node, host, gpus, agent_options);

  std::string listen =
      options.listen.empty()
          ? fmt::format("0.0.0.0:{}", config.port ? config.port : cluster.settings.agent_port)
          : options.listen;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);

  agent::LinkOptions link_options;
  link_options.controller =
      options.controller.empty() ? ControllerAddress(cluster.settings) : options.controller;
  int64_t timeout = cluster.settings.slurmd_timeout_seconds;
  link_options.heartbeat = std::chrono::milliseconds(
      std::clamp<int64_t>(timeout > 0 ? timeout * 1000 / 3 : 30000, 1000, 30000));
  link_options.health_program = cluster.settings.health_check_program;
  link_options.health_interval =
      std::chrono::seconds(cluster.settings.health_check_interval_seconds);
  agent::ControllerLink link(agent, link_options);
  AgentService service(agent, link);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    fmt::print(stderr, "droverd: error: cannot listen on {}; is another agent running?\n", listen);
    return 1;
  }
  std::string host_part = listen.substr(0, listen.rfind(':'));
  if (host_part == "0.0.0.0" || host_part.empty())
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
