// sbatch: submits a batch script (sbatch_options.cc parses it as Slurm's sbatch does).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/client.h"
#include "cli/clusters.h"
#include "cli/commands.h"
#include "cli/formats/formats.h"
#include "cli/sbatch/sbatch_option_table.h"
#include "cli/sbatch/sbatch_options.h"
#include "cli/srun/allocation.h"
#include "common/job_state.h"
#include "common/launch_settings.h"
#include "common/resource_limits.h"
#include "common/text.h"
#include "wire/job_pages.h"
#include "wire/job_spec_codec.h"

namespace drover::cli {
namespace {

Result<std::string> ReadScript(const std::string& path) {
  std::stringstream text;
  if (path.empty() || path == "-") {
    text << std::cin.rdbuf();
    return text.str();
  }
  std::ifstream in(path);
  // The reason only: the script's and each option's messages name the file themselves.
  if (!in) return MakeError(std::strerror(errno));
  text << in.rdbuf();
  return text.str();
}

// --wait: until the job (every task of an array) has ended; the highest exit code is sbatch's,
// 1 for a job that failed without one.
int WaitForEnd(v1::Controller::Stub& stub, uint64_t id) {
  while (true) {
    v1::JobQuery query;
    query.mutable_filter()->add_job_ids(id);
    v1::JobList list;
    if (wire::ListJobPages(stub, query, &list).ok()) {
      bool ended = true;
      int code = 0;
      for (const std::string& encoded : list.jobs()) {
        v1::Job job;
        job.ParseFromString(encoded);
        auto state = ParseJobState(job.state());
        if (!state || !IsFinal(*state)) ended = false;
        if (job.state() != "COMPLETED")
          code = std::max(code, job.exit_code() ? job.exit_code() : 1);
      }
      if (ended) return code;  // also when the queue no longer holds it (MinJobAge passed)
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// SLURM_EXIT_ERROR: the exit code for an error of sbatch's own (1 when unset or not a number).
int ErrorExit(const std::map<std::string, std::string>& env) {
  auto found = env.find("SLURM_EXIT_ERROR");
  if (found == env.end()) return 1;
  std::optional<int64_t> code = ParseInt64(found->second);
  return code && *code > 0 && *code < 256 ? static_cast<int>(*code) : 1;
}

}  // namespace

std::vector<OptionSpec> SbatchOptionTable() {
  std::vector<OptionSpec> all;
  for (const sbatch::OptionDef& def : sbatch::Options())
    if (!def.name.empty()) all.push_back({def.letter, def.name, def.arg});
  return all;
}

int RunSbatch(Arguments args) {
  std::vector<std::string> argv(args.begin(), args.end());
  Identity me = Me();
  std::map<std::string, std::string> env = Environment();
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  env.emplace("SLURM_SUBMIT_HOST", host);
  const int error_exit = ErrorExit(env);
  auto request = ParseSbatch(argv, ReadScript, env, CurrentDirectory(), me.uid, me.gid, me.user);
  if (!request) {
    std::fprintf(stderr, "%s\n", request.error().c_str());
    return error_exit;
  }
  if (!request->print_and_exit.empty() || request->exit_code != 0) {
    if (request->print_and_exit.starts_with("slurm ")) return PrintSlurmVersion();
    std::fputs(request->print_and_exit.c_str(), stdout);
    return request->exit_code;
  }
  if (!request->quiet)
    for (const std::string& notice : request->notices) std::fprintf(stderr, "%s\n", notice.c_str());
  // One call (two with --wait): no gRPC channel unless --wait needs one.
  auto connection = Connect(ConnectMode::kLean);
  if (!connection) {
    std::fprintf(stderr, "sbatch: error: %s\n", connection.error().c_str());
    return error_exit;
  }
  // -M: only this cluster (or "all", which is this one); Slurm then names it when it reports.
  std::string cluster_suffix;
  if (request->clusters) {
    const std::string& local = connection->cluster.settings.cluster_name;
    if (std::optional<std::string> error = ClustersError(*request->clusters, local)) {
      std::fprintf(stderr, "sbatch: error: %s\n", error->c_str());
      return error_exit;
    }
    cluster_suffix = local;
  }
  const LaunchSettings settings = ReadLaunchSettings(ResolveConfPath(""));
  auto limits = ChooseLimits(request->propagate, settings.propagate_resource_limits,
                             settings.propagate_resource_limits_except);
  if (!limits) {
    std::fprintf(stderr, "sbatch: error: %s\n", limits.error().c_str());
    return error_exit;
  }
  request->spec.rlimits = CaptureLimits(*limits);
  v1::SubmitRequest submit;
  SetCaller(submit.mutable_caller());
  wire::ToProto(request->spec, submit.mutable_spec());
  submit.set_array(request->array);
  submit.set_script(request->script);
  submit.set_test_only(request->test_only);
  v1::SubmitReply reply;
  grpc::Status status;
  if (connection->lean) {
    status = LeanCall(*connection, "/drover.v1.Controller/Submit", submit, &reply);
  } else {
    grpc::ClientContext context;
    SetDeadline(context);
    status = connection->stub->Submit(&context, submit, &reply);
  }
  if (request->test_only) return PrintWillRun("sbatch", status, reply);
  if (!status.ok()) {
    std::fprintf(stderr, "sbatch: error: Batch job submission failed: %s\n",
                 Unreachable(status).c_str());
    return error_exit;
  }
  auto id = static_cast<unsigned long long>(reply.job_id());
  if (request->parsable)
    std::printf("%llu%s\n", id, cluster_suffix.empty() ? "" : (";" + cluster_suffix).c_str());
  else if (!request->quiet)
    std::printf("Submitted batch job %llu%s\n", id,
                cluster_suffix.empty() ? "" : (" on cluster " + cluster_suffix).c_str());
  std::fflush(stdout);
  if (!request->wait) return 0;
  if (Status made = EnsureChannel(*connection); !made) {
    std::fprintf(stderr, "sbatch: error: %s\n", made.error().c_str());
    return error_exit;
  }
  return WaitForEnd(*connection->stub, reply.job_id());
}

}  // namespace drover::cli
