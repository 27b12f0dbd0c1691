// POST /slurm/v0.0.38/job/submit: Slurm's job description (openapi v0.0.38's job_properties,
// with the script beside it) read as the sbatch command line it stands for, then parsed by
// sbatch's own parser, so a job submitted over REST means what the same options mean to sbatch.
// As in slurmrestd the JSON alone describes the job: the script's #SBATCH lines and SBATCH_*
// variables in "environment" are not read. Pure: no files are read, nothing is sent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/sbatch/sbatch_options.h"
#include "common/result.h"
#include "proto/drover.pb.h"

namespace drover::cli::restd {

struct Submitter {
  uint32_t uid = 0, gid = 0;
  std::string user;
  std::string home;  // the working directory when the request names none
  int64_t now = 0;
};

// The request body, checked: JSON, an object with "job" (and "script", here or inside "job"),
// known fields of the right types only. Errors name the field and what it takes.
Result<SbatchRequest> ParseJobSubmission(std::string_view body, const Submitter& submitter);

// POST /slurm/v0.0.38/job/{job_id}: the fields of a job description to change (the object
// itself, or inside "job"), as scontrol update job's keys. Known fields only, each of its type;
// an error names the field and what it takes. `hold`: the body's "hold" (true holds, false
// releases), which is a Hold call of its own.
struct JobUpdate {
  v1::UpdateJobRequest request;
  std::optional<bool> hold;
};
Result<JobUpdate> ParseJobUpdate(std::string_view body);

// The sbatch arguments a job description stands for (for tests and error messages).
Result<std::vector<std::string>> SbatchArgumentsOf(std::string_view job_json);

}  // namespace drover::cli::restd
