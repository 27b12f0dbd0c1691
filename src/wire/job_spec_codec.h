// The codec between a job's spec as every process holds it (common/job_spec.h) and its wire and
// stored form (v1::JobSpec). Layer 2: common and proto only, so the agent and the commands use it
// without linking the controller. Never decides anything about a job; it only converts.
#pragma once

#include "common/job_spec.h"
#include "common/result.h"
#include "proto/drover.pb.h"

namespace drover::wire {

void ToProto(const JobSpec& spec, v1::JobSpec* out);
// Errors on values out of range: a zero node or task count, an unknown enum number, a NUL in a
// script argument.
Result<JobSpec> FromProto(const v1::JobSpec& spec);

}  // namespace drover::wire
