// See node_codec.h.
#include "wire/node_codec.h"

namespace drover::wire {

void ToProto(const NodeInfo& node, v1::NodeStatus* out) {
  out->set_name(node.name);
  out->set_state(node.state);
  out->set_registered(node.registered);
  out->set_down(node.down);
  out->set_drain(node.drain);
  out->set_drained_by_health(node.drained_by_health);
  out->set_not_responding(node.not_responding);
  out->set_reason(node.reason);
  out->set_reason_time(node.reason_time);
  out->set_reason_uid(node.reason_uid);
  out->set_last_heard(node.last_heard);
  out->mutable_jobs()->Add(node.jobs.begin(), node.jobs.end());
  out->set_reservation(node.reservation);
  out->set_weight(node.weight);
  out->set_features(node.features);
  out->set_active_features(node.active_features);
  out->set_comment(node.comment);
  out->set_extra(node.extra);
  out->set_gres(node.gres);
  out->set_reboot_requested(node.reboot_requested);
  out->set_boot_time(node.boot_time);
  out->set_next_state(node.next_state);
  out->set_health_latched(node.health_latched);
  out->set_agent_address(node.agent_address);
}

void ToProto(const NodeListing& listing, v1::NodeList* out) {
  out->set_time(listing.time);
  for (const NodeInfo& node : listing.nodes) ToProto(node, out->add_nodes());
}

}  // namespace drover::wire
