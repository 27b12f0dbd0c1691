// The codec from the nodes read model (read_model.h) to v1::NodeStatus, for sinfo, scontrol show
// node and the controller's stored node record. Layer 2: common and proto only. Converts; never
// decides.
#pragma once

#include "proto/drover.pb.h"
#include "wire/read_model.h"

namespace drover::wire {

void ToProto(const NodeInfo& node, v1::NodeStatus* out);
void ToProto(const NodeListing& listing, v1::NodeList* out);

}  // namespace drover::wire
