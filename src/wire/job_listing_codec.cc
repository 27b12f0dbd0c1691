// See job_listing_codec.h.
#include "wire/job_listing_codec.h"

namespace drover::wire {

void ToProto(const PlannedStartInfo& plan, v1::PlannedStart* out) {
  out->set_job_id(plan.job_id);
  out->set_start_time(plan.start_time);
  out->set_node_list(plan.node_list);
  out->set_reserved(plan.reserved);
}

void ToProto(const WillRunInfo& will_run, v1::WillRun* out) {
  out->set_start_time(will_run.start_time);
  out->set_node_list(will_run.node_list);
  out->set_partition(will_run.partition);
  out->set_processors(will_run.processors);
}

void ToProto(const JobListing& listing, v1::JobList* out) {
  out->set_time(listing.time);
  for (const auto& record : listing.jobs) out->add_jobs(*record);
  for (const PlannedStartInfo& plan : listing.planned) ToProto(plan, out->add_planned());
  out->set_next(listing.next);
  out->set_more_after(listing.more_after);
}

void ToProto(const StepLayout& layout, v1::CreateStepReply* out) {
  out->set_step_id(layout.step_id);
  for (const StepNodeInfo& node : layout.nodes) {
    v1::StepNode* step_node = out->add_nodes();
    step_node->set_name(node.name);
    step_node->set_address(node.address);
    step_node->set_node_index(node.node_index);
    step_node->mutable_tasks()->Add(node.tasks.begin(), node.tasks.end());
  }
  out->set_ntasks(layout.ntasks);
  out->set_node_list(layout.node_list);
}

}  // namespace drover::wire
