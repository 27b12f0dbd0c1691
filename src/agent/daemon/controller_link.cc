// See controller_link.h.
#include "agent/daemon/controller_link.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "auth/tls.h"
#include "common/arrival_count.h"
#include "common/log.h"
#include "common/text.h"
#include "wire/gpu_health_codec.h"
#include "wire/usage_codec.h"

namespace drover::agent {
namespace {

using Clock = std::chrono::steady_clock;

void Log(const std::string& message) {
  log::Info("{}", message);
}

}  // namespace

bool RunHealthProgram(const std::string& program, std::chrono::seconds timeout, std::string& output,
                      const std::string& node) {
  // The environment is made before the fork: the child of a threaded process only execs.
  std::vector<std::string> environment;
  for (char** entry = environ; *entry; ++entry)
    if (node.empty() || std::string_view(*entry).substr(0, 16) != "SLURMD_NODENAME=")
      environment.emplace_back(*entry);
  if (!node.empty()) environment.push_back("SLURMD_NODENAME=" + node);
  std::vector<char*> envp;
  for (std::string& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    output = "cannot create a pipe for the health check";
    return false;
  }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], 1);
    dup2(pipe_fds[1], 2);
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, 0);
    setsid();
    char* argv[] = {const_cast<char*>(program.c_str()), nullptr};
    execve(program.c_str(), argv, envp.data());
    static const char kFailed[] = "cannot run the health check program\n";
    (void)!write(2, kFailed, sizeof(kFailed) - 1);
    _exit(127);
  }
  close(pipe_fds[1]);
  output.clear();
  auto deadline = Clock::now() + timeout;
  char buffer[4096];
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    pollfd fd{pipe_fds[0], POLLIN, 0};
    if (poll(&fd, 1, static_cast<int>(left.count())) <= 0) break;
    ssize_t n = read(pipe_fds[0], buffer, sizeof(buffer));
    if (n <= 0) break;
    if (output.size() < 65536) output.append(buffer, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  // The output may end before the program does: wait for it within the same deadline.
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() >= deadline) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      output += (output.empty() ? "" : "; ") + std::string("health check timed out");
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  output = std::string(Trim(output));
  if (output.size() > 200) output = output.substr(0, 200);
  bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!ok && output.empty())
    output = WIFEXITED(status)
                 ? "health check exited " + std::to_string(WEXITSTATUS(status))
                 : "health check killed by signal " + std::to_string(WTERMSIG(status));
  return ok;
}

ControllerLink::ControllerLink(std::vector<Agent*> agents, LinkOptions options)
    : options_(std::move(options)) {
  stub_ = v1::Controller::NewStub(options_.channel);
  nodes_.resize(agents.size());
  for (size_t i = 0; i < agents.size(); ++i) {
    Node& node = nodes_[i];
    node.agent = agents[i];
    if (options_.nvml_library.empty()) continue;
    auto probe = GpuHealthProbe::Open(options_.nvml_library, node.agent->gpus().gpus);
    if (probe)
      node.gpu_probe = std::move(*probe);
    else
      Log("node " + node.agent->node_name() +
          ": the GPU health probes cannot run: " + probe.error());
  }
}

ControllerLink::~ControllerLink() {
  Stop();
}

void ControllerLink::Start() {
  thread_ = std::thread([this] { Run(); });
}

void ControllerLink::Stop() {
  {
    MutexLock lock(mutex_);
    stop_ = true;
  }
  wake_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

void ControllerLink::Wake() {
  {
    MutexLock lock(mutex_);
    woken_ = true;
  }
  wake_.NotifyAll();
}

void ControllerLink::Reboot(size_t node, std::string program, std::chrono::seconds timeout) {
  {
    MutexLock lock(mutex_);
    reboots_.push_back({node, std::move(program), timeout});
    woken_ = true;
  }
  wake_.NotifyAll();
}

void ControllerLink::RunReboots() {
  std::vector<RebootOrder> orders;
  {
    MutexLock lock(mutex_);
    orders.swap(reboots_);
  }
  for (RebootOrder& order : orders) {
    if (order.node >= nodes_.size()) continue;
    Node& node = nodes_[order.node];
    const std::string name = node.agent->node_name();
    Log("node " + name + " rebooting: running RebootProgram " + order.program);
    std::string output;
    if (!RunHealthProgram(order.program, order.timeout, output, name))
      Log("node " + name + ": RebootProgram " + order.program + " failed: " + output);
    // Back from the reboot: register as a node that has booted (the controller waits for it).
    node.registered = false;
  }
}

bool ControllerLink::AllRegistered() const {
  return std::all_of(nodes_.begin(), nodes_.end(),
                     [](const Node& node) { return node.registered; });
}

v1::RegisterRequest ControllerLink::RegistrationOf(const Node& node) const {
  const Agent& agent = *node.agent;
  v1::RegisterRequest request;
  request.set_node(agent.node_name());
  request.set_address(options_.address);
  const HostInfo& host = agent.host();
  request.set_cpus(static_cast<uint32_t>(host.cpus));
  request.set_sockets(static_cast<uint32_t>(host.sockets));
  request.set_cores_per_socket(static_cast<uint32_t>(host.cores_per_socket));
  request.set_threads_per_core(static_cast<uint32_t>(host.threads_per_core));
  request.set_memory_mb(host.memory_mb);
  request.set_gpus(static_cast<uint32_t>(agent.gpus().gpus.size()));
  request.set_gpu_source(GpuSourceName(agent.gpus().source));
  for (const Gpu& gpu : agent.gpus().gpus) {
    v1::GpuIdentity* identity = request.add_gpu_list();
    identity->set_index(gpu.index);
    identity->set_type(gpu.type);
    identity->set_name(gpu.name);
    identity->set_uuid(gpu.uuid);
    identity->set_memory_mb(gpu.memory_mb);
    identity->set_pci_bus_id(gpu.pci_bus_id);
    if (gpu.minor >= 0) identity->set_minor(gpu.minor);
    for (int core : gpu.cores) identity->add_cores(core);
    for (int link : gpu.links) identity->add_links(link);
  }
  JobsHere jobs = node.agent->Jobs();
  for (uint64_t id : jobs.running) request.add_running_jobs(id);
  for (uint64_t id : jobs.ended) request.add_ended_jobs(id);
  return request;
}

// The nodes not registered, all at once (at most kWindow calls in flight): a registration
// storm of one process is one connection's worth of calls.
bool ControllerLink::Register() {
  constexpr size_t kWindow = 256;
  struct Call {
    size_t node;
    v1::RegisterRequest request;
    v1::RegisterReply reply;
    grpc::ClientContext context;
    grpc::Status status;
  };
  std::vector<std::unique_ptr<Call>> calls;
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (!nodes_[i].registered) {
      auto call = std::make_unique<Call>();
      call->node = i;
      call->request = RegistrationOf(nodes_[i]);
      calls.push_back(std::move(call));
    }
  if (calls.empty()) return true;
  ArrivalCount replies;
  for (size_t sent = 0; sent < calls.size(); ++sent) {
    if (sent >= kWindow) replies.WaitFor(sent - kWindow + 1);
    Call* raw = calls[sent].get();
    raw->context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    stub_->async()->Register(&raw->context, &raw->request, &raw->reply,
                             [&replies, raw](grpc::Status status) {
                               raw->status = std::move(status);
                               replies.Arrive();
                             });
  }
  replies.WaitFor(calls.size());
  size_t done = 0, jobs = 0, failed = 0;
  std::string first_error;
  const bool one = nodes_.size() == 1;
  size_t elsewhere = 0;  // refused as a controller not in charge would: down, or a standby
  for (const auto& call : calls) {
    Node& node = nodes_[call->node];
    if (!call->status.ok()) {
      ++failed;
      grpc::StatusCode code = call->status.error_code();
      elsewhere += code == grpc::StatusCode::UNAVAILABLE ||
                   code == grpc::StatusCode::UNIMPLEMENTED ||
                   code == grpc::StatusCode::DEADLINE_EXCEEDED;
      if (first_error.empty() && code != grpc::StatusCode::UNAVAILABLE &&
          code != grpc::StatusCode::UNIMPLEMENTED)
        first_error = node.agent->node_name() + ": " + call->status.error_message();
      continue;
    }
    node.agent->NoteController();
    node.registered = true;
    ++done;
    jobs += static_cast<size_t>(call->request.running_jobs_size());
  }
  if (done > 0)
    Log("registered " + (one ? std::string() : std::to_string(done) + " nodes ") +
        "with the controller at " + options_.controller + " (" + std::to_string(jobs) +
        " running jobs)");
  if (!first_error.empty())
    Log("cannot register " + std::to_string(failed) + (one ? " node" : " nodes") +
        " with the controller at " + options_.controller + ": " + first_error);
  if (done == 0 && failed > 0 && elsewhere == failed) NextController();
  return failed == 0;
}

void ControllerLink::NextController() {
  if (options_.controllers.size() < 2 || !options_.connect) return;
  controller_index_ = (controller_index_ + 1) % options_.controllers.size();
  std::shared_ptr<grpc::Channel> channel =
      options_.connect(options_.controllers[controller_index_]);
  if (!channel) return;
  options_.controller = options_.controllers[controller_index_];
  options_.channel = std::move(channel);
  stub_ = v1::Controller::NewStub(options_.channel);
}

// Every registered node's heartbeat in one call (a few calls for a very large process).
void ControllerLink::Heartbeat() {
  constexpr size_t kPerCall = 10000;
  std::vector<size_t> members;
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].registered) members.push_back(i);
  for (size_t from = 0; from < members.size(); from += kPerCall) {
    size_t to = std::min(members.size(), from + kPerCall);
    v1::HeartbeatBatch batch;
    std::map<std::string, size_t> by_name;
    for (size_t k = from; k < to; ++k) {
      const Node& node = nodes_[members[k]];
      v1::HeartbeatRequest* request = batch.add_nodes();
      request->set_node(node.agent->node_name());
      request->set_healthy(node.healthy);
      request->set_health_output(node.health_output);
      request->set_health_latched(node.health_latched);
      for (const GpuReading& reading : node.gpu_readings)
        wire::ToProto(reading, request->add_gpus());
      by_name[node.agent->node_name()] = members[k];
    }
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::HeartbeatBatchReply reply;
    grpc::Status status = stub_->Heartbeats(&context, batch, &reply);
    for (size_t k = from; k < to; ++k) {
      Node& node = nodes_[members[k]];
      if (status.ok()) {
        node.agent->NoteController();
        node.health_delivered = true;
      } else {
        node.registered = false;  // the controller may have restarted: register again
      }
    }
    for (const std::string& name : reply.reregister())
      if (auto it = by_name.find(name); it != by_name.end()) nodes_[it->second].registered = false;
  }
}

namespace {
void FillEnded(const Agent& agent, const EndedJob& ended, v1::JobEndedRequest& request) {
  request.set_job_id(ended.job_id);
  request.set_node(agent.node_name());
  request.set_exit_code(ended.status.exit_code);
  request.set_signal(ended.status.signal);
  request.set_out_of_memory(ended.status.out_of_memory);
  request.set_prolog_failed(ended.status.prolog_failed);
  request.set_epilog_failed(ended.status.epilog_failed);
  request.set_launch_failed(ended.status.launch_failed);
  request.set_reason(ended.status.reason);
  request.set_restart_count(ended.restart_count);
  request.set_cpu_seconds(ended.status.cpu_seconds);
  request.set_max_rss_mib(ended.status.max_rss_mib);
  if (ended.status.start_time != 0 && !ended.status.launch_failed)  // the batch shell ran
    wire::ToProto(OneTask(agent.node_name(), 0, ended.status.batch_user_cpu,
                          ended.status.batch_system_cpu, ended.status.batch_rss_kib),
                  request.mutable_batch_usage());
}
}  // namespace

void ControllerLink::ReportEnded(bool full) {
  // Every end of every node at once (up to kMost a round), in one call, so that they share the
  // controller's commit; each is kept until the reply says it is committed.
  constexpr int kMost = 2000;
  v1::JobEndedBatch batch;
  std::vector<Agent*> from;
  for (Node& node : nodes_) {
    // A full batch looks at no more nodes: the rest keep their news for the next round.
    if (!node.registered || batch.ends_size() >= kMost) continue;
    for (const EndedJob& ended : node.agent->EndedJobs(full)) {
      if (batch.ends_size() >= kMost) break;  // the controller takes no more in one call
      FillEnded(*node.agent, ended, *batch.add_ends());
      from.push_back(node.agent);
    }
  }
  if (batch.ends().empty()) return;
  if (!one_end_a_call_) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::JobEndedBatchReply reply;
    grpc::Status status = stub_->JobsEnded(&context, batch, &reply);
    if (status.error_code() != grpc::StatusCode::UNIMPLEMENTED) {
      // Kept, and sent again on the next round. A controller out of reach (dead, or a standby
      // now) may have been replaced: the nodes register again, with the next one if need be.
      if (status.error_code() == grpc::StatusCode::UNAVAILABLE)
        for (Node& node : nodes_) node.registered = false;
      if (!status.ok()) return;
      for (int i = 0; i < batch.ends_size() && i < reply.errors_size(); ++i)
        if (reply.errors(i).empty())
          from[static_cast<size_t>(i)]->Reported(batch.ends(i).job_id(),
                                                 batch.ends(i).restart_count());
      return;
    }
    Log("the controller is of an earlier version (no JobsEnded): job ends go one a call until "
        "this droverd restarts; upgrade the controller before its agents");
    one_end_a_call_ = true;
  }
  // A controller of an earlier version: a call each, all in flight at once.
  struct Call {
    v1::JobEndedReply reply;
    grpc::ClientContext context;
    grpc::Status status;
  };
  std::vector<Call> calls(static_cast<size_t>(batch.ends_size()));
  ArrivalCount replies;
  for (size_t i = 0; i < calls.size(); ++i) {
    Call* raw = &calls[i];
    raw->context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    stub_->async()->JobEnded(&raw->context, &batch.ends(static_cast<int>(i)), &raw->reply,
                             [&replies, raw](grpc::Status status) {
                               raw->status = std::move(status);
                               replies.Arrive();
                             });
  }
  replies.WaitFor(calls.size());
  for (size_t i = 0; i < calls.size(); ++i)
    if (calls[i].status.ok())
      from[i]->Reported(batch.ends(static_cast<int>(i)).job_id(),
                        batch.ends(static_cast<int>(i)).restart_count());
}

void ControllerLink::RunHealthCheck(Node& node) {
  std::string output;
  bool ok = options_.health_program.empty() ||
            RunHealthProgram(options_.health_program, std::chrono::seconds(60), output,
                             node.agent->node_name());
  // The built-in GPU probes: their problems come first in the reason, since they name the GPU.
  bool event = false;
  std::string gpu_problem;
  if (node.gpu_probe) {
    node.gpu_readings = node.gpu_probe->Probe();
    gpu_problem = GpuHealthVerdict(node.gpu_readings, event);
    node.agent->SetGpuHealth({node.gpu_readings.begin(), node.gpu_readings.end()});
  }
  // A latched problem is reported until the controller has heard it, even once it cleared.
  if (ok && gpu_problem.empty() && !node.healthy && node.health_latched && !node.health_delivered)
    return;
  if (!gpu_problem.empty()) {
    output = ok ? gpu_problem : gpu_problem + "; " + output;
    if (output.size() > 200) output = output.substr(0, 200);
    ok = false;
  }
  const std::string prefix = nodes_.size() == 1 ? "" : "node " + node.agent->node_name() + ": ";
  if (ok != node.healthy || (!ok && output != node.health_output)) {
    Log(prefix + (ok ? "health check passes again" : "health check failed: " + output));
    node.health_delivered = false;
  }
  node.healthy = ok;
  node.health_output = ok ? "" : output;
  // A GPU's trouble holds the node drained once cleared unless the site resumes such nodes; an
  // XID (an event that leaves no condition behind) always does.
  node.health_latched = !gpu_problem.empty() && (event || !options_.gpu_health_resume);
}

void ControllerLink::Run() {
  auto next_heartbeat = Clock::now();
  auto next_health = Clock::now();
  auto next_register = Clock::now();
  bool health = !options_.health_program.empty() ||
                std::any_of(nodes_.begin(), nodes_.end(),
                            [](const Node& node) { return node.gpu_probe != nullptr; });
  // Ended jobs are looked for when woken (a status written, a supervisor's end, a launch), on
  // the timer only while some node needs it (Agent::NeedsTimedLook), and every kSafetyLook
  // besides: the net for an event lost.
  constexpr auto kSafetyLook = std::chrono::seconds(30);
  auto next_look = Clock::now();
  while (true) {
    bool look = false;
    {
      MutexLock lock(mutex_);
      wake_.WaitFor(mutex_, options_.poll, [&]() REQUIRES(mutex_) { return stop_ || woken_; });
      if (stop_) return;
      look = woken_;
      woken_ = false;
    }
    RunReboots();
    auto now = Clock::now();
    if (health && now >= next_health) {
      // HealthCheckProgram runs for each node, with SLURMD_NODENAME set to it.
      for (Node& node : nodes_) RunHealthCheck(node);
      next_health = now + (options_.health_interval.count() > 0 ? options_.health_interval
                                                                : std::chrono::hours(24 * 365));
      next_heartbeat = now;  // tell the controller at once
    }
    if (!AllRegistered() && now >= next_register) {
      look = true;  // ends of the nodes that register now are reported at once
      if (!Register()) next_register = now + std::chrono::milliseconds(500);  // still starting
    }
    if (now >= next_heartbeat) {
      Heartbeat();
      next_heartbeat = now + options_.heartbeat;
    }
    const bool net = now >= next_look;  // checks every supervisor, whatever was told
    look = look || net || std::any_of(nodes_.begin(), nodes_.end(), [](const Node& node) {
             return node.agent->NeedsTimedLook();
           });
    if (look) {
      ReportEnded(net);
      if (net) next_look = now + kSafetyLook;
    }
  }
}

}  // namespace drover::agent
