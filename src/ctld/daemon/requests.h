// What the service reads from a request (a job filter, an agent's address) and the statuses it
// answers with. Validation at the API boundary: a filter that names an unknown state never
// reaches the engine. The caller is never read from a request: it is the call's proven identity
// (service_admission.cc, daemon/callers.h).
#pragma once

#include <grpcpp/grpcpp.h>

#include <string>

#include "common/cluster_config.h"
#include "common/result.h"
#include "ctld/engine/events.h"
#include "proto/drover.pb.h"

namespace drover::ctld {

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
// The requests whose decoding is more than copying fields, turned into their events (token 0)
// for the service and for fuzz/rpc_requests_fuzz.cc. Errors are the INVALID_ARGUMENT message.
Result<UpdateNode> UpdateNodeOf(const v1::UpdateNodeRequest& request, const Caller& caller);
Result<RebootNodes> RebootNodesOf(const v1::RebootRequest& request, const Caller& caller);
Result<UpdateJob> UpdateJobOf(const v1::UpdateJobRequest& request, const Caller& caller);
Result<CreateStep> CreateStepOf(const v1::CreateStepRequest& request, const Caller& caller);
ReservationFields ReservationFieldsOf(const v1::ReservationRequest& request);
Result<TopJobs> TopJobsOf(const v1::TopRequest& request, const Caller& caller);
// An agent's registration and heartbeat; what they say of GPUs is bounded (at most 64 GPUs,
// strings of 128 bytes, links and cores within the node), the rest dropped.
NodeRegistered NodeRegisteredOf(const v1::RegisterRequest& request);
Heartbeat HeartbeatOf(const v1::HeartbeatRequest& request);
// A reactor already finished with `status` (a request refused before it is queued).
grpc::ServerUnaryReactor* Finished(grpc::CallbackServerContext* context, grpc::Status status);

}  // namespace drover::ctld

namespace drover::ctld {

// Where a registering agent is reached: the port it reports (`reported`, "host:port") on the
// host the configuration names (NodeAddr) or, when the node names none, the host the call came
// from (`peer`, gRPC's "ipv4:1.2.3.4:5" / "ipv6:[::1]:5"). The reported host is never used.
Result<std::string> AgentAddress(const ClusterConfig& cluster, int node, const std::string& peer,
                                 const std::string& reported);

}  // namespace drover::ctld
