// See client.h.
#include "cli/client.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "auth/tls.h"

extern char** environ;

namespace drover::cli {

Result<Connection> Connect() {
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
  auto credentials = auth::ChannelCredentials(load.config);
  if (!credentials) return MakeError(credentials.error());
  Connection connection{std::move(load.config), nullptr};
  const ClusterSettings& settings = connection.cluster.settings;
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);  // a full queue is larger than gRPC's 4 MiB default
  auth::ApplyTlsChannelArgs(connection.cluster, args);
  connection.stub = v1::Controller::NewStub(
      grpc::CreateCustomChannel(ControllerAddress(settings), *credentials, args));
  return connection;
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
