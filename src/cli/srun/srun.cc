// srun: starts a step in an allocation, or in a new one it obtains first (allocation.h). Its
// phases, in order: the options; the job (given, inherited or allocated); the step the
// controller records and lays out; the launch every node's agent receives; the per-node streams
// (step_streams.h); stdin and signals until every task has ended; the step's end reported.
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/srun/allocation.h"
#include "cli/srun/bcast.h"
#include "cli/srun/interrupts.h"
#include "cli/srun/srun_options.h"
#include "cli/srun/step_binding.h"
#include "cli/srun/step_streams.h"
#include "common/getopt.h"
#include "common/hostlist.h"
#include "common/launch_settings.h"
#include "common/resource_limits.h"
#include "common/step_launch.h"
#include "common/text.h"
#include "wire/usage_codec.h"

namespace drover::cli {
namespace {

using Clock = std::chrono::steady_clock;

// srun's own options (beside the allocation's).
constexpr OptionSpec kSrunOptions[] = {
    {'o', "output", OptionSpec::kRequired},
    {'e', "error", OptionSpec::kRequired},
    {'i', "input", OptionSpec::kRequired},
    {'l', "label", OptionSpec::kNone},
    {'u', "unbuffered", OptionSpec::kNone},
    {0, "overlap", OptionSpec::kNone},
    {0, "cpu-bind", OptionSpec::kRequired},
    {0, "cpu_bind", OptionSpec::kRequired},
    {0, "mpi", OptionSpec::kRequired},
    {'K', "kill-on-bad-exit", OptionSpec::kOptional},
    {0, "multi-prog", OptionSpec::kNone},
    {0, "pty", OptionSpec::kNone},
    {0, "open-mode", OptionSpec::kRequired},
    {0, "jobid", OptionSpec::kRequired},
    {'Q', "quiet", OptionSpec::kNone},
    {'v', "verbose", OptionSpec::kNone},
    {'W', "wait", OptionSpec::kRequired},
    {'h', "help", OptionSpec::kNone},
    {0, "usage", OptionSpec::kNone},
    {'b', "begin", OptionSpec::kRequired},
    {'V', "version", OptionSpec::kNone},
    {0, "exact", OptionSpec::kNone},
    {'I', "immediate", OptionSpec::kOptional},
    {'X', "disable-status", OptionSpec::kNone},
    {0, "quit-on-interrupt", OptionSpec::kNone},
    {0, "prolog", OptionSpec::kRequired},
    {0, "epilog", OptionSpec::kRequired},
    {'E', "preserve-env", OptionSpec::kNone},
    {'Z', "no-allocate", OptionSpec::kNone},
    {0, "x11", OptionSpec::kOptional},
    {'r', "relative", OptionSpec::kRequired},
    {0, "power", OptionSpec::kRequired},
    {0, "accel-bind", OptionSpec::kRequired},
    {0, "bcast", OptionSpec::kOptional},
    {0, "bcast-exclude", OptionSpec::kRequired},
    {0, "compress", OptionSpec::kOptional},
    {0, "ctrl-comm-ifhn", OptionSpec::kRequired},
    {0, "het-group", OptionSpec::kRequired},
    {0, "mpi-combine", OptionSpec::kRequired},
    {0, "msg-timeout", OptionSpec::kRequired},
    {0, "resv-ports", OptionSpec::kOptional},
    {0, "send-libs", OptionSpec::kOptional},
    {0, "slurmd-debug", OptionSpec::kRequired},
    {0, "task-epilog", OptionSpec::kRequired},
    {0, "task-prolog", OptionSpec::kRequired},
    {'T', "threads", OptionSpec::kRequired},
    {0, "test-only", OptionSpec::kNone},
};

// sbatch's options srun does not have.
constexpr std::string_view kNotSrun[] = {"get-user-env", "wait-all-nodes"};

// srun(1)'s INPUT ENVIRONMENT VARIABLES. Not here: those every job sets for its shape
// (SLURM_JOB_ID, SLURM_NNODES, SLURM_NTASKS, SLURM_NTASKS_PER_NODE, SLURM_JOB_NAME,
// SLURM_MEM_PER_*), which srun reads as the job's own shape (StepRequest), not as options.
constexpr InputVariable kSrunInputs[] = {
    {"SLURM_ACCOUNT", "account"},
    {"SLURM_ACCTG_FREQ", "acctg-freq"},
    {"SLURM_BCAST", "bcast"},
    {"SLURM_BCAST_EXCLUDE", "bcast-exclude"},
    {"SLURM_BURST_BUFFER", "bb"},
    {"SLURM_CLUSTERS", "clusters"},
    {"SLURM_COMPRESS", "compress"},
    {"SLURM_CONSTRAINT", "constraint"},
    {"SLURM_CORE_SPEC", "core-spec"},
    {"SLURM_CPU_BIND", "cpu-bind"},
    {"SLURM_CPU_FREQ_REQ", "cpu-freq"},
    {"SLURM_CPUS_PER_GPU", "cpus-per-gpu"},
    {"SRUN_CPUS_PER_TASK", "cpus-per-task"},
    {"SLURM_DEBUG", "verbose"},
    {"SLURM_DELAY_BOOT", "delay-boot"},
    {"SLURM_DEPENDENCY", "dependency"},
    {"SLURM_DISABLE_STATUS", "disable-status"},
    {"SLURM_DISTRIBUTION", "distribution"},
    {"SLURM_EPILOG", "epilog"},
    {"SLURM_EXACT", "exact"},
    {"SLURM_EXCLUSIVE", "exclusive"},
    {"SRUN_EXPORT_ENV", "export"},
    {"SLURM_EXPORT_ENV", "export"},
    {"SLURM_GPU_BIND", "gpu-bind"},
    {"SLURM_GPU_FREQ", "gpu-freq"},
    {"SLURM_GPUS", "gpus"},
    {"SLURM_GPUS_PER_NODE", "gpus-per-node"},
    {"SLURM_GPUS_PER_TASK", "gpus-per-task"},
    {"SLURM_STEP_GRES", "gres"},
    {"SLURM_GRES", "gres"},
    {"SLURM_GRES_FLAGS", "gres-flags"},
    {"SLURM_HINT", "hint"},
    {"SLURM_IMMEDIATE", "immediate"},
    {"SLURM_KILL_BAD_EXIT", "kill-on-bad-exit"},
    {"SLURM_LABELIO", "label"},
    {"SLURM_MEM_BIND", "mem-bind"},
    {"SLURM_MPI_TYPE", "mpi"},
    {"SLURM_NETWORK", "network"},
    {"SLURM_NO_KILL", "no-kill"},
    {"SLURM_NTASKS_PER_CORE", "ntasks-per-core"},
    {"SLURM_NTASKS_PER_GPU", "ntasks-per-gpu"},
    {"SLURM_NTASKS_PER_SOCKET", "ntasks-per-socket"},
    {"SLURM_OPEN_MODE", "open-mode"},
    {"SLURM_OVERCOMMIT", "overcommit"},
    {"SLURM_OVERLAP", "overlap"},
    {"SLURM_PARTITION", "partition"},
    {"SLURM_POWER", "power"},
    {"SLURM_PROFILE", "profile"},
    {"SLURM_PROLOG", "prolog"},
    {"SLURM_QOS", "qos"},
    {"SLURM_REMOTE_CWD", "chdir"},
    {"SLURM_RESERVATION", "reservation"},
    {"SLURM_RESV_PORTS", "resv-ports"},
    {"SLURM_SEND_LIBS", "send-libs"},
    {"SLURM_SIGNAL", "signal"},
    {"SLURM_SPREAD_JOB", "spread-job"},
    {"SLURM_STDERRMODE", "error"},
    {"SLURM_STDINMODE", "input"},
    {"SLURM_STDOUTMODE", "output"},
    {"SLURM_TASK_EPILOG", "task-epilog"},
    {"SLURM_TASK_PROLOG", "task-prolog"},
    {"SLURM_THREAD_SPEC", "thread-spec"},
    {"SLURM_THREADS", "threads"},
    {"SLURM_THREADS_PER_CORE", "threads-per-core"},
    {"SLURM_TIMELIMIT", "time"},
    {"SLURM_UNBUFFEREDIO", "unbuffered"},
    {"SLURM_USE_MIN_NODES", "use-min-nodes"},
    {"SLURM_WAIT", "wait"},
    {"SLURM_WCKEY", "wckey"},
    {"SLURMD_DEBUG", "slurmd-debug"},
    {"SRUN_CONTAINER", "container"},
};

// Options srun accepts and does not act on: each said once, unless --quiet.
constexpr std::string_view kSrunNoEffect[] = {
    "ctrl-comm-ifhn",
    "no-allocate",
};

// Allocation options srun reads itself (step_binding.h) rather than through sbatch's parser.
constexpr std::string_view kSrunOwnOptions[] = {"distribution", "hint"};

// srun's most concurrent launch threads (Slurm's MAX_THREADS, -T's upper bound).
constexpr int kMaxThreads = 60;

// The MPI plugin types Slurm 22.05 knows (--mpi=list prints them).
constexpr std::string_view kMpiTypes[] = {"cray_shasta", "none", "pmi2", "pmix", "pmix_v4"};

std::optional<uint32_t> Count(const ParsedOptions& parsed, std::string_view name) {
  auto value = parsed.Last(name);
  if (!value) return std::nullopt;
  // "-N 2-4": the minimum is what a step inside an allocation uses.
  auto number = ParseUint64(Split(*value, '-').front());
  if (!number || *number > 1'000'000) return std::nullopt;
  return static_cast<uint32_t>(*number);
}

class TerminalRaw {
 public:
  TerminalRaw() {
    if (::isatty(0) && ::tcgetattr(0, &saved_) == 0) {
      termios raw = saved_;
      ::cfmakeraw(&raw);
      active_ = ::tcsetattr(0, TCSANOW, &raw) == 0;
    }
  }
  ~TerminalRaw() {
    if (active_) ::tcsetattr(0, TCSANOW, &saved_);
  }

 private:
  termios saved_{};
  bool active_ = false;
};

int SrunUsage(bool full) {
  std::printf(
      "Usage: srun [-N nodes] [-n ntasks] [-c ncpus] [--ntasks-per-node=n] [-p partition]\n"
      "            [-t time] [-J name] [-w hosts] [-G gpus] [--gpus-per-node=n] [--mem=MB]\n"
      "            [-o out] [-e err] [-i in] [-l] [-u] [-K] [--pty] [--multi-prog] [--overlap]\n"
      "            executable [args...]\n");
  if (full)
    std::printf(
        "\nInside an allocation (SLURM_JOB_ID set) srun starts a step on its nodes, inheriting\n"
        "its -N/-n/--ntasks-per-node; outside one it allocates a job, runs the step and releases\n"
        "the job. Task output reaches srun's stdout/stderr (-l prefixes each line with the\n"
        "task's rank); stdin goes to task 0; Ctrl-C twice within a second aborts the step.\n");
  return 0;
}

// What srun's command line asks for.
struct SrunRequest {
  ParsedOptions parsed;
  std::vector<std::string> command;  // the program and its arguments
  bool quiet = false, label = false, pty = false, kill_on_bad_exit = false;
  bool disable_status = false, quit_on_interrupt = false;
  std::optional<int> immediate;  // -I: seconds to wait for the allocation or the step
  uint32_t wait_seconds = 0;     // -W: how long the other tasks may outlive the first to end
};

// A count option's value ("-I60", "-W 30"); nullopt after saying it is invalid.
std::optional<uint32_t> Seconds(const ParsedOptions& parsed, std::string_view name,
                                uint32_t when_empty) {
  std::string value = parsed.Last(name).value_or("");
  auto number = value.empty() ? std::optional<uint64_t>(when_empty) : ParseUint64(value);
  if (number && *number <= 1'000'000) return static_cast<uint32_t>(*number);
  std::fprintf(stderr, "srun: error: Invalid --%.*s specification\n", static_cast<int>(name.size()),
               name.data());
  return std::nullopt;
}

// --het-group, --mpi-combine, --msg-timeout and --slurmd-debug, checked as Slurm's srun checks
// them. Drover's jobs have one component (0): a step for another is refused with Slurm's words
// for a component the allocation lacks, and --mpi-combine, which joins the MPI worlds of a
// heterogeneous step's components, has nothing to join. An exit code when srun ends here.
std::optional<int> CheckStepLaunchOptions(const ParsedOptions& parsed) {
  if (auto groups = parsed.Last("het-group")) {
    Result<uint32_t> highest = HighestHetGroup(*groups);
    if (!highest) {
      std::fprintf(stderr, "srun: error: %s\n", highest.error().c_str());
      return 1;
    }
    if (*highest > 0) {
      std::fprintf(stderr,
                   "srun: error: Requested het-group offset exceeds highest hetjob index (%u > "
                   "0)\n",
                   *highest);
      return 1;
    }
  }
  if (auto combine = parsed.Last("mpi-combine");
      combine && !EqualsIgnoreCase(*combine, "yes") && !EqualsIgnoreCase(*combine, "no")) {
    std::fprintf(stderr, "srun: error: Invalid --mpi-combine value: %s\n", combine->c_str());
    return 1;
  }
  if (auto seconds = parsed.Last("msg-timeout")) {
    if (Result<int> valid = PositiveSeconds(*seconds, "msg-timeout"); !valid) {
      std::fprintf(stderr, "srun: error: %s\n", valid.error().c_str());
      return 1;
    }
  }
  if (auto level = parsed.Last("slurmd-debug")) {
    if (Result<int> valid = SlurmdDebugLevel(*level); !valid) {
      std::fprintf(stderr, "srun: error: %s\n", valid.error().c_str());
      return 1;
    }
  }
  return std::nullopt;
}

// The options Drover's srun refuses or answers at once, as Slurm's does: --mpi=list and unknown
// MPI types, -Z (root only), --x11 (no X11 forwarding). An exit code when srun ends here.
std::optional<int> CheckSrunOptions(const ParsedOptions& parsed, bool quiet) {
  if (auto mpi = parsed.Last("mpi")) {
    if (*mpi == "list") {
      std::printf("MPI plugin types are...\n");
      for (std::string_view type : kMpiTypes)
        std::printf("\t%.*s\n", static_cast<int>(type.size()), type.data());
      return 0;
    }
    if (std::find(std::begin(kMpiTypes), std::end(kMpiTypes), *mpi) == std::end(kMpiTypes)) {
      std::fprintf(stderr,
                   "srun: error: Couldn't find the specified plugin name for mpi/%s\n"
                   "srun: error: MPI: Cannot create context for mpi/%s\n",
                   mpi->c_str(), mpi->c_str());
      return 1;
    }
    if (*mpi == "cray_shasta") {
      std::fprintf(stderr,
                   "srun: error: --mpi=cray_shasta: Drover serves pmi2 and pmix; Cray's PMI "
                   "needs Slurm's cray_shasta plugin\n");
      return 1;
    }
  }
  if (auto threads = parsed.Last("threads")) {
    // Slurm's parse_int, then its range check: srun goes on with the value reset.
    auto number = ParseInt64(*threads);
    if (!number) {
      std::fprintf(stderr, "srun: error: Invalid numeric value \"%s\" for --threads.\n",
                   threads->c_str());
      return 1;
    }
    if (*number <= 0)
      std::fprintf(stderr, "srun: error: Thread value invalid, reset to 1\n");
    else if (*number > kMaxThreads)
      std::fprintf(stderr, "srun: error: Thread value exceeds defined limit, reset to %d\n",
                   kMaxThreads);
  }
  if (std::optional<int> code = CheckStepLaunchOptions(parsed)) return code;
  if (parsed.Has("no-allocate") && ::getuid() != 0) {
    std::fprintf(stderr, "srun: error: --no-allocate only permitted by root user\n");
    return 1;
  }
  if (parsed.Has("x11")) {
    // As Slurm's controller answers when PrologFlags lacks x11: Drover has no X11 forwarding.
    std::fprintf(stderr,
                 "srun: error: Unable to allocate resources: X11 forwarding not available\n");
    return 1;
  }
  if (!quiet)
    for (std::string_view name : kSrunNoEffect)
      if (parsed.Has(name))
        std::fprintf(stderr, "srun: warning: --%.*s is accepted but has no effect in Drover\n",
                     static_cast<int>(name.size()), name.data());
  return std::nullopt;
}

// The options, up to the command (after srun's input variables): --help and its kin end here
// with their exit code, as does a missing command.
std::variant<SrunRequest, int> ParseSrun(Arguments args) {
  std::vector<OptionSpec> specs = WithAllocationOptions(kSrunOptions, kNotSrun);
  std::vector<std::string> words = InputVariableWords(kSrunInputs, specs, Environment());
  words.insert(words.end(), args.begin(), args.end());
  size_t start = CommandStart(words, specs);
  std::span<const std::string> option_words(words.data(), std::min(start, words.size()));
  if (start > 0 && start <= words.size() && words[start - 1] == "--")
    option_words = option_words.first(start - 1);
  auto parsed = ParseOptions(option_words, specs);
  if (!parsed) return OptionError("srun", parsed.error());
  if (parsed->Has("help")) return SrunUsage(true);
  if (parsed->Has("usage")) return SrunUsage(false);
  if (parsed->Has("version")) return PrintSlurmVersion();
  if (std::optional<int> code = BindingHelp(*parsed)) return *code;
  SrunRequest request;
  request.quiet = parsed->Has("quiet");
  if (std::optional<int> code = CheckSrunOptions(*parsed, request.quiet)) return *code;
  request.command.assign(words.begin() + std::min(start, words.size()), words.end());
  for (const std::string& operand : parsed->operands)
    request.command.insert(request.command.begin(), operand);
  if (request.command.empty()) {
    std::fprintf(stderr, "srun: fatal: No command given to execute.\n");
    return 1;
  }
  request.label = parsed->Has("label");
  request.pty = parsed->Has("pty");
  request.kill_on_bad_exit =
      parsed->Has("kill-on-bad-exit") && parsed->Last("kill-on-bad-exit").value_or("") != "0";
  request.disable_status = parsed->Has("disable-status");
  request.quit_on_interrupt = parsed->Has("quit-on-interrupt");
  if (parsed->Has("immediate")) {
    auto seconds = Seconds(*parsed, "immediate", 1);
    if (!seconds) return 1;
    request.immediate = static_cast<int>(*seconds);
  }
  if (parsed->Has("wait")) {
    auto seconds = Seconds(*parsed, "wait", 0);
    if (!seconds) return 1;
    request.wait_seconds = *seconds;
  }
  request.parsed = std::move(*parsed);
  return request;
}

// One run of srun once its options are read: the job, the step and its end.
class Srun {
 public:
  Srun(SrunRequest request, Connection connection)
      : request_(std::move(request)), connection_(std::move(connection)) {}

  int Run();

 private:
  const ParsedOptions& parsed() const { return request_.parsed; }
  std::optional<int> FindOrAllocateJob();
  v1::CreateStepRequest StepRequest() const;
  void SetStepShare(v1::CreateStepRequest& create) const;
  bool SetStepNodes(v1::CreateStepRequest& create) const;
  std::optional<v1::CreateStepReply> CreateStep(const v1::CreateStepRequest& create);
  std::optional<std::map<uint32_t, std::vector<std::string>>> ReadMultiProg(
      const v1::CreateStepReply& step);
  bool AttachBcast(v1::StepLaunch& launch);
  bool AddTaskSettings(v1::StepLaunch& launch);
  std::optional<v1::StepLaunch> BuildLaunch(
      const v1::CreateStepReply& step, const v1::CreateStepRequest& create,
      const std::map<uint32_t, std::vector<std::string>>& multi_prog);
  bool SuperviseStep(StepStreams& streams, const v1::CreateStepReply& step,
                     const std::string& step_name);
  [[noreturn]] void Finish(const StepOutcome& outcome, const v1::CreateStepReply& step,
                           bool aborted);
  void ReportStepEnded(v1::StepEndedRequest ended);
  void EndUnstarted(const v1::CreateStepReply& step);
  void Release(int code, int signal) {
    if (own_allocation_) ReleaseAllocation(connection_, *job_id_, code, signal);
  }

  // --msg-timeout (checked), else 30: how long srun waits for each of its messages' answers,
  // and for each node's agent to take the launch.
  int MessageSeconds() const {
    auto given = parsed().Last("msg-timeout");
    Result<int> seconds = PositiveSeconds(given.value_or("30"), "msg-timeout");
    return seconds ? *seconds : 30;
  }

  // --prolog and --epilog: run here with the step's command as arguments; false when it failed.
  bool RunLocalScript(std::string_view option, uint32_t step_id);

  SrunRequest request_;
  Connection connection_;
  // slurm.conf's keys for the launch alone (--propagate's and --bcast's defaults).
  LaunchSettings launch_settings_ = ReadLaunchSettings(ResolveConfPath(""));
  std::optional<SbatchRequest> job_request_;  // the allocation's options, as sbatch reads them
  StepBinding binding_;                       // the step's layout and binding options
  std::map<std::string, std::string> env_ = Environment();
  std::optional<uint64_t> job_id_;
  bool own_allocation_ = false;
  std::string program_name_;
};

// The job: --jobid, else SLURM_JOB_ID, else a new allocation. An exit code when there is none.
std::optional<int> Srun::FindOrAllocateJob() {
  if (auto given = parsed().Last("jobid")) {
    job_id_ = ParseUint64(*given);
    if (!job_id_) {
      std::fprintf(stderr, "srun: error: Invalid job id %s\n", given->c_str());
      return 1;
    }
    // Another job than the one srun runs in (if any): its variables, as its tasks see them.
    if (auto it = env_.find("SLURM_JOB_ID"); it == env_.end() || it->second != *given) {
      bool found = false;
      v1::Job job = FetchJob(*connection_.stub, *job_id_, &found);
      if (found) SetJobVariables(job, connection_.cluster.settings.cluster_name, false, env_);
    }
  } else if (auto it = env_.find("SLURM_JOB_ID"); it != env_.end()) {
    job_id_ = ParseUint64(it->second);
  }
  CatchInterrupts();
  ForwardSignals({SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT});
  ::signal(SIGPIPE, SIG_IGN);

  program_name_ = request_.command.front();
  if (size_t slash = program_name_.rfind('/'); slash != std::string::npos)
    program_name_ = program_name_.substr(slash + 1);
  own_allocation_ = !job_id_;
  // Read (checked, notices said) inside an allocation too: the step's share comes from it.
  job_request_ =
      AllocationRequest("srun", parsed(), program_name_, request_.quiet, kSrunOwnOptions);
  if (!job_request_) return 1;
  auto read_file = [](const std::string& path) -> Result<std::string> {
    std::ifstream in(path);
    if (!in) return MakeError(std::strerror(errno));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  auto binding = ReadStepBinding(parsed(), env_, read_file);
  if (!binding) {
    std::fprintf(stderr, "srun: error: %s\n", binding.error().c_str());
    return 1;
  }
  binding_ = std::move(*binding);
  if (parsed().Has("verbose"))
    for (const std::string& notice : binding_.notices) std::fprintf(stderr, "%s\n", notice.c_str());
  // --test-only: when the job would start, also inside an allocation (as Slurm's srun asks).
  if (parsed().Has("test-only")) return TestOnly("srun", *job_request_, connection_);
  if (!own_allocation_) return std::nullopt;
  auto allocated = Allocate("srun", *job_request_, connection_, request_.quiet, request_.immediate);
  if (auto* code = std::get_if<int>(&allocated)) return *code;
  Allocation& allocation = std::get<Allocation>(allocated);
  job_id_ = allocation.job_id;
  SetJobVariables(allocation.job, connection_.cluster.settings.cluster_name, parsed().Has("ntasks"),
                  env_);
  return std::nullopt;
}

// The step's shape. Inside an allocation, what the job asked for comes from its variables, as
// Slurm's srun reads them; options given here win.
v1::CreateStepRequest Srun::StepRequest() const {
  v1::CreateStepRequest create;
  SetCaller(create.mutable_caller());
  create.set_job_id(*job_id_);
  create.set_name(parsed().Last("job-name").value_or(program_name_));
  auto from_env = [&](std::string_view option, const char* variable) -> uint32_t {
    if (auto given = Count(parsed(), option)) return *given;
    if (own_allocation_) return 0;
    auto it = env_.find(variable);
    auto value = it == env_.end() ? std::nullopt : ParseUint64(it->second);
    return value && *value <= 1'000'000 ? static_cast<uint32_t>(*value) : 0;
  };
  create.set_nodes(Count(parsed(), "nodes").value_or(0));
  create.set_ntasks(from_env("ntasks", "SLURM_NTASKS"));
  create.set_ntasks_per_node(from_env("ntasks-per-node", "SLURM_NTASKS_PER_NODE"));
  create.set_cpus_per_task(from_env("cpus-per-task", "SLURM_CPUS_PER_TASK"));
  SetStepShare(create);
  create.set_distribution(binding_.distribution);
  create.set_ntasks_per_core(binding_.ntasks_per_core);
  create.set_ntasks_per_socket(binding_.ntasks_per_socket);
  for (const std::string& node : binding_.arbitrary_nodes) create.add_arbitrary_nodes(node);
  return create;
}

// The step's share of the allocation, from the options sbatch's parser read (srun(1): -c,
// --exclusive and --exact ask for only the tasks' CPUs; --overlap shares everything).
void Srun::SetStepShare(v1::CreateStepRequest& create) const {
  const JobSpec& spec = job_request_->spec;
  if (parsed().Has("mem")) create.set_mem_per_node_mb(spec.mem_per_node_mb);
  if (parsed().Has("mem-per-cpu")) create.set_mem_per_cpu_mb(spec.mem_per_cpu_mb);
  bool gpus = false;
  for (std::string_view name : {"gpus", "gpus-per-node", "gpus-per-task", "gres"})
    gpus |= parsed().Has(name);
  if (gpus) {
    create.set_gpus_given(true);
    create.set_gpus(spec.gpus);
    create.set_gpus_per_node(spec.gpus_per_node);
    create.set_gpus_per_task(spec.gpus_per_task);
  }
  create.set_exact(parsed().Has("exact") || parsed().Has("exclusive") ||
                   parsed().Has("cpus-per-task"));
  create.set_overlap(parsed().Has("overlap"));
}

// The step, once the allocation has room for it: while other steps hold what it asks for, srun
// waits and retries as Slurm's does (-I: for that many seconds at most; Ctrl-C gives up).
std::optional<v1::CreateStepReply> Srun::CreateStep(const v1::CreateStepRequest& create) {
  v1::CreateStepReply step;
  grpc::Status status;
  auto started = Clock::now();
  for (int attempt = 0;; ++attempt) {
    grpc::ClientContext context;
    SetDeadline(context, MessageSeconds());
    step.Clear();
    status = connection_.stub->CreateStep(&context, create, &step);
    bool busy = !status.ok() && status.error_message() == "Requested nodes are busy";
    if (status.ok() && attempt > 0 && !request_.quiet)
      std::fprintf(stderr, "srun: Step created for StepId=%llu.%u\n",
                   static_cast<unsigned long long>(*job_id_), step.step_id());
    if (!busy ||
        (request_.immediate && Clock::now() - started >= std::chrono::seconds(*request_.immediate)))
      break;
    if (attempt == 0 && !request_.quiet)
      std::fprintf(stderr, "srun: Job %llu step creation temporarily disabled, retrying (%s)\n",
                   static_cast<unsigned long long>(*job_id_), status.error_message().c_str());
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::min(100 << std::min(attempt, 4), 1000)));
    if (g_interrupted) {
      std::fprintf(stderr, "srun: Cancelled pending job step with signal %d\n", SIGINT);
      Release(1, 0);
      return std::nullopt;
    }
  }
  if (!status.ok()) {
    std::fprintf(stderr, "srun: error: Unable to create step for job %llu: %s\n",
                 static_cast<unsigned long long>(*job_id_), Unreachable(status).c_str());
    Release(1, 0);
    return std::nullopt;
  }
  return step;
}

// A step that never ran ends (sacct must not show it running, and it must not hold its share of
// the job), and srun's own allocation with it.
void Srun::EndUnstarted(const v1::CreateStepReply& step) {
  v1::StepEndedRequest ended;
  ended.set_step_id(step.step_id());
  ended.set_exit_code(1);
  ended.set_restart_count(step.job().restart_count());
  ReportStepEnded(std::move(ended));
  Release(1, 0);
}

void Srun::ReportStepEnded(v1::StepEndedRequest ended) {
  SetCaller(ended.mutable_caller());
  ended.set_job_id(*job_id_);
  v1::ActionReply ignored;
  grpc::ClientContext context;
  SetDeadline(context, MessageSeconds());
  (void)connection_.stub->StepEnded(&context, ended, &ignored);
}

// --multi-prog's file, when given; nullopt after saying why it cannot be used.
std::optional<std::map<uint32_t, std::vector<std::string>>> Srun::ReadMultiProg(
    const v1::CreateStepReply& step) {
  if (!parsed().Has("multi-prog")) return std::map<uint32_t, std::vector<std::string>>{};
  const std::string& path = request_.command.front();
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  auto read = file ? ParseMultiProg(text.str(), path, step.ntasks())
                   : Result<std::map<uint32_t, std::vector<std::string>>>(
                         MakeError(fmt::format("Unable to open file {}", path)));
  if (read) return std::move(*read);
  std::fprintf(stderr, "srun: error: %s\n", read.error().c_str());
  EndUnstarted(step);
  return std::nullopt;
}

// What every node's agent receives; nullopt after saying why --input cannot be honoured.
std::optional<v1::StepLaunch> Srun::BuildLaunch(
    const v1::CreateStepReply& step, const v1::CreateStepRequest& create,
    const std::map<uint32_t, std::vector<std::string>>& multi_prog) {
  v1::StepLaunch launch;
  *launch.mutable_job() = step.job();
  launch.set_step_id(step.step_id());
  launch.set_job_bytes(step.job_bytes());  // the agents run the step from these, as sealed
  launch.set_credential(step.credential());
  for (const std::string& word : request_.command) launch.add_argv(word);
  for (const auto& [task, argv] : multi_prog) {
    auto* entry = launch.add_task_commands();
    entry->set_task(task);
    for (const std::string& word : argv) entry->add_argv(word);
  }
  launch.set_ntasks(step.ntasks());
  launch.set_nnodes(static_cast<uint32_t>(step.nodes_size()));
  launch.set_node_list(step.node_list());
  for (const auto& [name, value] : ExportedEnvironment(parsed().Last("export").value_or(""), env_))
    launch.add_environment(name + "=" + value);
  if (parsed().Has("preserve-env")) launch.add_environment(std::string(kPreserveEnvMarker));
  for (auto [option, variable] : {std::pair{"task-prolog", kTaskPrologVariable},
                                  std::pair{"task-epilog", kTaskEpilogVariable}})
    if (auto program = parsed().Last(option))
      launch.add_environment(fmt::format("{}={}", variable, *program));
  launch.set_work_dir(parsed().Last("chdir").value_or(CurrentDirectory()));
  std::string input = parsed().Last("input").value_or("");
  if (input == "none") input = "/dev/null";
  if (!input.empty() && input != "0" && input != "all" &&
      input.find_first_not_of("0123456789") == std::string::npos) {
    std::fprintf(stderr, "srun: error: --input=%s: srun's stdin reaches task 0 only here\n",
                 input.c_str());
    Release(1, 0);
    return std::nullopt;
  }
  launch.set_stdout_path(parsed().Last("output").value_or(""));
  launch.set_stderr_path(parsed().Last("error").value_or(parsed().Last("output").value_or("")));
  if (input != "all" && input != "0") launch.set_stdin_path(input);
  launch.set_pty(request_.pty);
  launch.set_open_append(parsed().Last("open-mode").value_or("") == "append");
  launch.set_cpus_per_task(create.cpus_per_task());
  for (const v1::StepNode& node : step.nodes()) launch.add_tasks_per_node(node.tasks_size());
  // --mpi (or SLURM_MPI_TYPE), else MpiDefault; the PMI servers need each rank's node.
  std::string mpi = parsed().Last("mpi").value_or(launch_settings_.mpi_default);
  launch.set_mpi(mpi);
  launch.add_environment("SLURM_MPI_TYPE=" + mpi);
  if (mpi != "none") {
    std::vector<uint32_t> node_of_rank(step.ntasks(), 0);
    for (int i = 0; i < step.nodes_size(); ++i)
      for (uint32_t task : step.nodes(i).tasks())
        if (task < node_of_rank.size()) node_of_rank[task] = static_cast<uint32_t>(i);
    for (uint32_t node : node_of_rank) launch.add_task_nodes(node);
  }
  launch.set_distribution(binding_.distribution);
  launch.set_threads_per_core(binding_.threads_per_core);
  launch.set_cpu_bind(binding_.cpu_bind);
  launch.set_mem_bind(binding_.mem_bind);
  launch.set_gpu_bind(binding_.gpu_bind);
  launch.set_accel_bind(binding_.accel_bind);
  launch.set_cpu_freq(binding_.cpu_freq);
  launch.set_gpu_freq(binding_.gpu_freq);
  if (!AddTaskSettings(launch)) return std::nullopt;
  return launch;
}

// What the nodes apply to the step's tasks beyond their command: --bcast's files,
// --slurmd-debug, and the resource limits (--propagate, else PropagateResourceLimits). False
// after saying why the step cannot start.
bool Srun::AddTaskSettings(v1::StepLaunch& launch) {
  if (!AttachBcast(launch)) return false;
  if (auto level = parsed().Last("slurmd-debug"))
    if (Result<int> number = SlurmdDebugLevel(*level))  // checked with the options
      launch.set_debug_level(*number);
  auto limits = ChooseLimits(job_request_->propagate, launch_settings_.propagate_resource_limits,
                             launch_settings_.propagate_resource_limits_except);
  if (limits)  // the option was checked, and slurm.conf when it was read
    for (const std::string& entry : CaptureLimits(*limits)) launch.add_rlimits(entry);
  return true;
}

// --bcast: the program (and --send-libs' libraries) the nodes copy and run; false after saying
// why it cannot be sent.
bool Srun::AttachBcast(v1::StepLaunch& launch) {
  auto request =
      BcastRequestOf(parsed(), launch_settings_, request_.command.front(), launch.work_dir(), env_);
  if (request && !*request) return true;
  auto files =
      request ? ReadBcastFiles(**request, env_)
              : Result<std::vector<v1::StepLaunch::BcastFile>>(std::move(request).take_error());
  if (!files) {
    std::fprintf(stderr, "srun: error: %s\n", files.error().c_str());
    Release(1, 0);
    return false;
  }
  for (v1::StepLaunch::BcastFile& file : *files) *launch.add_bcast() = std::move(file);
  return true;
}

// stdin to task 0, from a thread that may block on a terminal (it is never joined: srun ends
// with _exit).
void ForwardStdin(NodeStream* target) {
  std::thread([target] {
    char buffer[16384];
    while (target) {
      ssize_t got = ::read(0, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      v1::StepInput message;
      if (got <= 0) {
        message.set_stdin_closed(true);
        target->Send(message);
        return;
      }
      message.set_stdin_data(buffer, static_cast<size_t>(got));
      if (!target->Send(message)) return;
    }
  }).detach();
}

// Until every task has ended: Ctrl-C once reports, twice within a second aborts (SIGINT, then
// SIGKILL two seconds on); other signals are passed on. Returns whether the step was aborted.
bool Srun::SuperviseStep(StepStreams& streams, const v1::CreateStepReply& step,
                         const std::string& step_name) {
  Clock::time_point last_interrupt{};
  bool aborting = false, aborted = false;
  Clock::time_point abort_at{};
  std::optional<Clock::time_point> first_end;
  while (streams.TasksEnded() < step.ntasks()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!first_end && streams.TasksEnded() > 0) first_end = Clock::now();
    if (request_.wait_seconds && first_end && !aborted &&
        Clock::now() - *first_end > std::chrono::seconds(request_.wait_seconds)) {
      // -W: the other tasks have outlived the first to end by that long.
      streams.Say(fmt::format("srun: First task exited {}s ago\nsrun: Terminating {}\n",
                              request_.wait_seconds, step_name));
      streams.SignalAll(SIGKILL);
      aborted = true;
    }
    if (g_forward) {
      int signal = g_forward;
      g_forward = 0;
      streams.SignalAll(signal);
    }
    if (g_interrupted) {
      g_interrupted = 0;
      auto now = Clock::now();
      if (request_.pty || request_.disable_status) {
        streams.SignalAll(SIGINT);
      } else if (request_.quit_on_interrupt || now - last_interrupt < std::chrono::seconds(1)) {
        streams.Say(fmt::format("srun: sending Ctrl-C to {}\nsrun: Job step aborted\n", step_name));
        streams.SignalAll(SIGINT);
        aborting = aborted = true;
        abort_at = now;
      } else {
        streams.Say(fmt::format(
            "srun: interrupt (one more within 1 sec to abort)\nsrun: {} tasks 0-{}: running\n",
            step_name, step.ntasks() - 1));
      }
      last_interrupt = now;
    }
    if (aborting && Clock::now() - abort_at > std::chrono::seconds(2)) {
      streams.SignalAll(SIGKILL);
      aborting = false;
    }
  }
  return aborted;
}

// Reports the step's end, releases srun's own allocation and exits with the worst task status.
void Srun::Finish(const StepOutcome& outcome, const v1::CreateStepReply& step, bool aborted) {
  int exit_code = outcome.worst_exit;
  int signal = outcome.first_signal;
  v1::StepEndedRequest ended;
  ended.set_step_id(step.step_id());
  ended.set_exit_code(exit_code >= 128 && signal ? 0 : exit_code);
  ended.set_exit_signal(signal);
  ended.set_cancelled(outcome.bad_exit || aborted);
  ended.set_restart_count(step.job().restart_count());
  wire::ToProto(outcome.usage, ended.mutable_usage());
  ReportStepEnded(std::move(ended));
  Release(exit_code >= 128 && signal ? 0 : exit_code, signal);
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(exit_code);  // the stdin thread may still wait on a terminal
}

bool Srun::RunLocalScript(std::string_view option, uint32_t step_id) {
  std::optional<std::string> program = parsed().Last(option);
  if (!program || *program == "none") return true;
  std::vector<std::string> words{*program};
  words.insert(words.end(), request_.command.begin(), request_.command.end());
  std::map<std::string, std::string> env = env_;
  env["SLURM_JOB_ID"] = env["SLURM_JOBID"] = std::to_string(*job_id_);
  env["SLURM_STEP_ID"] = env["SLURM_STEPID"] = std::to_string(step_id);
  std::vector<std::string> entries;
  for (const auto& [name, value] : env) entries.push_back(name + "=" + value);
  std::vector<char*> argv, envp;
  for (std::string& word : words) argv.push_back(word.data());
  for (std::string& entry : entries) envp.push_back(entry.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  pid_t pid = 0;
  int status = 0;
  int error = ::posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data());
  if (error == 0)
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  int rc = error != 0 ? 127 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (rc != 0 && option == "prolog")
    std::fprintf(stderr, "srun: error: srun prolog failed rc = %d. Aborting step.\n", rc);
  return rc == 0;
}

// Inside an allocation, the nodes -w names, or with -r/--relative=N the allocation's nodes from
// its N-th on (srun(1): not with -w or -x, and only inside an allocation). False after saying why
// not.
bool Srun::SetStepNodes(v1::CreateStepRequest& create) const {
  std::optional<std::string> relative = parsed().Last("relative");
  if (relative && (own_allocation_ || parsed().Has("nodelist") || parsed().Has("exclude"))) {
    std::fprintf(stderr, own_allocation_
                             ? "srun: fatal: --relative option invalid for job allocation request\n"
                             : "srun: fatal: --relative option is incompatible with --nodelist "
                               "and --exclude\n");
    return false;
  }
  if (own_allocation_) return true;
  std::optional<std::string> nodelist = parsed().Last("nodelist");
  if (relative) {
    auto it = env_.find("SLURM_JOB_NODELIST");
    nodelist = it == env_.end() ? "" : it->second;
  }
  if (!nodelist) return true;
  auto names = ExpandHostlist(*nodelist);
  if (!names) {
    std::fprintf(stderr, "srun: error: %s\n", names.error().c_str());
    return false;
  }
  size_t first = 0;
  if (relative) {
    auto offset = ParseUint64(*relative);
    if (!offset || *offset >= names->size()) {
      std::fprintf(stderr,
                   "srun: error: Invalid --relative value %s: the allocation has %zu nodes\n",
                   relative->c_str(), names->size());
      return false;
    }
    first = static_cast<size_t>(*offset);
  }
  for (size_t i = first; i < names->size(); ++i) create.add_nodelist((*names)[i]);
  return true;
}

int Srun::Run() {
  if (std::optional<int> code = FindOrAllocateJob()) return *code;
  if (parsed().Has("resv-ports")) {
    // Drover reserves no ports (MpiParams is not acted on): as Slurm's controller without
    // MpiParams=ports, any count (0 and none: the tasks per node plus one) is more than exist.
    std::fprintf(stderr,
                 "srun: error: Unable to create step for job %llu: Requires more ports than can "
                 "be reserved\n",
                 static_cast<unsigned long long>(*job_id_));
    Release(1, 0);
    return 1;
  }
  v1::CreateStepRequest create = StepRequest();
  if (!SetStepNodes(create)) return 1;
  std::optional<v1::CreateStepReply> step = CreateStep(create);
  if (!step) return 1;
  const std::string step_name = fmt::format("StepId={}.{}", *job_id_, step->step_id());
  auto multi_prog = ReadMultiProg(*step);
  if (!multi_prog) return 1;
  std::optional<v1::StepLaunch> launch = BuildLaunch(*step, create, *multi_prog);
  if (!launch) return 1;
  if (!RunLocalScript("prolog", step->step_id())) {
    EndUnstarted(*step);
    return 1;
  }

  StepStreams streams(request_.label, request_.kill_on_bad_exit, step_name);
  streams.set_compress(CompressLaunch(parsed(), launch_settings_));
  if (!streams.Start(*step, *launch, connection_, MessageSeconds())) {
    EndUnstarted(*step);
    return 1;
  }
  streams.StartReaders();
  std::optional<TerminalRaw> raw;
  if (request_.pty) raw.emplace();
  if (launch->stdin_path().empty()) ForwardStdin(streams.Task0Node());
  bool aborted = SuperviseStep(streams, *step, step_name);
  streams.Join();
  raw.reset();
  streams.FlushPartialLines();
  RunLocalScript("epilog", step->step_id());
  Finish(streams.Outcome(), *step, aborted);
}

}  // namespace

std::vector<OptionSpec> SrunOptionTable() {
  return WithAllocationOptions(kSrunOptions, kNotSrun);
}

int RunSrun(Arguments args) {
  auto request = ParseSrun(args);
  if (auto* code = std::get_if<int>(&request)) return *code;
  auto connection = Connect();
  if (!connection) {
    std::fprintf(stderr, "srun: error: %s\n", connection.error().c_str());
    return 1;
  }
  Srun srun(std::move(std::get<SrunRequest>(request)), std::move(*connection));
  return srun.Run();
}

}  // namespace drover::cli
