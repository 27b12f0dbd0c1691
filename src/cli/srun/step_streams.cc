// srun's per-node streams; see step_streams.h.
#include "cli/srun/step_streams.h"
#include "common/agent_address.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "auth/grpc_auth.h"
#include "wire/usage_codec.h"

namespace drover::cli {
namespace {

std::string SignalWords(int signal) {
  switch (signal) {
    case SIGKILL:
      return "Killed";
    case SIGTERM:
      return "Terminated";
    case SIGSEGV:
      return "Segmentation fault";
    case SIGABRT:
      return "Aborted";
    case SIGINT:
      return "Interrupt";
    default:
      return fmt::format("Signal {}", signal);
  }
}

}  // namespace

bool NodeStream::Send(const v1::StepInput& input) {
  MutexLock lock(write_mutex);
  return stream && !closed && stream->Write(input);
}

void NodeStream::Close() {
  MutexLock lock(write_mutex);
  if (!closed && stream) stream->WritesDone();
  closed = true;
}

bool StepStreams::Start(const v1::CreateStepReply& step, const v1::StepLaunch& launch,
                        const Connection& connection, int timeout_seconds) {
  for (int i = 0; i < step.nodes_size(); ++i) {
    auto node = std::make_unique<NodeStream>();
    node->node = step.nodes(i);
    node->index = static_cast<uint32_t>(i);
    grpc::ChannelArguments channel_args;
    channel_args.SetMaxReceiveMessageSize(64 << 20);
    auto channel = auth::NewChannel(node->node.address(), connection.cluster, channel_args,
                                    *connection.authenticator);
    if (!channel) {
      Say(fmt::format("srun: error: {}\n", channel.error()));
      return false;
    }
    if (!(*channel)->WaitForConnected(std::chrono::system_clock::now() +
                                      std::chrono::seconds(timeout_seconds))) {
      // Slurm's words for a launch message its node never answered.
      Say(
          fmt::format("srun: error: Task launch for {} failed on node {}: Socket timed out on "
                      "send/recv operation\n",
                      step_name_, node->node.name()));
      return false;
    }
    node->stub = v1::Agent::NewStub(*channel);
    node->context.AddMetadata(kAgentNodeMetadata, node->node.name());  // its agent may serve many
    if (compress_) node->context.set_compression_algorithm(GRPC_COMPRESS_DEFLATE);
    node->stream = node->stub->RunStep(&node->context);
    v1::StepInput first;
    *first.mutable_launch() = launch;
    first.mutable_launch()->set_node_index(static_cast<uint32_t>(i));
    first.mutable_launch()->clear_tasks();
    for (uint32_t task : node->node.tasks()) {
      first.mutable_launch()->add_tasks(task);
      if (task == 0) task0_node_ = static_cast<uint32_t>(i);
    }
    if (!node->stream->Write(first)) {
      std::fprintf(stderr, "srun: error: %s: cannot reach its agent at %s\n",
                   node->node.name().c_str(), node->node.address().c_str());
    }
    nodes_.push_back(std::move(node));
  }
  return true;
}

void StepStreams::StartReaders() {
  for (auto& node : nodes_) readers_.emplace_back([this, node = node.get()] { Read(*node); });
}

void StepStreams::SignalAll(int signal) {
  v1::StepInput message;
  message.set_signal(signal);
  for (auto& node : nodes_) node->Send(message);
}

NodeStream* StepStreams::Task0Node() const {
  return nodes_.empty() ? nullptr : nodes_[task0_node_].get();
}

void TaskOutput::Say(std::string_view text) {
  MutexLock lock(mutex_);
  std::fwrite(text.data(), 1, text.size(), stderr);
}

void StepStreams::Join() {
  for (std::thread& reader : readers_)
    if (reader.joinable()) reader.join();
}

void TaskOutput::FlushPartialLines() {
  MutexLock lock(mutex_);
  for (const auto& [key, text] : partial_)
    if (!text.empty()) {
      std::string line = fmt::format("{}: {}\n", key.first, text);
      (void)!::write(key.second ? 2 : 1, line.data(), line.size());
    }
}

StepOutcome StepStreams::Outcome() const {
  MutexLock lock(usage_mutex_);
  if (bad_exit_seen_) return {bad_exit_code_.load(), bad_exit_signal_.load(), true, usage_};
  return {worst_exit_.load(), first_signal_.load(), false, usage_};
}

void TaskOutput::Write(uint32_t task, bool is_stderr, const std::string& data) {
  MutexLock lock(mutex_);
  int fd = is_stderr ? 2 : 1;
  if (!label_) {
    (void)!::write(fd, data.data(), data.size());
    return;
  }
  std::string& pending = partial_[{task, is_stderr}];
  pending += data;
  size_t newline;
  std::string out;
  while ((newline = pending.find('\n')) != std::string::npos) {
    out += fmt::format("{}: {}", task, pending.substr(0, newline + 1));
    pending.erase(0, newline + 1);
  }
  if (!out.empty()) (void)!::write(fd, out.data(), out.size());
}

void StepStreams::RaiseWorstExit(int code) {
  int previous = worst_exit_.load();
  while (code > previous && !worst_exit_.compare_exchange_weak(previous, code)) {
  }
}

void StepStreams::TaskEnded(const NodeStream& node, const v1::StepOutput::TaskEnd& end) {
  ++tasks_ended_;
  RaiseWorstExit(end.signal() != 0 ? 128 + end.signal() : end.exit_code());
  if (end.signal() != 0) {
    int none = 0;
    first_signal_.compare_exchange_strong(none, end.signal());
    Say(fmt::format("srun: error: {}: task {}: {}\n", node.node.name(), end.task(),
                    SignalWords(end.signal())));
  } else if (end.exit_code() != 0) {
    Say(fmt::format("srun: error: {}: task {}: Exited with exit code {}\n", node.node.name(),
                    end.task(), end.exit_code()));
  }
  if ((end.signal() != 0 || end.exit_code() != 0) && kill_on_bad_exit_ &&
      !bad_exit_seen_.exchange(true)) {
    // srun exits with the task that ended the step, not with the kills that followed.
    bad_exit_code_ = end.signal() != 0 ? 128 + end.signal() : end.exit_code();
    bad_exit_signal_ = end.signal();
    Say(fmt::format("srun: Terminating {}\n", step_name_));
    SignalAll(SIGKILL);
  }
}

void StepStreams::Collect(const NodeStream& node, const v1::StepCollective& part) {
  v1::StepInput all;
  {
    MutexLock lock(collective_mutex_);
    // A node sends one part per collective, in order; anything else is not a node's part.
    if (part.parts_size() != 1 || collective_parts_.size() > 64) return;
    std::vector<std::string>& parts = collective_parts_[part.sequence()];
    parts.resize(nodes_.size());
    parts[node.index] = part.parts(0);
    if (++collective_count_[part.sequence()] < nodes_.size()) return;
    all.mutable_collective()->set_sequence(part.sequence());
    for (std::string& one : parts) all.mutable_collective()->add_parts(std::move(one));
    collective_parts_.erase(part.sequence());
    collective_count_.erase(part.sequence());
  }
  for (auto& each : nodes_) each->Send(all);
}

void StepStreams::Read(NodeStream& node) {
  v1::StepOutput output;
  size_t expected = static_cast<size_t>(node.node.tasks_size()), ended = 0;
  while (node.stream->Read(&output)) {
    if (!output.data().empty()) output_.Write(output.task(), output.stderr(), output.data());
    if (output.has_collective()) Collect(node, output.collective());
    if (output.abort() && !bad_exit_seen_.exchange(true)) {
      bad_exit_code_ = 1;
      Say(fmt::format("srun: error: {}: {}\nsrun: Terminating {}\n", node.node.name(),
                      output.error(), step_name_));
      RaiseWorstExit(1);
      SignalAll(SIGKILL);
    }
    for (const auto& end : output.ended()) {
      ++ended;
      TaskEnded(node, end);
      MutexLock lock(usage_mutex_);
      Merge(usage_, wire::FromProto(end.usage()));
    }
    if (ended >= expected && !output.started() && output.ended_size() > 0) node.Close();
  }
  grpc::Status status = node.stream->Finish();
  if (!status.ok() && ended < expected) {
    Say(fmt::format("srun: error: {}: tasks could not run: {}\n", node.node.name(),
                    status.error_message()));
    RaiseWorstExit(1);
    tasks_ended_ += static_cast<uint32_t>(expected - ended);
  }
}

}  // namespace drover::cli
