// The steps view: where a step the engine has just created runs (srun's layout of nodes and
// task ranks). Only reads the engine's reply and the configuration; never speaks gRPC.
#pragma once

#include <functional>
#include <string>

#include "common/cluster_config.h"
#include "ctld/engine/events.h"
#include "wire/read_model.h"

namespace drover::ctld::views {

// `result` is CreateStep's successful reply (with its job); `address_of` says where a node's
// agent listens. Each node carries the global ranks the engine laid out on it.
wire::StepLayout StepLayoutOf(const Reply& result, const ClusterConfig& cluster,
                              const std::function<std::string(int node)>& address_of);

}  // namespace drover::ctld::views
