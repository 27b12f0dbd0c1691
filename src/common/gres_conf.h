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

// A gres.conf Name=shard or Name=mps line for one node: `count` shared over the GPUs whose
// device files it names (`gpu_indexes`; empty: all the node's GPUs), split evenly as Slurm
// splits them. Applied once every node's GPUs are known.
struct GpuShareLine {
  int node = -1;
  std::string name;  // "shard" or "mps"
  uint64_t count = 0;
  std::vector<int> gpu_indexes;
  SourceLocation where;
};

// Applies gres.conf's lines to the nodes of `config` (which slurm.conf has filled); returns
// the sharing lines for FinishGpus.
std::vector<GpuShareLine> ApplyGresConf(const std::vector<ConfLine>& lines, ClusterConfig& config,
                                        Diagnostics& diagnostics, KeyReporter& reporter);

// Gives every node whose slurm.conf Gres= declares GPUs that gres.conf did not describe one
// emulated GPU per count, and checks that declared and described GPUs agree. Then shares each
// node's Gres=shard:N or mps:N over its GPUs: as gres.conf's lines say, else evenly.
void FinishGpus(ClusterConfig& config, const std::vector<GpuShareLine>& shares,
                Diagnostics& diagnostics);

// Whether `name` is a GRES that shares GPUs ("shard", "mps").
bool IsGpuSharing(std::string_view name);

// Parses an index list such as "0-7" or "0-27,56-83" ("Cores=", "(S:0-1)").
Result<std::vector<int>> ParseIndexList(std::string_view text);

}  // namespace drover
