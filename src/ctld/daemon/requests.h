// What the service reads from a request (the caller, a job filter) and the statuses it answers
// with. Validation at the API boundary: a filter that names an unknown state never reaches the
// engine. The caller's uid/gid come from the request until credentials are built (planned:
// docs/design.md, Security): CallerOf() is the one place that will change.
#pragma once

#include <grpcpp/grpcpp.h>

#include <string>

#include "common/result.h"
#include "ctld/engine/events.h"
#include "proto/drover.pb.h"

namespace drover::ctld {

Caller CallerOf(const v1::Caller& caller);
grpc::Status Invalid(const std::string& message);
// An error in Slurm's words for a state it does not know.
Result<JobFilter> FilterOf(const v1::JobFilter& filter);
// OK, INVALID_ARGUMENT with the engine's error, or RESOURCE_EXHAUSTED when the request was
// refused by a full queue (commands retry those).
grpc::Status FromReply(const Reply& reply);

// The bounds of common/submission_bounds.h on the other requests that carry text and times:
// "--job-name is 5000 bytes; the limit is 1024", "StartTime=-5 is out of range (...)".
Status CheckUpdateJob(const v1::UpdateJobRequest& request);
Status CheckReservation(const v1::ReservationRequest& request);
Status CheckCreateStep(const v1::CreateStepRequest& request);
grpc::Status Busy(const std::string& message);  // RESOURCE_EXHAUSTED
// A reactor already finished with `status` (a request refused before it is queued).
grpc::ServerUnaryReactor* Finished(grpc::CallbackServerContext* context, grpc::Status status);

}  // namespace drover::ctld
