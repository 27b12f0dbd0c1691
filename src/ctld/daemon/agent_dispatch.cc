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
  auto parts = std::make_shared<LaunchParts>();
  v1::LaunchRequest& request = parts->request;
  ToProto(*launch.job, *cluster(), request.mutable_job());
  for (std::string& entry : environment)
    request.mutable_job()->mutable_spec()->add_environment(std::move(entry));
  request.set_script(std::move(script));
  request.set_metrics_account(launch.metrics_account);
  // Every node of the allocation: the batch script runs on the first; the others (and every
  // node of an interactive job) hold the job's cgroup and GPUs for srun's steps.
  v1::JobCredential& claims = parts->claims;
  claims.set_job_id(launch.job_id);
  claims.set_step_id(auth::kBatchStep);
  claims.set_uid(request.job().spec().uid());
  claims.set_gid(request.job().spec().gid());
  claims.set_restart_count(request.job().restart_count());
  std::shared_ptr<const ClusterConfig> config = cluster();
  for (const sched::NodeAllocation& part : launch.job->allocation.nodes)
    claims.add_nodes(config->nodes[part.node].name);
  std::shared_ptr<const LaunchParts> shared = std::move(parts);
  auto send = [this, shared](v1::Agent::Stub& stub, grpc::ClientContext& context) {
    // Sealed for each attempt: a retry after the credential's lifetime still gets through.
    Result<std::string> sealed = auth::SealJobCredential(authenticator_, shared->claims);
    if (!sealed) return grpc::Status(grpc::StatusCode::INTERNAL, sealed.error());
    v1::LaunchRequest attempt = shared->request;
    attempt.set_credential(std::move(*sealed));
    v1::AgentReply reply;
    return stub.Launch(&context, attempt, &reply);
  };
  MutexLock lock(mutex_);
  for (const sched::NodeAllocation& part : launch.job->allocation.nodes)
    queue_.push_back(Call{
        {part.node}, launch.job_id, send, 30, std::chrono::steady_clock::now(), false, shared});
  wake_.NotifyAll();
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

AgentDispatcher::Load AgentDispatcher::CurrentLoad() {
  MutexLock lock(mutex_);
  return Load{queue_.size(), busy_.size(), workers_.size()};
}

void AgentDispatcher::SetAddress(int node, std::string address) {
  if (node < 0) return;
  MutexLock lock(mutex_);
  addresses_[node] = std::move(address);
}

std::string AgentDispatcher::AddressOf(int node) {
  MutexLock lock(mutex_);
  return AddressLocked(node);
}

std::string AgentDispatcher::AddressLocked(int node) {
  if (auto it = addresses_.find(node); it != addresses_.end() && !it->second.empty())
    return it->second;
  const NodeConfig& config = cluster_->nodes[node];
  int port = config.port ? config.port : cluster_->settings.agent_port;
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

std::vector<AgentDispatcher::Call> AgentDispatcher::NextCalls() {
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
  std::vector<Call> calls;
  if (stop_) return calls;
  calls.push_back(std::move(*due));
  queue_.erase(due);
  Call& first = calls.front();
  for (int node : first.nodes) busy_.insert({node, first.job_id});
  if (first.launch) {
    std::string address = AddressLocked(first.nodes.front());
    if (!unbatched_.count(address))
      GatherLaunches(address, std::chrono::steady_clock::now(), calls);
  }
  return calls;
}

void AgentDispatcher::GatherLaunches(const std::string& address,
                                     std::chrono::steady_clock::time_point now,
                                     std::vector<Call>& calls) {
  constexpr size_t kMostInCall = 256;         // the agent takes up to 1,024
  constexpr size_t kMostLooked = 4096;        // a long queue is not walked whole for each call
  std::set<std::pair<int, uint64_t>> passed;  // a call left behind: that pair's later ones wait
  std::map<int, bool> same;                   // node -> served at `address`
  size_t looked = 0;
  for (auto it = queue_.begin();
       it != queue_.end() && calls.size() < kMostInCall && looked < kMostLooked; ++looked) {
    const Call& c = *it;
    bool take = c.launch && c.nodes.size() == 1 && c.not_before <= now;
    for (int node : c.nodes)
      take = take && !busy_.count({node, c.job_id}) && !passed.count({node, c.job_id});
    if (take) {
      auto [at, fresh] = same.try_emplace(c.nodes.front(), false);
      if (fresh) at->second = AddressLocked(c.nodes.front()) == address;
      take = at->second;
    }
    if (!take) {
      for (int node : c.nodes) passed.insert({node, c.job_id});
      ++it;
      continue;
    }
    busy_.insert({c.nodes.front(), c.job_id});
    calls.push_back(std::move(*it));
    it = queue_.erase(it);
  }
}

void AgentDispatcher::Done(Call& call, bool ok) {
  for (int busy_node : call.nodes) busy_.erase({busy_node, call.job_id});
  if (!ok && --call.attempts_left > 0) {
    call.not_before = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    queue_.push_front(std::move(call));  // still before the node's later calls
  }
}

void AgentDispatcher::SendLaunches(std::vector<Call>& calls) {
  std::shared_ptr<const ClusterConfig> config = cluster();
  const int node = calls.front().nodes.front();
  v1::LaunchBatch batch;
  std::vector<std::string> errors(calls.size());
  std::vector<size_t> sent;  // index in `calls` of each launch in the batch
  for (size_t i = 0; i < calls.size(); ++i) {
    Result<std::string> sealed = auth::SealJobCredential(authenticator_, calls[i].launch->claims);
    if (!sealed) {
      errors[i] = sealed.error();
      continue;
    }
    v1::NodeLaunch* launch = batch.add_launches();
    launch->set_node(config->nodes[calls[i].nodes.front()].name);
    *launch->mutable_launch() = calls[i].launch->request;
    launch->mutable_launch()->set_credential(std::move(*sealed));
    sent.push_back(i);
  }
  grpc::ClientContext context;
  // The agent starts them one after another.
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5) +
                       std::chrono::milliseconds(50) * static_cast<int>(sent.size()));
  std::shared_ptr<v1::Agent::Stub> stub = StubFor(node);
  v1::LaunchBatchReply reply;
  grpc::Status status = !stub          ? grpc::Status(grpc::StatusCode::UNAVAILABLE, "no channel")
                        : sent.empty() ? grpc::Status::OK
                                       : stub->LaunchMany(&context, batch, &reply);
  const bool unknown = status.error_code() == grpc::StatusCode::UNIMPLEMENTED;
  for (size_t k = 0; k < sent.size(); ++k)
    if (!status.ok())  // never empty: an empty error is a launch that started
      errors[sent[k]] = status.error_message().empty()
                            ? fmt::format("gRPC status {}", static_cast<int>(status.error_code()))
                            : status.error_message();
    else if (k >= static_cast<size_t>(reply.errors_size()))
      errors[sent[k]] = "the agent's reply left it out";
    else
      errors[sent[k]] = reply.errors(static_cast<int>(k));
  if (log::FlagSet(log::kFlagAgent)) {
    size_t failed = std::count_if(errors.begin(), errors.end(),
                                  [](const std::string& e) { return !e.empty(); });
    log::Flagged(log::kFlagAgent, "Agent: {} launches (JobId={} first) to {}: {} done{}",
                 calls.size(), calls.front().job_id, AddressOf(node), calls.size() - failed,
                 failed
                     ? fmt::format(", {} not ({})", failed,
                                   *std::find_if(errors.begin(), errors.end(),
                                                 [](const std::string& e) { return !e.empty(); }))
                     : "");
  }
  MutexLock lock(mutex_);
  if (unknown) {  // an agent of an earlier version: these and its next launches go one a call
    const std::string address = AddressLocked(node);
    if (unbatched_.insert(address).second)
      log::Info(
          "the agent at {} does not take several launches in a call (an earlier version): "
          "one launch a call to it",
          address);
  }
  // Back in their order: each pushed to the front, the last first.
  for (size_t i = calls.size(); i-- > 0;) {
    if (unknown && !sent.empty()) ++calls[i].attempts_left;  // not a try: sent again at once
    Done(calls[i], errors[i].empty());
    if (unknown && !errors[i].empty()) queue_.front().not_before = std::chrono::steady_clock::now();
  }
  wake_.NotifyAll();
}

void AgentDispatcher::Run() {
  while (true) {
    std::vector<Call> calls = NextCalls();
    if (calls.empty()) return;
    if (calls.size() > 1) {
      SendLaunches(calls);
      continue;
    }
    Call& call = calls.front();
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
    Done(call, status.ok());
    wake_.NotifyAll();
  }
}

}  // namespace drover::ctld
