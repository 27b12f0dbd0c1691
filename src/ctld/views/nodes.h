// The nodes view: sinfo -N and scontrol show node, from one snapshot. A view only reads the
// snapshot it is given; it never changes the engine's state and never speaks gRPC.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "ctld/engine/engine.h"
#include "wire/read_model.h"

namespace drover::ctld::views {

// A node as the controller sees it, under `name`; ALLOCATED when `fully_allocated`. The store's
// node record is this too, written with `fully_allocated` false.
wire::NodeInfo NodeInfoOf(const NodeStatus& node, const std::string& name, bool fully_allocated);

// Per node: "MAINT" or "RESERVED" while an advance reservation's window holds it, else "".
std::vector<std::string> ReservedNow(const Snapshot& snapshot);

// The node's GRES as scontrol show node prints them: its GPUs by type with their sockets
// ("gpu:h100:8(S:0-1)"), its other GRES as configured.
std::string NodeGres(const NodeConfig& config);

// Every configured node, or only those `names` names (none: all), in configuration order. An
// idle node that a reservation holds shows as RESERVED (or MAINT), as Slurm's sinfo does. A name
// the cluster does not have is left out.
wire::NodeListing ListNodes(const Snapshot& snapshot, std::span<const std::string> names = {});

}  // namespace drover::ctld::views
