// gres.conf: which GPUs each node has — device files (with ranges, /dev/nvidia[0-7]), types,
// local cores and NVLink peers — or emulated GPUs (Count without File), cross-checked with the
// Gres= counts of slurm.conf's NodeName lines.
#pragma once

#include <string>
#include <vector>

#include "common/cluster_config.h"
#include "common/conf_reader.h"
#include "common/slurm_conf.h"

namespace drover {

// Applies gres.conf's lines to the nodes of `config` (which slurm.conf has filled).
void ApplyGresConf(const std::vector<ConfLine>& lines, ClusterConfig& config,
                   Diagnostics& diagnostics, KeyReporter& reporter);

// Gives every node whose slurm.conf Gres= declares GPUs that gres.conf did not describe one
// emulated GPU per count, and checks that declared and described GPUs agree.
void FinishGpus(ClusterConfig& config, Diagnostics& diagnostics);

// Parses an index list such as "0-7" or "0-27,56-83" ("Cores=", "(S:0-1)").
Result<std::vector<int>> ParseIndexList(std::string_view text);

}  // namespace drover
