// See relay.h.
#include "wire/relay.h"

#include <algorithm>

#include "common/arrival_count.h"

namespace drover::wire {

std::vector<std::pair<size_t, size_t>> SplitSpans(size_t count, size_t width) {
  std::vector<std::pair<size_t, size_t>> spans;
  if (count == 0) return spans;
  size_t parts = std::min(count, std::max<size_t>(width, 1));
  size_t base = count / parts, extra = count % parts, begin = 0;
  for (size_t i = 0; i < parts; ++i) {
    size_t size = base + (i < extra ? 1 : 0);
    spans.emplace_back(begin, begin + size);
    begin += size;
  }
  return spans;
}

std::vector<v1::RelayReply::Failure> RelaySpans(const std::vector<v1::RelayTarget>& targets,
                                                const v1::RelayRequest& message,
                                                const AgentStubFor& stub_for,
                                                std::chrono::milliseconds timeout) {
  struct Call {
    size_t begin, end;
    std::shared_ptr<v1::Agent::Stub> stub;
    v1::RelayRequest request;
    v1::RelayReply reply;
    grpc::ClientContext context;
    grpc::Status status;
  };
  std::vector<v1::RelayReply::Failure> failed;
  auto fail = [&failed](const v1::RelayTarget& target, const std::string& error) {
    v1::RelayReply::Failure failure;
    failure.set_node(target.node());
    failure.set_error(error);
    failed.push_back(std::move(failure));
  };
  std::vector<std::unique_ptr<Call>> calls;
  for (auto [begin, end] : SplitSpans(targets.size(), message.width())) {
    auto call = std::make_unique<Call>();
    call->begin = begin;
    call->end = end;
    call->stub = stub_for(targets[begin].address());
    if (!call->stub) {
      for (size_t i = begin; i < end; ++i)
        fail(targets[i], "no channel to " + targets[begin].address());
      continue;
    }
    // The message alone, then this span's targets (not a copy of every target per span).
    call->request.set_width(message.width());
    if (message.has_signal())
      *call->request.mutable_signal() = message.signal();
    else if (message.has_terminate())
      *call->request.mutable_terminate() = message.terminate();
    for (size_t i = begin; i < end; ++i) *call->request.add_targets() = targets[i];
    call->context.set_deadline(std::chrono::system_clock::now() + timeout);
    calls.push_back(std::move(call));
  }
  ArrivalCount replies;
  for (const auto& call : calls) {
    Call* raw = call.get();
    raw->stub->async()->Relay(&raw->context, &raw->request, &raw->reply,
                              [&replies, raw](grpc::Status status) {
                                raw->status = std::move(status);
                                replies.Arrive();
                              });
  }
  replies.WaitFor(calls.size());
  for (const auto& call : calls) {
    if (!call->status.ok()) {
      for (size_t i = call->begin; i < call->end; ++i)
        fail(targets[i], call->status.error_message());
      continue;
    }
    for (const v1::RelayReply::Failure& failure : call->reply.failed()) failed.push_back(failure);
  }
  return failed;
}

}  // namespace drover::wire
