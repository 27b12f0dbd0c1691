// The allocation srun and salloc obtain when they are not inside one: an interactive job (no
// batch script; its nodes hold it until the command releases it), asked for with sbatch's own
// options and parser, and the job variables a command run in it sees. Prints Slurm's words.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cli/client.h"
#include "common/getopt.h"

namespace drover::cli {

// The options srun and salloc hand to sbatch's parser to describe the allocation they ask for,
// followed by the command's own.
std::vector<OptionSpec> WithAllocationOptions(std::span<const OptionSpec> own);

// The job `id` as the controller lists it; `found` says whether it did.
v1::Job FetchJob(v1::Controller::Stub& stub, uint64_t id, bool* found);

struct Allocation {
  uint64_t job_id = 0;
  v1::Job job;
};

// Submits an interactive job for srun or salloc and waits until it runs (Ctrl-C cancels it).
// Prints Slurm's words as `command` ("srun", "salloc"). Returns the job, or an exit code.
std::variant<Allocation, int> Allocate(std::string_view command, const ParsedOptions& parsed,
                                       const std::string& default_name, Connection& connection,
                                       bool quiet);

// Ends the interactive job with the command's status.
void ReleaseAllocation(Connection& connection, uint64_t job_id, int exit_code, int signal);

// The job-level variables a command run in the allocation sees (what sbatch's batch script
// would have), for salloc's command and for srun outside an allocation.
void SetJobVariables(const v1::Job& job, const std::string& cluster_name, bool ntasks_given,
                     std::map<std::string, std::string>& env);

}  // namespace drover::cli
