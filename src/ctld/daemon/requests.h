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
grpc::Status FromReply(const Reply& reply);

// The requests whose decoding is more than copying fields, turned into their events (token 0)
// for the service and for fuzz/rpc_requests_fuzz.cc. Errors are the INVALID_ARGUMENT message.
Result<UpdateNode::Action> NodeActionOf(const std::string& state);
Result<UpdateJob> UpdateJobOf(const v1::UpdateJobRequest& request, const Caller& caller);
Result<CreateStep> CreateStepOf(const v1::CreateStepRequest& request, const Caller& caller);
ReservationFields ReservationFieldsOf(const v1::ReservationRequest& request);
Result<TopJobs> TopJobsOf(const v1::TopRequest& request, const Caller& caller);
NodeRegistered NodeRegisteredOf(const v1::RegisterRequest& request);
// A reactor already finished with `status` (a request refused before it is queued).
grpc::ServerUnaryReactor* Finished(grpc::CallbackServerContext* context, grpc::Status status);

}  // namespace drover::ctld
