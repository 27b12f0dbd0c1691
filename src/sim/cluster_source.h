// Clusters for the simulator when there is no slurm.conf to read: a generated one (N alike nodes
// of C cores and G GPUs under leaf switches of L nodes), or the nodes of Alibaba's GPU trace
// (openb_node_list_gpu_node.csv). Both are written as slurm.conf text and loaded the way
// `drover config check` loads a file, so they are clusters like any other.
#pragma once

#include <cstdint>
#include <string>

#include "common/cluster_config.h"
#include "common/result.h"

namespace drover::sim {

struct GeneratedCluster {
  int nodes = 0;
  int cores_per_node = 1;
  int gpus_per_node = 0;
  int leaf = 0;                        // nodes under each leaf switch; 0: no topology
  uint64_t memory_mb_per_core = 4000;  // RealMemory is this times the cores
  std::string extra;                   // more slurm.conf lines (scheduler settings, ...)
  std::string main_partition;          // more keys on the main partition's line
  std::string partitions;              // more PartitionName lines, after it
};

struct ClusterText {
  std::string slurm_conf, topology_conf;  // topology empty when there is none
};

ClusterText GenerateClusterText(const GeneratedCluster& spec);
Result<ClusterConfig> GenerateCluster(const GeneratedCluster& spec);

// name,cpu_milli,memory_mib,gpu,model: one node a line (the header first); `extra` as above.
Result<ClusterText> AlibabaClusterText(const std::string& node_list_csv_text,
                                       const std::string& name, const std::string& extra);
Result<ClusterConfig> AlibabaCluster(const std::string& node_list_path, const std::string& extra);

// Loads the text as a slurm.conf (errors as `file:line: message`, one a line).
Result<ClusterConfig> LoadClusterText(const ClusterText& text);

}  // namespace drover::sim
