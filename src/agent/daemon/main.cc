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
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "agent/daemon/agent.h"
#include "agent/daemon/controller_link.h"
#include "agent/daemon/daemon_options.h"
#include "agent/daemon/node_metrics.h"
#include "agent/host/cgroup.h"
#include "auth/daemon_auth.h"
#include "auth/grpc_auth.h"
#include "auth/job_credential.h"
#include "auth/tls.h"
#include "common/agent_address.h"
#include "common/cluster_config.h"
#include "common/hostlist.h"
#include "common/log.h"
#include "common/mutex.h"
#include "common/process_file.h"
#include "common/sd_notify.h"
#include "common/step_launch.h"
#include "common/text.h"
#include "proto/drover.grpc.pb.h"
#include "wire/relay.h"

namespace {

namespace fs = std::filesystem;
using namespace drover;

// The agent's API. Every call is authenticated; launches, signals and terminations come only
// from the controller (root or SlurmUser), each launch with the job credential it sealed for
// this node; a step runs only from the Job bytes its credential covers, for the credential's
// user (or a daemon).
class AgentService final : public v1::Agent::Service {
 public:
  AgentService(const std::vector<agent::Agent*>& agents, agent::ControllerLink& link,
               const auth::DaemonAuth& auth)
      : agents_(agents), link_(link), auth_(auth) {
    for (size_t i = 0; i < agents_.size(); ++i) by_name_[agents_[i]->node_name()] = i;
  }

  grpc::Status Launch(grpc::ServerContext* context, const v1::LaunchRequest* request,
                      v1::AgentReply*) override {
    agent::Agent* node = nullptr;
    if (grpc::Status refused = FromController(*context, node); !refused.ok()) return refused;
    grpc::Status launched = LaunchOn(*node, *request);
    link_.Wake();  // a launch that failed at once has a status to report
    return launched;
  }
  // Launches for several of this process's nodes (the controller gathers them per address):
  // each as Launch, with its own node, credential and outcome.
  grpc::Status LaunchMany(grpc::ServerContext* context, const v1::LaunchBatch* request,
                          v1::LaunchBatchReply* reply) override {
    constexpr int kMostLaunches = 1024;
    if (grpc::Status refused = FromDaemon(*context); !refused.ok()) return refused;
    if (request->launches_size() > kMostLaunches)
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          fmt::format("{} launches in one call; at most {}",
                                      request->launches_size(), kMostLaunches));
    for (const v1::NodeLaunch& launch : request->launches()) {
      std::string* error = reply->add_errors();
      auto it = by_name_.find(launch.node());
      if (it == by_name_.end()) {
        *error = fmt::format("node {} is not served by this droverd (it serves {})",
                             launch.node().substr(0, 64), served_);
        continue;
      }
      agent::Agent& here = *agents_[it->second];
      here.NoteController();
      if (grpc::Status launched = LaunchOn(here, launch.launch()); !launched.ok())
        *error = launched.error_message();
    }
    link_.Wake();
    return grpc::Status::OK;
  }
  grpc::Status Signal(grpc::ServerContext* context, const v1::SignalRequest* request,
                      v1::AgentReply*) override {
    agent::Agent* node = nullptr;
    if (grpc::Status refused = FromController(*context, node); !refused.ok()) return refused;
    Status sent = SignalOn(*node, *request);
    return sent ? grpc::Status::OK : grpc::Status(grpc::StatusCode::INTERNAL, sent.error());
  }
  // A signal or termination for many nodes: this process's own get it, the rest go on down the
  // tree (wire/relay.h). A relay that names none of this process's nodes is refused for all of
  // them rather than passed on (each hop serves at least one target, so no relay loops).
  grpc::Status Relay(grpc::ServerContext* context, const v1::RelayRequest* request,
                     v1::RelayReply* reply) override {
    if (grpc::Status refused = FromDaemon(*context); !refused.ok()) return refused;
    if (request->targets_size() > wire::kMostRelayTargets || request->width() < 1 ||
        request->width() > 65533)
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          fmt::format("a relay names at most {} nodes, with a width of 1 to 65533",
                                      wire::kMostRelayTargets));
    if (!request->has_signal() && !request->has_terminate())
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "a relay carries a signal or a termination");
    std::vector<v1::RelayTarget> others;
    bool mine = false;
    for (const v1::RelayTarget& target : request->targets()) {
      auto it = by_name_.find(target.node());
      if (it == by_name_.end()) {
        others.push_back(target);
        continue;
      }
      mine = true;
      agent::Agent& node = *agents_[it->second];
      node.NoteController();
      Status done = request->has_signal() ? SignalOn(node, request->signal())
                                          : node.Terminate(request->terminate().job_id());
      if (!done) {
        v1::RelayReply::Failure* failure = reply->add_failed();
        failure->set_node(target.node());
        failure->set_error(done.error());
      }
    }
    if (!mine && !others.empty())
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          fmt::format("this droverd serves none of the relay's nodes ({} first)",
                                      others.front().node().substr(0, 64)));
    // Within the caller's deadline, a second short of it, so this hop's answer gets back.
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        context->deadline() - std::chrono::system_clock::now() - std::chrono::seconds(1));
    left = std::clamp(left, std::chrono::milliseconds(500), std::chrono::milliseconds(20000));
    for (v1::RelayReply::Failure& failure : wire::RelaySpans(
             others, *request, [this](const std::string& address) { return StubAt(address); },
             left))
      *reply->add_failed() = std::move(failure);
    return grpc::Status::OK;
  }
  grpc::Status RunStep(grpc::ServerContext* context,
                       grpc::ServerReaderWriter<v1::StepOutput, v1::StepInput>* stream) override {
    Result<auth::Identity> caller = auth::Authenticate(*context, *auth_.authenticator);
    if (!caller) return auth::Unauthenticated(caller.error());
    agent::Agent* node = nullptr;
    if (grpc::Status unknown = Route(*context, node); !unknown.ok()) return unknown;
    agent::Agent& here = *node;
    v1::StepInput first;
    if (!stream->Read(&first) || !first.has_launch())
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "RunStep: the first message must describe the step (launch)");
    v1::StepLaunch launch = std::move(*first.mutable_launch());
    if (grpc::Status refused = CheckStep(*caller, here, launch); !refused.ok()) return refused;
    Mutex write_mutex;  // the session writes from one thread today; the stream allows one
    auto write = [&](const v1::StepOutput& message) {
      MutexLock lock(write_mutex);
      return stream->Write(message);
    };
    auto read = [&](v1::StepInput* message) { return stream->Read(message); };
    Status ran = here.RunStep(launch, write, read, [context] { context->TryCancel(); });
    return ran ? grpc::Status::OK
               : grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, ran.error());
  }
  grpc::Status Terminate(grpc::ServerContext* context, const v1::TerminateRequest* request,
                         v1::AgentReply*) override {
    agent::Agent* node = nullptr;
    if (grpc::Status refused = FromController(*context, node); !refused.ok()) return refused;
    Status sent = node->Terminate(request->job_id());
    return sent ? grpc::Status::OK : grpc::Status(grpc::StatusCode::INTERNAL, sent.error());
  }
  grpc::Status Notify(grpc::ServerContext* context, const v1::JobNotifyRequest* request,
                      v1::AgentReply*) override {
    agent::Agent* node = nullptr;
    if (grpc::Status refused = FromController(*context, node); !refused.ok()) return refused;
    Status sent = node->Notify(request->job_id(), request->message());
    return sent ? grpc::Status::OK
                : grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, sent.error());
  }
  // scontrol reboot: the program runs on the link's thread; the call returns at once, as
  // slurmd's does (slurmctld expects no answer from a rebooting node).
  grpc::Status Reboot(grpc::ServerContext* context, const v1::NodeRebootRequest* request,
                      v1::AgentReply*) override {
    agent::Agent* node = nullptr;
    if (grpc::Status refused = FromController(*context, node); !refused.ok()) return refused;
    if (request->program().empty())
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "RebootProgram isn't defined");
    int64_t timeout = node->cluster().settings.resume_timeout_seconds;
    link_.Reboot(by_name_.at(node->node_name()), request->program(),
                 std::chrono::seconds(timeout > 0 ? timeout : 60));
    return grpc::Status::OK;
  }

  // scontrol show slurmd: any user, as slurmd answers anyone.
  grpc::Status DaemonStatus(grpc::ServerContext* context, const v1::AgentStatusRequest*,
                            v1::AgentStatusReply* reply) override {
    Result<auth::Identity> caller = auth::Authenticate(*context, *auth_.authenticator);
    if (!caller) return auth::Unauthenticated(caller.error());
    agent::Agent* node = nullptr;
    if (grpc::Status unknown = Route(*context, node); !unknown.ok()) return unknown;
    *reply = node->DaemonStatus();
    return grpc::Status::OK;
  }

  // scontrol listpids and pidinfo: any user, who sees only their own jobs' processes (root
  // and SlurmUser see all), as slurmd answers only the job's owner.
  grpc::Status ListPids(grpc::ServerContext* context, const v1::ListPidsRequest* request,
                        v1::ListPidsReply* reply) override {
    agent::Agent* node = nullptr;
    std::function<bool(uint32_t)> may_see;
    if (grpc::Status refused = OwnerOrDaemon(*context, node, may_see); !refused.ok())
      return refused;
    *reply = node->ListPids(*request, may_see);
    return grpc::Status::OK;
  }

  // sstat: any user, who sees only their own jobs' steps (root and SlurmUser see all), as
  // slurmd answers REQUEST_JOB_STEP_STAT only for the job's owner.
  grpc::Status StepUsage(grpc::ServerContext* context, const v1::StepUsageRequest* request,
                         v1::StepUsageReply* reply) override {
    agent::Agent* node = nullptr;
    std::function<bool(uint32_t)> may_see;
    if (grpc::Status refused = OwnerOrDaemon(*context, node, may_see); !refused.ok())
      return refused;
    *reply = node->StepUsage(*request, may_see);
    return grpc::Status::OK;
  }

  // sattach: the step's owner (root and SlurmUser too) listens to a step running here.
  grpc::Status AttachStep(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::StepOutput, v1::StepAttachInput>* stream) override {
    agent::Agent* node = nullptr;
    std::function<bool(uint32_t)> may_act;
    if (grpc::Status refused = OwnerOrDaemon(*context, node, may_act); !refused.ok())
      return refused;
    v1::StepAttachInput first;
    if (!stream->Read(&first))
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "AttachStep: the first message must name the step");
    auto write = [stream](const v1::StepOutput& message) { return stream->Write(message); };
    auto read = [stream](v1::StepAttachInput* message) { return stream->Read(message); };
    Status attached = node->AttachStep(first.job_id(), first.step_id(), may_act, write, read,
                                       [context] { context->TryCancel(); });
    if (attached) return grpc::Status::OK;
    if (attached.error().starts_with("Access/permission denied")) return Denied(attached.error());
    return grpc::Status(grpc::StatusCode::NOT_FOUND, attached.error());
  }

  // sbcast: the job's owner (root and SlurmUser too) writes a file on a node the job runs on.
  grpc::Status WriteJobFile(grpc::ServerContext* context, const v1::JobFileChunk* request,
                            v1::AgentReply*) override {
    agent::Agent* node = nullptr;
    std::function<bool(uint32_t)> may_act;
    if (grpc::Status refused = OwnerOrDaemon(*context, node, may_act); !refused.ok())
      return refused;
    Status written = node->WriteJobFile(*request, may_act);
    if (written) return grpc::Status::OK;
    if (written.error().starts_with("Access/permission denied")) return Denied(written.error());
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, written.error());
  }

 private:
  // The caller's node, and which jobs' owners it may see: its own, or every job for root and
  // SlurmUser.
  grpc::Status OwnerOrDaemon(grpc::ServerContext& context, agent::Agent*& node,
                             std::function<bool(uint32_t)>& may_see) {
    Result<auth::Identity> caller = auth::Authenticate(context, *auth_.authenticator);
    if (!caller) return auth::Unauthenticated(caller.error());
    const bool all = auth::IsDaemonIdentity(*caller, auth_.settings);
    const uint32_t uid = caller->uid;
    if (grpc::Status unknown = Route(context, node); !unknown.ok()) return unknown;
    may_see = [all, uid](uint32_t owner) { return all || owner == uid; };
    return grpc::Status::OK;
  }
  static grpc::Status Denied(const std::string& why) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, why);
  }
  static Status SignalOn(agent::Agent& node, const v1::SignalRequest& request) {
    SignalScope scope = request.full()         ? SignalScope::kFull
                        : request.batch_only() ? SignalScope::kBatch
                                               : SignalScope::kSteps;
    std::vector<uint32_t> steps(request.step_ids().begin(), request.step_ids().end());
    return node.Signal(request.job_id(), request.signal(), scope, steps);
  }
  // Another agent's stub, for relays (one per address, kept).
  std::shared_ptr<v1::Agent::Stub> StubAt(const std::string& address) EXCLUDES(stubs_mutex_) {
    MutexLock lock(stubs_mutex_);
    // Relays name the cluster's agents; a peer naming ever new addresses does not grow this.
    if (stubs_.size() >= 4096 && !stubs_.count(address)) stubs_.clear();
    std::shared_ptr<v1::Agent::Stub>& stub = stubs_[address];
    if (!stub) {
      auto channel = auth::NewChannel(address, agents_.front()->cluster(), grpc::ChannelArguments(),
                                      *auth_.authenticator);
      if (!channel) {
        stubs_.erase(address);
        return nullptr;
      }
      stub = v1::Agent::NewStub(*channel);
    }
    return stub;
  }
  // The node the call is for (kAgentNodeMetadata); a call that names none goes to the only one.
  grpc::Status Route(const grpc::ServerContext& context, agent::Agent*& node) const {
    const auto& metadata = context.client_metadata();
    auto named = metadata.find(kAgentNodeMetadata);
    if (named == metadata.end()) {
      if (agents_.size() == 1) {
        node = agents_.front();
        return grpc::Status::OK;
      }
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          fmt::format("this droverd serves {} nodes; a call must name one ({})",
                                      agents_.size(), kAgentNodeMetadata));
    }
    std::string name(named->second.data(), named->second.size());
    auto it = by_name_.find(name);
    if (it == by_name_.end())
      return grpc::Status(grpc::StatusCode::NOT_FOUND,
                          fmt::format("node {} is not served by this droverd (it serves {})",
                                      name.substr(0, 64), served_));
    node = agents_[it->second];
    return grpc::Status::OK;
  }
  // The batch script's launch on `here`, from the job credential the controller sealed for it.
  grpc::Status LaunchOn(agent::Agent& here, const v1::LaunchRequest& request) {
    auto claims = auth::OpenJobCredential(*auth_.authenticator, auth_.settings,
                                          request.credential(), here.node_name());
    if (!claims) return Denied(claims.error());
    const v1::JobSpec& spec = request.job().spec();
    if (claims->step_id() != auth::kBatchStep || claims->job_id() != spec.job_id() ||
        claims->uid() != spec.uid() || claims->gid() != spec.gid() ||
        claims->restart_count() != request.job().restart_count())
      return Denied(fmt::format("the job credential does not match job {}", spec.job_id()));
    Status launched = here.Launch(request);
    return launched ? grpc::Status::OK
                    : grpc::Status(grpc::StatusCode::UNAVAILABLE, launched.error());
  }
  // A daemon identity: the controller, or an agent relaying it.
  grpc::Status FromDaemon(const grpc::ServerContext& context) {
    Result<auth::Identity> caller = auth::Authenticate(context, *auth_.authenticator);
    if (!caller) return auth::Unauthenticated(caller.error());
    if (!auth::IsDaemonIdentity(*caller, auth_.settings))
      return Denied(fmt::format("only the controller may call this; uid {} may not", caller->uid));
    return grpc::Status::OK;
  }
  // Only the controller's calls, for one of this process's nodes.
  grpc::Status FromController(const grpc::ServerContext& context, agent::Agent*& node) {
    if (grpc::Status refused = FromDaemon(context); !refused.ok()) return refused;
    if (grpc::Status unknown = Route(context, node); !unknown.ok()) return unknown;
    node->NoteController();
    return grpc::Status::OK;
  }
  // The step runs from the credential's Job bytes, for the credential's user, on a node it names.
  grpc::Status CheckStep(const auth::Identity& caller, const agent::Agent& here,
                         v1::StepLaunch& launch) {
    auto claims = auth::OpenJobCredential(*auth_.authenticator, auth_.settings, launch.credential(),
                                          here.node_name());
    if (!claims) return Denied(claims.error());
    if (caller.uid != claims->uid() && !auth::IsDaemonIdentity(caller, auth_.settings))
      return Denied(fmt::format("uid {} may not run steps of job {} (uid {})", caller.uid,
                                claims->job_id(), claims->uid()));
    if (claims->step_id() != launch.step_id() ||
        auth::Sha256(launch.job_bytes()) != claims->job_digest())
      return Denied(fmt::format("the step credential does not match step {}.{}", claims->job_id(),
                                launch.step_id()));
    v1::Job job;
    if (!job.ParseFromString(launch.job_bytes()) || job.spec().job_id() != claims->job_id() ||
        job.spec().uid() != claims->uid() || job.spec().gid() != claims->gid())
      return Denied("the step's job does not match its credential");
    *launch.mutable_job() = std::move(job);
    return grpc::Status::OK;
  }

  const std::vector<agent::Agent*>& agents_;
  std::unordered_map<std::string, size_t> by_name_;
  agent::ControllerLink& link_;
  const auth::DaemonAuth& auth_;
  Mutex stubs_mutex_;
  std::map<std::string, std::shared_ptr<v1::Agent::Stub>> stubs_ GUARDED_BY(stubs_mutex_);
  std::string served_ = [this] {
    std::vector<std::string> names;
    for (const agent::Agent* agent : agents_) names.push_back(agent->node_name());
    return CompressHostlist(names);
  }();
};

std::atomic<bool> stopping{false};

// -N: one node, or (emulated) a hostlist of nodes this process serves, as Slurm's
// multiple-slurmd serves several nodes from one host.
Result<std::vector<std::string>> NodesServed(const agent::DaemonOptions& options,
                                             const ClusterConfig& cluster,
                                             const std::string& path) {
  auto names = ExpandHostlist(options.node);
  if (!names) return MakeError(fmt::format("-N {}: {}", options.node, names.error()));
  std::set<std::string> seen;
  for (const std::string& name : *names) {
    if (cluster.FindNode(name) < 0)
      return MakeError(
          fmt::format("node {} is not in {}; give -N one of its NodeName=s", name, path));
    if (!seen.insert(name).second)
      return MakeError(fmt::format("-N {}: node {} is named twice", options.node, name));
  }
  if (names->size() > 1) {
    if (!options.emulate)
      return MakeError(fmt::format(
          "-N {} names {} nodes: one droverd serves several nodes only when they are emulated "
          "(--emulate); a real host is one node",
          options.node, names->size()));
    if (!options.spool.empty())
      return MakeError(
          "--spool is one node's directory; with several nodes each node's is "
          "SlurmdSpoolDir's (with %n)");
    if (!options.nvml.empty()) return MakeError("--nvml serves one node; give -N one node");
    if (cluster.settings.slurmd_spool_dir.find("%n") == std::string::npos)
      return MakeError(fmt::format(
          "SlurmdSpoolDir={} has no %n: the nodes of one droverd need a spool directory each",
          cluster.settings.slurmd_spool_dir));
  }
  return names;
}

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
                                            const std::string& conf_path, const std::string& node) {
  agent::AgentOptions agent_options;
  agent_options.spool =
      options.spool.empty() ? AgentSpoolDir(cluster.settings, node) : fs::path(options.spool);
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
                      const agent::GpuDiscovery& gpus, const agent::CgroupHierarchy& cgroups) {
  log::Info("node {}: {} CPUs, {} MiB, {} GPUs ({}{}{}); cgroups: {}{}{}", node, host.cpus,
            host.memory_mb, gpus.gpus.size(), agent::GpuSourceName(gpus.source),
            gpus.note.empty() ? "" : ": ", gpus.note, agent::CgroupModeName(cgroups.mode),
            cgroups.reason.empty() ? "" : " — ", cgroups.reason);
}

void PrintWarnings(bool job_container) {
  if (geteuid() != 0 && job_container)
    log::Warning(
        "JobContainerType=job_container/tmpfs needs droverd to run as "
        "root: jobs on this node get no private /tmp");
  if (geteuid() != 0)
    log::Info(
        "running as uid {}, not root: only uid {}'s jobs can run here; others "
        "fail with that reason",
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
  // With backup controllers, at least four heartbeats a SlurmctldTimeout: an agent finds the new
  // leader (and it the agent's running jobs) within a quarter of a takeover's own time.
  if (options.controller.empty() && cluster.settings.controller_hosts.size() > 1)
    link_options.heartbeat =
        std::min(link_options.heartbeat,
                 std::chrono::milliseconds(std::clamp<int64_t>(
                     std::max<int64_t>(cluster.settings.slurmctld_timeout_seconds, 1) * 1000 / 4,
                     1000, 30000)));
  link_options.health_program = cluster.settings.health_check_program;
  link_options.health_interval =
      std::chrono::seconds(cluster.settings.health_check_interval_seconds);
  link_options.gpu_health_resume = cluster.settings.gpu_health_resume;
  return link_options;
}

// Serves the agent's API and talks to the controller until SIGTERM or SIGINT; the exit code.
int Serve(const agent::DaemonOptions& options, const ClusterConfig& cluster,
          const NodeConfig& config, const std::vector<agent::Agent*>& agents) {
  std::string listen =
      options.listen.empty() ? AgentListenAddress(cluster.settings, config) : options.listen;
  auto server_credentials = auth::ServerCredentials(cluster);  // TLS when slurm.conf asks
  if (!server_credentials) {
    log::Error("{}", server_credentials.error());
    return 1;
  }
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, *server_credentials, &port);
  // srun --bcast sends its files with the launch: room for them beside the rest.
  builder.SetMaxReceiveMessageSize(static_cast<int>(kMostBcastBytes + (uint64_t{8} << 20)));
  auto daemon_auth = auth::StartDaemonAuth("droverd", cluster);
  if (!daemon_auth) return 1;
  // auth/slurm: the broker for this host's users (one per host: another agent's may serve).
  std::unique_ptr<auth::Broker> broker;
  if (daemon_auth->settings.scheme == auth::Scheme::kSlurm) {
    auto started = auth::StartBroker(daemon_auth->settings, *daemon_auth->authenticator);
    if (!started) {
      log::Error("{}", started.error());
      return 1;
    }
    broker = std::move(*started);
  }
  agent::LinkOptions link_options = LinkOptionsFor(options, cluster);
  // The built-in GPU probes watch the GPUs NVML found, through the same library.
  if (agents.size() == 1 && agents.front()->gpus().source == agent::GpuSource::kNvml)
    link_options.nvml_library = options.nvml.empty() ? "libnvidia-ml.so.1" : options.nvml;
  // A controller that restarts is back within seconds: retry connecting at least every second
  // (gRPC's default backoff grows to two minutes).
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  auto channel =
      auth::NewChannel(link_options.controller, cluster, args, *daemon_auth->authenticator);
  if (!channel) {
    log::Error("{}", channel.error());
    return 1;
  }
  link_options.channel = std::move(*channel);
  // Several SlurmctldHost lines: the link goes on to the next when one does not take its
  // registrations (down, or a standby), as slurmd does with a backup controller.
  if (options.controller.empty() && cluster.settings.controller_hosts.size() > 1) {
    link_options.controllers = ControllerAddresses(cluster.settings);
    auth::Authenticator* authenticator = daemon_auth->authenticator.get();
    link_options.connect = [&cluster, args, authenticator](const std::string& address) {
      auto made = auth::NewChannel(address, cluster, args, *authenticator);
      return made ? *made : nullptr;
    };
  }
  // A supervisor's status wakes the link as it is written, and a supervisor's end (a pidfd) as
  // it happens; the link looks on its timer (four times a second instead of fifty) only for
  // what could not be watched (Agent::NeedsTimedLook). The watch reaches the agents only once
  // nothing below can return early: its callback needs the link.
  auto woken = std::make_shared<std::atomic<agent::ControllerLink*>>(nullptr);
  std::shared_ptr<agent::FileWatch> watch;
  if (auto started = agent::FileWatch::Start("status", [woken] {
        if (agent::ControllerLink* link = woken->load()) link->Wake();
      })) {
    watch = std::move(*started);
    link_options.poll = std::chrono::milliseconds(250);
  } else {
    log::Warning("{}; ended jobs are looked for every {} ms", started.error(),
                 link_options.poll.count());
  }
  agent::ControllerLink link(agents, link_options);
  woken->store(&link);
  AgentService service(agents, link, *daemon_auth);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    log::Error("cannot listen on {}; is another agent running?{}", listen,
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
  // scontrol listpids and pidinfo find this node's agent here, as Slurm's find slurmstepd's
  // sockets in SlurmdSpoolDir (an agent on port 0 has no address slurm.conf could give).
  for (const agent::Agent* agent : agents)
    if (Status written = WriteAgentAddress(agent->spool(), fmt::format("{}:{}", host_part, port));
        !written)
      log::Warning("{}; scontrol listpids cannot find this agent", written.error());
  if (!options.port_file.empty()) {
    std::ofstream(options.port_file) << port << "\n";
  }
  log::Info("node {} listening on {}:{}, controller {}", options.node, host_part, port,
            link_options.controller);
  // NVML's live readings of the GPUs it found: sstat's GPU use and /metrics'.
  std::vector<std::unique_ptr<agent::GpuMetricsReader>> gpu_readers;
  for (agent::Agent* agent : agents) {
    if (agent->gpus().source != agent::GpuSource::kNvml) continue;
    auto reader = agent::GpuMetricsReader::Open(
        options.nvml.empty() ? "libnvidia-ml.so.1" : options.nvml, agent->gpus().gpus);
    if (!reader) {
      log::Warning("node {}: no live GPU readings (sstat, /metrics): {}", agent->node_name(),
                   reader.error());
      continue;
    }
    agent->SetGpuReader(reader->get());
    gpu_readers.push_back(std::move(*reader));
  }
  // Prometheus /metrics: --metrics-listen, else DroverAgentMetricsPort on the gRPC address.
  std::unique_ptr<agent::MetricsServer> metrics;
  std::string metrics_listen = options.metrics_listen;
  if (metrics_listen.empty() && cluster.settings.agent_metrics_port > 0)
    metrics_listen = fmt::format("{}:{}", listen.substr(0, listen.rfind(':')),
                                 cluster.settings.agent_metrics_port);
  if (!metrics_listen.empty()) {
    size_t colon = metrics_listen.rfind(':');
    std::optional<int64_t> metrics_port =
        colon == std::string::npos ? std::nullopt : ParseInt64(metrics_listen.substr(colon + 1));
    if (!metrics_port || *metrics_port < 0 || *metrics_port > 65535) {
      log::Error("--metrics-listen wants ADDR:PORT, not {}", metrics_listen);
      return 2;
    }
    std::string metrics_host = metrics_listen.substr(0, colon);
    if (metrics_host.size() >= 2 && metrics_host.front() == '[')
      metrics_host = metrics_host.substr(1, metrics_host.size() - 2);
    metrics = std::make_unique<agent::MetricsServer>(agents);
    if (Status started = metrics->Start(metrics_host, static_cast<int>(*metrics_port)); !started) {
      log::Error("{}: is another agent using the port?", started.error());
      return 1;
    }
    if (!options.metrics_port_file.empty())
      std::ofstream(options.metrics_port_file) << metrics->port() << "\n";
    log::Info("Prometheus /metrics on {}:{}", metrics_host, metrics->port());
  }
  if (watch)
    for (agent::Agent* agent : agents) agent->WatchStatuses(watch);
  link.Start();
  NotifySystemd(fmt::format("READY=1\nSTATUS=serving {}", options.node));

  struct sigaction action {};
  action.sa_handler = [](int) { stopping = true; };
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  while (!stopping) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // Jobs keep running under their supervisors: a restarted agent re-adopts them.
  link.Stop();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  // The watch's thread ends here (the agents' copies dropped first), while the link it wakes is
  // still there.
  for (agent::Agent* agent : agents) agent->WatchStatuses(nullptr);
  watch.reset();
  metrics.reset();
  for (agent::Agent* agent : agents) agent->SetGpuReader(nullptr);  // its reader goes next
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // A step task that closes its stdin must not take the agent down with the next write.
  ::signal(SIGPIPE, SIG_IGN);
  log::SetProgram("droverd");
  agent::DaemonOptions options;
  if (!agent::ParseDaemonOptions(std::vector<std::string>(argv + 1, argv + argc), options))
    return 2;
  std::string path = ResolveConfPath(options.conf);
  ConfigLoad load = LoadClusterConfig(path);
  for (const Diagnostic& error : load.diagnostics.errors()) log::Error("{}", error.ToString());
  if (!load.ok()) return 1;
  const ClusterConfig& cluster = load.config;
  auto names = NodesServed(options, cluster, path);
  if (!names) {
    log::Error("{}", names.error());
    return 1;
  }
  // SlurmdLogFile (its %n the node, %h the host, as Slurm's), or journald; reopened on SIGUSR2
  // and SIGHUP. SlurmdPidFile when set.
  {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    std::string file = cluster.settings.agent_log_file;
    for (size_t at = 0; (at = file.find('%', at)) != std::string::npos && at + 1 < file.size();) {
      const std::string with = file[at + 1] == 'n'   ? names->front()
                               : file[at + 1] == 'h' ? std::string(host)
                                                     : file.substr(at, 2);
      file.replace(at, 2, with);
      at += with.size();
    }
    // SlurmdDebug, checked when read.
    log::SetLevel(log::ParseLevel(cluster.settings.agent_debug).value_or(log::Level::kInfo));
    if (Status logging = log::SetUpDaemonLog(file); !logging) {
      log::Error("{}", logging.error());
      return 1;
    }
    if (cluster.settings.agent_pid_file_set)
      if (Status written = WritePidFile(cluster.settings.agent_pid_file); !written) {
        log::Error("SlurmdPidFile: {}", written.error());
        return 1;
      }
  }
  // Programs the agent runs (HealthCheckProgram, and NVML's stand-in in tests) see the node;
  // an agent of many nodes gives each program its node.
  if (names->size() == 1) setenv("SLURMD_NODENAME", names->front().c_str(), 1);
  std::vector<std::unique_ptr<agent::Agent>> agents;
  // One launcher forks every node's supervisors: no exec of droverstepd per job.
  std::shared_ptr<agent::SupervisorLauncher> launcher;
  const bool quiet = names->size() > 16;  // a line per node for a few nodes, else a summary
  agent::CgroupHierarchy cgroups = agent::DetectCgroups(agent::AgentOptions().cgroup_root);
  for (const std::string& name : *names) {
    const int node = cluster.FindNode(name);
    const NodeConfig& config = cluster.nodes[node];
    auto host = HostFor(options, config);
    if (!host) {
      log::Error("{}", host.error());
      return 1;
    }
    agent::GpuDiscoveryOptions gpu_options;
    // An emulated node given --nvml asks that library (a test's stand-in) for its GPUs.
    gpu_options.emulated = options.emulate && options.nvml.empty();
    if (!options.nvml.empty()) gpu_options.nvml_library = options.nvml;
    gpu_options.core_cpus = host->core_cpus;
    agent::GpuDiscovery gpus = agent::DiscoverGpus(config, gpu_options);
    auto agent_options = AgentOptionsFor(options, cluster, path, name);
    if (!agent_options) {
      log::Error("{}", agent_options.error());
      return 1;
    }
    if (!launcher) launcher = std::make_shared<agent::SupervisorLauncher>(agent_options->stepd);
    agent_options->launcher = launcher;
    if (!quiet) PrintNodeSummary(name, *host, gpus, cgroups);
    agents.push_back(
        std::make_unique<agent::Agent>(cluster, node, *host, std::move(gpus), *agent_options));
  }
  if (quiet)
    log::Info("{} emulated nodes ({}); cgroups: {}", names->size(), CompressHostlist(*names),
              agent::CgroupModeName(cgroups.mode));
  PrintWarnings(cluster.settings.job_container.tmpfs);
  std::vector<agent::Agent*> served;
  for (const auto& agent : agents) served.push_back(agent.get());
  int code = Serve(options, cluster, cluster.nodes[cluster.FindNode(names->front())], served);
  std::error_code ignored;
  if (cluster.settings.agent_pid_file_set) fs::remove(cluster.settings.agent_pid_file, ignored);
  return code;
}
