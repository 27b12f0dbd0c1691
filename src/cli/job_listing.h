// Reading a JobList as squeue, sinfo and sacct need it: each entry is a stored Job, and most of
// its bytes are the job's environment (sbatch exports the caller's), which they never print.
// Leaving it out of the parse keeps listing 20,000 jobs from allocating a million strings.
#pragma once

#include <string_view>
#include <vector>

#include "proto/drover.pb.h"

namespace drover::cli {

// Parses one stored Job without its spec's environment; false when the bytes are not a Job.
bool ParseJobWithoutEnvironment(std::string_view bytes, v1::Job* job);

// Every job of `list`, parsed as above.
std::vector<v1::Job> ParseJobsWithoutEnvironment(const v1::JobList& list);

}  // namespace drover::cli
