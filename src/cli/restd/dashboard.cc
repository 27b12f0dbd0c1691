// The web dashboard's API: see dashboard.h.
#include "cli/restd/dashboard.h"

#include <algorithm>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/formats/formats.h"
#include "cli/query/query_common.h"
#include "cli/scontrol/scontrol_format.h"
#include "common/text.h"
#include "wire/job_pages.h"

namespace drover::cli::restd {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kErrorAccessDenied = 2002;
constexpr int kErrorBadRequest = 9000;
constexpr uint32_t kDefaultJobs = 500;
constexpr uint32_t kNoTask = 4294967295u;
constexpr size_t kMaxNodeJobs = 8;        // job IDs listed per node in the overview
constexpr size_t kMaxFilterLength = 256;  // a filter's characters

Response Bad(std::string_view message) {
  return Response{400, ErrorDocument(message, kErrorBadRequest)};
}

Response Answer(const Json& document) {
  return Response{200, document.dump(-1, ' ', false, Json::error_handler_t::replace)};
}

std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> parts;
  for (std::string& part : Split(path, '/'))
    if (!part.empty()) parts.push_back(std::move(part));
  return parts;
}

std::string JobIdText(const v1::JobSpec& spec) {
  if (spec.array_job_id() && spec.array_task_id() != kNoTask)
    return fmt::format("{}_{}", spec.array_job_id(), spec.array_task_id());
  return std::to_string(spec.job_id());
}

uint64_t RequestedGpus(const v1::JobSpec& spec) {
  uint64_t nodes = std::max<uint32_t>(spec.min_nodes(), 1);
  if (spec.gpus()) return spec.gpus();
  if (spec.gpus_per_node()) return uint64_t{spec.gpus_per_node()} * nodes;
  if (spec.gpus_per_task())
    return uint64_t{spec.gpus_per_task()} * std::max<uint32_t>(spec.ntasks(), 1);
  return 0;
}

uint64_t HeldGpus(const v1::Job& job) {
  uint64_t gpus = 0;
  for (const v1::NodeAllocation& node : job.allocation()) gpus += columns::AllocatedGpus(node);
  return gpus;
}

struct Dashboard {
  RestApi& api;
  const Request& request;

  template <typename In, typename Out>
  grpc::Status Call(std::string_view method,
                    grpc::Status (v1::Controller::Stub::*stub_call)(grpc::ClientContext*, const In&,
                                                                    Out*),
                    const In& in, Out* out) {
    return api.Call(request, method, stub_call, in, out);
  }

  std::optional<std::string> Query(const std::string& name) const {
    auto found = request.query.find(name);
    if (found == request.query.end()) return std::nullopt;
    return found->second;
  }

  // Who asks: the controller says (and checks the token on the way).
  grpc::Status Whoami(v1::PingReply* reply) {
    return Call("/drover.v1.Controller/Ping", &v1::Controller::Stub::Ping, v1::PingRequest(),
                reply);
  }

  Response Overview() {
    v1::PingReply ping;
    if (grpc::Status status = Whoami(&ping); !status.ok()) return StatusResponse(status);
    v1::NodeList nodes;
    grpc::Status status = Call("/drover.v1.Controller/ListNodes", &v1::Controller::Stub::ListNodes,
                               v1::NodeQuery(), &nodes);
    if (!status.ok()) return StatusResponse(status);
    // What each node's running jobs hold (every page of them).
    v1::JobQuery holding;
    holding.set_holding_nodes(true);
    v1::JobList list;
    status = wire::ListJobPages(
        [this](const v1::JobQuery& page, v1::JobList* reply) {
          return Call("/drover.v1.Controller/ListJobs", &v1::Controller::Stub::ListJobs, page,
                      reply);
        },
        holding, &list);
    if (!status.ok()) return StatusResponse(status);
    std::vector<v1::Job> running = ParseJobs(list);
    v1::DiagReply diag;
    status =
        Call("/drover.v1.Controller/Diag", &v1::Controller::Stub::Diag, v1::DiagRequest(), &diag);
    if (!status.ok()) return StatusResponse(status);

    const ClusterConfig& cluster = api.cluster();
    std::vector<uint64_t> gpus_held(cluster.nodes.size()), cpus_held(cluster.nodes.size());
    std::vector<std::vector<uint64_t>> jobs_on(cluster.nodes.size());
    for (const v1::Job& job : running)
      for (const v1::NodeAllocation& node : job.allocation()) {
        if (node.node() < 0 || static_cast<size_t>(node.node()) >= cluster.nodes.size()) continue;
        gpus_held[node.node()] += columns::AllocatedGpus(node);
        cpus_held[node.node()] += columns::AllocatedCpus(node, &cluster);
        if (jobs_on[node.node()].size() < kMaxNodeJobs)
          jobs_on[node.node()].push_back(job.spec().job_id());
      }

    Json document;
    document["cluster"] = ping.cluster_name();
    document["controller"] = ping.host();
    document["user"] = ping.caller_user();
    document["operator"] = ping.caller_operator();
    document["time"] = ping.time() ? ping.time() : static_cast<int64_t>(std::time(nullptr));
    Json node_rows = Json::array();
    for (const v1::NodeStatus& node : nodes.nodes()) {
      int index = cluster.FindNode(node.name());
      Json row;
      row["name"] = node.name();
      row["state"] = node.state();
      row["reason"] = node.reason();
      if (index >= 0) {
        const NodeConfig& config = cluster.nodes[index];
        row["gpus"] = config.gpu_count();
        row["gpus_alloc"] = gpus_held[index];
        row["cpus"] = config.cpus;
        row["cpus_alloc"] = cpus_held[index];
        const TopologyConfig& topology = cluster.topology;
        if (static_cast<size_t>(index) < topology.node_leaf.size() &&
            topology.node_leaf[index] >= 0)
          row["group"] = topology.switches[topology.node_leaf[index]].name;
        else if (static_cast<size_t>(index) < topology.node_block.size() &&
                 topology.node_block[index] >= 0)
          row["group"] = topology.blocks[topology.node_block[index]].name;
        row["jobs"] = jobs_on[index];
      }
      node_rows.push_back(std::move(row));
    }
    document["nodes"] = std::move(node_rows);
    // The topology's groups, parents before children: a switch tree or blocks.
    Json groups = Json::array();
    for (const SwitchConfig& sw : cluster.topology.switches)
      groups.push_back(
          {{"name", sw.name},
           {"level", sw.level},
           {"parent", sw.parent >= 0 ? cluster.topology.switches[sw.parent].name : std::string()}});
    for (const BlockConfig& block : cluster.topology.blocks)
      groups.push_back({{"name", block.name}, {"level", 0}, {"parent", ""}});
    document["groups"] = std::move(groups);
    Json partitions = Json::array();
    for (const PartitionConfig& partition : cluster.partitions) {
      auto count = [&partition](const google::protobuf::Map<std::string, uint32_t>& map) {
        auto found = map.find(partition.name);
        return found == map.end() ? 0u : found->second;
      };
      partitions.push_back({{"name", partition.name},
                            {"pending", count(diag.pending_by_partition())},
                            {"running", count(diag.running_by_partition())}});
    }
    document["partitions"] = std::move(partitions);
    Json reasons = Json::object();
    std::map<std::string, uint32_t> sorted(diag.pending_by_reason().begin(),
                                           diag.pending_by_reason().end());
    for (const auto& [reason, count] : sorted) reasons[reason] = count;
    Json history = Json::array();
    for (const v1::QueueSample& sample : diag.queue_history())
      history.push_back(
          Json::array({sample.time(), sample.pending(), sample.running(), sample.cycle_micros()}));
    document["queue"] = {{"pending", diag.jobs_pending()},
                         {"running", diag.jobs_running()},
                         {"by_reason", std::move(reasons)}};
    document["scheduler"] = {
        {"cycles", diag.cycles()},
        {"cycle_last_micros", diag.cycle_last_micros()},
        {"cycle_max_micros", diag.cycle_max_micros()},
        {"cycle_mean_micros", diag.cycles() ? diag.cycle_total_micros() / diag.cycles() : 0},
        {"cycle_last_time", diag.cycle_last_time()},
        {"queue_length", diag.queue_length()},
        {"backfill_depth_mean", diag.cycles() ? diag.considered_total() / diag.cycles() : 0},
        {"backfilled", diag.backfilled_total()},
        {"submitted", diag.jobs_submitted()},
        {"started", diag.jobs_started()},
        {"completed", diag.jobs_completed()},
        {"agent_queue", diag.agent_queue()},
        {"history", std::move(history)}};
    return Answer(document);
  }

  Json JobRow(const v1::Job& job, const std::map<uint64_t, v1::PlannedStart>& planned) {
    const v1::JobSpec& spec = job.spec();
    Json row;
    row["id"] = JobIdText(spec);
    row["job_id"] = spec.job_id();
    row["name"] = spec.name();
    row["user"] = spec.user().empty() ? UserName(spec.uid()) : spec.user();
    row["account"] = spec.account();
    std::string partition = job.partition_name();
    for (const std::string& name : spec.partitions())
      if (partition.empty()) partition = name;
    if (int fallback = api.cluster().DefaultPartition(); partition.empty() && fallback >= 0)
      partition = api.cluster().partitions[fallback].name;
    row["partition"] = partition;
    row["state"] = job.state();
    row["reason"] = job.reason();
    row["nodes"] = job.node_list();
    row["gpus"] = job.allocation_size() ? HeldGpus(job) : RequestedGpus(spec);
    row["submit"] = spec.submit_time();
    row["start"] = job.start_time();
    row["end"] = job.end_time();
    row["limit"] = job.time_limit_seconds();
    if (auto plan = planned.find(spec.job_id()); plan != planned.end()) {
      row["expected_start"] = plan->second.start_time();
      row["expected_nodes"] = plan->second.node_list();
    }
    return row;
  }

  Response Jobs() {
    v1::JobQuery query;
    query.set_with_plan(true);
    v1::JobFilter* filter = query.mutable_filter();
    for (const char* name : {"user", "account", "partition", "state"}) {
      std::optional<std::string> value = Query(name);
      if (!value || value->empty()) continue;
      if (value->size() > kMaxFilterLength)
        return Bad(fmt::format("{}: at most {} characters", name, kMaxFilterLength));
      std::string_view key = name;
      if (key == "user") filter->set_user(*value);
      if (key == "account") filter->set_account(*value);
      if (key == "partition") filter->set_partition(*value);
      if (key == "state") filter->set_state(*value);
    }
    uint32_t limit = kDefaultJobs;
    if (std::optional<std::string> text = Query("limit")) {
      std::optional<int64_t> value = ParseInt64(*text);
      if (!value || *value < 1 || *value > kDashboardMaxJobs)
        return Bad(fmt::format("limit={}: give 1 to {}", *text, kDashboardMaxJobs));
      limit = static_cast<uint32_t>(*value);
    }
    if (std::optional<std::string> text = Query("after")) {
      std::optional<int64_t> value = ParseInt64(*text);
      if (!value || *value < 0) return Bad(fmt::format("after={}: give a job ID", *text));
      query.set_after(static_cast<uint64_t>(*value));
    }
    for (const auto& [name, value] : request.query)
      if (name != "user" && name != "account" && name != "partition" && name != "state" &&
          name != "limit" && name != "after")
        return Bad(
            fmt::format("unknown query parameter '{}': the queue filters on user, "
                        "account, partition and state, with limit and after",
                        name));
    query.set_limit(limit);
    v1::JobList list;
    grpc::Status status =
        Call("/drover.v1.Controller/ListJobs", &v1::Controller::Stub::ListJobs, query, &list);
    if (!status.ok()) return StatusResponse(status);
    std::map<uint64_t, v1::PlannedStart> planned;
    for (const v1::PlannedStart& plan : list.planned()) planned[plan.job_id()] = plan;
    Json rows = Json::array();
    std::vector<v1::Job> jobs = ParseJobs(list);
    for (const v1::Job& job : jobs) {
      if (rows.size() >= limit) break;
      rows.push_back(JobRow(job, planned));
    }
    Json document;
    document["time"] = list.time();
    document["jobs"] = std::move(rows);
    document["more_after"] = list.more_after();
    return Answer(document);
  }

  Response Job(const std::string& id) {
    v1::JobQuery query;
    query.set_with_plan(true);
    query.set_all_states(true);
    if (!AddJobId(id, query.mutable_filter()))
      return Bad(fmt::format("'{}' is not a job ID (12, or 12_3 for an array's task)", id));
    v1::JobList list;
    grpc::Status status =
        Call("/drover.v1.Controller/ListJobs", &v1::Controller::Stub::ListJobs, query, &list);
    if (!status.ok()) return StatusResponse(status);
    std::vector<v1::Job> jobs = ParseJobs(list);
    const v1::Job* job = nullptr;
    for (const v1::Job& candidate : jobs)
      if (JobIdText(candidate.spec()) == id || std::to_string(candidate.spec().job_id()) == id)
        job = &candidate;
    if (!job) {
      // Finished and gone from the queue: the history has it.
      v1::HistoryQuery history;
      *history.mutable_filter() = query.filter();
      v1::JobList past;
      status =
          Call("/drover.v1.Controller/History", &v1::Controller::Stub::History, history, &past);
      if (!status.ok()) return StatusResponse(status);
      jobs = ParseJobs(past);
      for (const v1::Job& candidate : jobs)
        if (JobIdText(candidate.spec()) == id || std::to_string(candidate.spec().job_id()) == id)
          job = &candidate;
    }
    if (!job) return Response{404, ErrorDocument("Invalid job id specified", 2017)};
    std::map<uint64_t, v1::PlannedStart> planned;
    for (const v1::PlannedStart& plan : list.planned()) planned[plan.job_id()] = plan;
    Json document = JobRow(*job, planned);
    const ClusterConfig& cluster = api.cluster();
    Json allocation = Json::array();
    for (const v1::NodeAllocation& node : job->allocation()) {
      Json gpus = Json::array();
      for (int i = 0; i < node.gpus_size(); ++i)
        gpus.push_back({{"index", node.gpus(i)},
                        {"uuid", i < node.gpu_uuids_size() ? node.gpu_uuids(i) : std::string()}});
      bool known = node.node() >= 0 && static_cast<size_t>(node.node()) < cluster.nodes.size();
      allocation.push_back({{"node", known ? cluster.nodes[node.node()].name : std::string()},
                            {"cpus", columns::AllocatedCpus(node, &cluster)},
                            {"memory_mb", node.memory_mb()},
                            {"gpus", std::move(gpus)},
                            {"shares", node.shares()}});
    }
    document["allocation"] = std::move(allocation);
    Json steps = Json::array();
    for (const v1::Step& step : job->steps())
      steps.push_back({{"id", step.step_id()},
                       {"name", step.name()},
                       {"state", step.state()},
                       {"nodes", step.node_list()},
                       {"tasks", step.ntasks()},
                       {"start", step.start_time()},
                       {"end", step.end_time()},
                       {"exit_code", step.exit_code()}});
    document["steps"] = std::move(steps);
    Json runs = Json::array();
    for (const v1::JobRun& run : job->history()) {
      std::vector<std::string> names;
      for (int node : run.nodes())
        if (node >= 0 && static_cast<size_t>(node) < cluster.nodes.size())
          names.push_back(cluster.nodes[node].name);
      runs.push_back({{"start", run.start_time()},
                      {"end", run.end_time()},
                      {"state", run.state()},
                      {"exit_code", run.exit_code()},
                      {"nodes", names}});
    }
    document["earlier_runs"] = std::move(runs);
    document["exit_code"] = job->exit_code();
    document["eligible"] = job->spec().begin_time();
    document["work_dir"] = job->spec().work_dir();
    scontrol::ShowContext ctx;
    ctx.cluster = &cluster;
    ctx.now = list.time() ? list.time() : static_cast<int64_t>(std::time(nullptr));
    ctx.user_name = UserName;
    ctx.group_name = GroupName;
    ctx.planned = planned;
    // Every field as `scontrol show job` prints it (StdOut is the path expanded).
    std::string details = scontrol::Render(std::vector{scontrol::JobRecord(*job, ctx)}, false);
    for (const std::string& line : Split(details, '\n'))
      for (const std::string& word : Split(line, ' ')) {
        if (word.starts_with("StdOut=")) document["stdout"] = word.substr(7);
        if (word.starts_with("StdErr=")) document["stderr"] = word.substr(7);
      }
    document["details"] = std::move(details);
    return Answer(document);
  }

  Response Shares() {
    v1::ShareList list;
    grpc::Status status = Call("/drover.v1.Controller/Shares", &v1::Controller::Stub::Shares,
                               v1::ShareQuery(), &list);
    if (!status.ok()) return StatusResponse(status);
    Json rows = Json::array();
    for (const v1::Share& share : list.shares())
      rows.push_back({{"account", share.account()},
                      {"user", share.user()},
                      {"parent", share.parent()},
                      {"raw_shares", share.raw_shares()},
                      {"norm_shares", share.norm_shares()},
                      {"raw_usage", share.raw_usage()},
                      {"effective_usage", share.effective_usage()},
                      {"fairshare", share.fairshare()}});
    return Answer(Json{{"shares", std::move(rows)}});
  }

  Response Reservations() {
    v1::ReservationList list;
    grpc::Status status =
        Call("/drover.v1.Controller/ListReservations", &v1::Controller::Stub::ListReservations,
             v1::ReservationQuery(), &list);
    if (!status.ok()) return StatusResponse(status);
    Json rows = Json::array();
    for (const v1::Reservation& reservation : list.reservations())
      rows.push_back({{"name", reservation.name()},
                      {"start", reservation.start_time()},
                      {"end", reservation.end_time()},
                      {"nodes", reservation.node_list()},
                      {"users", reservation.users()},
                      {"accounts", reservation.accounts()},
                      {"flags", reservation.flags()},
                      {"partition", reservation.partition()}});
    return Answer(
        Json{{"time", list.time() ? list.time() : static_cast<int64_t>(std::time(nullptr))},
             {"reservations", std::move(rows)}});
  }

  // The page's actions: operators only (the dashboard is read-only for everyone else, though
  // the controller would let a user cancel their own job).
  Response Action(const std::vector<std::string>& parts) {
    v1::PingReply ping;
    if (grpc::Status status = Whoami(&ping); !status.ok()) return StatusResponse(status);
    if (!ping.caller_operator())
      return Response{403, ErrorDocument("the dashboard is read-only for users who are not "
                                         "operators (AdminLevel=Operator or Administrator)",
                                         kErrorAccessDenied)};
    Json body = Json::object();
    if (!request.body.empty()) {
      body = Json::parse(request.body, nullptr, false);
      if (body.is_discarded() || !body.is_object())
        return Bad("the request body is not a JSON object");
    }
    for (const auto& [key, value] : body.items())
      if (key != "reason") return Bad(fmt::format("unknown field '{}' (only \"reason\")", key));
    std::string reason;
    if (body.contains("reason")) {
      if (!body["reason"].is_string()) return Bad("\"reason\" must be a string");
      reason = body["reason"].get<std::string>();
      if (reason.size() > 1024) return Bad("\"reason\": at most 1024 characters");
    }
    const std::string& kind = parts[2];
    const std::string& target = parts[3];
    const std::string& verb = parts[4];
    v1::ActionReply reply;
    grpc::Status status;
    if (kind == "job") {
      v1::JobFilter filter;
      if (!AddJobId(target, &filter))
        return Bad(fmt::format("'{}' is not a job ID (12, or 12_3)", target));
      if (verb == "cancel") {
        v1::CancelRequest cancel;
        *cancel.mutable_filter() = filter;
        status =
            Call("/drover.v1.Controller/Cancel", &v1::Controller::Stub::Cancel, cancel, &reply);
      } else if (verb == "hold" || verb == "release") {
        v1::HoldRequest hold;
        *hold.mutable_filter() = filter;
        hold.set_release(verb == "release");
        status = Call("/drover.v1.Controller/Hold", &v1::Controller::Stub::Hold, hold, &reply);
      } else {
        return Bad(fmt::format("a job's actions are cancel, hold and release, not '{}'", verb));
      }
    } else {
      if (verb != "drain" && verb != "resume")
        return Bad(fmt::format("a node's actions are drain and resume, not '{}'", verb));
      if (verb == "drain" && reason.empty()) return Bad("drain needs a \"reason\"");
      v1::UpdateNodeRequest update;
      update.set_nodes(target);
      update.set_state(verb == "drain" ? "DRAIN" : "RESUME");
      update.set_reason(reason);
      status = Call("/drover.v1.Controller/UpdateNode", &v1::Controller::Stub::UpdateNode, update,
                    &reply);
    }
    if (!status.ok()) return StatusResponse(status);
    return Answer(Json{{"message", reply.message()}});
  }
};

}  // namespace

Response DashboardApi(RestApi& api, const Request& request) {
  std::vector<std::string> parts = SplitPath(request.path);  // "ui", "api", ...
  Dashboard dashboard{api, request};
  if (request.method == "GET") {
    if (!request.body.empty()) return Bad("GET takes no request body");
    if (parts.size() == 3 && parts[2] == "overview") return dashboard.Overview();
    if (parts.size() == 3 && parts[2] == "jobs") return dashboard.Jobs();
    if (parts.size() == 4 && parts[2] == "job") return dashboard.Job(parts[3]);
    if (parts.size() == 3 && parts[2] == "shares") return dashboard.Shares();
    if (parts.size() == 3 && parts[2] == "reservations") return dashboard.Reservations();
  } else if (request.method == "POST") {
    if (parts.size() == 5 && (parts[2] == "job" || parts[2] == "node"))
      return dashboard.Action(parts);
  } else {
    return Response{405, ErrorDocument(request.method + " is not served for " + request.path,
                                       kErrorBadRequest)};
  }
  return Response{404, ErrorDocument("no such path: " + request.path, kErrorBadRequest)};
}

}  // namespace drover::cli::restd
