// The partitions view: sinfo and scontrol show partition, from one snapshot — each partition's
// configuration, what its nodes hold now and how many jobs wait for it or run in it. Only reads
// the snapshot; never speaks gRPC. The metrics page shares the per-partition sums.
#pragma once

#include <cstdint>
#include <vector>

#include "common/cluster_config.h"
#include "ctld/engine/engine.h"
#include "ctld/views/node_usage.h"
#include "wire/read_model.h"

namespace drover::ctld::views {

// What a partition's nodes hold now (a node in two partitions counts in both, as sinfo shows).
struct PartitionLoad {
  uint32_t cpus = 0, gpus = 0;
  uint32_t cpus_allocated = 0, gpus_allocated = 0;
  uint32_t nodes_allocated = 0;  // with at least one job
  uint32_t nodes_idle = 0;
  uint32_t nodes_other = 0;  // down, drained, not responding, not registered
};
PartitionLoad LoadOf(const PartitionConfig& partition, const ClusterConfig& cluster,
                     const Snapshot& snapshot, const std::vector<NodeUsage>& usage);

// The partition a job counts in for sinfo: a waiting job in the first it asked for (or the
// default), any other job where it runs; -1 when there is none.
int CountingPartition(const Job& job, const ClusterConfig& cluster);

// Every configured partition, in configuration order.
// `configuration_only`: the settings alone, with no load or job counts (which read every job).
std::vector<wire::PartitionInfo> ListPartitions(const Snapshot& snapshot,
                                                bool configuration_only = false);

}  // namespace drover::ctld::views
