// See client.h.
#include "cli/client.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <vector>

#include "auth/grpc_auth.h"
#include "wire/job_pages.h"

extern char** environ;

namespace drover::cli {

LeanTarget LeanTargetOf(const std::string& address) {
  size_t colon = address.rfind(':');
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  int port = 0;
  std::from_chars(address.data() + colon + 1, address.data() + address.size(), port);
  return LeanTarget{host, port};
}

namespace {

// One Ping of the controller at `address`, with a short deadline: lean when the cluster has no
// TLS, else over a channel of its own.
grpc::Status PingAt(const Connection& connection, const std::string& address, v1::PingReply* reply,
                    int deadline_seconds) {
  if (!connection.cluster.settings.tls.enabled()) {
    Connection lean{connection.cluster,
                    connection.authenticator,
                    nullptr,
                    nullptr,
                    LeanTargetOf(address),
                    address};
    return LeanCall(lean, "/drover.v1.Controller/Ping", v1::PingRequest(), reply, deadline_seconds);
  }
  auto channel = auth::NewChannel(address, connection.cluster, grpc::ChannelArguments(),
                                  *connection.authenticator);
  if (!channel) return grpc::Status(grpc::StatusCode::UNAVAILABLE, channel.error());
  grpc::ClientContext context;
  SetDeadline(context, deadline_seconds);
  return v1::Controller::NewStub(*channel)->Ping(&context, v1::PingRequest(), reply);
}

}  // namespace

std::string FindController(const Connection& connection) {
  const ClusterSettings& settings = connection.cluster.settings;
  std::vector<std::string> addresses = ControllerAddresses(settings);
  if (addresses.size() == 1) return addresses.front();
  // As Slurm's commands with a backup controller: the hosts in order, again and again while a
  // takeover may be under way (SlurmctldTimeout, and a little more for the new one to start).
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::seconds(std::max<int64_t>(settings.slurmctld_timeout_seconds, 1) + 5);
  do {
    for (const std::string& address : addresses) {
      v1::PingReply reply;
      if (PingAt(connection, address, &reply, 2).ok() && !reply.standby()) return address;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  } while (std::chrono::steady_clock::now() < deadline);
  return addresses.front();  // its calls fail as a controller out of reach does
}

std::vector<ControllerPing> PingEveryController(const Connection& connection) {
  std::vector<ControllerPing> pings;
  const ClusterSettings& settings = connection.cluster.settings;
  std::vector<std::string> addresses = ControllerAddresses(settings);
  for (size_t i = 0; i < addresses.size(); ++i) {
    ControllerPing ping;
    ping.name = i < settings.controller_hosts.size() ? settings.controller_hosts[i].name : "";
    ping.address = addresses[i];
    v1::PingReply reply;
    ping.up = PingAt(connection, addresses[i], &reply, 10).ok();
    ping.standby = ping.up && reply.standby();
    if (ping.name.empty()) ping.name = reply.host();
    pings.push_back(std::move(ping));
  }
  return pings;
}

Result<Connection> Connect(ConnectMode mode, bool find_controller) {
  std::string path = ResolveConfPath("");
  ConfigLoad load = LoadClusterConfig(path);
  if (!load.ok()) {
    std::string first = load.diagnostics.errors().empty()
                            ? "cannot be read"
                            : load.diagnostics.errors().front().ToString();
    return MakeError(fmt::format(
        "cannot load the cluster's configuration {}: {} (set DROVER_CONF or SLURM_CONF to its "
        "slurm.conf; `drover env` prints the line for a cluster started with `drover up`)",
        path, first));
  }
  Connection connection{std::move(load.config), nullptr, nullptr, nullptr, std::nullopt, ""};
  const ClusterSettings& settings = connection.cluster.settings;
  Result<auth::Settings> auth_settings = auth::SettingsOf(connection.cluster);
  if (!auth_settings) return MakeError(auth_settings.error());
  Result<std::unique_ptr<auth::Authenticator>> authenticator =
      auth::Create(*auth_settings, auth::Role::kClient);
  if (!authenticator) return MakeError(authenticator.error());
  connection.authenticator = std::move(*authenticator);
  connection.address =
      find_controller ? FindController(connection) : ControllerAddresses(settings).front();
  if (mode == ConnectMode::kLean && !settings.tls.enabled()) {
    connection.lean = LeanTargetOf(connection.address);
    return connection;
  }
  if (Status made = EnsureChannel(connection); !made) return std::move(made).take_error();
  return connection;
}

Status EnsureChannel(Connection& connection) {
  if (connection.stub) return OkStatus();
  grpc::ChannelArguments args = ControllerChannelArguments();
  if (connection.address.empty()) connection.address = FindController(connection);
  auto channel =
      auth::NewChannel(connection.address, connection.cluster, args, *connection.authenticator);
  if (!channel) return MakeError(channel.error());
  connection.stub = v1::Controller::NewStub(*channel);
  connection.channel = *channel;
  connection.lean.reset();
  return OkStatus();
}

grpc::Status LeanCall(const Connection& connection, std::string_view method,
                      const google::protobuf::MessageLite& request,
                      google::protobuf::MessageLite* reply, int deadline_seconds) {
  auth::Authenticator& authenticator = *connection.authenticator;
  return LeanUnaryCall(
      *connection.lean, method, request, reply,
      [&authenticator] {
        LeanMetadata metadata;
        auto token = authenticator.Credential();
        // Without one the controller refuses the call, saying so; the reason is printed here.
        if (token)
          metadata.emplace_back(auth::kCredentialHeader, std::move(*token));
        else
          std::fprintf(stderr, "drover: cannot authenticate a call: %s\n", token.error().c_str());
        return metadata;
      },
      deadline_seconds);
}

// gRPC retries a call the controller refused with RESOURCE_EXHAUSTED (its rate limit, or a full
// queue) with jittered exponential backoff, as Slurm's commands sleep and retry on
// SLURMCTLD_COMMUNICATIONS_BACKOFF: every command gets it from the channel, no call site
// changes. gRPC allows at most 5 attempts; after the last the error is shown.
grpc::ChannelArguments ControllerChannelArguments() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);  // a full queue is larger than gRPC's 4 MiB default
  args.SetServiceConfigJSON(R"({"methodConfig": [{
      "name": [{"service": "drover.v1.Controller"}, {"service": "drover.v1.Accounting"}],
      "retryPolicy": {"maxAttempts": 5, "initialBackoff": "0.5s", "maxBackoff": "4s",
                      "backoffMultiplier": 2, "retryableStatusCodes": ["RESOURCE_EXHAUSTED"]}
  }]})");
  return args;
}

grpc::Status ListAllJobs(Connection& connection, const v1::JobQuery& query, v1::JobList* list) {
  return wire::ListJobPages(
      [&connection](const v1::JobQuery& page, v1::JobList* reply) {
        return Unary(connection, "/drover.v1.Controller/ListJobs", &v1::Controller::Stub::ListJobs,
                     page, reply);
      },
      query, list);
}

std::string ShortHostName() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  std::string host = name;
  return host.substr(0, host.find('.'));
}

Identity Me() {
  Identity me{getuid(), getgid(), std::to_string(getuid())};
  if (passwd* entry = getpwuid(me.uid); entry && entry->pw_name) me.user = entry->pw_name;
  return me;
}

void SetCaller(v1::Caller* caller) {
  caller->set_uid(getuid());
  caller->set_gid(getgid());
}

std::map<std::string, std::string> Environment() {
  std::map<std::string, std::string> env;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string text = *entry;
    size_t eq = text.find('=');
    if (eq != std::string::npos) env[text.substr(0, eq)] = text.substr(eq + 1);
  }
  return env;
}

std::string CurrentDirectory() {
  std::error_code error;
  std::filesystem::path cwd = std::filesystem::current_path(error);
  return error ? "/" : cwd.string();
}

void SetDeadline(grpc::ClientContext& context, int seconds) {
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
}

std::string Unreachable(const grpc::Status& status) {
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
      status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED)
    return "Unable to contact slurm controller (connect failure)";
  return status.error_message();
}

}  // namespace drover::cli
