// The codec between drover::TaskUsage (common/task_usage.h) and v1::Usage. Layer 2: common and
// proto only. Converts; never decides.
#pragma once

#include "common/task_usage.h"
#include "proto/drover.pb.h"

namespace drover::wire {

void ToProto(const TaskUsage& usage, v1::Usage* out);
TaskUsage FromProto(const v1::Usage& usage);

}  // namespace drover::wire
