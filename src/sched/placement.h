// Topology-aware choice of nodes for a multi-node job among nodes that can each hold its
// per-node share: tree (the lowest switch whose subtree can hold the job, then the fewest leaf
// switches, best-fit leaves first) and block (the smallest BlockSizes group, fewest blocks,
// whole --segment pieces per block). Knows nothing of cores or GPUs.
#pragma once

#include <optional>
#include <vector>

#include "common/cluster_config.h"

namespace drover::sched {

struct PlacementRequest {
  int nodes = 1;
  int max_leaves = 0;  // --switches=N: at most N leaf switches (or blocks); 0: no limit
  int segment = 0;     // --segment=N: each N-node piece inside one block; 0: none
};

// `candidates` are node indexes in preference order (best first). Returns `request.nodes` of
// them, or nullopt when the topology cannot hold the job now.
std::optional<std::vector<int>> ChooseNodes(const ClusterConfig& cluster,
                                            const std::vector<int>& candidates,
                                            const PlacementRequest& request);

}  // namespace drover::sched
