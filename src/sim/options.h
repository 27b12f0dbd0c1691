// `drover sim`'s options: the workload, the cluster and how to replay it. Reads no files: it
// only checks that the options make one run (or one --compare) and says which is missing.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "sim/cluster_source.h"
#include "sim/simulator.h"
#include "sim/synthetic.h"

namespace drover::sim {

inline constexpr std::string_view kUsage =
    "Usage: drover sim --trace FILE | --synthetic JOBS[,SEED]   the workload\n"
    "                  [--conf slurm.conf | --nodes N --cores-per-node C [--gpus-per-node G]\n"
    "                   [--leaf L] | --alibaba-nodes NODES.csv]   the cluster\n"
    "                  [--policy fcfs|easy|conservative] [--priority basic|multifactor]\n"
    "                  [--strict] [--json] [--jobs OUT.csv] [--no-timing] [--tick SECONDS]\n"
    "                  [--accounts DUMP.cfg]   associations and limits from sacctmgr dump\n"
    "                  [--gpu-sharing whole|shard[:N]|mig[:K]]   jobs using part of a GPU\n"
    "       drover sim --trace FILE --compare A.conf B.conf [options above]\n"
    "       drover sim --trace FILE --gpu-sharing MODE --gpu-sharing MODE [options above]\n"
    "Traces: SWF (.swf, .swf.gz), Alibaba GPU pod lists (.csv; the cluster is the node list\n"
    "openb_node_list_gpu_node.csv beside it unless given), sacct --json output (.json).\n"
    "Without a cluster option: $DROVER_CONF or $SLURM_CONF.\n";

struct Options {
  std::string trace, conf, alibaba_nodes, jobs_csv;
  std::string accounts;  // --accounts: a sacctmgr dump file
  std::optional<std::pair<uint64_t, uint64_t>> synthetic;
  std::vector<std::string> compare;
  std::vector<GpuSharingMode> sharing;  // --gpu-sharing: one mode, or two to compare
  GeneratedCluster generated;
  bool strict = false, json = false;
  SimOptions sim;
};

// The options after "drover sim". An empty error means --help.
Result<Options> ParseOptions(std::span<const std::string> words);

}  // namespace drover::sim
