// The allocation srun and salloc obtain when they are not inside one: an interactive job (no
// batch script; its nodes hold it until the command releases it), asked for with sbatch's own
// options and parser, and the job variables a command run in it sees. Prints Slurm's words.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cli/client.h"
#include "cli/sbatch/sbatch_options.h"
#include "common/getopt.h"

namespace drover::cli {

// The options srun and salloc hand to sbatch's parser to describe the allocation they ask for
// (less those in `not_shared`, which the command lacks), followed by the command's own.
std::vector<OptionSpec> WithAllocationOptions(std::span<const OptionSpec> own,
                                              std::span<const std::string_view> not_shared);

// The job `id` as the controller lists it; `found` says whether it did.
v1::Job FetchJob(v1::Controller::Stub& stub, uint64_t id, bool* found);

struct Allocation {
  uint64_t job_id = 0;
  v1::Job job;
};

// The allocation's options read by sbatch's parser (its checks, its notices, its JobSpec): the
// interactive job srun or salloc asks for, or inside an allocation what srun's step asks for.
// Prints the error (nullopt) or the notices, as `command` ("srun", "salloc"). `own`: options
// the command acts on itself, left out of sbatch's reading (srun's --hint).
std::optional<SbatchRequest> AllocationRequest(std::string_view command,
                                               const ParsedOptions& parsed,
                                               const std::string& default_name, bool quiet,
                                               std::span<const std::string_view> own = {});

// Submits the interactive job and waits until it runs (Ctrl-C cancels it; so does `immediate`
// seconds passing, -I/--immediate). Prints Slurm's words as `command`. Returns the job, or an
// exit code.
std::variant<Allocation, int> Allocate(std::string_view command, const SbatchRequest& request,
                                       Connection& connection, bool quiet,
                                       std::optional<int> immediate);

// --test-only (sbatch, srun): Slurm's slurm_job_will_run words on stderr ("sbatch: Job N to
// start at ... using N processors on nodes ... in partition ..."), or a refusal as its
// slurm_perror prints it ("allocation failure: ..."). The exit code.
int PrintWillRun(std::string_view command, const grpc::Status& status,
                 const v1::SubmitReply& reply);
// srun --test-only: asks the controller when the job `request` describes would start, without
// queuing it, and prints the answer as PrintWillRun. The exit code.
int TestOnly(std::string_view command, const SbatchRequest& request, Connection& connection);

// Ends the interactive job with the command's status.
void ReleaseAllocation(Connection& connection, uint64_t job_id, int exit_code, int signal);

// The job-level variables a command run in the allocation sees (what sbatch's batch script
// would have), for salloc's command and for srun outside an allocation.
void SetJobVariables(const v1::Job& job, const std::string& cluster_name, bool ntasks_given,
                     std::map<std::string, std::string>& env);

}  // namespace drover::cli
