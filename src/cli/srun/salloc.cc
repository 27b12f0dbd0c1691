// salloc: obtains an allocation (allocation.h), runs a command (the user's shell by default) on
// this host with the allocation's variables set, and releases the allocation when it exits. If
// the allocation ends first (time limit, scancel), the command is told to stop, as in Slurm.
#include <fmt/format.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/srun/allocation.h"
#include "cli/srun/interrupts.h"
#include "cli/srun/srun_options.h"
#include "common/getopt.h"

namespace drover::cli {
namespace {

constexpr OptionSpec kSallocOptions[] = {
    {'Q', "quiet", OptionSpec::kNone},         {'v', "verbose", OptionSpec::kNone},
    {0, "no-shell", OptionSpec::kNone},        {'h', "help", OptionSpec::kNone},
    {0, "usage", OptionSpec::kNone},           {'V', "version", OptionSpec::kNone},
    {'I', "immediate", OptionSpec::kOptional},
};

struct SallocRequest {
  ParsedOptions parsed;
  std::vector<std::string> command;  // the user's shell when none was given
  bool quiet = false;
};

// The options, up to the command; --help and its kin end here with their exit code.
std::variant<SallocRequest, int> ParseSalloc(Arguments args) {
  std::vector<std::string> words(args.begin(), args.end());
  std::vector<OptionSpec> specs = WithAllocationOptions(kSallocOptions);
  size_t start = CommandStart(words, specs);
  std::span<const std::string> option_words(words.data(), std::min(start, words.size()));
  if (start > 0 && start <= words.size() && words[start - 1] == "--")
    option_words = option_words.first(start - 1);
  auto parsed = ParseOptions(option_words, specs);
  if (!parsed) return OptionError("salloc", parsed.error());
  if (parsed->Has("help") || parsed->Has("usage")) {
    std::printf(
        "Usage: salloc [-N nodes] [-n ntasks] [-c ncpus] [-p partition] [-t time] [-J name]\n"
        "              [-G gpus] [--gpus-per-node=n] [--mem=MB] [-w hosts] [command [args...]]\n");
    if (parsed->Has("help"))
      std::printf(
          "\nObtains an allocation, runs the command (default: your shell) on this host with\n"
          "SLURM_JOB_ID and the allocation's nodes set, and releases the allocation when the\n"
          "command exits; srun inside it starts steps on the allocated nodes.\n");
    return 0;
  }
  if (parsed->Has("version")) return PrintSlurmVersion();
  SallocRequest request;
  request.command.assign(words.begin() + std::min(start, words.size()), words.end());
  for (const std::string& operand : parsed->operands)
    request.command.insert(request.command.begin(), operand);
  request.quiet = parsed->Has("quiet");
  if (request.command.empty()) {
    const char* shell = std::getenv("SHELL");
    if (passwd* entry = getpwuid(getuid()); (!shell || !*shell) && entry && entry->pw_shell)
      shell = entry->pw_shell;
    request.command.push_back(shell && *shell ? shell : "/bin/sh");
  }
  request.parsed = std::move(*parsed);
  return request;
}

// Forks and execs `command` with `env`. Everything the child needs is made before fork (salloc
// has threads: gRPC's).
pid_t SpawnCommand(std::vector<std::string> command,
                   const std::map<std::string, std::string>& env) {
  std::vector<std::string> entries;
  for (const auto& [name, value] : env) entries.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (std::string& entry : entries) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (std::string& word : command) argv.push_back(word.data());
  argv.push_back(nullptr);
  std::string exec_error = fmt::format("salloc: error: {}: ", command.front());
  pid_t child = ::fork();
  if (child == 0) {
    ::signal(SIGINT, SIG_DFL);
    ::execvpe(argv[0], argv.data(), envp.data());
    (void)!::write(2, exec_error.data(), exec_error.size());
    const char* reason = std::strerror(errno);
    (void)!::write(2, reason, std::strlen(reason));
    (void)!::write(2, "\n", 1);
    ::_exit(127);
  }
  return child;
}

// Every two seconds until `done`: when the allocation has ended under the command, it gets
// SIGHUP and SIGTERM.
void WatchAllocation(Connection& connection, uint64_t job_id, pid_t child,
                     const std::atomic<bool>& done) {
  int checks = 0;
  while (!done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (++checks % 20 != 0) continue;
    bool found = false;
    v1::Job job = FetchJob(*connection.stub, job_id, &found);
    if (found && job.state() != "RUNNING" && job.state() != "SUSPENDED" && !done) {
      std::fprintf(stderr, "salloc: Job allocation %llu has been revoked.\n",
                   static_cast<unsigned long long>(job_id));
      ::kill(child, SIGHUP);
      ::kill(child, SIGTERM);
      return;
    }
  }
}

// The command's wait status; a hangup or SIGTERM to salloc goes to the command meanwhile.
int WaitForCommand(pid_t child) {
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR)
    if (g_forward) {
      ::kill(child, g_forward);
      g_forward = 0;
    }
  return status;
}

}  // namespace

std::vector<OptionSpec> SallocOptionTable() {
  return WithAllocationOptions(kSallocOptions);
}

int RunSalloc(Arguments args) {
  auto parsed = ParseSalloc(args);
  if (auto* code = std::get_if<int>(&parsed)) return *code;
  SallocRequest& request = std::get<SallocRequest>(parsed);
  auto connection = Connect();
  if (!connection) {
    std::fprintf(stderr, "salloc: error: %s\n", connection.error().c_str());
    return 1;
  }
  CatchInterrupts();
  auto allocated = Allocate("salloc", request.parsed, "interactive", *connection, request.quiet);
  if (auto* code = std::get_if<int>(&allocated)) return *code;
  Allocation& allocation = std::get<Allocation>(allocated);
  std::map<std::string, std::string> env = Environment();
  SetJobVariables(allocation.job, connection->cluster.settings.cluster_name,
                  request.parsed.Has("ntasks"), env);
  pid_t child = SpawnCommand(request.command, env);
  // salloc itself lives on to release the job.
  g_forward = 0;
  ForwardSignals({SIGHUP, SIGTERM});
  std::atomic<bool> done{false};
  std::thread watcher([&] { WatchAllocation(*connection, allocation.job_id, child, done); });
  int status = WaitForCommand(child);
  done = true;
  watcher.join();
  int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (!request.quiet)
    std::fprintf(stderr, "salloc: Relinquishing job allocation %llu\n",
                 static_cast<unsigned long long>(allocation.job_id));
  ReleaseAllocation(*connection, allocation.job_id, WIFEXITED(status) ? WEXITSTATUS(status) : 0,
                    WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return exit_code;
}

}  // namespace drover::cli
