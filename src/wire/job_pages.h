// A listing of the live queue in pages: ListJobs answers at most a page (JobQuery.limit, the
// controller's page size and byte bound), and JobList.more_after says where the next starts.
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>

#include "proto/drover.grpc.pb.h"

namespace drover::wire {

// One ListJobs call.
using JobPageCall = std::function<grpc::Status(const v1::JobQuery&, v1::JobList*)>;

// Every page of the listing `query` asks for, in `list`: the first page's time, then each page's
// jobs and expected starts in order. A page that does not start past the one before is refused
// (INTERNAL), so a faulty answer cannot loop. On an error `list` is left empty: no part of a
// listing passes for the whole.
grpc::Status ListJobPages(const JobPageCall& call, v1::JobQuery query, v1::JobList* list);
// The same over a channel's stub, each page a call of its own with this deadline.
grpc::Status ListJobPages(v1::Controller::Stub& stub, const v1::JobQuery& query, v1::JobList* list,
                          int deadline_seconds = 30);

}  // namespace drover::wire
