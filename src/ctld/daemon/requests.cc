// See requests.h.
#include "ctld/daemon/requests.h"

#include <charconv>
#include <optional>
#include <string_view>
#include <utility>

namespace drover::ctld {

grpc::Status Invalid(const std::string& message) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message);
}

Result<JobFilter> FilterOf(const v1::JobFilter& filter) {
  JobFilter out;
  out.job_ids.assign(filter.job_ids().begin(), filter.job_ids().end());
  for (const auto& task : filter.array_tasks())
    out.array_tasks.emplace_back(task.array_job_id(), task.task_id());
  out.user = filter.user();
  out.name = filter.name();
  out.partition = filter.partition();
  if (!filter.state().empty()) {
    auto state = ParseJobState(filter.state());
    if (!state) return MakeError("Invalid job state specified: " + filter.state());
    out.state = *state;
  }
  return out;
}

grpc::Status FromReply(const Reply& reply) {
  return reply.ok ? grpc::Status::OK : Invalid(reply.error);
}

grpc::ServerUnaryReactor* Finished(grpc::CallbackServerContext* context, grpc::Status status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(std::move(status));
  return reactor;
}

}  // namespace drover::ctld

namespace drover::ctld {

namespace {

// The host of "host:port" or "[v6]:port", and its port; nullopt when malformed.
std::optional<std::pair<std::string, int>> HostAndPort(std::string_view text) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::string_view host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  int port = 0;
  std::string_view digits = text.substr(colon + 1);
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (error != std::errc() || end != digits.data() + digits.size() || port <= 0 || port > 65535)
    return std::nullopt;
  return std::make_pair(std::string(host), port);
}

}  // namespace

Result<std::string> AgentAddress(const ClusterConfig& cluster, int node, const std::string& peer,
                                 const std::string& reported) {
  auto at = HostAndPort(reported);
  if (!at) return MakeError("agent address '" + reported + "' is not HOST:PORT");
  const NodeConfig& config = cluster.nodes[node];
  std::string host = config.address;
  if (host.empty() || host == config.name) {  // no NodeAddr: where the registration came from
    std::string_view from = peer;
    if (from.starts_with("ipv4:"))
      from.remove_prefix(5);
    else if (from.starts_with("ipv6:"))
      from.remove_prefix(5);
    else
      return MakeError("node " + config.name + " registered from " + peer +
                       ", not over TCP; give it a NodeAddr in slurm.conf");
    auto origin = HostAndPort(from);
    if (!origin) return MakeError("cannot tell where node " + config.name + " registered from");
    host = origin->first;
  }
  bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(at->second);
}

}  // namespace drover::ctld
