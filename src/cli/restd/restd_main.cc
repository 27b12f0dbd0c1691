// drover-restd (`drover restd`): the REST API's server, as Slurm's slurmrestd is run:
//   drover restd [-f slurm.conf] [-a rest_auth/jwt] [-s openapi/v0.0.38] [-t THREADS]
//                [-u USER] [-g GROUP] HOST:PORT...
// It serves until SIGTERM or SIGINT. Like slurmrestd it refuses to run as root or SlurmUser (it
// would have nothing to prove with them, and a bug would act as them): root starts it with -u.
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <httplib.h>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cli/query/query_common.h"
#include "cli/restd/rest_api.h"
#include "cli/restd/rest_http.h"
#include "common/cluster_config.h"
#include "common/getopt.h"
#include "common/text.h"

namespace drover::cli::restd {
namespace {

constexpr std::string_view kUsage =
    "Usage: drover restd [OPTIONS] HOST:PORT|unix:/PATH...\n"
    "Serves Slurm 22.05's REST API (openapi/v0.0.38 and dbv0.0.38) and the web dashboard (/ui/)\n"
    "on each HOST:PORT (port 0: any free port, printed) or UNIX socket, for the cluster of\n"
    "slurm.conf. Requests authenticate with X-SLURM-USER-NAME and X-SLURM-USER-TOKEN (`scontrol\n"
    "token`); the controller checks them (AuthAltTypes=auth/jwt). GET /openapi/v3 lists the "
    "paths.\n"
    "  -f FILE      slurm.conf (default: DROVER_CONF, SLURM_CONF, /etc/slurm/slurm.conf)\n"
    "  -a LIST      authentication: rest_auth/jwt (the only one served)\n"
    "  -s LIST      plugins: openapi/v0.0.38, openapi/dbv0.0.38 (both are always served)\n"
    "  -t THREADS   requests served at once (default 20)\n"
    "  -u USER      run as USER once the ports are bound (required when started by root)\n"
    "  -g GROUP     run with GROUP (default: USER's primary group)\n"
    "  -h           this help;  -V  the version\n";

constexpr OptionSpec kOptions[] = {
    {'f', "conf", OptionSpec::kRequired},    {'a', "auth", OptionSpec::kRequired},
    {'s', "plugins", OptionSpec::kRequired}, {'t', "threads", OptionSpec::kRequired},
    {'u', "user", OptionSpec::kRequired},    {'g', "group", OptionSpec::kRequired},
    {'h', "help", OptionSpec::kNone},        {'V', "version", OptionSpec::kNone},
    {'v', "verbose", OptionSpec::kNone},
};

constexpr int kMaxThreads = 1024;

int Fail(const std::string& message) {
  fmt::print(stderr, "drover restd: error: {}\n", message);
  return 1;
}

// Root drops to -u/-g once the ports are bound; nobody runs on as root or SlurmUser.
Status DropPrivileges(const std::string& user, const std::string& group_name,
                      const std::string& slurm_user) {
  if (!user.empty()) {
    passwd* entry = getpwnam(user.c_str());
    if (!entry) return MakeError(fmt::format("-u: no user is named '{}'", user));
    gid_t gid = entry->pw_gid;
    if (!group_name.empty()) {
      struct group* found = getgrnam(group_name.c_str());
      if (!found) return MakeError(fmt::format("-g: no group is named '{}'", group_name));
      gid = found->gr_gid;
    }
    if (getuid() == 0 && setgroups(0, nullptr) != 0)
      return MakeError(fmt::format("setgroups: {}", std::strerror(errno)));
    if (setgid(gid) != 0 || setuid(entry->pw_uid) != 0)
      return MakeError(fmt::format("cannot become {}: {}", user, std::strerror(errno)));
  } else if (!group_name.empty()) {
    return MakeError("-g needs -u");
  }
  passwd* slurm = getpwnam(slurm_user.c_str());
  if (getuid() == 0 || geteuid() == 0 || (slurm && getuid() == slurm->pw_uid))
    return MakeError(fmt::format(
        "refusing to run as {}: the REST API acts only for the users whose tokens it carries; "
        "start it as an unprivileged user, or give -u USER",
        getuid() == 0 ? std::string("root") : "SlurmUser " + slurm_user));
  return OkStatus();
}

}  // namespace

int Main(int argc, char** argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  Result<ParsedOptions> parsed = ParseOptions(words, kOptions);
  if (!parsed) {
    fmt::print(stderr, "drover restd: error: {}\n{}", parsed.error(), kUsage);
    return 2;
  }
  if (parsed->Has("help")) return fmt::print("{}", kUsage), 0;
  if (parsed->Has("version")) return fmt::print("drover restd (slurmrestd 22.05.8)\n"), 0;
  for (const std::string& list : parsed->All("auth"))
    for (const std::string& type : CommaList(list))
      if (type != "rest_auth/jwt")
        return Fail(
            fmt::format("-a {}: only rest_auth/jwt is served (tokens from `scontrol "
                        "token`)",
                        type));
  for (const std::string& list : parsed->All("plugins"))
    for (const std::string& plugin : CommaList(list))
      if (plugin != "openapi/v0.0.38" && plugin != "openapi/dbv0.0.38")
        return Fail(
            fmt::format("-s {}: the plugins served are openapi/v0.0.38 and "
                        "openapi/dbv0.0.38",
                        plugin));
  int threads = 20;
  if (std::optional<std::string> text = parsed->Last("threads")) {
    std::optional<int64_t> count = ParseInt64(*text);
    if (!count || *count < 1 || *count > kMaxThreads)
      return Fail(fmt::format("-t {}: expected 1 to {} threads", *text, kMaxThreads));
    threads = static_cast<int>(*count);
  }
  if (parsed->operands.empty())
    return Fail(
        "give the address to listen on, as HOST:PORT (for example 127.0.0.1:6820) or "
        "unix:/PATH");

  std::string path = ResolveConfPath(parsed->Last("conf").value_or(""));
  ConfigLoad load = LoadClusterConfig(path);
  if (!load.ok()) return Fail(fmt::format("cannot use {}:\n{}", path, load.ErrorText()));
  const std::string slurm_user = load.config.settings.slurm_user;
  auto api = std::make_shared<RestApi>(std::move(load.config));
  if (Status connected = api->Connect(); !connected)
    return Fail("cannot reach the controller over TLS: " + connected.error());

  std::vector<std::unique_ptr<httplib::Server>> servers;
  std::vector<std::string> bound;
  std::vector<std::string> sockets;  // UNIX sockets made here: removed at the end
  for (const std::string& address : parsed->operands) {
    if (address.starts_with("unix:")) {
      // As slurmrestd's unix:/path: who may connect is the socket file's permissions (the
      // directory's), and every request still carries its token.
      const std::string socket_path = address.substr(5);
      if (socket_path.empty() || socket_path.front() != '/' ||
          socket_path.size() >= sizeof(sockaddr_un{}.sun_path))
        return Fail(fmt::format("{}: give an absolute path of at most {} characters", address,
                                sizeof(sockaddr_un{}.sun_path) - 1));
      struct stat existing {};
      if (lstat(socket_path.c_str(), &existing) == 0) {
        if (!S_ISSOCK(existing.st_mode))
          return Fail(fmt::format("{}: the path exists and is not a socket", address));
        // A socket left by a server that is gone (nothing answers) is replaced; a live one is
        // another server's.
        int probe = socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un target{};
        target.sun_family = AF_UNIX;
        std::strncpy(target.sun_path, socket_path.c_str(), sizeof target.sun_path - 1);
        bool live =
            probe >= 0 && connect(probe, reinterpret_cast<sockaddr*>(&target), sizeof target) == 0;
        if (probe >= 0) close(probe);
        if (live) return Fail(fmt::format("{}: another server listens there", address));
        unlink(socket_path.c_str());
      }
      auto server = std::make_unique<httplib::Server>();
      server->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
      server->set_address_family(AF_UNIX);
      MountRestApi(*server, api, "drover restd");
      if (!server->bind_to_port(socket_path, 80))
        return Fail(fmt::format("cannot listen on {}: {}", address, std::strerror(errno)));
      // Anyone who can reach the directory may connect (connecting needs write permission);
      // the directory's permissions say who can, and every request needs its token anyway.
      chmod(socket_path.c_str(), 0666);
      sockets.push_back(socket_path);
      bound.push_back(address);
      servers.push_back(std::move(server));
      continue;
    }
    size_t colon = address.rfind(':');
    std::optional<int64_t> port =
        colon == std::string::npos ? std::nullopt : ParseInt64(address.substr(colon + 1));
    if (!port || *port < 0 || *port > 65535 || colon == 0)
      return Fail(fmt::format("'{}' is not HOST:PORT", address));
    std::string host = address.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
    auto server = std::make_unique<httplib::Server>();
    server->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    MountRestApi(*server, api, "drover restd");
    int bound_port =
        *port == 0
            ? server->bind_to_any_port(host)
            : (server->bind_to_port(host, static_cast<int>(*port)) ? static_cast<int>(*port) : -1);
    if (bound_port < 0)
      return Fail(fmt::format("cannot listen on {}: {}", address, std::strerror(errno)));
    bound.push_back(fmt::format("{}:{}", address.substr(0, colon), bound_port));
    servers.push_back(std::move(server));
  }
  if (Status dropped = DropPrivileges(parsed->Last("user").value_or(""),
                                      parsed->Last("group").value_or(""), slurm_user);
      !dropped)
    return Fail(dropped.error());
  signal(SIGPIPE, SIG_IGN);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);  // the serving threads inherit the mask
  std::vector<std::thread> serving;
  for (auto& server : servers) serving.emplace_back([&server] { server->listen_after_bind(); });
  for (const std::string& address : bound) fmt::print("drover restd: listening on {}\n", address);
  std::fflush(stdout);
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  for (auto& server : servers) server->stop();
  for (std::thread& thread : serving) thread.join();
  for (const std::string& socket_path : sockets) unlink(socket_path.c_str());
  return 0;
}

}  // namespace drover::cli::restd

int main(int argc, char** argv) {
  return drover::cli::restd::Main(argc, argv);
}
