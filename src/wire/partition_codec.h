// The codec from the partitions read model (read_model.h) to v1::Partition, for sinfo and
// scontrol show partition. Layer 2: common and proto only. Converts; never decides.
#pragma once

#include <vector>

#include "proto/drover.pb.h"
#include "wire/read_model.h"

namespace drover::wire {

void ToProto(const PartitionInfo& partition, v1::Partition* out);
void ToProto(const std::vector<PartitionInfo>& partitions, v1::PartitionList* out);

}  // namespace drover::wire
