// See requests.h.
#include "ctld/daemon/requests.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <optional>
#include <string_view>
#include <utility>

#include "common/duration.h"
#include "common/job_update.h"
#include "common/submission_bounds.h"
#include "common/text.h"
#include "wire/gpu_health_codec.h"

namespace drover::ctld {

grpc::Status Invalid(const std::string& message) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message);
}

Result<JobFilter> FilterOf(const v1::JobFilter& filter) {
  constexpr int kMaxFilterJobs = 100'000;
  if (filter.job_ids_size() > kMaxFilterJobs || filter.array_tasks_size() > kMaxFilterJobs)
    return MakeError(fmt::format("a request names {} jobs; at most {} may be named at once",
                                 std::max(filter.job_ids_size(), filter.array_tasks_size()),
                                 kMaxFilterJobs));
  JobFilter out;
  out.job_ids.assign(filter.job_ids().begin(), filter.job_ids().end());
  for (const auto& task : filter.array_tasks())
    out.array_tasks.emplace_back(task.array_job_id(), task.task_id());
  out.user = filter.user();
  out.name = filter.name();
  out.partition = filter.partition();
  out.account = filter.account();
  out.qos = filter.qos();
  out.reservation = filter.reservation();
  out.nodes.assign(filter.nodes().begin(), filter.nodes().end());
  if (!filter.wckey().empty()) out.wckey = filter.wckey();
  if (!filter.state().empty()) {
    auto state = ParseJobState(filter.state());
    if (!state) return MakeError("Invalid job state specified: " + filter.state());
    out.state = *state;
  }
  return out;
}

namespace {

constexpr int kMaxUpdateSettings = 64;  // scontrol update job has about 55 keys

Status CheckRange(std::string_view field, int64_t value, int64_t min, int64_t max) {
  if (value >= min && value <= max) return OkStatus();
  return MakeError(fmt::format("{}={} is out of range (from {} to {})", field, value, min, max));
}

}  // namespace

Status CheckUpdateJob(const v1::UpdateJobRequest& request) {
  if (Status s = CheckLength("JobName", request.name(), kMaxNameLength); !s) return s;
  if (Status s = CheckLength("Partition", request.partition(), kMaxNameLength); !s) return s;
  if (Status s = CheckLength("QOS", request.qos(), kMaxNameLength); !s) return s;
  if (Status s = CheckTimeLimit("TimeLimit", request.time_limit_seconds()); !s) return s;
  if (request.settings_size() > kMaxUpdateSettings)
    return MakeError(
        fmt::format("{} settings; the limit is {}", request.settings_size(), kMaxUpdateSettings));
  for (const std::string& setting : request.settings())
    if (Status s = CheckLength("setting", setting, kMaxNodeListLength); !s) return s;
  return CheckRange("Nice", request.nice(), -kMaxNice, kMaxNice);
}

Status CheckReservation(const v1::ReservationRequest& request) {
  struct Field {
    std::string_view name, value;
    size_t limit;
  };
  const Field fields[] = {
      {"ReservationName", request.name(), kMaxNameLength},
      {"Nodes", request.node_list(), kMaxNodeListLength},
      {"TRES", request.tres(), kMaxNameLength},
      {"Users", request.users(), kMaxNodeListLength},
      {"Accounts", request.accounts(), kMaxNodeListLength},
      {"Flags", request.flags(), kMaxNameLength},
      {"PartitionName", request.partition(), kMaxNameLength},
  };
  for (const Field& field : fields)
    if (Status s = CheckLength(field.name, field.value, field.limit); !s) return s;
  if (Status s = CheckRange("StartTime", request.start_time(), 0, kMaxTimestamp); !s) return s;
  if (Status s = CheckRange("EndTime", request.end_time(), 0, kMaxTimestamp); !s) return s;
  if (request.duration_seconds() == kUnlimitedSeconds) return OkStatus();
  return CheckRange("Duration (seconds)", request.duration_seconds(), 0, kMaxTimeLimitSeconds);
}

Status CheckCreateStep(const v1::CreateStepRequest& request) {
  if (Status s = CheckLength("--job-name", request.name(), kMaxNameLength); !s) return s;
  size_t bytes = 0;
  for (const std::string& name : request.nodelist()) bytes += name.size() + 1;
  if (bytes > kMaxNodeListLength)
    return MakeError(
        fmt::format("--nodelist is {} bytes; the limit is {}", bytes, kMaxNodeListLength));
  return OkStatus();
}

grpc::Status FromReply(const Reply& reply) {
  if (reply.busy) return Busy(reply.error);
  return reply.ok ? grpc::Status::OK : Invalid(reply.error);
}

grpc::Status Busy(const std::string& message) {
  return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, message);
}

Result<UpdateNode> UpdateNodeOf(const v1::UpdateNodeRequest& request, const Caller& caller) {
  using Action = UpdateNode::Action;
  static const std::pair<std::string_view, Action> kStates[] = {
      {"", Action::kNone},           {"drain", Action::kDrain},
      {"resume", Action::kResume},   {"down", Action::kDown},
      {"undrain", Action::kUndrain}, {"fail", Action::kFail},
      {"noresp", Action::kNoResp},   {"cancel_reboot", Action::kCancelReboot}};
  std::string lower = ToLower(request.state());
  auto state = std::find_if(std::begin(kStates), std::end(kStates),
                            [&](const auto& entry) { return entry.first == lower; });
  if (state == std::end(kStates))
    return MakeError("Invalid node state specified: " + request.state());
  UpdateNode event{0, caller, request.nodes(), state->second, request.reason()};
  if (request.has_weight()) {
    if (request.weight() == 0 || request.weight() == UINT32_MAX)
      return MakeError("Invalid weight: " + std::to_string(request.weight()));
    event.weight = request.weight();
  }
  if (request.has_features()) event.features = request.features();
  if (request.has_active_features()) event.active_features = request.active_features();
  if (request.has_gres())
    return MakeError(
        "Update of this parameter is not supported: Gres (change gres.conf and "
        "slurm.conf, then restart)");
  if (request.has_comment()) event.comment = request.comment();
  if (request.has_extra()) event.extra = request.extra();
  if (event.action == Action::kNone && !event.weight && !event.features && !event.active_features &&
      !event.comment && !event.extra && event.reason.empty())
    return MakeError("No changes specified");
  return event;
}

Result<RebootNodes> RebootNodesOf(const v1::RebootRequest& request, const Caller& caller) {
  if (request.nodes().empty())
    return MakeError("Missing node list. Specify ALL|<NodeList> to reboot");
  std::string next = ToLower(request.next_state());
  if (request.cancel() && (request.asap() || !next.empty() || !request.reason().empty()))
    return MakeError("cancel_reboot takes only a node list");
  if (!next.empty() && next != "resume" && next != "down")
    return MakeError("Invalid nextstate: " + request.next_state() + " (RESUME or DOWN)");
  next = next == "down" ? "DOWN" : "RESUME";
  return RebootNodes{0,    caller,           request.nodes(), request.asap(),
                     next, request.reason(), request.cancel()};
}

Result<UpdateJob> UpdateJobOf(const v1::UpdateJobRequest& request, const Caller& caller) {
  auto filter = FilterOf(request.filter());
  if (!filter) return std::move(filter).take_error();
  UpdateJob event{0, caller, std::move(*filter), {}, {}, {}, {}, {}, {}};
  if (request.has_time_limit_seconds()) {
    if (request.time_limit_seconds() <= 0) return MakeError("Invalid time limit specified");
    event.time_limit_seconds = request.time_limit_seconds();
  }
  if (request.has_nice()) event.nice = request.nice();
  if (request.has_partition()) event.partition = request.partition();
  if (request.has_name()) event.name = request.name();
  if (request.has_qos()) event.qos = request.qos();
  for (const std::string& setting : request.settings()) {
    size_t eq = setting.find('=');
    if (eq == std::string::npos) return MakeError("Invalid input: " + setting);
    std::string_view text = setting;
    if (Status parsed = ParseJobUpdateKey(text.substr(0, eq), text.substr(eq + 1),
                                          std::time(nullptr), event.update);
        !parsed)
      return std::move(parsed).take_error();
  }
  return event;
}

namespace {

// srun -m, --ntasks-per-core, --ntasks-per-socket and SLURM_HOSTFILE's nodes.
Result<CreateStep> WithLayout(const v1::CreateStepRequest& request, CreateStep event) {
  if (!request.distribution().empty()) {
    auto distribution = ParseDistribution(request.distribution());
    if (!distribution) return std::move(distribution).take_error();
    event.distribution = *distribution;
  }
  if (request.ntasks_per_core() > 100'000 || request.ntasks_per_socket() > 100'000 ||
      request.arbitrary_nodes_size() > 1'000'000)
    return MakeError("CreateStep: a count out of range");
  event.ntasks_per_core = request.ntasks_per_core();
  event.ntasks_per_socket = request.ntasks_per_socket();
  event.arbitrary_nodes.assign(request.arbitrary_nodes().begin(), request.arbitrary_nodes().end());
  if (event.distribution.nodes == NodeDistribution::kArbitrary && event.arbitrary_nodes.empty())
    return MakeError("-m arbitrary: SLURM_HOSTFILE names no nodes");
  return event;
}

}  // namespace

Result<CreateStep> CreateStepOf(const v1::CreateStepRequest& request, const Caller& caller) {
  if (request.job_id() == 0) return MakeError("CreateStep: no job ID given");
  if (request.ntasks() > 1'000'000 || request.nodes() > 100'000 ||
      request.ntasks_per_node() > 100'000 || request.cpus_per_task() > 100'000)
    return MakeError("CreateStep: a count out of range");
  if (request.gpus() > 100'000 || request.gpus_per_node() > 100'000 ||
      request.gpus_per_task() > 100'000)
    return MakeError("CreateStep: a GPU count out of range");
  CreateStep event{0,
                   caller,
                   request.job_id(),
                   request.name(),
                   request.nodes(),
                   request.ntasks(),
                   request.ntasks_per_node(),
                   request.cpus_per_task(),
                   {request.nodelist().begin(), request.nodelist().end()}};
  event.mem_per_node_mb = request.mem_per_node_mb();
  event.mem_per_cpu_mb = request.mem_per_cpu_mb();
  event.gpus = request.gpus();
  event.gpus_per_node = request.gpus_per_node();
  event.gpus_per_task = request.gpus_per_task();
  event.gpus_given = request.gpus_given();
  event.exact = request.exact();
  event.overlap = request.overlap();
  return WithLayout(request, std::move(event));
}

ReservationFields ReservationFieldsOf(const v1::ReservationRequest& request) {
  ReservationFields fields;
  if (request.has_start_time()) fields.start_time = request.start_time();
  if (request.has_end_time()) fields.end_time = request.end_time();
  if (request.has_duration_seconds()) fields.duration_seconds = request.duration_seconds();
  if (request.has_node_list()) fields.node_list = request.node_list();
  if (request.has_node_count()) fields.node_count = request.node_count();
  if (request.has_tres()) fields.tres = request.tres();
  if (request.has_users()) fields.users = request.users();
  if (request.has_accounts()) fields.accounts = request.accounts();
  if (request.has_flags()) fields.flags = request.flags();
  if (request.has_partition()) fields.partition = request.partition();
  return fields;
}

Result<TopJobs> TopJobsOf(const v1::TopRequest& request, const Caller& caller) {
  if (request.jobs_size() == 0) return MakeError("Invalid job id specified");
  TopJobs event{0, caller, {}};
  for (const auto& job : request.jobs()) event.jobs.emplace_back(job.array_job_id(), job.task_id());
  return event;
}

namespace {

constexpr int kMostReportedGpus = 64;
constexpr size_t kMostGpuText = 128;
constexpr int kMostGpuCores = 4096;

std::string Bounded(const std::string& text) {
  return text.size() > kMostGpuText ? text.substr(0, kMostGpuText) : text;
}

}  // namespace

NodeRegistered NodeRegisteredOf(const v1::RegisterRequest& request) {
  NodeRegistered event{request.node(), {}};
  event.running_jobs.assign(request.running_jobs().begin(), request.running_jobs().end());
  event.ended_jobs.assign(request.ended_jobs().begin(), request.ended_jobs().end());
  if (request.cpus() || request.memory_mb() || !request.gpu_source().empty())
    event.resources = NodeResources{request.cpus(), request.memory_mb(), request.gpus()};
  int count = std::min(request.gpu_list_size(), kMostReportedGpus);
  for (int i = 0; i < count; ++i) {
    const v1::GpuIdentity& found = request.gpu_list(i);
    GpuDevice gpu;
    gpu.index = found.index();
    gpu.type = Bounded(found.type());
    gpu.name = Bounded(found.name());
    gpu.uuid = Bounded(found.uuid());
    gpu.pci_bus_id = Bounded(found.pci_bus_id());
    gpu.memory_mb = found.memory_mb();
    if (found.has_minor() && found.minor() >= 0 && found.minor() < (1 << 20))
      gpu.minor = found.minor();
    for (int core : found.cores())
      if (core >= 0 && core < kMostGpuCores) gpu.cores.push_back(core);
    std::sort(gpu.cores.begin(), gpu.cores.end());
    gpu.cores.erase(std::unique(gpu.cores.begin(), gpu.cores.end()), gpu.cores.end());
    if (found.links_size() == count)
      for (int link : found.links()) gpu.links.push_back(std::clamp(link, -1, 1024));
    event.gpus.push_back(std::move(gpu));
  }
  return event;
}

Heartbeat HeartbeatOf(const v1::HeartbeatRequest& request) {
  Heartbeat event{
      request.node(), request.healthy(), request.health_output(), request.health_latched(), {}};
  int count = std::min(request.gpus_size(), kMostReportedGpus);
  for (int i = 0; i < count; ++i) {
    GpuHealth gpu = wire::FromProto(request.gpus(i));
    gpu.uuid = Bounded(gpu.uuid);
    gpu.problem = Bounded(gpu.problem);
    if (!std::isfinite(gpu.temperature_c)) gpu.temperature_c = 0;
    event.gpus.push_back(std::move(gpu));
  }
  return event;
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
