// How a step's tasks are laid out over its nodes (srun -m/--distribution): how many tasks each
// node gets and which global ranks they are, as Slurm 22.05's step layout (block, cyclic,
// plane=N, arbitrary). Pure: the controller calls it with the step's nodes and their room.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace drover {

enum class NodeDistribution { kBlock, kCyclic, kPlane, kArbitrary };

// -m's value: the node level, then the socket and core levels (block, cyclic, fcyclic; empty:
// the default), then Pack or NoPack.
struct Distribution {
  NodeDistribution nodes = NodeDistribution::kBlock;
  uint32_t plane_size = 0;  // kPlane
  std::string socket, core;
  std::optional<bool> pack;
};

// Slurm's syntax: block|cyclic|plane=N|arbitrary|* [:block|cyclic|fcyclic|* [:...]]
// [,Pack|NoPack], any case. Errors: "Invalid --distribution specification".
Result<Distribution> ParseDistribution(std::string_view text);

inline constexpr uint32_t kNoTaskLimit = std::numeric_limits<uint32_t>::max();

// Tasks on each node. `room`: the tasks a node holds within its CPUs (CPUs / cpus-per-task);
// `limit`: the most it may take at all (--ntasks-per-core, --ntasks-per-socket; kNoTaskLimit:
// none). Block and cyclic fill as Slurm's does: one task per node per round while the nodes
// have room, then the rest round-robin (over the limits: an error); plane deals N at a time.
Result<std::vector<uint32_t>> CountTasks(const Distribution& distribution,
                                         std::span<const uint32_t> room,
                                         std::span<const uint32_t> limit, uint32_t ntasks);

// The global ranks on each node for `counts` (one entry per node): block numbers node by node,
// cyclic deals one rank per node in turn, plane deals plane_size ranks per node in turn.
std::vector<std::vector<uint32_t>> AssignRanks(const Distribution& distribution,
                                               std::span<const uint32_t> counts);

// -m arbitrary: task t runs on `hosts[t]`; the ranks of each of `nodes`. Errors when a host is not
// one of `nodes`.
Result<std::vector<std::vector<uint32_t>>> ArbitraryRanks(std::span<const std::string> nodes,
                                                          std::span<const std::string> hosts);

}  // namespace drover
