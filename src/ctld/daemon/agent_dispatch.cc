// Agent calls with retries; see agent_dispatch.h.
#include "ctld/daemon/agent_dispatch.h"

#include <algorithm>
#include <set>
#include <type_traits>

#include <fmt/format.h>

#include "auth/grpc_auth.h"
#include "auth/job_credential.h"
#include "common/agent_address.h"
#include "common/log.h"
#include "ctld/records.h"
#include "wire/relay.h"

namespace drover::ctld {

AgentDispatcher::AgentDispatcher(std::shared_ptr<const ClusterConfig> cluster,
                                 auth::Authenticator& authenticator, auth::Settings auth_settings)
    : authenticator_(authenticator),
      auth_settings_(std::move(auth_settings)),
      cluster_(cluster),
      mailer_(std::move(cluster)) {
  for (int i = 0; i < kWorkers; ++i) workers_.emplace_back([this] { Run(); });
}

AgentDispatcher::~AgentDispatcher() {
  {
    MutexLock lock(mutex_);
    stop_ = true;
  }
  wake_.NotifyAll();
  for (std::thread& worker : workers_) worker.join();
}

std::shared_ptr<const ClusterConfig> AgentDispatcher::cluster() {
  MutexLock lock(mutex_);
  return cluster_;
}

void AgentDispatcher::Reconfigured(std::shared_ptr<const ClusterConfig> cluster) {
  mailer_.Reconfigured(cluster);
  MutexLock lock(mutex_);
  cluster_ = std::move(cluster);
}

void AgentDispatcher::Enqueue(
    int node, uint64_t job_id,
    std::function<grpc::Status(v1::Agent::Stub&, grpc::ClientContext&)> send, int attempts,
    size_t front) {
  MutexLock lock(mutex_);
  Call call{{node}, job_id, std::move(send), attempts, std::chrono::steady_clock::now(), false};
  if (front != kAtBack)  // ahead of the calls queued since: they came after it
    queue_.insert(queue_.begin() + static_cast<std::ptrdiff_t>(std::min(front, queue_.size())),
                  std::move(call));
  else
    queue_.push_back(std::move(call));
  wake_.NotifyOne();
}

void AgentDispatcher::Launch(const drover::ctld::Launch& launch, std::string script,
                             std::vector<std::string> environment) {
  auto request = std::make_shared<v1::LaunchRequest>();
  ToProto(*launch.job, *cluster(), request->mutable_job());
  for (std::string& entry : environment)
    request->mutable_job()->mutable_spec()->add_environment(std::move(entry));
  request->set_script(std::move(script));
  // Every node of the allocation: the batch script runs on the first; the others (and every
  // node of an interactive job) hold the job's cgroup and GPUs for srun's steps.
  v1::JobCredential claims;
  claims.set_job_id(launch.job_id);
  claims.set_step_id(auth::kBatchStep);
  claims.set_uid(request->job().spec().uid());
  claims.set_gid(request->job().spec().gid());
  claims.set_restart_count(request->job().restart_count());
  std::shared_ptr<const ClusterConfig> config = cluster();
  for (const sched::NodeAllocation& part : launch.job->allocation.nodes)
    claims.add_nodes(config->nodes[part.node].name);
  for (const sched::NodeAllocation& part : launch.job->allocation.nodes)
    Enqueue(
        part.node, launch.job_id,
        [this, request, claims](v1::Agent::Stub& stub, grpc::ClientContext& context) {
          // Sealed for each attempt: a retry after the credential's lifetime still gets through.
          Result<std::string> sealed = auth::SealJobCredential(authenticator_, claims);
          if (!sealed) return grpc::Status(grpc::StatusCode::INTERNAL, sealed.error());
          v1::LaunchRequest attempt = *request;
          attempt.set_credential(std::move(*sealed));
          v1::AgentReply reply;
          return stub.Launch(&context, attempt, &reply);
        },
        30);
}

// One call per node, each with its own request message.
template <typename Request, typename Rpc>
void AgentDispatcher::EnqueueOnNodes(const std::vector<int>& nodes, uint64_t job_id,
                                     const Request& request, Rpc rpc, int attempts, bool front) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    Enqueue(
        nodes[i], job_id,
        [request, rpc](v1::Agent::Stub& stub, grpc::ClientContext& context) {
          v1::AgentReply reply;
          return (stub.*rpc)(&context, request, &reply);
        },
        attempts, front ? i : kAtBack);
  }
}

template <typename Request, typename Rpc>
void AgentDispatcher::RelayToNodes(const std::vector<int>& nodes, uint64_t job_id,
                                   const Request& request, Rpc rpc, int attempts) {
  if (nodes.size() < 2) return EnqueueOnNodes(nodes, job_id, request, rpc, attempts);
  std::shared_ptr<const ClusterConfig> config = cluster();
  const size_t width = static_cast<size_t>(std::max<int64_t>(config->settings.tree_width, 1));
  for (auto [begin, end] : wire::SplitSpans(nodes.size(), width)) {
    std::vector<int> span(nodes.begin() + static_cast<std::ptrdiff_t>(begin),
                          nodes.begin() + static_cast<std::ptrdiff_t>(end));
    v1::RelayRequest relay;
    relay.set_width(static_cast<uint32_t>(width));
    if constexpr (std::is_same_v<Request, v1::SignalRequest>)
      *relay.mutable_signal() = request;
    else
      *relay.mutable_terminate() = request;
    auto send = [this, span, relay, request, rpc, job_id, attempts](
                    v1::Agent::Stub& stub, grpc::ClientContext& context) mutable {
      std::shared_ptr<const ClusterConfig> now = cluster();
      relay.clear_targets();
      for (int node : span) {
        v1::RelayTarget* target = relay.add_targets();
        target->set_node(now->nodes[node].name);
        target->set_address(AddressOf(node));
      }
      v1::RelayReply reply;
      grpc::Status status = stub.Relay(&context, relay, &reply);
      // What the tree did not reach is called directly (its head may be the one that is down).
      std::vector<int> missed;
      if (!status.ok()) {
        missed = span;
      } else {
        for (const v1::RelayReply::Failure& failure : reply.failed()) {
          int node = now->FindNode(failure.node());
          if (node >= 0 && std::find(span.begin(), span.end(), node) != span.end() &&
              std::find(missed.begin(), missed.end(), node) == missed.end())
            missed.push_back(node);
        }
      }
      if (!missed.empty()) {
        if (log::FlagSet(log::kFlagAgent))
          log::Flagged(log::kFlagAgent, "Agent: relay for JobId={} missed {} of {} nodes: {}",
                       job_id, missed.size(), span.size(),
                       status.ok() ? reply.failed(0).error() : status.error_message());
        // At the front: before the calls about these nodes queued while the relay was out.
        EnqueueOnNodes(missed, job_id, request, rpc, attempts, true);
      }
      return grpc::Status::OK;
    };
    MutexLock lock(mutex_);
    // Retried as a direct call would be when its first node's agent cannot be reached at all.
    queue_.push_back(
        Call{span, job_id, std::move(send), attempts, std::chrono::steady_clock::now(), true});
    wake_.NotifyOne();
  }
}

void AgentDispatcher::Signal(const SignalJob& signal) {
  v1::SignalRequest request;
  request.set_job_id(signal.job_id);
  request.set_signal(signal.signal);
  request.set_batch_only(signal.scope == SignalScope::kBatch);
  request.set_full(signal.scope == SignalScope::kFull);
  for (uint32_t step : signal.step_ids) request.add_step_ids(step);
  RelayToNodes(signal.nodes, signal.job_id, request, &v1::Agent::Stub::Signal, 3);
}

void AgentDispatcher::Terminate(const TerminateJob& terminate) {
  v1::TerminateRequest request;
  request.set_job_id(terminate.job_id);
  request.set_grace_seconds(terminate.grace_seconds);
  RelayToNodes(terminate.nodes, terminate.job_id, request, &v1::Agent::Stub::Terminate, 30);
}

void AgentDispatcher::Reboot(const RebootNode& reboot) {
  v1::NodeRebootRequest request;
  request.set_program(reboot.program);
  EnqueueOnNodes({reboot.node}, 0, request, &v1::Agent::Stub::Reboot, 3);
}

void AgentDispatcher::Notify(int node, uint64_t job_id, const std::string& message) {
  v1::JobNotifyRequest request;
  request.set_job_id(job_id);
  request.set_message(message);
  EnqueueOnNodes({node}, job_id, request, &v1::Agent::Stub::Notify, 3);
}

void AgentDispatcher::SetAddress(int node, std::string address) {
  if (node < 0) return;
  MutexLock lock(mutex_);
  addresses_[node] = std::move(address);
}

std::string AgentDispatcher::AddressOf(int node) {
  {
    MutexLock lock(mutex_);
    if (auto it = addresses_.find(node); it != addresses_.end() && !it->second.empty())
      return it->second;
  }
  std::shared_ptr<const ClusterConfig> cluster = this->cluster();
  const NodeConfig& config = cluster->nodes[node];
  int port = config.port ? config.port : cluster->settings.agent_port;
  return fmt::format("{}:{}", config.address, port);
}

std::shared_ptr<v1::Agent::Stub> AgentDispatcher::StubFor(int node) {
  std::string address = AddressOf(node);
  std::shared_ptr<const ClusterConfig> cluster = this->cluster();
  MutexLock lock(stubs_mutex_);
  std::shared_ptr<v1::Agent::Stub>& stub = stubs_[address];
  if (!stub) {
    grpc::ChannelArguments args;  // an agent that restarts is back within seconds
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    auto channel = auth::NewChannel(address, *cluster, args, authenticator_);
    if (!channel) {
      log::Error("cannot reach the agent at {}: {}", address, channel.error());
      stubs_.erase(address);
      return nullptr;
    }
    stub = v1::Agent::NewStub(*channel);
  }
  // Agents restarted on new ports leave stubs behind: drop those no node's address names.
  if (stubs_.size() > cluster->nodes.size() + 64) {
    std::set<std::string> current;
    for (size_t i = 0; i < cluster->nodes.size(); ++i)
      current.insert(AddressOf(static_cast<int>(i)));
    std::shared_ptr<v1::Agent::Stub> kept = stubs_[address];
    std::erase_if(stubs_, [&](const auto& entry) { return !current.count(entry.first); });
    return kept;
  }
  return stub;
}

// The first call that is due: a retry waiting out its delay holds up no other call. Calls
// about one job on one node go one at a time, in order (a launch before its signal); other
// workers serve other jobs and nodes meanwhile.
std::deque<AgentDispatcher::Call>::iterator AgentDispatcher::FirstDue(
    std::chrono::steady_clock::time_point now) {
  std::set<std::pair<int, uint64_t>> passed;  // with an earlier call waiting: keep order
  return std::find_if(queue_.begin(), queue_.end(), [&](const Call& c) REQUIRES(mutex_) {
    bool ready = c.not_before <= now;
    for (int node : c.nodes)
      ready = ready && !busy_.count({node, c.job_id}) && !passed.count({node, c.job_id});
    if (!ready)
      for (int node : c.nodes) passed.insert({node, c.job_id});
    return ready;
  });
}

std::optional<AgentDispatcher::Call> AgentDispatcher::NextCall() {
  MutexLock lock(mutex_);
  auto due = queue_.end();
  while (!stop_) {
    auto now = std::chrono::steady_clock::now();
    due = FirstDue(now);
    if (due != queue_.end()) break;
    // Sleep until the earliest retry rather than spin on it.
    auto earliest = now + std::chrono::milliseconds(500);
    for (const Call& c : queue_)
      if (std::none_of(c.nodes.begin(), c.nodes.end(), [&](int node) REQUIRES(mutex_) {
            return busy_.count({node, c.job_id});
          }))
        earliest = std::min(earliest, c.not_before);
    wake_.WaitUntil(mutex_, earliest, [&]() REQUIRES(mutex_) {
      return stop_ || FirstDue(std::chrono::steady_clock::now()) != queue_.end();
    });
  }
  if (stop_) return std::nullopt;
  Call call = std::move(*due);
  queue_.erase(due);
  for (int node : call.nodes) busy_.insert({node, call.job_id});
  return call;
}

void AgentDispatcher::Run() {
  while (true) {
    std::optional<Call> next = NextCall();
    if (!next) return;
    Call& call = *next;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    // The node the call is for: its agent may serve many (a relay names its targets).
    const int node = call.nodes.front();
    if (!call.relay) context.AddMetadata(kAgentNodeMetadata, cluster()->nodes[node].name);
    if (call.relay)  // a tree of several levels has a call per level to make
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    std::shared_ptr<v1::Agent::Stub> stub = StubFor(node);
    grpc::Status status = stub ? call.send(*stub, context)
                               : grpc::Status(grpc::StatusCode::UNAVAILABLE, "no channel");
    if (log::FlagSet(log::kFlagAgent))  // the address and text only when they are logged
      log::Flagged(log::kFlagAgent, "Agent: {} for JobId={} to {}: {}{}",
                   call.relay ? "relay" : "call", call.job_id, AddressOf(node),
                   status.ok() ? "done" : status.error_message(),
                   status.ok() || call.attempts_left <= 1
                       ? ""
                       : fmt::format(" ({} more tries)", call.attempts_left - 1));
    MutexLock lock(mutex_);
    for (int busy_node : call.nodes) busy_.erase({busy_node, call.job_id});
    if (!status.ok() && --call.attempts_left > 0) {
      call.not_before = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      queue_.push_front(std::move(call));  // still before the node's later calls
    }
    wake_.NotifyAll();
  }
}

}  // namespace drover::ctld
