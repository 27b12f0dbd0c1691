// What the service reads from a request (the caller, a job filter) and the statuses it answers
// with. Validation at the API boundary: a filter that names an unknown state never reaches the
// engine. CallerOf() takes the caller the request claims (uid 0 an operator) and goes once every
// request is authenticated: then handlers take Callers::Of(identity) (daemon/callers.h).
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
// A reactor already finished with `status` (a request refused before it is queued).
grpc::ServerUnaryReactor* Finished(grpc::CallbackServerContext* context, grpc::Status status);

}  // namespace drover::ctld
