// See requests.h.
#include "ctld/daemon/requests.h"

#include <fmt/format.h>

#include "common/duration.h"
#include "common/submission_bounds.h"

namespace drover::ctld {

Caller CallerOf(const v1::Caller& caller) {
  return Caller{caller.uid(), caller.gid(), false};
}

grpc::Status Invalid(const std::string& message) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message);
}

Result<JobFilter> FilterOf(const v1::JobFilter& filter) {
  JobFilter out;
  out.job_ids.assign(filter.job_ids().begin(), filter.job_ids().end());
  for (const auto& task : filter.array_tasks())
    out.array_tasks.emplace_back(task.array_job_id(), task.task_id());
  out.user = filter.user();
  out.name = filter.name();
  out.partition = filter.partition();
  if (!filter.state().empty()) {
    auto state = ParseJobState(filter.state());
    if (!state) return MakeError("Invalid job state specified: " + filter.state());
    out.state = *state;
  }
  return out;
}

namespace {

Status CheckRange(std::string_view field, int64_t value, int64_t min, int64_t max) {
  if (value >= min && value <= max) return OkStatus();
  return MakeError(fmt::format("{}={} is out of range (from {} to {})", field, value, min, max));
}

}  // namespace

Status CheckUpdateJob(const v1::UpdateJobRequest& request) {
  if (Status s = CheckLength("JobName", request.name(), kMaxNameLength); !s) return s;
  if (Status s = CheckLength("Partition", request.partition(), kMaxNameLength); !s) return s;
  if (Status s = CheckLength("QOS", request.qos(), kMaxNameLength); !s) return s;
  if (Status s = CheckTimeLimit("TimeLimit", request.time_limit_seconds()); !s) return s;
  return CheckRange("Nice", request.nice(), -kMaxNice, kMaxNice);
}

Status CheckReservation(const v1::ReservationRequest& request) {
  struct Field {
    std::string_view name, value;
    size_t limit;
  };
  const Field fields[] = {
      {"ReservationName", request.name(), kMaxNameLength},
      {"Nodes", request.node_list(), kMaxNodeListLength},
      {"TRES", request.tres(), kMaxNameLength},
      {"Users", request.users(), kMaxNodeListLength},
      {"Accounts", request.accounts(), kMaxNodeListLength},
      {"Flags", request.flags(), kMaxNameLength},
      {"PartitionName", request.partition(), kMaxNameLength},
  };
  for (const Field& field : fields)
    if (Status s = CheckLength(field.name, field.value, field.limit); !s) return s;
  if (Status s = CheckRange("StartTime", request.start_time(), 0, kMaxTimestamp); !s) return s;
  if (Status s = CheckRange("EndTime", request.end_time(), 0, kMaxTimestamp); !s) return s;
  if (request.duration_seconds() == kUnlimitedSeconds) return OkStatus();
  return CheckRange("Duration (seconds)", request.duration_seconds(), 0, kMaxTimeLimitSeconds);
}

Status CheckCreateStep(const v1::CreateStepRequest& request) {
  if (Status s = CheckLength("--job-name", request.name(), kMaxNameLength); !s) return s;
  size_t bytes = 0;
  for (const std::string& name : request.nodelist()) bytes += name.size() + 1;
  if (bytes > kMaxNodeListLength)
    return MakeError(
        fmt::format("--nodelist is {} bytes; the limit is {}", bytes, kMaxNodeListLength));
  return OkStatus();
}

grpc::Status FromReply(const Reply& reply) {
  if (reply.busy) return Busy(reply.error);
  return reply.ok ? grpc::Status::OK : Invalid(reply.error);
}

grpc::Status Busy(const std::string& message) {
  return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, message);
}

grpc::ServerUnaryReactor* Finished(grpc::CallbackServerContext* context, grpc::Status status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(std::move(status));
  return reactor;
}

}  // namespace drover::ctld
