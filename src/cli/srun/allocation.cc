// srun's and salloc's allocation; see allocation.h.
#include "cli/srun/allocation.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "cli/formats/formats.h"
#include "cli/sbatch/sbatch_option_table.h"
#include "cli/sbatch/sbatch_options.h"
#include "cli/srun/interrupts.h"
#include "common/count_list.h"
#include "wire/job_spec_codec.h"

namespace drover::cli {
namespace {

using Clock = std::chrono::steady_clock;

// sbatch's options srun and salloc share with it that describe the allocation (or, inside one,
// the step's resources): sbatch's table spells them and its handlers read them, so what sbatch
// learns to do with one, srun and salloc do too. Not here: the options of the same name that
// mean something else to srun (--output, --error, --input, --open-mode, -W/--wait) and the
// commands' own (--quiet, --verbose, --help, --usage, --version).
constexpr std::string_view kAllocationOptionNames[] = {
    "account",
    "acctg-freq",
    "bb",
    "bbf",
    "begin",
    "chdir",
    "cluster-constraint",
    "clusters",
    "comment",
    "constraint",
    "container",
    "contiguous",
    "core-spec",
    "cores-per-socket",
    "cpu-freq",
    "cpus-per-gpu",
    "cpus-per-task",
    "deadline",
    "delay-boot",
    "dependency",
    "distribution",
    "exclude",
    "exclusive",
    "export",
    "extra-node-info",
    "get-user-env",
    "gid",
    "gpu-bind",
    "gpu-freq",
    "gpus",
    "gpus-per-node",
    "gpus-per-socket",
    "gpus-per-task",
    "gres",
    "gres-flags",
    "hint",
    "hold",
    "job-name",
    "licenses",
    "mail-type",
    "mail-user",
    "mcs-label",
    "mem",
    "mem-bind",
    "mem-per-cpu",
    "mem-per-gpu",
    "mincpus",
    "network",
    "nice",
    "no-kill",
    "nodefile",
    "nodelist",
    "nodes",
    "ntasks",
    "ntasks-per-core",
    "ntasks-per-gpu",
    "ntasks-per-node",
    "ntasks-per-socket",
    "overcommit",
    "oversubscribe",
    "partition",
    "prefer",
    "priority",
    "profile",
    "propagate",
    "qos",
    "reboot",
    "reservation",
    "signal",
    "sockets-per-node",
    "spread-job",
    "switches",
    "thread-spec",
    "threads-per-core",
    "time",
    "time-min",
    "tmp",
    "uid",
    "use-min-nodes",
    "wait-all-nodes",
    "wckey",
};

bool IsAllocationOption(std::string_view name) {
  return std::find(std::begin(kAllocationOptionNames), std::end(kAllocationOptionNames), name) !=
         std::end(kAllocationOptionNames);
}

// The allocation options again, as sbatch's parser reads them (not those the command acts on
// itself).
std::vector<std::string> AllocationArguments(const ParsedOptions& parsed,
                                             std::span<const std::string_view> own) {
  std::vector<std::string> argv;
  for (const auto& [name, value] : parsed.options)
    if (IsAllocationOption(name) && std::find(own.begin(), own.end(), name) == own.end()) {
      const sbatch::OptionDef& def = sbatch::Option(name);
      argv.push_back(def.arg == OptionSpec::kNone ||
                             (def.arg == OptionSpec::kOptional && value.empty())
                         ? "--" + name
                         : "--" + name + "=" + value);
    }
  return argv;
}

// sbatch's words, spoken as `command`.
std::string AsCommand(std::string text, std::string_view command) {
  for (size_t at = text.find("sbatch"); at != std::string::npos; at = text.find("sbatch"))
    text.replace(at, 6, command);
  return text;
}

}  // namespace

std::optional<SbatchRequest> AllocationRequest(std::string_view command,
                                               const ParsedOptions& parsed,
                                               const std::string& default_name, bool quiet,
                                               std::span<const std::string_view> own) {
  std::vector<std::string> argv = AllocationArguments(parsed, own);
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
  // Files the options name (--nodefile, a -w/-x list given as a path, --bbf) are read as sbatch
  // reads them; there is no script to read (--wrap).
  auto read_file = [](const std::string& path) -> Result<std::string> {
    std::ifstream in(path);
    if (!in) return MakeError(std::strerror(errno));  // the reason; the option's message names it
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  auto request = ParseSbatch(argv, read_file, env, CurrentDirectory(), me.uid, me.gid, me.user);
  if (!request) {
    std::fprintf(stderr, "%s\n", AsCommand(request.error(), command).c_str());
    return std::nullopt;
  }
  request->spec.interactive = true;
  if (!named) request->spec.name = default_name;
  if (!quiet)
    for (const std::string& notice : request->notices)
      std::fprintf(stderr, "%s\n", AsCommand(notice, command).c_str());
  return std::move(*request);
}

namespace {

v1::SubmitRequest SubmitRequestOf(const SbatchRequest& request) {
  v1::SubmitRequest submit;
  SetCaller(submit.mutable_caller());
  wire::ToProto(request.spec, submit.mutable_spec());
  return submit;
}

std::optional<uint64_t> Submit(std::string_view command, const SbatchRequest& request,
                               Connection& connection) {
  v1::SubmitRequest submit = SubmitRequestOf(request);
  v1::SubmitReply reply;
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status = connection.stub->Submit(&context, submit, &reply);
  if (!status.ok()) {
    std::fprintf(stderr, "%.*s: error: Job submit/allocate failed: %s\n",
                 static_cast<int>(command.size()), command.data(), Unreachable(status).c_str());
    return std::nullopt;
  }
  return reply.job_id();
}

void Cancel(Connection& connection, uint64_t job_id) {
  v1::CancelRequest cancel;
  SetCaller(cancel.mutable_caller());
  cancel.mutable_filter()->add_job_ids(job_id);
  v1::ActionReply ignored;
  grpc::ClientContext context;
  SetDeadline(context);
  (void)connection.stub->Cancel(&context, cancel, &ignored);
}

// Polls until the job runs; nullopt when it ended first or Ctrl-C cancelled it (said on stderr).
std::optional<v1::Job> WaitUntilRunning(const std::string& name, uint64_t job_id,
                                        Connection& connection, bool quiet, bool& said_queued,
                                        std::optional<int> immediate) {
  auto started = Clock::now();
  g_interrupted = 0;
  while (true) {
    bool found = false;
    v1::Job job = FetchJob(*connection.stub, job_id, &found);
    if (found && (job.state() == "RUNNING")) return job;
    if (found && job.state() != "PENDING") {
      std::fprintf(stderr, "%s: error: Job allocation %llu has been revoked.\n", name.c_str(),
                   static_cast<unsigned long long>(job_id));
      return std::nullopt;
    }
    if (immediate && Clock::now() - started >= std::chrono::seconds(*immediate)) {
      // -I/--immediate: as Slurm's, the job is withdrawn when it could not start in time.
      Cancel(connection, job_id);
      std::fprintf(stderr, "%s: error: Unable to allocate resources: Requested nodes are busy\n",
                   name.c_str());
      return std::nullopt;
    }
    if (g_interrupted) {
      Cancel(connection, job_id);
      std::fprintf(stderr, "%s: Job allocation %llu has been revoked.\n", name.c_str(),
                   static_cast<unsigned long long>(job_id));
      return std::nullopt;
    }
    if (!said_queued && !quiet && Clock::now() - started > std::chrono::milliseconds(1500)) {
      std::fprintf(stderr, "%s: job %llu queued and waiting for resources\n", name.c_str(),
                   static_cast<unsigned long long>(job_id));
      said_queued = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

std::vector<OptionSpec> WithAllocationOptions(std::span<const OptionSpec> own,
                                              std::span<const std::string_view> not_shared) {
  std::vector<OptionSpec> all;
  for (std::string_view name : kAllocationOptionNames)
    if (std::find(not_shared.begin(), not_shared.end(), name) == not_shared.end()) {
      const sbatch::OptionDef& def = sbatch::Option(name);
      all.push_back({def.letter, def.name, def.arg});
    }
  for (const OptionSpec& spec : own) {
    // A command's own spelling of a shared option (srun's -b for --begin) replaces the shared one.
    auto same = std::find_if(all.begin(), all.end(), [&](const OptionSpec& shared) {
      return shared.long_name == spec.long_name;
    });
    if (same != all.end())
      *same = spec;
    else
      all.push_back(spec);
  }
  return all;
}

int PrintWillRun(std::string_view command, const grpc::Status& status,
                 const v1::SubmitReply& reply) {
  if (!status.ok()) {
    std::fprintf(stderr, "allocation failure: %s\n", Unreachable(status).c_str());
    return 1;
  }
  const v1::WillRun& will_run = reply.will_run();
  std::fprintf(stderr,
               "%.*s: Job %llu to start at %s using %u processors on nodes %s in partition %s\n",
               static_cast<int>(command.size()), command.data(),
               static_cast<unsigned long long>(reply.job_id()),
               columns::IsoTime(will_run.start_time()).c_str(), will_run.processors(),
               will_run.node_list().c_str(), will_run.partition().c_str());
  return 0;
}

int TestOnly(std::string_view command, const SbatchRequest& request, Connection& connection) {
  v1::SubmitRequest submit = SubmitRequestOf(request);
  submit.set_test_only(true);
  v1::SubmitReply reply;
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status = connection.stub->Submit(&context, submit, &reply);
  return PrintWillRun(command, status, reply);
}

v1::Job FetchJob(v1::Controller::Stub& stub, uint64_t id, bool* found) {
  v1::JobQuery query;
  query.mutable_filter()->add_job_ids(id);
  query.set_all_states(true);
  query.set_limit(1);  // the job itself; an array's ID would bring its tasks after it
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

std::variant<Allocation, int> Allocate(std::string_view command, const SbatchRequest& request,
                                       Connection& connection, bool quiet,
                                       std::optional<int> immediate) {
  std::optional<uint64_t> job_id = Submit(command, request, connection);
  if (!job_id) return 1;
  Allocation allocation;
  allocation.job_id = *job_id;
  std::string name(command);
  if (command == "salloc" && !quiet)
    std::fprintf(stderr, "salloc: Pending job allocation %llu\n",
                 static_cast<unsigned long long>(allocation.job_id));
  bool said_queued = false;
  std::optional<v1::Job> job =
      WaitUntilRunning(name, allocation.job_id, connection, quiet, said_queued, immediate);
  if (!job) return 1;
  allocation.job = std::move(*job);
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
  env["SLURM_JOB_CPUS_PER_NODE"] = FormatCountList(cpus);  // "8(x2)"
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

}  // namespace drover::cli
