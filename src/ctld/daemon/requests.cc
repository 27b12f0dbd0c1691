// See requests.h.
#include "ctld/daemon/requests.h"

#include "common/text.h"

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

grpc::Status FromReply(const Reply& reply) {
  return reply.ok ? grpc::Status::OK : Invalid(reply.error);
}

Result<UpdateNode::Action> NodeActionOf(const std::string& state) {
  using Action = UpdateNode::Action;
  std::string lower = ToLower(state);
  if (lower == "drain") return Action::kDrain;
  if (lower == "resume") return Action::kResume;
  if (lower == "down") return Action::kDown;
  if (lower == "undrain") return Action::kUndrain;
  return MakeError("Invalid node state specified: " + state);
}

Result<UpdateJob> UpdateJobOf(const v1::UpdateJobRequest& request, const Caller& caller) {
  auto filter = FilterOf(request.filter());
  if (!filter) return std::move(filter).take_error();
  UpdateJob event{0, caller, std::move(*filter), {}, {}, {}, {}, {}};
  if (request.has_time_limit_seconds()) {
    if (request.time_limit_seconds() <= 0) return MakeError("Invalid time limit specified");
    event.time_limit_seconds = request.time_limit_seconds();
  }
  if (request.has_nice()) event.nice = request.nice();
  if (request.has_partition()) event.partition = request.partition();
  if (request.has_name()) event.name = request.name();
  if (request.has_qos()) event.qos = request.qos();
  return event;
}

Result<CreateStep> CreateStepOf(const v1::CreateStepRequest& request, const Caller& caller) {
  if (request.job_id() == 0) return MakeError("CreateStep: no job ID given");
  if (request.ntasks() > 1'000'000 || request.nodes() > 100'000 ||
      request.ntasks_per_node() > 100'000 || request.cpus_per_task() > 100'000)
    return MakeError("CreateStep: a count out of range");
  return CreateStep{0,
                    caller,
                    request.job_id(),
                    request.name(),
                    request.nodes(),
                    request.ntasks(),
                    request.ntasks_per_node(),
                    request.cpus_per_task(),
                    {request.nodelist().begin(), request.nodelist().end()}};
}

ReservationFields ReservationFieldsOf(const v1::ReservationRequest& request) {
  ReservationFields fields;
  if (request.has_start_time()) fields.start_time = request.start_time();
  if (request.has_end_time()) fields.end_time = request.end_time();
  if (request.has_duration_seconds()) fields.duration_seconds = request.duration_seconds();
  if (request.has_node_list()) fields.node_list = request.node_list();
  if (request.has_node_count()) fields.node_count = request.node_count();
  if (request.has_tres()) fields.tres = request.tres();
  if (request.has_users()) fields.users = request.users();
  if (request.has_accounts()) fields.accounts = request.accounts();
  if (request.has_flags()) fields.flags = request.flags();
  if (request.has_partition()) fields.partition = request.partition();
  return fields;
}

Result<TopJobs> TopJobsOf(const v1::TopRequest& request, const Caller& caller) {
  if (request.jobs_size() == 0) return MakeError("Invalid job id specified");
  TopJobs event{0, caller, {}};
  for (const auto& job : request.jobs()) event.jobs.emplace_back(job.array_job_id(), job.task_id());
  return event;
}

NodeRegistered NodeRegisteredOf(const v1::RegisterRequest& request) {
  NodeRegistered event{request.node(), {}};
  event.running_jobs.assign(request.running_jobs().begin(), request.running_jobs().end());
  if (request.cpus() || request.memory_mb() || !request.gpu_source().empty())
    event.resources = NodeResources{request.cpus(), request.memory_mb(), request.gpus()};
  return event;
}

grpc::ServerUnaryReactor* Finished(grpc::CallbackServerContext* context, grpc::Status status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(std::move(status));
  return reactor;
}

}  // namespace drover::ctld
