// Per-node requirements with Slurm's defaults; see request.h.
#include "sched/request.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "common/gres_conf.h"

namespace drover::sched {
namespace {

uint32_t CeilDiv(uint64_t a, uint64_t b) {
  return static_cast<uint32_t>((a + b - 1) / b);
}

// --spread-job: one node per task at most, as many as the job and the partition allow.
uint32_t SpreadNodeCount(const JobSpec& job, const PartitionConfig& partition) {
  uint64_t nodes = std::min<uint64_t>(job.ntasks, partition.nodes.size());
  nodes = std::min<uint64_t>(nodes, partition.max_nodes);
  if (job.max_nodes) nodes = std::min<uint64_t>(nodes, std::max(job.max_nodes, job.min_nodes));
  return static_cast<uint32_t>(std::max<uint64_t>(nodes, job.min_nodes));
}

int NodeCount(const JobSpec& job, const PartitionConfig& partition, const NodeMaxima& most,
              bool spread) {
  uint32_t nodes = std::max<uint32_t>(job.min_nodes, 1);
  if (spread) nodes = std::max(nodes, SpreadNodeCount(job, partition));
  if (job.ntasks_per_node == 0 && most.cpus > 0 && !job.overcommit) {
    uint64_t cpus = uint64_t{job.ntasks} * std::max<uint32_t>(job.cpus_per_task, 1);
    nodes = std::max(nodes, CeilDiv(cpus, static_cast<uint64_t>(most.cpus)));
  }
  if (job.gpus > 0 && job.gpus_per_node > 0)
    nodes = std::max(nodes, CeilDiv(job.gpus, job.gpus_per_node));
  // GPUs no one node has spread over as many nodes as they need (Slurm's --gpus=16 on 8-GPU
  // nodes without -N: two nodes); a node count the job fixed is kept, and then it cannot run.
  int gpus_here = most.Gpus(job.gpu_type);
  if (gpus_here > 0 && job.gpus_per_node == 0) {
    if (job.gpus > 0) nodes = std::max(nodes, CeilDiv(job.gpus, static_cast<uint64_t>(gpus_here)));
    if (job.gpus_per_task > 0 && job.ntasks_per_node == 0 &&
        job.gpus_per_task <= static_cast<uint32_t>(gpus_here)) {
      uint64_t tasks_per_node = static_cast<uint64_t>(gpus_here) / job.gpus_per_task;
      nodes = std::max(nodes, CeilDiv(job.ntasks, tasks_per_node));
    }
  }
  uint32_t cap = job.max_nodes ? std::max(job.max_nodes, job.min_nodes) : UINT32_MAX;
  // A task does not span nodes: -n N holds the job to N nodes at most, as in Slurm.
  if (job.ntasks_given && job.ntasks > 0) cap = std::min(cap, std::max(job.ntasks, job.min_nodes));
  return static_cast<int>(std::min(nodes, cap));
}

uint64_t MemoryPerNode(const ClusterConfig& cluster, const JobSpec& job,
                       const PartitionConfig& partition, int cpus, int gpus, bool& whole) {
  const ClusterSettings& s = cluster.settings;
  whole = false;
  if (job.mem_per_node_mb) return job.mem_per_node_mb;
  if (job.mem_per_cpu_mb) return job.mem_per_cpu_mb * cpus;
  if (job.mem_per_gpu_mb) return job.mem_per_gpu_mb * gpus;
  uint64_t per_gpu = partition.def_mem_per_gpu_mb.value_or(s.def_mem_per_gpu_mb);
  if (gpus > 0 && per_gpu) return per_gpu * gpus;
  uint64_t per_cpu = partition.def_mem_per_cpu_mb.value_or(s.def_mem_per_cpu_mb);
  if (per_cpu) return per_cpu * cpus;
  if (s.def_mem_per_node_mb) return s.def_mem_per_node_mb;
  whole = true;  // Slurm: no request and no default means all of the node's memory
  return 0;
}

}  // namespace

int NodeMaxima::Gpus(std::string_view type) const {
  if (type.empty()) return gpus;
  auto it = gpus_of_type.find(type);
  return it == gpus_of_type.end() ? 0 : it->second;
}

NodeMaxima MaximaOf(const ClusterConfig& cluster, const PartitionConfig& partition) {
  // Called for every submission: no allocation per node (a node's GPUs are counted by type in
  // a small list reused from node to node).
  NodeMaxima most;
  std::vector<std::pair<std::string_view, int>> here;
  for (int n : partition.nodes) {
    const NodeConfig& node = cluster.nodes[n];
    most.cpus = std::max(most.cpus, node.cpus);
    int gpus = static_cast<int>(node.gpus.size());
    if (gpus > 0) most.gpus = most.gpus ? std::min(most.gpus, gpus) : gpus;
    here.clear();
    for (const GpuDevice& gpu : node.gpus) {
      auto it = std::find_if(here.begin(), here.end(),
                             [&](const auto& entry) { return entry.first == gpu.type; });
      if (it == here.end())
        here.emplace_back(gpu.type, 1);
      else
        ++it->second;
    }
    for (const auto& [type, count] : here) {
      auto it = most.gpus_of_type.find(type);
      if (it == most.gpus_of_type.end())
        most.gpus_of_type.emplace(std::string(type), count);
      else
        it->second = std::min(it->second, count);
    }
  }
  return most;
}

std::vector<NodeMaxima> MaximaOfPartitions(const ClusterConfig& cluster) {
  std::vector<NodeMaxima> maxima;
  maxima.reserve(cluster.partitions.size());
  for (const PartitionConfig& partition : cluster.partitions)
    maxima.push_back(MaximaOf(cluster, partition));
  return maxima;
}

ResolvedRequest ResolveRequest(const ClusterConfig& cluster, const JobSpec& job,
                               const PartitionConfig& partition, const NodeMaxima& most) {
  return ResolveOnNodes(cluster, job, partition, NodeCount(job, partition, most, job.spread_job));
}

ResolvedRequest ResolveLeast(const ClusterConfig& cluster, const JobSpec& job,
                             const PartitionConfig& partition, const NodeMaxima& most) {
  return ResolveOnNodes(cluster, job, partition, NodeCount(job, partition, most, false));
}

ResolvedRequest ResolveOnNodes(const ClusterConfig& cluster, const JobSpec& job,
                               const PartitionConfig& partition, int nodes) {
  ResolvedRequest r;
  r.nodes = std::max(nodes, 1);
  uint32_t tasks = job.ntasks_per_node ? job.ntasks_per_node : CeilDiv(job.ntasks, r.nodes);
  tasks = std::max<uint32_t>(tasks, 1);
  uint32_t gpus = job.gpus_per_node   ? job.gpus_per_node
                  : job.gpus_per_task ? job.gpus_per_task * tasks
                  : job.gpus          ? CeilDiv(job.gpus, r.nodes)
                                      : 0;
  // -O: as if one task ran on each node (Slurm allocates cpus_per_task per node).
  uint64_t cpus = uint64_t{job.overcommit ? 1 : tasks} * std::max<uint32_t>(job.cpus_per_task, 1);
  int64_t cpus_per_gpu = job.cpus_per_gpu
                             ? job.cpus_per_gpu
                             : partition.def_cpu_per_gpu.value_or(cluster.settings.def_cpu_per_gpu);
  if (gpus > 0 && cpus_per_gpu > 0) cpus = std::max<uint64_t>(cpus, cpus_per_gpu * gpus);
  cpus = std::max<uint64_t>(cpus, job.min_cpus_per_node);  // --mincpus
  NodeRequest& node = r.per_node;
  node.cpus = static_cast<int>(std::min<uint64_t>(cpus, 1 << 20));
  node.gpus = static_cast<int>(gpus);
  node.gpu_type = job.gpu_type;
  for (const GresSpec& gres : job.other_gres) {
    if (gres.name == "nvme") node.nvme = static_cast<int>(std::min<uint64_t>(gres.count, 64));
    if (!IsGpuSharing(gres.name)) continue;
    node.shares = static_cast<uint32_t>(std::min<uint64_t>(gres.count, UINT32_MAX));
    node.share_gres = gres.name;
    if (!gres.type.empty()) node.gpu_type = gres.type;
  }
  node.exclusive =
      job.exclusive || partition.over_subscribe.mode == OverSubscribe::Mode::kExclusive;
  node.enforce_binding = job.gres_flags == "enforce-binding";
  node.share = node.exclusive ? 1 : CoreShare(partition, job.oversubscribe, job.exclusive);
  node.max_cpus_per_node =
      partition.max_cpus_per_node == kUnlimitedCount ? 0 : partition.max_cpus_per_node;
  if (cluster.settings.selection.memory)
    node.memory_mb =
        MemoryPerNode(cluster, job, partition, node.cpus, node.gpus, node.whole_memory);
  r.total_cpus = cpus * r.nodes;
  r.total_gpus = uint64_t{gpus} * r.nodes;
  // --gpus=N alone: N in all (the nodes' shares rounded up are trimmed back to it at placement).
  if (job.gpus && !job.gpus_per_node && !job.gpus_per_task && !node.exclusive)
    r.total_gpus = std::min<uint64_t>(r.total_gpus, std::max<uint64_t>(job.gpus, r.nodes));
  r.time_limit_seconds = job.time_limit_seconds
                             ? job.time_limit_seconds
                             : partition.default_time_seconds.value_or(partition.max_time_seconds);
  return r;
}

int CoreShare(const PartitionConfig& partition, bool oversubscribe, bool exclusive) {
  const OverSubscribe& over = partition.over_subscribe;
  bool shares = over.mode == OverSubscribe::Mode::kForce ||
                (over.mode == OverSubscribe::Mode::kYes && oversubscribe);
  return shares && !exclusive ? std::max(over.max_share, 1) : 1;
}

void AppendNodeMinimums(std::string& key, const JobSpec& job) {
  fmt::format_to(std::back_inserter(key), FMT_COMPILE("|{}|{}|{}:{}:{}"), job.min_cpus_per_node,
                 job.min_tmp_disk_mb, job.min_sockets, job.min_cores_per_socket,
                 job.min_threads_per_core);
}

bool NodeShapeFits(const JobSpec& job, const NodeConfig& node) {
  return static_cast<uint32_t>(node.cpus) >= job.min_cpus_per_node &&
         node.tmp_disk_mb >= job.min_tmp_disk_mb &&
         static_cast<uint32_t>(node.sockets) >= job.min_sockets &&
         static_cast<uint32_t>(node.cores_per_socket) >= job.min_cores_per_socket &&
         static_cast<uint32_t>(node.threads_per_core) >= job.min_threads_per_core;
}

}  // namespace drover::sched
