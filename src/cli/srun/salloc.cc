// salloc: obtains an allocation (allocation.h), runs a command (the user's shell by default) on
// this host with the allocation's variables set, and releases the allocation when it exits. If
// the allocation ends first (time limit, scancel), the command is told to stop, as in Slurm.
#include <fmt/format.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
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
#include "common/text.h"

namespace drover::cli {
namespace {

constexpr OptionSpec kSallocOptions[] = {
    {'Q', "quiet", OptionSpec::kNone},         {'v', "verbose", OptionSpec::kNone},
    {0, "no-shell", OptionSpec::kNone},        {'h', "help", OptionSpec::kNone},
    {0, "usage", OptionSpec::kNone},           {'V', "version", OptionSpec::kNone},
    {'I', "immediate", OptionSpec::kOptional}, {0, "bell", OptionSpec::kNone},
    {0, "no-bell", OptionSpec::kNone},         {'K', "kill-command", OptionSpec::kOptional},
    {0, "x11", OptionSpec::kOptional},         {0, "power", OptionSpec::kRequired},
    {0, "begin", OptionSpec::kRequired},  // sbatch's -b is not salloc's
};

// sbatch's options salloc does not have.
constexpr std::string_view kNotSalloc[] = {"export", "propagate"};

// salloc(1)'s INPUT ENVIRONMENT VARIABLES.
constexpr InputVariable kSallocInputs[] = {
    {"SALLOC_ACCOUNT", "account"},
    {"SALLOC_ACCTG_FREQ", "acctg-freq"},
    {"SALLOC_BELL", "bell"},
    {"SALLOC_BURST_BUFFER", "bb"},
    {"SALLOC_CLUSTERS", "clusters"},
    {"SLURM_CLUSTERS", "clusters"},
    {"SALLOC_CONSTRAINT", "constraint"},
    {"SALLOC_CONTAINER", "container"},
    {"SALLOC_CORE_SPEC", "core-spec"},
    {"SALLOC_CPUS_PER_GPU", "cpus-per-gpu"},
    {"SALLOC_DEBUG", "verbose"},
    {"SALLOC_DELAY_BOOT", "delay-boot"},
    {"SALLOC_EXCLUSIVE", "exclusive"},
    {"SALLOC_GPU_BIND", "gpu-bind"},
    {"SALLOC_GPU_FREQ", "gpu-freq"},
    {"SALLOC_GPUS", "gpus"},
    {"SALLOC_GPUS_PER_NODE", "gpus-per-node"},
    {"SALLOC_GPUS_PER_TASK", "gpus-per-task"},
    {"SALLOC_GRES", "gres"},
    {"SALLOC_GRES_FLAGS", "gres-flags"},
    {"SALLOC_HINT", "hint"},
    {"SLURM_HINT", "hint"},
    {"SALLOC_IMMEDIATE", "immediate"},
    {"SALLOC_KILL_CMD", "kill-command"},
    {"SALLOC_MEM_BIND", "mem-bind"},
    {"SALLOC_MEM_PER_CPU", "mem-per-cpu"},
    {"SALLOC_MEM_PER_GPU", "mem-per-gpu"},
    {"SALLOC_MEM_PER_NODE", "mem"},
    {"SALLOC_NETWORK", "network"},
    {"SALLOC_NO_BELL", "no-bell"},
    {"SALLOC_NO_KILL", "no-kill"},
    {"SALLOC_OVERCOMMIT", "overcommit"},
    {"SALLOC_PARTITION", "partition"},
    {"SALLOC_POWER", "power"},
    {"SALLOC_PROFILE", "profile"},
    {"SALLOC_QOS", "qos"},
    {"SALLOC_RESERVATION", "reservation"},
    {"SALLOC_SIGNAL", "signal"},
    {"SALLOC_SPREAD_JOB", "spread-job"},
    {"SALLOC_THREAD_SPEC", "thread-spec"},
    {"SALLOC_THREADS_PER_CORE", "threads-per-core"},
    {"SALLOC_TIMELIMIT", "time"},
    {"SALLOC_USE_MIN_NODES", "use-min-nodes"},
    {"SALLOC_WAIT_ALL_NODES", "wait-all-nodes"},
    {"SALLOC_WCKEY", "wckey"},
};

struct SallocRequest {
  ParsedOptions parsed;
  std::vector<std::string> command;  // the user's shell when none was given
  bool quiet = false, no_shell = false;
  int kill_signal = 0;           // -K: sent to the command when the allocation is revoked; 0: none
  std::optional<int> immediate;  // -I: seconds to wait for the allocation
};

// -K's signal: a name (HUP, SIGHUP) or number; SIGHUP when none is given (salloc's command is
// interactive).
std::optional<int> KillSignal(const std::string& value) {
  if (value.empty()) return SIGHUP;
  if (auto number = ParseUint64(value); number && *number > 0 && *number < 65)
    return static_cast<int>(*number);
  std::string name = value;
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (name.starts_with("SIG")) name = name.substr(3);
  for (int signal = 1; signal < 32; ++signal)
    if (const char* abbrev = ::sigabbrev_np(signal); abbrev && name == abbrev) return signal;
  return std::nullopt;
}

// What -K, -I, --x11 and --no-shell ask; an exit code after saying why one cannot be used.
std::optional<int> ReadSallocOptions(SallocRequest& request) {
  const ParsedOptions& parsed = request.parsed;
  request.no_shell = parsed.Has("no-shell");
  if (parsed.Has("kill-command")) {
    std::optional<int> signal = KillSignal(parsed.Last("kill-command").value_or(""));
    if (!signal) {
      std::fprintf(stderr, "salloc: error: Invalid --kill-command specification\n");
      return 1;
    }
    request.kill_signal = *signal;
  }
  if (parsed.Has("immediate")) {
    std::string value = parsed.Last("immediate").value_or("");
    auto seconds = value.empty() ? std::optional<uint64_t>(1) : ParseUint64(value);
    if (!seconds || *seconds > 1'000'000) {
      std::fprintf(stderr, "salloc: error: Invalid --immediate specification\n");
      return 1;
    }
    request.immediate = static_cast<int>(*seconds);
  }
  if (parsed.Has("x11")) {
    // As Slurm's controller answers when PrologFlags lacks x11: Drover has no X11 forwarding.
    std::fprintf(stderr,
                 "salloc: error: Job submit/allocate failed: X11 forwarding not available\n");
    return 1;
  }
  return std::nullopt;
}

// The options, up to the command; --help and its kin end here with their exit code.
std::variant<SallocRequest, int> ParseSalloc(Arguments args) {
  std::vector<OptionSpec> specs = WithAllocationOptions(kSallocOptions, kNotSalloc);
  std::vector<std::string> words = InputVariableWords(kSallocInputs, specs, Environment());
  words.insert(words.end(), args.begin(), args.end());
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
  if (std::optional<int> code = ReadSallocOptions(request)) return *code;
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

// Every two seconds until `done`: when the allocation has ended under the command, it is said,
// and the command gets -K's signal when one was asked for.
void WatchAllocation(Connection& connection, uint64_t job_id, pid_t child, int kill_signal,
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
      if (kill_signal) ::kill(child, kill_signal);
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

// --bell rings the terminal's bell when the allocation is granted, --no-bell never; by default
// it rings when the wait was longer than ten seconds. Only on a terminal, as Slurm's.
void RingBell(const ParsedOptions& parsed, std::chrono::steady_clock::duration waited) {
  bool ring = parsed.Has("bell") || (!parsed.Has("no-bell") && waited > std::chrono::seconds(10));
  if (ring && ::isatty(1)) {
    std::fputc('\a', stdout);
    std::fflush(stdout);
  }
}

// The options salloc hands to the steps srun starts in the allocation, as the variables srun
// reads (salloc(1), OUTPUT ENVIRONMENT VARIABLES): sbatch's handler checked each and set its
// variable in the job's environment (SBATCH_MEM_BIND* there, SLURM_MEM_BIND* for salloc).
constexpr std::pair<std::string_view, std::string_view> kStepVariables[] = {
    {"distribution", "SLURM_DISTRIBUTION"},
    {"distribution", "SLURM_DIST_PLANESIZE"},
    {"cpu-freq", "SLURM_CPU_FREQ_REQ"},
    {"gpu-bind", "SLURM_GPU_BIND"},
    {"gpu-freq", "SLURM_GPU_FREQ"},
    {"mem-bind", "SBATCH_MEM_BIND"},
    {"mem-bind", "SBATCH_MEM_BIND_TYPE"},
    {"mem-bind", "SBATCH_MEM_BIND_LIST"},
    {"mem-bind", "SBATCH_MEM_BIND_VERBOSE"},
    {"ntasks-per-core", "SLURM_NTASKS_PER_CORE"},
    {"ntasks-per-socket", "SLURM_NTASKS_PER_SOCKET"},
};

void SetStepVariables(const ParsedOptions& parsed, const JobSpec& spec,
                      std::map<std::string, std::string>& env) {
  for (auto [option, variable] : kStepVariables) {
    if (!parsed.Has(option)) continue;
    for (const std::string& entry : spec.environment)
      if (entry.starts_with(variable) && entry.size() > variable.size() &&
          entry[variable.size()] == '=') {
        std::string name(variable);
        if (name.starts_with("SBATCH_")) name.replace(0, 6, "SLURM");
        env[name] = entry.substr(variable.size() + 1);
      }
  }
}

}  // namespace

std::vector<OptionSpec> SallocOptionTable() {
  return WithAllocationOptions(kSallocOptions, kNotSalloc);
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
  std::optional<SbatchRequest> job =
      AllocationRequest("salloc", request.parsed, "interactive", request.quiet);
  if (!job) return 1;
  if (!job->spec.get_user_env.empty()) {
    // Slurm's salloc loads the login environment itself, which only root may (su): anyone else
    // gets its env_array_user_default's refusal. Drover's salloc does not load it for root.
    if (::geteuid() != 0) {
      std::fprintf(stderr, "salloc: error: SlurmdUser must be root to use --get-user-env\n");
      return 1;
    }
    if (!request.quiet)
      std::fprintf(stderr,
                   "salloc: warning: --get-user-env is accepted but has no effect in "
                   "Drover\n");
    job->spec.get_user_env.clear();
  }
  CatchInterrupts();
  auto asked = std::chrono::steady_clock::now();
  auto allocated = Allocate("salloc", *job, *connection, request.quiet, request.immediate);
  if (auto* code = std::get_if<int>(&allocated)) return *code;
  Allocation& allocation = std::get<Allocation>(allocated);
  RingBell(request.parsed, std::chrono::steady_clock::now() - asked);
  // --no-shell: the allocation stays, held by no command, until scancel or its time limit.
  if (request.no_shell) return 0;
  std::map<std::string, std::string> env = Environment();
  SetJobVariables(allocation.job, connection->cluster.settings.cluster_name,
                  request.parsed.Has("ntasks"), env);
  SetStepVariables(request.parsed, job->spec, env);
  pid_t child = SpawnCommand(request.command, env);
  // salloc itself lives on to release the job.
  g_forward = 0;
  ForwardSignals({SIGHUP, SIGTERM});
  std::atomic<bool> done{false};
  std::thread watcher(
      [&] { WatchAllocation(*connection, allocation.job_id, child, request.kill_signal, done); });
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
