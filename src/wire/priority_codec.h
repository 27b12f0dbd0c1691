// The codec from the priority read models (read_model.h) to v1::PriorityList and v1::ShareList,
// for sprio and sshare. Layer 2: common and proto only. Converts; never decides.
#pragma once

#include <vector>

#include "proto/drover.pb.h"
#include "wire/read_model.h"

namespace drover::wire {

void ToProto(const JobPriorityInfo& priority, v1::JobPriority* out);
void ToProto(const PriorityListing& listing, v1::PriorityList* out);
void ToProto(const ShareInfo& share, v1::Share* out);
void ToProto(const std::vector<ShareInfo>& shares, v1::ShareList* out);

}  // namespace drover::wire
