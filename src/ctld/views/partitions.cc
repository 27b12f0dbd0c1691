// See partitions.h.
#include "ctld/views/partitions.h"

#include <fmt/format.h>

#include <string>
#include <string_view>

#include "common/hostlist.h"
#include "common/slurm_conf.h"

namespace drover::ctld::views {
namespace {

std::string OverSubscribeText(const OverSubscribe& over) {
  switch (over.mode) {
    case OverSubscribe::Mode::kNo:
      return "NO";
    case OverSubscribe::Mode::kExclusive:
      return "EXCLUSIVE";
    case OverSubscribe::Mode::kYes:
      return fmt::format("YES:{}", over.max_share);
    case OverSubscribe::Mode::kForce:
      return fmt::format("FORCE:{}", over.max_share);
  }
  return "NO";
}

// The partition's configuration as scontrol show partition prints it.
wire::PartitionInfo ConfigurationOf(const PartitionConfig& config, const ClusterConfig& cluster) {
  wire::PartitionInfo info;
  info.name = config.name;
  static constexpr std::string_view kStates[] = {"UP", "DOWN", "DRAIN", "INACTIVE"};
  info.state = std::string(kStates[static_cast<int>(config.state)]);
  info.is_default = config.is_default;
  std::vector<std::string> names;
  for (int node : config.nodes) names.push_back(cluster.nodes[node].name);
  info.node_list = CompressHostlist(names);
  info.total_nodes = config.nodes.size();
  info.max_time_seconds =
      config.max_time_seconds >= kUnlimitedSeconds ? -1 : config.max_time_seconds;
  info.default_time_seconds = config.default_time_seconds.value_or(-1);
  info.max_nodes = config.max_nodes >= kUnlimitedCount ? 0 : config.max_nodes;
  info.min_nodes = config.min_nodes;
  info.priority_tier = config.priority_tier;
  info.priority_job_factor = config.priority_job_factor;
  info.over_subscribe = OverSubscribeText(config.over_subscribe);
  info.preempt_mode =
      FormatPreemptMode(config.preempt_mode.value_or(cluster.settings.preempt_mode));
  info.grace_time_seconds = config.grace_time_seconds;
  info.allow_accounts = config.allow_accounts;
  info.allow_qos = config.allow_qos;
  info.qos = config.qos;
  info.hidden = config.hidden;
  info.root_only = config.root_only;
  return info;
}

}  // namespace

PartitionLoad LoadOf(const PartitionConfig& partition, const ClusterConfig& cluster,
                     const Snapshot& snapshot, const std::vector<NodeUsage>& usage) {
  PartitionLoad load;
  for (int node : partition.nodes) {
    const NodeConfig& config = cluster.nodes[node];
    load.cpus += config.cpus;
    load.gpus += config.gpus.size();
    load.cpus_allocated += AllocatedCpus(config, usage[node]);
    load.gpus_allocated += usage[node].gpus.size();
    const NodeStatus& status = snapshot.nodes[node];
    if (status.down || status.not_responding || !status.registered ||
        (status.drain && usage[node].cores.empty()))
      ++load.nodes_other;
    else if (!usage[node].cores.empty())
      ++load.nodes_allocated;
    else
      ++load.nodes_idle;
  }
  return load;
}

int CountingPartition(const Job& job, const ClusterConfig& cluster) {
  if (job.state != JobState::kPending) return job.partition;
  return job.spec.partitions.empty() ? cluster.DefaultPartition()
                                     : cluster.FindPartition(job.spec.partitions.front());
}

std::vector<wire::PartitionInfo> ListPartitions(const Snapshot& snapshot, bool configuration_only) {
  const ClusterConfig& cluster = *snapshot.cluster;
  if (configuration_only) {
    std::vector<wire::PartitionInfo> partitions;
    for (const PartitionConfig& partition : cluster.partitions)
      partitions.push_back(ConfigurationOf(partition, cluster));
    return partitions;
  }
  std::vector<NodeUsage> usage = UsageByNode(cluster, snapshot);
  std::vector<uint32_t> pending(cluster.partitions.size()), running(cluster.partitions.size());
  for (const JobPtr& job : snapshot.jobs) {
    int p = CountingPartition(*job, cluster);
    if (p < 0) continue;
    if (job->state == JobState::kPending) ++pending[p];
    if (HoldsAllocation(*job)) ++running[p];
  }
  std::vector<wire::PartitionInfo> partitions;
  for (size_t p = 0; p < cluster.partitions.size(); ++p) {
    wire::PartitionInfo info = ConfigurationOf(cluster.partitions[p], cluster);
    PartitionLoad load = LoadOf(cluster.partitions[p], cluster, snapshot, usage);
    info.total_cpus = load.cpus;
    info.total_gpus = load.gpus;
    info.nodes_allocated = load.nodes_allocated;
    info.nodes_idle = load.nodes_idle;
    info.nodes_other = load.nodes_other;
    info.cpus_allocated = load.cpus_allocated;
    info.gpus_allocated = load.gpus_allocated;
    info.pending_jobs = pending[p];
    info.running_jobs = running[p];
    partitions.push_back(std::move(info));
  }
  return partitions;
}

}  // namespace drover::ctld::views
