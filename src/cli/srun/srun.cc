// srun: starts a step in an allocation, or in a new one it obtains first (allocation.h). Its
// phases, in order: the options; the job (given, inherited or allocated); the step the
// controller records and lays out; the launch every node's agent receives; the per-node streams
// (step_streams.h); stdin and signals until every task has ended; the step's end reported.
#include <fmt/format.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
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
#include "cli/srun/interrupts.h"
#include "cli/srun/srun_options.h"
#include "cli/srun/step_streams.h"
#include "common/getopt.h"
#include "common/hostlist.h"
#include "common/text.h"

namespace drover::cli {
namespace {

using Clock = std::chrono::steady_clock;

// srun's own options (beside the allocation's).
constexpr OptionSpec kSrunOptions[] = {
    {'o', "output", OptionSpec::kRequired},  {'e', "error", OptionSpec::kRequired},
    {'i', "input", OptionSpec::kRequired},   {'l', "label", OptionSpec::kNone},
    {'u', "unbuffered", OptionSpec::kNone},  {0, "overlap", OptionSpec::kNone},
    {0, "cpu-bind", OptionSpec::kRequired},  {0, "cpu_bind", OptionSpec::kRequired},
    {0, "mpi", OptionSpec::kRequired},       {'K', "kill-on-bad-exit", OptionSpec::kOptional},
    {0, "multi-prog", OptionSpec::kNone},    {0, "pty", OptionSpec::kNone},
    {0, "open-mode", OptionSpec::kRequired}, {0, "jobid", OptionSpec::kRequired},
    {'Q', "quiet", OptionSpec::kNone},       {'v', "verbose", OptionSpec::kNone},
    {'W', "wait", OptionSpec::kRequired},    {'m', "distribution", OptionSpec::kRequired},
    {'h', "help", OptionSpec::kNone},        {0, "usage", OptionSpec::kNone},
    {'b', "begin", OptionSpec::kRequired},   {'V', "version", OptionSpec::kNone},
};

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
};

// The options, up to the command: --help and its kin end here with their exit code, as does a
// missing command; options Drover accepts and does not act on are said once.
std::variant<SrunRequest, int> ParseSrun(Arguments args) {
  std::vector<std::string> words(args.begin(), args.end());
  std::vector<OptionSpec> specs = WithAllocationOptions(kSrunOptions);
  size_t start = CommandStart(words, specs);
  std::span<const std::string> option_words(words.data(), std::min(start, words.size()));
  if (start > 0 && start <= words.size() && words[start - 1] == "--")
    option_words = option_words.first(start - 1);
  auto parsed = ParseOptions(option_words, specs);
  if (!parsed) return OptionError("srun", parsed.error());
  if (parsed->Has("help")) return SrunUsage(true);
  if (parsed->Has("usage")) return SrunUsage(false);
  if (parsed->Has("version")) return PrintSlurmVersion();
  SrunRequest request;
  request.command.assign(words.begin() + std::min(start, words.size()), words.end());
  for (const std::string& operand : parsed->operands)
    request.command.insert(request.command.begin(), operand);
  if (request.command.empty()) {
    std::fprintf(stderr, "srun: fatal: No command given to execute.\n");
    return 1;
  }
  request.quiet = parsed->Has("quiet");
  request.label = parsed->Has("label");
  request.pty = parsed->Has("pty");
  request.kill_on_bad_exit =
      parsed->Has("kill-on-bad-exit") && parsed->Last("kill-on-bad-exit").value_or("") != "0";
  // Accepted, not acted on: said once (not for --cpu-bind=quiet, which asks for silence).
  for (std::string_view accepted : {"cpu-bind", "cpu_bind", "mpi", "distribution"})
    if (parsed->Has(accepted) && !request.quiet &&
        !(accepted.starts_with("cpu") && parsed->Last(accepted).value_or("").starts_with("q")))
      std::fprintf(stderr, "srun: warning: --%.*s is accepted and not acted on by Drover\n",
                   static_cast<int>(accepted.size()), accepted.data());
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
  std::optional<v1::CreateStepReply> CreateStep(const v1::CreateStepRequest& create);
  std::optional<std::map<uint32_t, std::vector<std::string>>> ReadMultiProg(
      const v1::CreateStepReply& step);
  std::optional<v1::StepLaunch> BuildLaunch(
      const v1::CreateStepReply& step, const v1::CreateStepRequest& create,
      const std::map<uint32_t, std::vector<std::string>>& multi_prog);
  bool SuperviseStep(StepStreams& streams, const v1::CreateStepReply& step,
                     const std::string& step_name);
  [[noreturn]] void Finish(const StepOutcome& outcome, const v1::CreateStepReply& step,
                           bool aborted);
  void ReportStepEnded(v1::StepEndedRequest ended);
  void Release(int code, int signal) {
    if (own_allocation_) ReleaseAllocation(connection_, *job_id_, code, signal);
  }

  SrunRequest request_;
  Connection connection_;
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
  if (!own_allocation_) return std::nullopt;
  auto allocated = Allocate("srun", parsed(), program_name_, connection_, request_.quiet);
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
  return create;
}

std::optional<v1::CreateStepReply> Srun::CreateStep(const v1::CreateStepRequest& create) {
  v1::CreateStepReply step;
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status = connection_.stub->CreateStep(&context, create, &step);
  if (!status.ok()) {
    std::fprintf(stderr, "srun: error: Unable to create step for job %llu: %s\n",
                 static_cast<unsigned long long>(*job_id_), Unreachable(status).c_str());
    Release(1, 0);
    return std::nullopt;
  }
  return step;
}

void Srun::ReportStepEnded(v1::StepEndedRequest ended) {
  SetCaller(ended.mutable_caller());
  ended.set_job_id(*job_id_);
  v1::ActionReply ignored;
  grpc::ClientContext context;
  SetDeadline(context);
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
  v1::StepEndedRequest ended;  // the step never ran: sacct must not show it running
  ended.set_step_id(step.step_id());
  ended.set_exit_code(1);
  ended.set_restart_count(step.job().restart_count());
  ReportStepEnded(std::move(ended));
  Release(1, 0);
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
  for (const auto& [name, value] : env_) launch.add_environment(name + "=" + value);
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
  return launch;
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
  while (streams.TasksEnded() < step.ntasks()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (g_forward) {
      int signal = g_forward;
      g_forward = 0;
      streams.SignalAll(signal);
    }
    if (g_interrupted) {
      g_interrupted = 0;
      auto now = Clock::now();
      if (request_.pty) {
        streams.SignalAll(SIGINT);
      } else if (now - last_interrupt < std::chrono::seconds(1)) {
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
  ended.set_cpu_seconds(outcome.cpu_seconds);
  ended.set_max_rss_mib(outcome.max_rss_mib);
  ReportStepEnded(std::move(ended));
  Release(exit_code >= 128 && signal ? 0 : exit_code, signal);
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(exit_code);  // the stdin thread may still wait on a terminal
}

int Srun::Run() {
  if (std::optional<int> code = FindOrAllocateJob()) return *code;
  v1::CreateStepRequest create = StepRequest();
  if (!own_allocation_) {
    if (auto nodelist = parsed().Last("nodelist")) {
      auto names = ExpandHostlist(*nodelist);
      if (!names) {
        std::fprintf(stderr, "srun: error: %s\n", names.error().c_str());
        return 1;
      }
      for (const std::string& name : *names) create.add_nodelist(name);
    }
  }
  std::optional<v1::CreateStepReply> step = CreateStep(create);
  if (!step) return 1;
  const std::string step_name = fmt::format("StepId={}.{}", *job_id_, step->step_id());
  auto multi_prog = ReadMultiProg(*step);
  if (!multi_prog) return 1;
  std::optional<v1::StepLaunch> launch = BuildLaunch(*step, create, *multi_prog);
  if (!launch) return 1;

  StepStreams streams(request_.label, request_.kill_on_bad_exit, step_name);
  if (!streams.Start(*step, *launch, connection_)) return 1;
  streams.StartReaders();
  std::optional<TerminalRaw> raw;
  if (request_.pty) raw.emplace();
  if (launch->stdin_path().empty()) ForwardStdin(streams.Task0Node());
  bool aborted = SuperviseStep(streams, *step, step_name);
  streams.Join();
  raw.reset();
  streams.FlushPartialLines();
  Finish(streams.Outcome(), *step, aborted);
}

}  // namespace

std::vector<OptionSpec> SrunOptionTable() {
  return WithAllocationOptions(kSrunOptions);
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
