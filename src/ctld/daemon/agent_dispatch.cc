// Agent calls with retries; see agent_dispatch.h.
#include "ctld/daemon/agent_dispatch.h"

#include <fmt/format.h>

#include "ctld/records.h"

namespace drover::ctld {

AgentDispatcher::AgentDispatcher(const ClusterConfig& cluster) : cluster_(cluster) {
  thread_ = std::thread([this] { Run(); });
}

AgentDispatcher::~AgentDispatcher() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void AgentDispatcher::Enqueue(
    int node, std::function<grpc::Status(v1::Agent::Stub&, grpc::ClientContext&)> send,
    int attempts) {
  std::lock_guard lock(mutex_);
  queue_.push_back(Call{node, std::move(send), attempts, std::chrono::steady_clock::now()});
  wake_.notify_one();
}

void AgentDispatcher::Launch(const drover::ctld::Launch& launch, std::string script) {
  auto request = std::make_shared<v1::LaunchRequest>();
  ToProto(*launch.job, cluster_, request->mutable_job());
  request->set_script(std::move(script));
  // The batch script runs on the first node; the agent there starts the job.
  int node = launch.job->allocation.nodes.front().node;
  Enqueue(
      node,
      [request](v1::Agent::Stub& stub, grpc::ClientContext& context) {
        v1::AgentReply reply;
        return stub.Launch(&context, *request, &reply);
      },
      30);
}

void AgentDispatcher::Signal(const SignalJob& signal) {
  for (int node : signal.nodes) {
    v1::SignalRequest request;
    request.set_job_id(signal.job_id);
    request.set_signal(signal.signal);
    request.set_batch_only(signal.batch_only);
    Enqueue(
        node,
        [request](v1::Agent::Stub& stub, grpc::ClientContext& context) {
          v1::AgentReply reply;
          return stub.Signal(&context, request, &reply);
        },
        3);
  }
}

void AgentDispatcher::Terminate(const TerminateJob& terminate) {
  for (int node : terminate.nodes) {
    v1::TerminateRequest request;
    request.set_job_id(terminate.job_id);
    request.set_grace_seconds(terminate.grace_seconds);
    Enqueue(
        node,
        [request](v1::Agent::Stub& stub, grpc::ClientContext& context) {
          v1::AgentReply reply;
          return stub.Terminate(&context, request, &reply);
        },
        30);
  }
}

v1::Agent::Stub& AgentDispatcher::StubFor(int node) {
  auto& stub = stubs_[node];
  if (!stub) {
    const NodeConfig& config = cluster_.nodes[node];
    int port = config.port ? config.port : cluster_.settings.agent_port;
    auto channel = grpc::CreateChannel(fmt::format("{}:{}", config.address, port),
                                       grpc::InsecureChannelCredentials());
    stub = v1::Agent::NewStub(channel);
  }
  return *stub;
}

void AgentDispatcher::Run() {
  while (true) {
    Call call;
    {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, std::chrono::milliseconds(500),
                     [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      if (queue_.empty() || queue_.front().not_before > std::chrono::steady_clock::now()) continue;
      call = std::move(queue_.front());
      queue_.pop_front();
    }
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    grpc::Status status = call.send(StubFor(call.node), context);
    if (!status.ok() && --call.attempts_left > 0) {
      call.not_before = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(call));
    }
  }
}

}  // namespace drover::ctld
