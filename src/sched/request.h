// From a JobSpec and the partition it would run in to what it needs on each node: tasks, CPUs,
// GPUs and memory, with Slurm's defaults (DefMemPerCPU, DefMemPerGPU, DefMemPerNode,
// DefCpuPerGPU, DefaultTime) applied as Slurm applies them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "common/cluster_config.h"
#include "common/job_spec.h"
#include "sched/node_pool.h"

namespace drover::sched {

struct ResolvedRequest {
  int nodes = 1;
  NodeRequest per_node;
  int64_t time_limit_seconds = 0;  // kUnlimitedSeconds for UNLIMITED
  uint64_t total_cpus = 0, total_gpus = 0;
};

// A partition's node sizes for spreading a job: the most CPUs of any one node, and the fewest
// GPUs (by type, and of any type) of a node that has some — GPUs spread over that many per
// node fit on any node that has them.
struct NodeMaxima {
  int cpus = 0;
  int gpus = 0;
  std::map<std::string, int, std::less<>> gpus_of_type;
  int Gpus(std::string_view type) const;  // of `type`; any type when empty
};
NodeMaxima MaximaOf(const ClusterConfig& cluster, const PartitionConfig& partition);
// MaximaOf of every partition, in order. They change only with the configuration: a controller
// computes them once per configuration, not once per pass or per submission (at 10,000 nodes
// with 8 GPUs each, that is 80,000 GPU records read per partition).
std::vector<NodeMaxima> MaximaOfPartitions(const ClusterConfig& cluster);

// `most` holds the partition's largest nodes: a task count that no one node can hold spreads
// over more nodes, and so do a job's GPUs (--gpus=N, or -n with --gpus-per-task) that no one
// node has, as Slurm spreads them when -N does not fix the count; up to the job's max_nodes.
// --spread-job asks for as many nodes as it has tasks, within its -N maximum and the
// partition's nodes and MaxNodes.
ResolvedRequest ResolveRequest(const ClusterConfig& cluster, const JobSpec& job,
                               const PartitionConfig& partition, const NodeMaxima& most);

// The same on exactly `nodes` nodes (a --spread-job job that starts on fewer than it asked).
ResolvedRequest ResolveOnNodes(const ClusterConfig& cluster, const JobSpec& job,
                               const PartitionConfig& partition, int nodes);
// On the fewest nodes the job may have: what --spread-job falls back to, and what decides
// whether it could ever run.
ResolvedRequest ResolveLeast(const ClusterConfig& cluster, const JobSpec& job,
                             const PartitionConfig& partition, const NodeMaxima& most);

// How many jobs may share each of a job's cores in `partition` (OverSubscribe=FORCE:N, or YES:N
// with --oversubscribe); 1 for an --exclusive job and everywhere else.
int CoreShare(const PartitionConfig& partition, bool oversubscribe, bool exclusive);

// Whether the node meets the job's node minimums (--mincpus, --tmp, -B): Slurm never selects
// a node below them, however idle.
bool NodeShapeFits(const JobSpec& job, const NodeConfig& node);
// The node minimums as a key part, appended to `key`: jobs that differ in them see different
// sets of nodes.
void AppendNodeMinimums(std::string& key, const JobSpec& job);

}  // namespace drover::sched
