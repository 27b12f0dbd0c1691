// `drover keygen` writes an auth/slurm cluster key; `drover authd` serves auth/slurm credentials
// to the users of a host that runs no droverd (a login node), as Slurm's sackd does.
#include <fmt/format.h>
#include <signal.h>

#include <optional>
#include <string>
#include <vector>

#include "auth/auth.h"
#include "cli/commands.h"
#include "common/cluster_config.h"
#include "common/getopt.h"
#include "common/sd_notify.h"

namespace drover::cli {
namespace {

constexpr std::string_view kKeygenUsage =
    "Usage: drover keygen [--force] [--conf FILE] [PATH]\n"
    "Writes a new auth/slurm key (64 random bytes, mode 0600) to PATH (default: AuthInfo's key=,\n"
    "else slurm.key beside slurm.conf). An existing key is kept unless --force is given; copy\n"
    "the key to every host, readable by SlurmUser only, and restart the daemons.\n";

constexpr std::string_view kAuthdUsage =
    "Usage: drover authd [-f FILE | --conf FILE]\n"
    "Serves auth/slurm credentials on AuthInfo's socket= (default /run/drover/auth.socket) to\n"
    "the users of this host, for hosts that run no droverd; runs until SIGTERM or SIGINT.\n";

constexpr OptionSpec kKeygenOptions[] = {
    {'h', "help", OptionSpec::kNone},
    {0, "force", OptionSpec::kNone},
    {0, "conf", OptionSpec::kRequired},
};

constexpr OptionSpec kAuthdOptions[] = {
    {'h', "help", OptionSpec::kNone},
    {'f', "conf", OptionSpec::kRequired},
};

// Parses `args`; prints the usage (and returns its exit code) on --help or a bad word.
std::optional<int> Parse(std::string_view command, Arguments args,
                         std::span<const OptionSpec> specs, std::string_view usage,
                         size_t max_operands, ParsedOptions& parsed) {
  std::vector<std::string> words(args.begin(), args.end());
  auto result = ParseOptions(words, specs);
  if (!result) {
    fmt::print(stderr, "drover {}: error: {}\n{}", command, result.error(), usage);
    return 2;
  }
  parsed = std::move(*result);
  if (parsed.Has("help")) {
    fmt::print("{}", usage);
    return 0;
  }
  if (parsed.operands.size() > max_operands) {
    fmt::print(stderr, "drover {}: error: unexpected argument '{}'\n{}", command,
               parsed.operands[max_operands], usage);
    return 2;
  }
  return std::nullopt;
}

// The auth settings of the slurm.conf that `conf` (or the environment) names.
Result<auth::Settings> LoadSettings(const std::string& conf) {
  std::string path = ResolveConfPath(conf);
  ConfigLoad load = LoadClusterConfig(path);
  if (!load.ok()) return MakeError(fmt::format("cannot use {}:\n{}", path, load.ErrorText()));
  auto settings = auth::SettingsOf(load.config);
  if (!settings) return MakeError(fmt::format("{}: {}", path, settings.error()));
  return settings;
}

}  // namespace

int RunKeygen(Arguments args) {
  ParsedOptions parsed;
  if (auto done = Parse("keygen", args, kKeygenOptions, kKeygenUsage, 1, parsed)) return *done;
  std::string path;
  if (!parsed.operands.empty()) {
    path = parsed.operands[0];
  } else {
    auto settings = LoadSettings(parsed.Last("conf").value_or(""));
    if (!settings) {
      fmt::print(stderr,
                 "drover keygen: error: {}\nname the key file instead: drover keygen "
                 "PATH\n",
                 settings.error());
      return 1;
    }
    path = settings->key_path;
  }
  if (Status written = auth::WriteKey(path, parsed.Has("force")); !written) {
    fmt::print(stderr, "drover keygen: error: {}\n", written.error());
    return 1;
  }
  fmt::print(
      "drover keygen: wrote a new key to {} (mode 0600); copy it to every host, readable "
      "by SlurmUser only\n",
      path);
  return 0;
}

int RunAuthd(Arguments args) {
  ParsedOptions parsed;
  if (auto done = Parse("authd", args, kAuthdOptions, kAuthdUsage, 0, parsed)) return *done;
  auto settings = LoadSettings(parsed.Last("conf").value_or(""));
  if (!settings) {
    fmt::print(stderr, "drover authd: error: {}\n", settings.error());
    return 1;
  }
  if (settings->scheme != auth::Scheme::kSlurm) {
    fmt::print(stderr,
               "drover authd: error: it serves AuthType=auth/slurm only, and this cluster uses "
               "{}\n",
               settings->scheme == auth::Scheme::kMunge
                   ? "auth/munge (munged serves its users: systemctl start munge)"
                   : "auth/none (no credentials to serve)");
    return 1;
  }
  // Blocked before any thread starts, so every thread leaves them to sigwait below.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  auto authenticator = auth::Create(*settings, auth::Role::kDaemon);
  if (!authenticator) {
    fmt::print(stderr, "drover authd: error: {}\n", authenticator.error());
    return 1;
  }
  auto broker = auth::StartBroker(*settings, **authenticator);
  if (!broker) {
    fmt::print(stderr, "drover authd: error: {}\n", broker.error());
    return 1;
  }
  if (!*broker) {
    fmt::print(stderr,
               "drover authd: error: another broker (droverd or drover authd) already "
               "serves {}\n",
               settings->socket);
    return 1;
  }
  fmt::print(stderr, "drover authd: serving auth/slurm credentials on {}\n", (*broker)->path());
  NotifySystemd("READY=1");
  int signal_number = 0;
  sigwait(&stop, &signal_number);
  fmt::print(stderr, "drover authd: stopping on signal {}\n", signal_number);
  return 0;
}

}  // namespace drover::cli
