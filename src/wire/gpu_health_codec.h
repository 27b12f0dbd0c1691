// GpuHealth (common/gpu_health.h) on the wire (proto GpuHealth): the agent's heartbeat and the
// controller's reading of it.
#pragma once

#include "common/gpu_health.h"
#include "proto/drover.pb.h"

namespace drover::wire {

void ToProto(const GpuHealth& health, v1::GpuHealth* out);
GpuHealth FromProto(const v1::GpuHealth& health);

}  // namespace drover::wire
