// topology.conf: the switch tree (SwitchName, Switches, Nodes, LinkSpeed) or the blocks
// (BlockName, Nodes, BlockSizes) that placement works with, cross-checked against the nodes:
// unknown names, a node under two leaves or in two blocks, loops, and switches without a
// common root.
#pragma once

#include <vector>

#include "common/cluster_config.h"
#include "common/conf_reader.h"
#include "common/slurm_conf.h"

namespace drover {

// Builds config.topology from topology.conf's lines for config.settings.topology's kind.
void ApplyTopologyConf(const std::vector<ConfLine>& lines, ClusterConfig& config,
                       Diagnostics& diagnostics, KeyReporter& reporter);

}  // namespace drover
