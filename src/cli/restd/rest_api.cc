// The REST API's routes: see rest_api.h.
#include "cli/restd/rest_api.h"

#include <pwd.h>

#include <ctime>
#include <optional>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "auth/jwt.h"
#include "auth/tls.h"
#include "cli/client.h"
#include "cli/formats/formats.h"
#include "cli/formats/sdiag_format.h"
#include "cli/query/query_common.h"
#include "cli/restd/dashboard.h"
#include "cli/restd/job_submit.h"
#include "cli/scontrol/scontrol_format.h"
#include "common/accounting.h"
#include "common/text.h"
#include "common/tres.h"
#include "wire/accounting_codec.h"
#include "wire/job_pages.h"
#include "wire/job_spec_codec.h"

namespace drover::cli::restd {
namespace {

using Json = nlohmann::ordered_json;

// Slurm's error numbers that clients test for (slurm_errno.h).
constexpr int kErrorGeneric = -1;
constexpr int kErrorInvalidJobId = 2017;
constexpr int kErrorAccessDenied = 2002;
constexpr int kErrorInvalidNodeName = 2009;
constexpr int kErrorInvalidPartitionName = 2004;
constexpr int kErrorUnreachable = 1001;  // SLURM_COMMUNICATIONS_CONNECTION_ERROR
constexpr int kErrorBadRequest = 9000;   // ESLURM_REST_INVALID_QUERY
constexpr int kErrorAuth = 1007;         // SLURM_PROTOCOL_AUTHENTICATION_ERROR

// One history answer at most (the server holds it whole before it answers).
constexpr int kMaxHistoryJobs = 100'000;

// Text from users (names, paths, messages) may not be UTF-8: replaced, never thrown on.
std::string Dump(const Json& document) {
  return document.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

// Slurm's envelope: its meta and an empty errors array, before the answer's own fields.
Json Envelope() {
  Json document;
  document["meta"] = Json::parse(kOpenapiMeta);
  document["errors"] = Json::array();
  return document;
}

Response Error(int status, std::string_view message, int error_number) {
  return Response{status, ErrorDocument(message, error_number)};
}

// A gRPC failure as the HTTP status and Slurm error a client expects.
Response FromStatus(const grpc::Status& status) {
  switch (status.error_code()) {
    case grpc::StatusCode::UNAUTHENTICATED:
      return Error(401, status.error_message(), kErrorAuth);
    case grpc::StatusCode::PERMISSION_DENIED:
      return Error(403, status.error_message(), kErrorAccessDenied);
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::FAILED_PRECONDITION:
      // The engine refuses another user's job in Slurm's words, as a refused request.
      if (status.error_message() == "Access/permission denied")
        return Error(403, status.error_message(), kErrorAccessDenied);
      return Error(400, status.error_message(), kErrorBadRequest);
    case grpc::StatusCode::NOT_FOUND:
      return Error(404, status.error_message(), kErrorInvalidJobId);
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return Error(429, status.error_message(), kErrorGeneric);
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return Error(503, Unreachable(status), kErrorUnreachable);
    default:
      return Error(500, status.error_message(), kErrorGeneric);
  }
}

// The documents the commands print, with the request's own envelope.
Response Document(std::string body) {
  return Response{200, std::move(body)};
}

std::optional<std::string> QueryValue(const Request& request, const std::string& name) {
  auto it = request.query.find(name);
  if (it == request.query.end()) return std::nullopt;
  return it->second;
}

// Only the parameters a route reads; anything else is a mistake the client should hear about.
std::optional<Response> UnknownQuery(const Request& request, const RouteInfo& route) {
  for (const auto& [name, value] : request.query) {
    bool known = false;
    for (const char* accepted : route.query) known = known || name == accepted;
    if (!known)
      return Error(
          400,
          fmt::format("unknown query parameter '{}'{}", name,
                      route.query.empty() ? std::string(" (this path takes none)")
                                          : " (this path takes " +
                                                Join(std::vector<std::string>(route.query.begin(),
                                                                              route.query.end()),
                                                     ", ") +
                                                ")"),
          kErrorBadRequest);
  }
  return std::nullopt;
}

const std::vector<RouteInfo> kRoutes = {
    {"GET", "/slurm/v0.0.38/ping", "ping the controllers", {}},
    {"GET", "/slurm/v0.0.38/diag", "the controller's statistics, as sdiag --json", {}},
    {"GET", "/slurm/v0.0.38/jobs", "every job in the queue", {"update_time"}},
    {"GET", "/slurm/v0.0.38/job/{job_id}", "one job (or every task of an array)", {}},
    {"DELETE", "/slurm/v0.0.38/job/{job_id}", "cancel a job, or signal it", {"signal"}},
    {"POST", "/slurm/v0.0.38/job/submit", "submit a batch job", {}},
    {"POST", "/slurm/v0.0.38/job/{job_id}", "change a job (scontrol update job's fields)", {}},
    {"GET", "/slurm/v0.0.38/nodes", "every node", {"update_time"}},
    {"GET", "/slurm/v0.0.38/node/{node_name}", "one node", {}},
    {"GET", "/slurm/v0.0.38/partitions", "every partition", {"update_time"}},
    {"GET", "/slurm/v0.0.38/partition/{partition_name}", "one partition", {"update_time"}},
    {"GET", "/slurm/v0.0.38/reservations", "every reservation", {"update_time"}},
    {"GET", "/slurm/v0.0.38/reservation/{reservation_name}", "one reservation", {"update_time"}},
    {"GET",
     "/slurmdb/v0.0.38/jobs",
     "finished and live jobs from the job history",
     {"users", "start_time", "end_time"}},
    {"GET", "/slurmdb/v0.0.38/job/{job_id}", "one job from the job history", {}},
    {"GET",
     "/slurmdb/v0.0.38/associations",
     "the associations (accounting)",
     {"account", "cluster", "user", "partition"}},
    {"GET",
     "/slurmdb/v0.0.38/association",
     "one association: account, user, cluster and partition name it",
     {"account", "cluster", "user", "partition"}},
    {"GET", "/slurmdb/v0.0.38/qos", "every QOS (accounting)", {}},
    {"GET", "/slurmdb/v0.0.38/qos/{qos_name}", "one QOS", {}},
};

// "/slurm/v0.0.38/job/{job_id}" against "/slurm/v0.0.38/job/12": the parameter's value.
bool Matches(std::string_view pattern, std::string_view path, std::string& parameter) {
  size_t open = pattern.find('{');
  if (open == std::string_view::npos) return pattern == path;
  if (path.substr(0, open) != pattern.substr(0, open)) return false;
  std::string_view rest = path.substr(open);
  if (rest.empty() || rest.find('/') != std::string_view::npos) return false;
  parameter = std::string(rest);
  return true;
}

// The token's user, as the passwd database knows them (submissions run as them).
std::optional<Submitter> SubmitterOf(const std::string& user) {
  std::vector<char> buffer(16384);
  passwd entry{}, *found = nullptr;
  if (getpwnam_r(user.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found)
    return std::nullopt;
  Submitter submitter;
  submitter.uid = found->pw_uid;
  submitter.gid = found->pw_gid;
  submitter.user = found->pw_name;
  submitter.home = found->pw_dir ? found->pw_dir : "";
  if (submitter.home.empty() || submitter.home.front() != '/') submitter.home = "/";
  submitter.now = std::time(nullptr);
  return submitter;
}

}  // namespace

const std::vector<RouteInfo>& Routes() {
  return kRoutes;
}

Response StatusResponse(const grpc::Status& status) {
  return FromStatus(status);
}

std::string ErrorDocument(std::string_view message, int error_number) {
  Json document = Envelope();
  document["errors"].push_back(
      Json{{"error_number", error_number}, {"error", std::string(message)}});
  return Dump(document);
}

std::string OpenApiDocument() {
  Json paths = Json::object();
  for (const RouteInfo& route : kRoutes) {
    Json operation;
    operation["summary"] = route.summary;
    Json parameters = Json::array();
    std::string path = route.path;
    size_t open = path.find('{');
    if (open != std::string::npos)
      parameters.push_back({{"name", path.substr(open + 1, path.find('}') - open - 1)},
                            {"in", "path"},
                            {"required", true},
                            {"schema", {{"type", "string"}}}});
    for (const char* name : route.query)
      parameters.push_back(
          {{"name", name}, {"in", "query"}, {"required", false}, {"schema", {{"type", "string"}}}});
    if (!parameters.empty()) operation["parameters"] = parameters;
    if (std::string_view(route.method) == "POST")
      operation["requestBody"] = {
          {"required", true},
          {"content",
           {{"application/json",
             {{"schema",
               {{"type", "object"},
                {"properties",
                 {{"script", {{"type", "string"}}},
                  {"job", {{"type", "object"}, {"description", "Slurm 22.05's job_properties"}}}}},
                {"required", Json::array({"job", "script"})}}}}}}}};
    operation["responses"] = {
        {"200", {{"description", "the document, with \"meta\" and an empty \"errors\""}}},
        {"default", {{"description", "an error: \"errors\" says what is wrong"}}}};
    operation["security"] = Json::array({{{"user", Json::array()}, {"token", Json::array()}}});
    std::string method = ToLower(route.method);
    paths[route.path][method] = operation;
  }
  Json document;
  document["openapi"] = "3.0.2";
  document["info"] = {{"title", "Drover REST API (Slurm OpenAPI v0.0.38)"},
                      {"version", "v0.0.38"},
                      {"description",
                       "Slurm 22.05's slurmrestd paths, served by drover restd. Every request "
                       "carries X-SLURM-USER-NAME and X-SLURM-USER-TOKEN (scontrol token)."}};
  document["paths"] = paths;
  document["components"] = {
      {"securitySchemes",
       {{"user", {{"type", "apiKey"}, {"in", "header"}, {"name", "X-SLURM-USER-NAME"}}},
        {"token", {{"type", "apiKey"}, {"in", "header"}, {"name", "X-SLURM-USER-TOKEN"}}}}}};
  return Dump(document);
}

RestApi::RestApi(ClusterConfig cluster)
    : cluster_(std::move(cluster)), addresses_(ControllerAddresses(cluster_.settings)) {
  leader_ = addresses_.front();
}

Status RestApi::Connect() {
  if (!cluster_.settings.tls.enabled()) return OkStatus();
  // With TLS, one channel a controller, made now: the certificates may be readable only
  // before the server gives up its privileges.
  auto credentials = auth::ChannelCredentials(cluster_);
  if (!credentials) return std::move(credentials).take_error();
  grpc::ChannelArguments args = ControllerChannelArguments();
  auth::ApplyTlsChannelArgs(cluster_, args);
  for (const std::string& address : addresses_) {
    channels_.push_back(grpc::CreateCustomChannel(address, *credentials, args));
    stubs_.push_back(v1::Controller::NewStub(channels_.back()));
  }
  return OkStatus();
}

LeanMetadata RestApi::MetadataOf(const Request& request) const {
  LeanMetadata metadata;
  if (!request.user.empty()) metadata.emplace_back(auth::kJwtUserHeader, request.user);
  metadata.emplace_back(auth::kJwtTokenHeader, request.token);
  return metadata;
}

std::string RestApi::Leader() {
  MutexLock lock(mutex_);
  return leader_;
}

void RestApi::LostLeader(const std::string& address) {
  if (addresses_.size() < 2) return;
  MutexLock lock(mutex_);
  if (leader_ != address) return;  // another thread moved on already
  for (size_t i = 0; i < addresses_.size(); ++i)
    if (addresses_[i] == address) {
      leader_ = addresses_[(i + 1) % addresses_.size()];
      return;
    }
}

grpc::Status RestApi::AtLeader(
    const std::function<grpc::Status(const std::string& address)>& attempt) {
  grpc::Status status;
  // Each controller at most once: a standby answers UNAVAILABLE, and so does one that is down.
  for (size_t tried = 0; tried < addresses_.size(); ++tried) {
    std::string address = Leader();
    status = attempt(address);
    if (status.error_code() != grpc::StatusCode::UNAVAILABLE) return status;
    LostLeader(address);
  }
  return status;
}

grpc::Status RestApi::ShowAccounting(const Request& request, v1::AccountingDatabase* out) {
  const LeanMetadata metadata = MetadataOf(request);
  return AtLeader([&](const std::string& address) {
    if (!cluster_.settings.tls.enabled())
      return LeanUnaryCall(
          LeanTargetOf(address), "/drover.v1.Accounting/Show", v1::AccountingQuery(), out,
          [&metadata] { return metadata; }, 30);
    std::shared_ptr<grpc::Channel> channel;
    for (size_t i = 0; i < addresses_.size() && i < channels_.size(); ++i)
      if (addresses_[i] == address) channel = channels_[i];
    if (!channel) return grpc::Status(grpc::StatusCode::INTERNAL, "no channel to " + address);
    v1::Accounting::Stub stub(channel);
    grpc::ClientContext context;
    SetDeadline(context);
    for (const auto& [key, value] : metadata) context.AddMetadata(key, value);
    return stub.Show(&context, v1::AccountingQuery(), out);
  });
}

v1::Controller::Stub* RestApi::StubFor(const std::string& address) {
  for (size_t i = 0; i < addresses_.size() && i < stubs_.size(); ++i)
    if (addresses_[i] == address) return stubs_[i].get();
  return nullptr;
}

template <typename In, typename Out>
grpc::Status RestApi::Call(const Request& request, std::string_view method,
                           grpc::Status (v1::Controller::Stub::*stub_call)(grpc::ClientContext*,
                                                                           const In&, Out*),
                           const In& in, Out* out) {
  const LeanMetadata metadata = MetadataOf(request);
  return AtLeader([&](const std::string& address) {
    if (!cluster_.settings.tls.enabled())
      return LeanUnaryCall(
          LeanTargetOf(address), method, in, out, [&metadata] { return metadata; }, 30);
    v1::Controller::Stub* stub = StubFor(address);
    if (!stub) return grpc::Status(grpc::StatusCode::INTERNAL, "no channel to " + address);
    grpc::ClientContext context;
    SetDeadline(context);
    for (const auto& [key, value] : metadata) context.AddMetadata(key, value);
    return (stub->*stub_call)(&context, in, out);
  });
}

// The handlers, one a route; each returns the whole response.
struct Handlers {
  RestApi& api;
  const Request& request;

  // Every job the query names, every page of them, with the plan's expected starts.
  grpc::Status LoadJobs(v1::JobQuery query, scontrol::ShowContext& ctx,
                        std::vector<v1::Job>& jobs) {
    v1::JobList list;
    grpc::Status status = wire::ListJobPages(
        [this](const v1::JobQuery& page, v1::JobList* reply) {
          return api.Call(request, "/drover.v1.Controller/ListJobs",
                          &v1::Controller::Stub::ListJobs, page, reply);
        },
        query, &list);
    if (!status.ok()) return status;
    if (list.time()) ctx.now = list.time();
    for (const v1::PlannedStart& plan : list.planned()) ctx.planned[plan.job_id()] = plan;
    jobs = ParseJobs(list);
    return status;
  }

  scontrol::ShowContext Context() {
    scontrol::ShowContext ctx;
    ctx.cluster = &api.cluster_;
    ctx.now = std::time(nullptr);
    ctx.user_name = UserName;
    ctx.group_name = GroupName;
    return ctx;
  }

  void LoadPriorities(const v1::JobFilter* filter, scontrol::ShowContext& ctx) {
    v1::PriorityQuery query;
    if (filter) *query.mutable_filter() = *filter;
    v1::PriorityList priorities;
    if (api.Call(request, "/drover.v1.Controller/Priorities", &v1::Controller::Stub::Priorities,
                 query, &priorities)
            .ok())
      for (const v1::JobPriority& priority : priorities.jobs())
        ctx.priorities[priority.job_id()] = priority.priority();
  }

  // A job listing; with `id`, that job (every task of an array job).
  Response Jobs(const std::string* id) {
    v1::JobQuery query;
    query.set_all_states(true);
    query.set_with_plan(true);
    v1::JobFilter filter;
    if (id) {
      if (!AddJobId(*id, &filter))
        return Error(400, fmt::format("Invalid job id specified: {}", *id), kErrorInvalidJobId);
      *query.mutable_filter() = filter;
    }
    scontrol::ShowContext ctx = Context();
    std::vector<v1::Job> jobs;
    if (grpc::Status status = LoadJobs(query, ctx, jobs); !status.ok()) return FromStatus(status);
    std::vector<v1::Job> shown;
    for (v1::Job& job : jobs)
      if (!id || Requested(filter, job)) shown.push_back(std::move(job));
    if (id && shown.empty()) return Error(404, "Invalid job id specified", kErrorInvalidJobId);
    LoadPriorities(id ? &filter : nullptr, ctx);
    std::shared_lock lock(api.cluster_mutex_);  // the controller's answers are in; format them
    return Document(scontrol::JobsJson(shown, ctx));
  }

  Response Cancel(const std::string& id) {
    v1::CancelRequest cancel;
    if (!AddJobId(id, cancel.mutable_filter()))
      return Error(400, fmt::format("Invalid job id specified: {}", id), kErrorInvalidJobId);
    if (std::optional<std::string> signal = QueryValue(request, "signal")) {
      std::optional<int> number = SignalNumber(*signal);
      if (!number) return Error(400, fmt::format("Invalid signal: {}", *signal), kErrorBadRequest);
      cancel.set_signal(*number);
    }
    v1::ActionReply reply;
    grpc::Status status = api.Call(request, "/drover.v1.Controller/Cancel",
                                   &v1::Controller::Stub::Cancel, cancel, &reply);
    if (!status.ok()) return FromStatus(status);
    return Document(Dump(Envelope()));
  }

  // POST job/{job_id}: scontrol update job's changes (and a hold or release) from the body.
  Response Update(const std::string& id) {
    v1::JobFilter filter;
    if (!AddJobId(id, &filter))
      return Error(400, fmt::format("Invalid job id specified: {}", id), kErrorInvalidJobId);
    // The token first: nothing of the body is looked at for a caller the controller refuses.
    v1::PingReply pong;
    grpc::Status status = api.Call(request, "/drover.v1.Controller/Ping",
                                   &v1::Controller::Stub::Ping, v1::PingRequest(), &pong);
    if (!status.ok()) return FromStatus(status);
    Result<JobUpdate> update = ParseJobUpdate(request.body);
    if (!update) return Error(400, update.error(), kErrorBadRequest);
    v1::ActionReply reply;
    const v1::UpdateJobRequest& change = update->request;
    if (change.settings_size() || change.has_name() || change.has_partition() || change.has_qos() ||
        change.has_nice() || change.has_time_limit_seconds()) {
      v1::UpdateJobRequest call = change;
      *call.mutable_filter() = filter;
      status = api.Call(request, "/drover.v1.Controller/UpdateJob",
                        &v1::Controller::Stub::UpdateJob, call, &reply);
      if (!status.ok()) return FromStatus(status);
    }
    if (update->hold) {
      v1::HoldRequest hold;
      *hold.mutable_filter() = filter;
      hold.set_release(!*update->hold);
      status = api.Call(request, "/drover.v1.Controller/Hold", &v1::Controller::Stub::Hold, hold,
                        &reply);
      if (!status.ok()) return FromStatus(status);
    }
    return Document(Dump(Envelope()));
  }

  Response Submit() {
    // The token first: nothing of the request is looked at for a caller the controller refuses.
    v1::PingReply pong;
    grpc::Status checked = api.Call(request, "/drover.v1.Controller/Ping",
                                    &v1::Controller::Stub::Ping, v1::PingRequest(), &pong);
    if (!checked.ok()) return FromStatus(checked);
    std::optional<Submitter> submitter = SubmitterOf(TokenUser());
    if (!submitter)
      return Error(401, fmt::format("user '{}' is not known on this host", TokenUser()),
                   kErrorAuth);
    Result<SbatchRequest> parsed = ParseJobSubmission(request.body, *submitter);
    if (!parsed) return Error(400, parsed.error(), kErrorBadRequest);
    if (parsed->test_only || parsed->wait)
      return Error(400, "--test-only and --wait are sbatch's own: not in a submission",
                   kErrorBadRequest);
    v1::SubmitRequest submit;
    wire::ToProto(parsed->spec, submit.mutable_spec());
    submit.set_array(parsed->array);
    submit.set_script(parsed->script);
    v1::SubmitReply reply;
    grpc::Status status = api.Call(request, "/drover.v1.Controller/Submit",
                                   &v1::Controller::Stub::Submit, submit, &reply);
    if (!status.ok()) return FromStatus(status);
    Json document = Envelope();
    document["job_id"] = reply.job_id();
    document["step_id"] = "BATCH";
    document["job_submit_user_msg"] = "";
    return Document(Dump(document));
  }

  Response Nodes(const std::string* name) {
    v1::NodeQuery query;
    if (name) query.add_names(*name);
    v1::NodeList nodes;
    grpc::Status status = api.Call(request, "/drover.v1.Controller/ListNodes",
                                   &v1::Controller::Stub::ListNodes, query, &nodes);
    if (!status.ok()) return FromStatus(status);
    std::vector<v1::NodeStatus> shown;
    for (const v1::NodeStatus& node : nodes.nodes())
      if (!name || node.name() == *name) shown.push_back(node);
    if (name && shown.empty())
      return Error(404, fmt::format("Node {} not found", *name), kErrorInvalidNodeName);
    v1::JobQuery jobs_query;
    jobs_query.set_holding_nodes(true);
    if (name) jobs_query.mutable_filter()->add_nodes(*name);
    scontrol::ShowContext ctx = Context();
    std::vector<v1::Job> jobs;
    if (status = LoadJobs(jobs_query, ctx, jobs); !status.ok()) return FromStatus(status);
    std::unique_lock lock(api.cluster_mutex_);  // the controller's node settings, then the nodes
    columns::ApplyNodeSettings(nodes.nodes(), api.cluster_);
    return Document(scontrol::NodesJson(shown, jobs, ctx));
  }

  Response Partitions(const std::string* name) {
    v1::PartitionList list;
    grpc::Status status =
        api.Call(request, "/drover.v1.Controller/ListPartitions",
                 &v1::Controller::Stub::ListPartitions, v1::PartitionQuery(), &list);
    if (!status.ok()) return FromStatus(status);
    std::vector<v1::Partition> shown;
    for (const v1::Partition& partition : list.partitions())
      if (!name || partition.name() == *name) shown.push_back(partition);
    if (name && shown.empty())
      return Error(404, fmt::format("Partition {} not found", *name), kErrorInvalidPartitionName);
    std::shared_lock lock(api.cluster_mutex_);
    return Document(scontrol::PartitionsJson(shown, Context()));
  }

  Response Reservations(const std::string* name) {
    v1::ReservationQuery query;
    if (name) query.set_name(*name);
    v1::ReservationList list;
    grpc::Status status = api.Call(request, "/drover.v1.Controller/ListReservations",
                                   &v1::Controller::Stub::ListReservations, query, &list);
    if (status.error_code() == grpc::StatusCode::NOT_FOUND && name)
      return Error(404, fmt::format("Reservation {} not found", *name), kErrorBadRequest);
    if (!status.ok()) return FromStatus(status);
    std::vector<v1::Reservation> shown(list.reservations().begin(), list.reservations().end());
    std::shared_lock lock(api.cluster_mutex_);
    scontrol::ShowContext ctx = Context();
    if (list.time()) ctx.now = list.time();
    return Document(scontrol::ReservationsJson(shown, ctx));
  }

  // slurmdb's TRES lists: [{"type": "gres", "name": "gpu", "id": N, "count": C}, ...].
  static Json TresJson(const TresList& tres) {
    static const std::vector<std::string> kIds = {"cpu", "mem", "energy", "node", "billing"};
    Json list = Json::array();
    for (const auto& [name, count] : tres.items()) {
      size_t slash = name.find('/');
      Json entry;
      entry["type"] = slash == std::string::npos ? name : name.substr(0, slash);
      entry["name"] = slash == std::string::npos ? "" : name.substr(slash + 1);
      auto known = std::find(kIds.begin(), kIds.end(), name);
      entry["id"] = known == kIds.end() ? 1001 : static_cast<int>(known - kIds.begin()) + 1;
      entry["count"] = count;
      list.push_back(std::move(entry));
    }
    return list;
  }
  static Json Limit(int64_t value) { return value == acct::kUnset ? Json(nullptr) : Json(value); }

  Result<acct::Database> Accounting(Response& failed) {
    v1::AccountingDatabase reply;
    grpc::Status status = api.ShowAccounting(request, &reply);
    if (!status.ok()) {
      failed = FromStatus(status);
      return MakeError("failed");
    }
    auto database = wire::FromProto(reply);
    if (!database) failed = Error(500, database.error(), kErrorGeneric);
    return database;
  }

  Response Associations(bool single) {
    Response failed;
    auto database = Accounting(failed);
    if (!database) return failed;
    auto query = [this](const char* name) -> const std::string* {
      auto found = request.query.find(name);
      return found == request.query.end() ? nullptr : &found->second;
    };
    const std::string* account = query("account");
    const std::string* cluster = query("cluster");
    const std::string* user = query("user");
    const std::string* partition = query("partition");
    if (single && (!account || !cluster))
      return Error(400, "name the association: give account= and cluster= (and user=, partition=)",
                   kErrorBadRequest);
    Json document = Envelope();
    Json list = Json::array();
    for (const acct::Association& association : database->associations) {
      if (account && association.account != *account) continue;
      if (cluster && association.cluster != *cluster) continue;
      if (user ? association.user != *user : single && association.is_user()) continue;
      if (partition ? association.partition != *partition
                    : single && !association.partition.empty())
        continue;
      const acct::Association effective = database->Effective(association);
      const acct::Limits& limits = association.limits;
      Json entry;
      entry["account"] = association.account;
      entry["cluster"] = association.cluster;
      entry["default"] = {{"qos", effective.default_qos}};
      entry["flags"] = Json::array();
      entry["max"] = {
          {"jobs",
           {{"per",
             {{"count", Limit(limits.max_jobs)},
              {"accruing", nullptr},
              {"submitted", Limit(limits.max_submit_jobs)},
              {"wall_clock", Limit(limits.max_wall_minutes)}}},
            {"active", Limit(limits.grp_jobs)},
            {"accruing", nullptr},
            {"total", Limit(limits.grp_submit_jobs)}}},
          {"per", {{"account", {{"wall_clock", Limit(limits.grp_wall_minutes)}}}}},
          {"tres",
           {{"total", TresJson(limits.grp_tres)},
            {"group",
             {{"minutes", TresJson(limits.grp_tres_mins)},
              {"active", TresJson(limits.grp_tres_run_mins)}}},
            {"minutes", {{"per", {{"job", TresJson(limits.max_tres_mins)}}}}},
            {"per",
             {{"job", TresJson(limits.max_tres)}, {"node", TresJson(limits.max_tres_per_node)}}}}}};
      entry["min"] = {{"priority_threshold", nullptr}};
      entry["parent_account"] = association.is_user() ? "" : association.parent;
      entry["partition"] = association.partition;
      entry["priority"] = Limit(association.priority);
      entry["qos"] = effective.qos;
      entry["shares_raw"] = association.shares;
      entry["user"] = association.user;
      list.push_back(std::move(entry));
    }
    if (single && list.empty()) return Error(404, "no such association", kErrorBadRequest);
    document["associations"] = std::move(list);
    return Document(Dump(document));
  }

  Response Qos(const std::string* name) {
    Response failed;
    auto database = Accounting(failed);
    if (!database) return failed;
    Json document = Envelope();
    Json list = Json::array();
    for (const acct::Qos& qos : database->qos) {
      if (name && qos.name != *name) continue;
      const acct::Limits& limits = qos.limits;
      Json entry;
      entry["description"] = qos.description;
      Json flags = Json::array();
      for (const std::string& flag : Split(acct::FormatQosFlags(qos.flags), ','))
        if (!flag.empty()) flags.push_back(flag);
      entry["flags"] = std::move(flags);
      entry["id"] = qos.id;
      entry["limits"] = {
          {"grace_time", qos.grace_seconds},
          {"max",
           {{"active_jobs", {{"accruing", nullptr}, {"count", Limit(limits.grp_jobs)}}},
            {"jobs",
             {{"active_jobs",
               {{"per",
                 {{"account", Limit(qos.max_jobs_per_account)},
                  {"user", Limit(limits.max_jobs)}}}}},
              {"per",
               {{"account", Limit(qos.max_submit_per_account)},
                {"user", Limit(limits.max_submit_jobs)}}}}},
            {"tres",
             {{"total", TresJson(limits.grp_tres)},
              {"minutes",
               {{"per", {{"job", TresJson(limits.max_tres_mins)}}},
                {"total", TresJson(limits.grp_tres_mins)}}},
              {"per",
               {{"account", TresJson(qos.max_tres_per_account)},
                {"job", TresJson(limits.max_tres)},
                {"node", TresJson(limits.max_tres_per_node)},
                {"user", TresJson(qos.max_tres_per_user)}}}}},
            {"wall_clock",
             {{"per",
               {{"qos", Limit(limits.grp_wall_minutes)},
                {"job", Limit(limits.max_wall_minutes)}}}}}}},
          {"factor", nullptr},
          {"min",
           {{"priority_threshold", nullptr},
            {"tres", {{"per", {{"job", TresJson(qos.min_tres)}}}}}}}};
      entry["name"] = qos.name;
      Json modes = Json::array();
      if (qos.preempt_mode != "cluster") modes.push_back(qos.preempt_mode);
      entry["preempt"] = {{"list", qos.preempt},
                          {"mode", std::move(modes)},
                          {"exempt_time", Limit(qos.preempt_exempt_seconds)}};
      entry["priority"] = qos.priority;
      entry["usage_factor"] = qos.usage_factor;
      entry["usage_threshold"] =
          qos.usage_threshold < 0 ? Json(nullptr) : Json(qos.usage_threshold);
      list.push_back(std::move(entry));
    }
    if (name && list.empty())
      return Error(404, fmt::format("QOS {} not found", *name), kErrorBadRequest);
    document["qos"] = std::move(list);
    return Document(Dump(document));
  }

  Response Ping() {
    // The token first, at the controller in charge: a standby does not check it.
    v1::PingReply leader;
    grpc::Status checked = api.Call(request, "/drover.v1.Controller/Ping",
                                    &v1::Controller::Stub::Ping, v1::PingRequest(), &leader);
    if (checked.error_code() == grpc::StatusCode::UNAUTHENTICATED) return FromStatus(checked);
    Json pings = Json::array();
    const std::vector<ControllerHost>& hosts = api.cluster_.settings.controller_hosts;
    const LeanMetadata metadata = api.MetadataOf(request);
    for (size_t i = 0; i < api.addresses_.size(); ++i) {
      v1::PingReply reply;
      grpc::Status status;
      if (!api.cluster_.settings.tls.enabled()) {
        status = LeanUnaryCall(
            LeanTargetOf(api.addresses_[i]), "/drover.v1.Controller/Ping", v1::PingRequest(),
            &reply, [&metadata] { return metadata; }, 10);
      } else if (v1::Controller::Stub* stub = api.StubFor(api.addresses_[i])) {
        grpc::ClientContext context;
        SetDeadline(context, 10);
        for (const auto& [key, value] : metadata) context.AddMetadata(key, value);
        status = stub->Ping(&context, v1::PingRequest(), &reply);
      } else {
        status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "no channel");
      }
      // Up is answering at all; what the answer says about the token was settled above.
      const bool up = status.error_code() != grpc::StatusCode::UNAVAILABLE &&
                      status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED;
      std::string host = i < hosts.size() ? hosts[i].name : reply.host();
      if (host.empty()) host = ShortHostName();
      pings.push_back({{"hostname", host},
                       {"ping", up ? "UP" : "DOWN"},
                       {"status", up ? 0 : -1},
                       {"mode", i == 0   ? std::string("primary")
                                : i == 1 ? std::string("backup")
                                         : fmt::format("backup{}", i)}});
    }
    Json document = Envelope();
    document["pings"] = pings;
    return Document(Dump(document));
  }

  Response Diag() {
    v1::DiagReply reply;
    grpc::Status status = api.Call(request, "/drover.v1.Controller/Diag",
                                   &v1::Controller::Stub::Diag, v1::DiagRequest(), &reply);
    if (!status.ok()) return FromStatus(status);
    return Document(SdiagJson(reply));
  }

  // /slurmdb/v0.0.38/jobs and job/{id}: the job history, as sacct --json prints it.
  Response History(const std::string* id) {
    v1::HistoryQuery query;
    v1::JobFilter asked;  // with an ID: the job or task the path names
    const int64_t now = std::time(nullptr);
    if (id) {
      if (!AddJobId(*id, query.mutable_filter()))
        return Error(400, fmt::format("Invalid job id specified: {}", *id), kErrorInvalidJobId);
      // The history finds a task under its array's ID, as sacct -j asks it; the task is picked
      // from the array's records below, by the filter as asked.
      asked = query.filter();
      for (const auto& task : asked.array_tasks())
        query.mutable_filter()->add_job_ids(task.array_job_id());
    } else {
      // sacct's default window: since midnight, unless start_time says otherwise.
      std::optional<std::string> start = QueryValue(request, "start_time");
      std::optional<std::string> end = QueryValue(request, "end_time");
      // Seconds since the epoch, or what sacct -S and -E take.
      auto time_of = [now](const std::string& text) -> std::optional<int64_t> {
        if (std::optional<int64_t> seconds = ParseInt64(text); seconds && *seconds >= 0)
          return seconds;
        return ParseSacctTime(text, now);
      };
      std::optional<int64_t> from = start ? time_of(*start) : std::nullopt;
      std::optional<int64_t> to = end ? time_of(*end) : std::nullopt;
      if ((start && !from) || (end && !to))
        return Error(400,
                     "invalid start_time or end_time (seconds since the epoch, or sacct's "
                     "time formats)",
                     kErrorBadRequest);
      if (!from) {
        std::time_t today = static_cast<std::time_t>(now);
        std::tm local{};
        localtime_r(&today, &local);
        local.tm_hour = local.tm_min = local.tm_sec = 0;
        from = std::mktime(&local);
      }
      query.set_start_time(*from);
      if (to) query.set_end_time(*to);
      if (std::optional<std::string> users = QueryValue(request, "users"))
        for (const std::string& user : CommaList(*users)) {
          std::optional<Submitter> who = SubmitterOf(user);
          if (!who) return Error(400, fmt::format("unknown user '{}'", user), kErrorBadRequest);
          query.add_uids(who->uid);
        }
    }
    v1::JobList list;
    do {
      v1::JobList page;
      grpc::Status status = api.Call(request, "/drover.v1.Controller/History",
                                     &v1::Controller::Stub::History, query, &page);
      if (!status.ok()) return FromStatus(status);
      if (list.time() == 0) list.set_time(page.time());
      for (std::string& job : *page.mutable_jobs()) list.add_jobs(std::move(job));
      if (list.jobs_size() > kMaxHistoryJobs)
        return Error(400,
                     fmt::format("more than {} jobs in the window: narrow it with start_time, "
                                 "end_time or users",
                                 kMaxHistoryJobs),
                     kErrorBadRequest);
      query.set_after(page.next());
    } while (!query.after().empty());
    std::vector<v1::Job> jobs = ParseJobs(list);
    if (id)
      std::erase_if(jobs, [&query](const v1::Job& job) { return !Requested(query.filter(), job); });
    if (id && jobs.empty()) return Error(404, "Invalid job id specified", kErrorInvalidJobId);
    std::shared_lock lock(api.cluster_mutex_);
    SacctOptions options;
    options.now = list.time() ? list.time() : now;
    options.cluster_name = api.cluster_.settings.cluster_name;
    options.cluster = &api.cluster_;
    return Document(FormatSacctJson(jobs, options));
  }

  // X-SLURM-USER-NAME, or the name the token claims (the controller checks both).
  std::string TokenUser() const {
    if (!request.user.empty()) return request.user;
    return auth::UnverifiedJwtUser(request.token).value_or("");
  }

  static std::optional<int> SignalNumber(const std::string& text);
};

std::optional<int> Handlers::SignalNumber(const std::string& text) {
  static const std::pair<const char*, int> kSignals[] = {
      {"HUP", 1},   {"INT", 2},     {"QUIT", 3},  {"ABRT", 6},  {"KILL", 9},  {"USR1", 10},
      {"SEGV", 11}, {"USR2", 12},   {"PIPE", 13}, {"ALRM", 14}, {"TERM", 15}, {"CONT", 18},
      {"STOP", 19}, {"TSTP", 20},   {"TTIN", 21}, {"TTOU", 22}, {"URG", 23},  {"XCPU", 24},
      {"XFSZ", 25}, {"VTALRM", 26}, {"PROF", 27}, {"WINCH", 28}};
  std::string name;
  for (char c : text) name += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  if (name.starts_with("SIG")) name = name.substr(3);
  for (const auto& [signal, number] : kSignals)
    if (name == signal) return number;
  std::optional<int64_t> number = ParseInt64(text);
  if (number && *number >= 1 && *number <= 64) return static_cast<int>(*number);
  return std::nullopt;
}

Response RestApi::Handle(const Request& raw) {
  if (raw.token.empty())
    return Error(401,
                 "authentication failed: the request carries no X-SLURM-USER-TOKEN header (get "
                 "a token with `scontrol token`)",
                 kErrorAuth);
  // What goes on to the controller as metadata: a token's characters (base64url and dots), a
  // user name's (POSIX's portable set), bounded.
  if (raw.token.size() > auth::kMaxJwtBytes ||
      raw.token.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                  "0123456789-_.") != std::string::npos)
    return Error(401, "authentication failed: X-SLURM-USER-TOKEN is not a token", kErrorAuth);
  if (raw.user.size() > 256 ||
      raw.user.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                 "0123456789-_.$") != std::string::npos)
    return Error(401, "authentication failed: X-SLURM-USER-NAME is not a user name", kErrorAuth);
  // The web dashboard's calls (dashboard.h).
  if (raw.path.starts_with("/ui/api/")) return DashboardApi(*this, raw);
  // "/slurm/v0.0.38/jobs/" as "/slurm/v0.0.38/jobs": Slurm's own document lists paths so.
  Request request = raw;
  std::string path;
  for (char c : request.path)
    if (c != '/' || path.empty() || path.back() != '/') path += c;
  if (path.size() > 1 && path.back() == '/') path.pop_back();
  request.path = std::move(path);
  const RouteInfo* route = nullptr;
  std::string parameter;
  bool path_known = false;
  for (const RouteInfo& candidate : kRoutes) {
    std::string value;
    if (!Matches(candidate.path, request.path, value)) continue;
    // "/job/submit" is also "/job/{job_id}": the fixed path wins.
    if (!value.empty() && value == "submit" &&
        std::string_view(candidate.path).find("/slurm/") == 0)
      continue;
    path_known = true;
    if (request.method != candidate.method) continue;
    route = &candidate;
    parameter = std::move(value);
    break;
  }
  if (!route) {
    if (path_known)
      return Error(405, fmt::format("{} is not served for {}", request.method, request.path),
                   kErrorBadRequest);
    return Error(404, fmt::format("no such path: {} (GET /openapi/v3 lists them)", request.path),
                 kErrorBadRequest);
  }
  if (std::optional<Response> refused = UnknownQuery(request, *route)) return *refused;
  if (request.method != "POST" && !request.body.empty())
    return Error(400, fmt::format("{} takes no request body", request.method), kErrorBadRequest);
  Handlers handlers{*this, request};
  const std::string route_path = route->path;
  const std::string* named = parameter.empty() ? nullptr : &parameter;
  if (route_path == "/slurm/v0.0.38/ping") return handlers.Ping();
  if (route_path == "/slurm/v0.0.38/diag") return handlers.Diag();
  if (route_path == "/slurm/v0.0.38/jobs") return handlers.Jobs(nullptr);
  if (route_path == "/slurm/v0.0.38/job/submit") return handlers.Submit();
  if (route_path == "/slurm/v0.0.38/job/{job_id}") {
    if (request.method == "DELETE") return handlers.Cancel(parameter);
    if (request.method == "POST") return handlers.Update(parameter);
    return handlers.Jobs(named);
  }
  if (route_path == "/slurm/v0.0.38/nodes" || route_path == "/slurm/v0.0.38/node/{node_name}")
    return handlers.Nodes(named);
  if (route_path == "/slurm/v0.0.38/partitions" ||
      route_path == "/slurm/v0.0.38/partition/{partition_name}")
    return handlers.Partitions(named);
  if (route_path == "/slurm/v0.0.38/reservations" ||
      route_path == "/slurm/v0.0.38/reservation/{reservation_name}")
    return handlers.Reservations(named);
  if (route_path == "/slurmdb/v0.0.38/jobs" || route_path == "/slurmdb/v0.0.38/job/{job_id}")
    return handlers.History(named);
  if (route_path == "/slurmdb/v0.0.38/associations") return handlers.Associations(false);
  if (route_path == "/slurmdb/v0.0.38/association") return handlers.Associations(true);
  if (route_path == "/slurmdb/v0.0.38/qos" || route_path == "/slurmdb/v0.0.38/qos/{qos_name}")
    return handlers.Qos(named);
  return Error(500, "a route without a handler: " + route_path, kErrorGeneric);
}

// The calls dashboard.cc makes: instantiated here, where Call is defined.
#define DROVER_REST_CALL(In, Out)                                                            \
  template grpc::Status RestApi::Call<v1::In, v1::Out>(                                      \
      const Request&, std::string_view,                                                      \
      grpc::Status (v1::Controller::Stub::*)(grpc::ClientContext*, const v1::In&, v1::Out*), \
      const v1::In&, v1::Out*);
DROVER_REST_CALL(HoldRequest, ActionReply)
DROVER_REST_CALL(UpdateNodeRequest, ActionReply)
DROVER_REST_CALL(ShareQuery, ShareList)
DROVER_REST_CALL(HistoryQuery, JobList)
DROVER_REST_CALL(CancelRequest, ActionReply)
DROVER_REST_CALL(JobQuery, JobList)
DROVER_REST_CALL(NodeQuery, NodeList)
DROVER_REST_CALL(DiagRequest, DiagReply)
DROVER_REST_CALL(PingRequest, PingReply)
DROVER_REST_CALL(ReservationQuery, ReservationList)
#undef DROVER_REST_CALL

}  // namespace drover::cli::restd
