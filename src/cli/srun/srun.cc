// srun and salloc. Both obtain an allocation when they are not inside one: an interactive job
// (no batch script; the nodes hold it until the command releases it). salloc runs a command
// (the user's shell by default) on the submitting host with the allocation's variables set;
// srun starts a step: the controller records it and lays its tasks out over the allocation,
// every node's agent starts its tasks and streams their output back here.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/host/job_env.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "common/getopt.h"
#include "cli/sbatch_options.h"
#include "cli/srun_options.h"
#include "common/hostlist.h"
#include "common/text.h"
#include "common/job_state.h"
#include "wire/job_spec_codec.h"

extern char** environ;

namespace drover::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Options srun and salloc hand to sbatch's parser to describe the allocation they ask for.
constexpr OptionSpec kAllocationOptions[] = {
    {'N', "nodes", OptionSpec::kRequired},
    {'n', "ntasks", OptionSpec::kRequired},
    {'c', "cpus-per-task", OptionSpec::kRequired},
    {0, "ntasks-per-node", OptionSpec::kRequired},
    {0, "mem", OptionSpec::kRequired},
    {0, "mem-per-cpu", OptionSpec::kRequired},
    {0, "mem-per-gpu", OptionSpec::kRequired},
    {0, "gres", OptionSpec::kRequired},
    {'G', "gpus", OptionSpec::kRequired},
    {0, "gpus-per-node", OptionSpec::kRequired},
    {0, "gpus-per-task", OptionSpec::kRequired},
    {0, "cpus-per-gpu", OptionSpec::kRequired},
    {'C', "constraint", OptionSpec::kRequired},
    {'w', "nodelist", OptionSpec::kRequired},
    {'x', "exclude", OptionSpec::kRequired},
    {0, "exclusive", OptionSpec::kOptional},
    {'p', "partition", OptionSpec::kRequired},
    {'A', "account", OptionSpec::kRequired},
    {'q', "qos", OptionSpec::kRequired},
    {'t', "time", OptionSpec::kRequired},
    {0, "time-min", OptionSpec::kRequired},
    {'J', "job-name", OptionSpec::kRequired},
    {'d', "dependency", OptionSpec::kRequired},
    {0, "begin", OptionSpec::kRequired},
    {0, "nice", OptionSpec::kOptional},
    {0, "reservation", OptionSpec::kRequired},
    {0, "export", OptionSpec::kRequired},
    {'D', "chdir", OptionSpec::kRequired},
    {0, "comment", OptionSpec::kRequired},
    {0, "switches", OptionSpec::kRequired},
    {0, "wckey", OptionSpec::kRequired},
    {0, "mail-type", OptionSpec::kRequired},
    {0, "mail-user", OptionSpec::kRequired},
    {'H', "hold", OptionSpec::kNone},
    {0, "signal", OptionSpec::kRequired},
};

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
    {0, "help", OptionSpec::kNone},          {0, "usage", OptionSpec::kNone},
    {'V', "version", OptionSpec::kNone},
};

constexpr OptionSpec kSallocOptions[] = {
    {'Q', "quiet", OptionSpec::kNone},         {'v', "verbose", OptionSpec::kNone},
    {0, "no-shell", OptionSpec::kNone},        {0, "help", OptionSpec::kNone},
    {0, "usage", OptionSpec::kNone},           {'V', "version", OptionSpec::kNone},
    {'I', "immediate", OptionSpec::kOptional},
};

std::vector<OptionSpec> Merge(std::span<const OptionSpec> a, std::span<const OptionSpec> b) {
  std::vector<OptionSpec> all(a.begin(), a.end());
  all.insert(all.end(), b.begin(), b.end());
  return all;
}

// The allocation options again, as sbatch's parser reads them.
std::vector<std::string> AllocationArguments(const ParsedOptions& parsed) {
  std::vector<std::string> argv;
  for (const auto& [name, value] : parsed.options)
    for (const OptionSpec& spec : kAllocationOptions)
      if (spec.long_name == name) {
        argv.push_back(spec.argument == OptionSpec::kNone ? "--" + name
                       : spec.argument == OptionSpec::kOptional && value.empty()
                           ? "--" + name
                           : "--" + name + "=" + value);
      }
  return argv;
}

std::optional<uint32_t> Count(const ParsedOptions& parsed, std::string_view name) {
  auto value = parsed.Last(name);
  if (!value) return std::nullopt;
  // "-N 2-4": the minimum is what a step inside an allocation uses.
  auto number = ParseUint64(Split(*value, '-').front());
  if (!number || *number > 1'000'000) return std::nullopt;
  return static_cast<uint32_t>(*number);
}

v1::Job FetchJob(v1::Controller::Stub& stub, uint64_t id, bool* found) {
  v1::JobQuery query;
  query.mutable_filter()->add_job_ids(id);
  query.set_all_states(true);
  v1::JobList list;
  grpc::ClientContext context;
  SetDeadline(context);
  v1::Job job;
  *found = false;
  if (stub.ListJobs(&context, query, &list).ok())
    for (const std::string& encoded : list.jobs()) {
      v1::Job one;
      if (one.ParseFromString(encoded) && one.spec().job_id() == id) {
        job = std::move(one);
        *found = true;
      }
    }
  return job;
}

volatile sig_atomic_t g_interrupted = 0;  // Ctrl-C presses not yet handled
volatile sig_atomic_t g_forward = 0;      // another signal to pass on to the tasks
void OnInterrupt(int) {
  g_interrupted = g_interrupted + 1;
}
void OnForward(int signal) {
  g_forward = signal;
}

// Submits an interactive job for srun or salloc and waits until it runs. Prints Slurm's words
// as `command` ("srun", "salloc"). Returns the job, or an exit code.
struct Allocation {
  uint64_t job_id = 0;
  v1::Job job;
};

std::variant<Allocation, int> Allocate(std::string_view command, const ParsedOptions& parsed,
                                       const std::string& default_name, Connection& connection,
                                       bool quiet) {
  std::vector<std::string> argv = AllocationArguments(parsed);
  bool named = parsed.Has("job-name");
  argv.push_back("--wrap=:");
  argv.push_back("--output=/dev/null");
  argv.push_back("--error=/dev/null");
  Identity me = Me();
  std::map<std::string, std::string> env = Environment();
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  env.emplace("SLURM_SUBMIT_HOST", host);
  // sbatch's SBATCH_* input variables are not srun's or salloc's.
  for (auto it = env.begin(); it != env.end();)
    it = it->first.starts_with("SBATCH_") ? env.erase(it) : std::next(it);
  auto request = ParseSbatch(
      argv, [](const std::string&) -> Result<std::string> { return std::string(); }, env,
      CurrentDirectory(), me.uid, me.gid, me.user);
  if (!request) {
    std::string error = request.error();
    for (size_t at = error.find("sbatch"); at != std::string::npos; at = error.find("sbatch"))
      error.replace(at, 6, command);
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  request->spec.interactive = true;
  if (!named) request->spec.name = default_name;
  if (!quiet)
    for (std::string notice : request->notices) {
      for (size_t at = notice.find("sbatch"); at != std::string::npos; at = notice.find("sbatch"))
        notice.replace(at, 6, command);
      std::fprintf(stderr, "%s\n", notice.c_str());
    }
  v1::SubmitRequest submit;
  SetCaller(submit.mutable_caller());
  wire::ToProto(request->spec, submit.mutable_spec());
  v1::SubmitReply reply;
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status = connection.stub->Submit(&context, submit, &reply);
  if (!status.ok()) {
    std::fprintf(stderr, "%.*s: error: Job submit/allocate failed: %s\n",
                 static_cast<int>(command.size()), command.data(), Unreachable(status).c_str());
    return 1;
  }
  Allocation allocation;
  allocation.job_id = reply.job_id();
  std::string name(command);
  if (command == "salloc" && !quiet)
    std::fprintf(stderr, "salloc: Pending job allocation %llu\n",
                 static_cast<unsigned long long>(allocation.job_id));
  auto started = Clock::now();
  bool said_queued = false;
  g_interrupted = 0;
  while (true) {
    bool found = false;
    v1::Job job = FetchJob(*connection.stub, allocation.job_id, &found);
    if (found && (job.state() == "RUNNING")) {
      allocation.job = std::move(job);
      break;
    }
    if (found && job.state() != "PENDING") {
      std::fprintf(stderr, "%s: error: Job allocation %llu has been revoked.\n", name.c_str(),
                   static_cast<unsigned long long>(allocation.job_id));
      return 1;
    }
    if (g_interrupted) {
      v1::CancelRequest cancel;
      SetCaller(cancel.mutable_caller());
      cancel.mutable_filter()->add_job_ids(allocation.job_id);
      v1::ActionReply ignored;
      grpc::ClientContext cancel_context;
      SetDeadline(cancel_context);
      (void)connection.stub->Cancel(&cancel_context, cancel, &ignored);
      std::fprintf(stderr, "%s: Job allocation %llu has been revoked.\n", name.c_str(),
                   static_cast<unsigned long long>(allocation.job_id));
      return 1;
    }
    if (!said_queued && !quiet && Clock::now() - started > std::chrono::milliseconds(1500)) {
      std::fprintf(stderr, "%s: job %llu queued and waiting for resources\n", name.c_str(),
                   static_cast<unsigned long long>(allocation.job_id));
      said_queued = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!quiet) {
    if (said_queued)
      std::fprintf(stderr, "%s: job %llu has been allocated resources\n", name.c_str(),
                   static_cast<unsigned long long>(allocation.job_id));
    if (command == "salloc")
      std::fprintf(stderr, "salloc: Granted job allocation %llu\n",
                   static_cast<unsigned long long>(allocation.job_id));
  }
  return allocation;
}

void ReleaseAllocation(Connection& connection, uint64_t job_id, int exit_code, int signal) {
  v1::ReleaseRequest release;
  SetCaller(release.mutable_caller());
  release.set_job_id(job_id);
  release.set_exit_code(exit_code);
  release.set_exit_signal(signal);
  v1::ActionReply ignored;
  grpc::ClientContext context;
  SetDeadline(context);
  (void)connection.stub->Release(&context, release, &ignored);
}

// The job-level variables a command run in the allocation sees (what sbatch's batch script
// would have), for salloc's command and for srun outside an allocation.
void SetJobVariables(const v1::Job& job, const std::string& cluster_name, bool ntasks_given,
                     std::map<std::string, std::string>& env) {
  const v1::JobSpec& spec = job.spec();
  std::string id = std::to_string(spec.job_id());
  env["SLURM_JOB_ID"] = id;
  env["SLURM_JOBID"] = id;
  env["SLURM_JOB_NAME"] = spec.name();
  env["SLURM_JOB_NODELIST"] = job.node_list();
  env["SLURM_NODELIST"] = job.node_list();
  env["SLURM_JOB_NUM_NODES"] = std::to_string(job.allocation_size());
  env["SLURM_NNODES"] = std::to_string(job.allocation_size());
  env["SLURM_JOB_PARTITION"] = job.partition_name();
  env["SLURM_JOB_ACCOUNT"] = spec.account();
  env["SLURM_JOB_QOS"] = spec.qos();
  env["SLURM_JOB_UID"] = std::to_string(spec.uid());
  env["SLURM_JOB_USER"] = spec.user();
  env["SLURM_JOB_GID"] = std::to_string(spec.gid());
  env["SLURM_CLUSTER_NAME"] = cluster_name;
  env["SLURM_SUBMIT_DIR"] = CurrentDirectory();
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  env["SLURM_SUBMIT_HOST"] = host;
  std::vector<uint32_t> cpus;
  for (const v1::NodeAllocation& part : job.allocation())
    cpus.push_back(static_cast<uint32_t>(part.cores_size()));
  env["SLURM_JOB_CPUS_PER_NODE"] = agent::FormatCountList(cpus);  // "8(x2)"
  if (ntasks_given) {
    env["SLURM_NTASKS"] = std::to_string(spec.ntasks());
    env["SLURM_NPROCS"] = std::to_string(spec.ntasks());
  }
  if (spec.ntasks_per_node() > 0)
    env["SLURM_NTASKS_PER_NODE"] = std::to_string(spec.ntasks_per_node());
  if (spec.cpus_per_task() > 0) env["SLURM_CPUS_PER_TASK"] = std::to_string(spec.cpus_per_task());
  if (spec.mem_per_node_mb() > 0)
    env["SLURM_MEM_PER_NODE"] = std::to_string(spec.mem_per_node_mb());
}

std::string SignalWords(int signal) {
  switch (signal) {
    case SIGKILL:
      return "Killed";
    case SIGTERM:
      return "Terminated";
    case SIGSEGV:
      return "Segmentation fault";
    case SIGABRT:
      return "Aborted";
    case SIGINT:
      return "Interrupt";
    default:
      return fmt::format("Signal {}", signal);
  }
}

// One node's stream of the step.
struct NodeStream {
  v1::StepNode node;
  std::unique_ptr<v1::Agent::Stub> stub;
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<v1::StepInput, v1::StepOutput>> stream;
  std::mutex write_mutex;
  bool closed = false;  // WritesDone sent: nothing more may be written
  bool Send(const v1::StepInput& input) {
    std::lock_guard lock(write_mutex);
    return stream && !closed && stream->Write(input);
  }
  void Close() {
    std::lock_guard lock(write_mutex);
    if (!closed && stream) stream->WritesDone();
    closed = true;
  }
};

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

}  // namespace

int RunSrun(Arguments args) {
  std::vector<std::string> words(args.begin(), args.end());
  std::vector<OptionSpec> specs = Merge(kAllocationOptions, kSrunOptions);
  size_t start = CommandStart(words, specs);
  std::span<const std::string> option_words(words.data(), std::min(start, words.size()));
  if (start > 0 && start <= words.size() && words[start - 1] == "--")
    option_words = option_words.first(start - 1);
  auto parsed = ParseOptions(option_words, specs);
  if (!parsed) return OptionError("srun", parsed.error());
  if (parsed->Has("help")) return SrunUsage(true);
  if (parsed->Has("usage")) return SrunUsage(false);
  if (parsed->Has("version")) {
    return PrintSlurmVersion();
  }
  std::vector<std::string> command(words.begin() + std::min(start, words.size()), words.end());
  for (const std::string& operand : parsed->operands) command.insert(command.begin(), operand);
  if (command.empty()) {
    std::fprintf(stderr, "srun: fatal: No command given to execute.\n");
    return 1;
  }
  bool quiet = parsed->Has("quiet");
  bool label = parsed->Has("label");
  bool pty = parsed->Has("pty");
  bool kill_on_bad_exit =
      parsed->Has("kill-on-bad-exit") && parsed->Last("kill-on-bad-exit").value_or("") != "0";
  // Accepted, not acted on: said once (not for --cpu-bind=quiet, which asks for silence).
  for (std::string_view accepted : {"cpu-bind", "cpu_bind", "mpi", "distribution"})
    if (parsed->Has(accepted) && !quiet &&
        !(accepted.starts_with("cpu") && parsed->Last(accepted).value_or("").starts_with("q")))
      std::fprintf(stderr, "srun: warning: --%.*s is accepted and not acted on by Drover\n",
                   static_cast<int>(accepted.size()), accepted.data());

  auto connection = Connect();
  if (!connection) {
    std::fprintf(stderr, "srun: error: %s\n", connection.error().c_str());
    return 1;
  }
  std::map<std::string, std::string> env = Environment();
  std::optional<uint64_t> job_id;
  if (auto given = parsed->Last("jobid")) {
    job_id = ParseUint64(*given);
    if (!job_id) {
      std::fprintf(stderr, "srun: error: Invalid job id %s\n", given->c_str());
      return 1;
    }
  } else if (auto it = env.find("SLURM_JOB_ID"); it != env.end()) {
    job_id = ParseUint64(it->second);
  }
  struct sigaction interrupt {};
  interrupt.sa_handler = OnInterrupt;
  ::sigaction(SIGINT, &interrupt, nullptr);
  struct sigaction forward {};
  forward.sa_handler = OnForward;
  for (int s : {SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT})
    ::sigaction(s, &forward, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  std::string program_name = command.front();
  if (size_t slash = program_name.rfind('/'); slash != std::string::npos)
    program_name = program_name.substr(slash + 1);
  bool own_allocation = !job_id;
  if (own_allocation) {
    auto allocated = Allocate("srun", *parsed, program_name, *connection, quiet);
    if (auto* code = std::get_if<int>(&allocated)) return *code;
    Allocation& allocation = std::get<Allocation>(allocated);
    job_id = allocation.job_id;
    SetJobVariables(allocation.job, connection->cluster.settings.cluster_name,
                    parsed->Has("ntasks"), env);
  }
  auto release = [&](int code, int signal) {
    if (own_allocation) ReleaseAllocation(*connection, *job_id, code, signal);
  };

  // The step.
  v1::CreateStepRequest create;
  SetCaller(create.mutable_caller());
  create.set_job_id(*job_id);
  create.set_name(parsed->Last("job-name").value_or(program_name));
  // Inside an allocation, what the job asked for comes from its variables, as Slurm's srun
  // reads them; options given here win.
  auto from_env = [&](std::string_view option, const char* variable) -> uint32_t {
    if (auto given = Count(*parsed, option)) return *given;
    if (own_allocation) return 0;
    auto it = env.find(variable);
    auto value = it == env.end() ? std::nullopt : ParseUint64(it->second);
    return value && *value <= 1'000'000 ? static_cast<uint32_t>(*value) : 0;
  };
  create.set_nodes(Count(*parsed, "nodes").value_or(0));
  create.set_ntasks(from_env("ntasks", "SLURM_NTASKS"));
  create.set_ntasks_per_node(from_env("ntasks-per-node", "SLURM_NTASKS_PER_NODE"));
  if (!own_allocation) {
    if (auto nodelist = parsed->Last("nodelist")) {
      auto names = ExpandHostlist(*nodelist);
      if (!names) {
        std::fprintf(stderr, "srun: error: %s\n", names.error().c_str());
        return 1;
      }
      for (const std::string& name : *names) create.add_nodelist(name);
    }
  }
  create.set_cpus_per_task(from_env("cpus-per-task", "SLURM_CPUS_PER_TASK"));
  v1::CreateStepReply step;
  {
    grpc::ClientContext context;
    SetDeadline(context);
    grpc::Status status = connection->stub->CreateStep(&context, create, &step);
    if (!status.ok()) {
      std::fprintf(stderr, "srun: error: Unable to create step for job %llu: %s\n",
                   static_cast<unsigned long long>(*job_id), Unreachable(status).c_str());
      release(1, 0);
      return 1;
    }
  }
  const std::string step_name = fmt::format("StepId={}.{}", *job_id, step.step_id());

  std::map<uint32_t, std::vector<std::string>> multi_prog;
  if (parsed->Has("multi-prog")) {
    std::ifstream file(command.front());
    std::stringstream text;
    text << file.rdbuf();
    auto read = file ? ParseMultiProg(text.str(), command.front(), step.ntasks())
                     : Result<std::map<uint32_t, std::vector<std::string>>>(
                           MakeError(fmt::format("Unable to open file {}", command.front())));
    if (!read) {
      std::fprintf(stderr, "srun: error: %s\n", read.error().c_str());
      v1::StepEndedRequest ended;  // the step never ran: sacct must not show it running
      SetCaller(ended.mutable_caller());
      ended.set_job_id(*job_id);
      ended.set_step_id(step.step_id());
      ended.set_exit_code(1);
      ended.set_restart_count(step.job().restart_count());
      v1::ActionReply ignored;
      grpc::ClientContext context;
      SetDeadline(context);
      (void)connection->stub->StepEnded(&context, ended, &ignored);
      release(1, 0);
      return 1;
    }
    multi_prog = std::move(*read);
  }

  v1::StepLaunch launch;
  *launch.mutable_job() = step.job();
  launch.set_step_id(step.step_id());
  for (const std::string& word : command) launch.add_argv(word);
  for (const auto& [task, argv] : multi_prog) {
    auto* entry = launch.add_task_commands();
    entry->set_task(task);
    for (const std::string& word : argv) entry->add_argv(word);
  }
  launch.set_ntasks(step.ntasks());
  launch.set_nnodes(static_cast<uint32_t>(step.nodes_size()));
  launch.set_node_list(step.node_list());
  for (const auto& [name, value] : env) launch.add_environment(name + "=" + value);
  launch.set_work_dir(parsed->Last("chdir").value_or(CurrentDirectory()));
  std::string input = parsed->Last("input").value_or("");
  if (input == "none") input = "/dev/null";
  if (!input.empty() && input != "0" && input != "all" &&
      input.find_first_not_of("0123456789") == std::string::npos) {
    std::fprintf(stderr, "srun: error: --input=%s: srun's stdin reaches task 0 only here\n",
                 input.c_str());
    release(1, 0);
    return 1;
  }
  launch.set_stdout_path(parsed->Last("output").value_or(""));
  launch.set_stderr_path(parsed->Last("error").value_or(parsed->Last("output").value_or("")));
  if (input != "all" && input != "0") launch.set_stdin_path(input);
  launch.set_pty(pty);
  launch.set_open_append(parsed->Last("open-mode").value_or("") == "append");
  launch.set_cpus_per_task(create.cpus_per_task());
  for (const v1::StepNode& node : step.nodes()) launch.add_tasks_per_node(node.tasks_size());

  // Connect to every node and start its tasks.
  std::vector<std::unique_ptr<NodeStream>> nodes;
  uint32_t task0_node = 0;
  for (int i = 0; i < step.nodes_size(); ++i) {
    auto node = std::make_unique<NodeStream>();
    node->node = step.nodes(i);
    grpc::ChannelArguments channel_args;
    channel_args.SetMaxReceiveMessageSize(64 << 20);
    node->stub = v1::Agent::NewStub(grpc::CreateCustomChannel(
        node->node.address(), grpc::InsecureChannelCredentials(), channel_args));
    node->stream = node->stub->RunStep(&node->context);
    v1::StepInput first;
    *first.mutable_launch() = launch;
    first.mutable_launch()->set_node_index(static_cast<uint32_t>(i));
    first.mutable_launch()->clear_tasks();
    for (uint32_t task : node->node.tasks()) {
      first.mutable_launch()->add_tasks(task);
      if (task == 0) task0_node = static_cast<uint32_t>(i);
    }
    if (!node->stream->Write(first)) {
      std::fprintf(stderr, "srun: error: %s: cannot reach its agent at %s\n",
                   node->node.name().c_str(), node->node.address().c_str());
    }
    nodes.push_back(std::move(node));
  }

  std::mutex output_mutex;
  std::map<std::pair<uint32_t, bool>, std::string> partial;  // --label: an unfinished line
  auto emit = [&](uint32_t task, bool is_stderr, const std::string& data) {
    std::lock_guard lock(output_mutex);
    int fd = is_stderr ? 2 : 1;
    if (!label) {
      (void)!::write(fd, data.data(), data.size());
      return;
    }
    std::string& pending = partial[{task, is_stderr}];
    pending += data;
    size_t newline;
    std::string out;
    while ((newline = pending.find('\n')) != std::string::npos) {
      out += fmt::format("{}: {}", task, pending.substr(0, newline + 1));
      pending.erase(0, newline + 1);
    }
    if (!out.empty()) (void)!::write(fd, out.data(), out.size());
  };

  std::atomic<int> worst_exit{0};
  std::atomic<int> first_signal{0};
  std::atomic<bool> bad_exit_seen{false};
  std::atomic<uint32_t> tasks_ended{0};
  std::atomic<double> cpu_total{0};
  std::atomic<uint64_t> rss_max{0};
  auto signal_all = [&](int signal) {
    v1::StepInput message;
    message.set_signal(signal);
    for (auto& node : nodes) node->Send(message);
  };
  std::vector<std::thread> readers;
  for (auto& node_ptr : nodes) {
    NodeStream* node = node_ptr.get();
    readers.emplace_back([&, node] {
      v1::StepOutput output;
      size_t expected = static_cast<size_t>(node->node.tasks_size()), ended = 0;
      while (node->stream->Read(&output)) {
        if (!output.data().empty()) emit(output.task(), output.stderr(), output.data());
        for (const auto& end : output.ended()) {
          ++ended;
          ++tasks_ended;
          int code = end.signal() != 0 ? 128 + end.signal() : end.exit_code();
          int previous = worst_exit.load();
          while (code > previous && !worst_exit.compare_exchange_weak(previous, code)) {
          }
          if (end.signal() != 0) {
            int none = 0;
            first_signal.compare_exchange_strong(none, end.signal());
            std::lock_guard lock(output_mutex);
            std::fprintf(stderr, "srun: error: %s: task %u: %s\n", node->node.name().c_str(),
                         end.task(), SignalWords(end.signal()).c_str());
          } else if (end.exit_code() != 0) {
            std::lock_guard lock(output_mutex);
            std::fprintf(stderr, "srun: error: %s: task %u: Exited with exit code %d\n",
                         node->node.name().c_str(), end.task(), end.exit_code());
          }
          if ((end.signal() != 0 || end.exit_code() != 0) && kill_on_bad_exit &&
              !bad_exit_seen.exchange(true)) {
            {
              std::lock_guard lock(output_mutex);
              std::fprintf(stderr, "srun: Terminating %s\n", step_name.c_str());
            }
            signal_all(SIGKILL);
          }
        }
        if (output.cpu_seconds() > 0) cpu_total = cpu_total.load() + output.cpu_seconds();
        if (output.max_rss_mib() > rss_max) rss_max = output.max_rss_mib();
        if (ended >= expected && !output.started() && output.ended_size() > 0) node->Close();
      }
      grpc::Status status = node->stream->Finish();
      if (!status.ok() && ended < expected) {
        std::lock_guard lock(output_mutex);
        std::fprintf(stderr, "srun: error: %s: tasks could not run: %s\n",
                     node->node.name().c_str(), status.error_message().c_str());
        int previous = worst_exit.load();
        while (1 > previous && !worst_exit.compare_exchange_weak(previous, 1)) {
        }
        tasks_ended += static_cast<uint32_t>(expected - ended);
      }
    });
  }

  // stdin to task 0 (unless redirected), from a thread that may block on a terminal.
  std::optional<TerminalRaw> raw;
  if (pty) raw.emplace();
  if (launch.stdin_path().empty()) {
    NodeStream* target = nodes.empty() ? nullptr : nodes[task0_node].get();
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

  // Signals: Ctrl-C once reports, twice within a second aborts; others are passed on.
  Clock::time_point last_interrupt{};
  bool aborting = false, aborted = false;
  Clock::time_point abort_at{};
  while (tasks_ended.load() < step.ntasks()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (g_forward) {
      int signal = g_forward;
      g_forward = 0;
      signal_all(signal);
    }
    if (g_interrupted) {
      g_interrupted = 0;
      auto now = Clock::now();
      if (pty) {
        signal_all(SIGINT);
      } else if (now - last_interrupt < std::chrono::seconds(1)) {
        std::lock_guard lock(output_mutex);
        std::fprintf(stderr, "srun: sending Ctrl-C to %s\n", step_name.c_str());
        std::fprintf(stderr, "srun: Job step aborted\n");
        signal_all(SIGINT);
        aborting = aborted = true;
        abort_at = now;
      } else {
        std::lock_guard lock(output_mutex);
        std::fprintf(stderr, "srun: interrupt (one more within 1 sec to abort)\n");
        std::fprintf(stderr, "srun: %s tasks 0-%u: running\n", step_name.c_str(),
                     step.ntasks() - 1);
      }
      last_interrupt = now;
    }
    if (aborting && Clock::now() - abort_at > std::chrono::seconds(2)) {
      signal_all(SIGKILL);
      aborting = false;
    }
  }
  for (std::thread& reader : readers) reader.join();
  raw.reset();
  {
    std::lock_guard lock(output_mutex);  // a --label line without its newline
    for (const auto& [key, text] : partial)
      if (!text.empty()) {
        std::string line = fmt::format("{}: {}\n", key.first, text);
        (void)!::write(key.second ? 2 : 1, line.data(), line.size());
      }
  }

  int exit_code = worst_exit.load();
  v1::StepEndedRequest ended;
  SetCaller(ended.mutable_caller());
  ended.set_job_id(*job_id);
  ended.set_step_id(step.step_id());
  ended.set_exit_code(exit_code >= 128 && first_signal ? 0 : exit_code);
  ended.set_exit_signal(first_signal);
  ended.set_cancelled(bad_exit_seen || aborted);
  ended.set_restart_count(step.job().restart_count());
  ended.set_cpu_seconds(cpu_total);
  ended.set_max_rss_mib(rss_max);
  {
    v1::ActionReply ignored;
    grpc::ClientContext context;
    SetDeadline(context);
    (void)connection->stub->StepEnded(&context, ended, &ignored);
  }
  release(exit_code >= 128 && first_signal ? 0 : exit_code, first_signal);
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(exit_code);  // the stdin thread may still wait on a terminal
}

int RunSalloc(Arguments args) {
  std::vector<std::string> words(args.begin(), args.end());
  std::vector<OptionSpec> specs = Merge(kAllocationOptions, kSallocOptions);
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
  if (parsed->Has("version")) {
    return PrintSlurmVersion();
  }
  std::vector<std::string> command(words.begin() + std::min(start, words.size()), words.end());
  for (const std::string& operand : parsed->operands) command.insert(command.begin(), operand);
  bool quiet = parsed->Has("quiet");
  if (command.empty()) {
    const char* shell = std::getenv("SHELL");
    if (passwd* entry = getpwuid(getuid()); (!shell || !*shell) && entry && entry->pw_shell)
      shell = entry->pw_shell;
    command.push_back(shell && *shell ? shell : "/bin/sh");
  }
  auto connection = Connect();
  if (!connection) {
    std::fprintf(stderr, "salloc: error: %s\n", connection.error().c_str());
    return 1;
  }
  struct sigaction interrupt {};
  interrupt.sa_handler = OnInterrupt;
  ::sigaction(SIGINT, &interrupt, nullptr);
  auto allocated = Allocate("salloc", *parsed, "interactive", *connection, quiet);
  if (auto* code = std::get_if<int>(&allocated)) return *code;
  Allocation& allocation = std::get<Allocation>(allocated);
  std::map<std::string, std::string> env = Environment();
  SetJobVariables(allocation.job, connection->cluster.settings.cluster_name, parsed->Has("ntasks"),
                  env);

  // Everything the child needs is made before fork (salloc has threads: gRPC's).
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
  // A hangup or SIGTERM goes to the command; salloc itself lives on to release the job.
  g_forward = 0;
  struct sigaction forward {};
  forward.sa_handler = OnForward;
  for (int s : {SIGHUP, SIGTERM}) ::sigaction(s, &forward, nullptr);
  // The command runs until it exits, or until the allocation ends under it (time limit,
  // scancel): then it is told to stop, as Slurm's salloc does.
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    int checks = 0;
    while (!done) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (++checks % 20 != 0) continue;
      bool found = false;
      v1::Job job = FetchJob(*connection->stub, allocation.job_id, &found);
      if (found && job.state() != "RUNNING" && job.state() != "SUSPENDED" && !done) {
        std::fprintf(stderr, "salloc: Job allocation %llu has been revoked.\n",
                     static_cast<unsigned long long>(allocation.job_id));
        ::kill(child, SIGHUP);
        ::kill(child, SIGTERM);
        return;
      }
    }
  });
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR)
    if (g_forward) {
      ::kill(child, g_forward);
      g_forward = 0;
    }
  done = true;
  watcher.join();
  int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (!quiet)
    std::fprintf(stderr, "salloc: Relinquishing job allocation %llu\n",
                 static_cast<unsigned long long>(allocation.job_id));
  ReleaseAllocation(*connection, allocation.job_id, WIFEXITED(status) ? WEXITSTATUS(status) : 0,
                    WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return exit_code;
}

}  // namespace drover::cli
