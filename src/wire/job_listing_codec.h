// The codec from the job read models (read_model.h) to the v1 messages of squeue, sacct,
// sbatch --test-only and srun: job lists (records already encoded by the controller), planned
// starts, will-run answers and step layouts. Layer 2: common and proto only. Converts; never
// decides.
#pragma once

#include "proto/drover.pb.h"
#include "wire/read_model.h"

namespace drover::wire {

void ToProto(const PlannedStartInfo& plan, v1::PlannedStart* out);
void ToProto(const WillRunInfo& will_run, v1::WillRun* out);
void ToProto(const JobListing& listing, v1::JobList* out);
// Everything of CreateStep's reply but the job's record.
void ToProto(const StepLayout& layout, v1::CreateStepReply* out);

}  // namespace drover::wire
