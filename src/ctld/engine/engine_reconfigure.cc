// scontrol reconfigure: the engine takes the configuration droverctld read again. Partitions
// (limits, states, tiers, members), scheduling, priority and preemption settings, the topology,
// and node features and weights change live; nodes themselves (names, CPUs, memory, GPUs,
// addresses) only with a restart, as in Slurm. Keys that only a restart can apply (ports, state
// directory, cluster name) keep their running values, and the reply says which changed.
#include <fmt/format.h>

#include <set>

#include "ctld/engine/engine.h"

namespace drover::ctld {
namespace {

// How `next` reshapes a node of `now`, or "".
std::string NodeChange(const NodeConfig& now, const NodeConfig& next) {
  auto changed = [&](std::string_view what, auto a, auto b) {
    return a == b ? std::string() : fmt::format("node {}: {} {} -> {}", now.name, what, a, b);
  };
  if (now.name != next.name) return fmt::format("node {} is now {}", now.name, next.name);
  for (std::string change :
       {changed("CPUs", now.cpus, next.cpus), changed("Sockets", now.sockets, next.sockets),
        changed("CoresPerSocket", now.cores_per_socket, next.cores_per_socket),
        changed("ThreadsPerCore", now.threads_per_core, next.threads_per_core),
        changed("RealMemory", now.real_memory_mb, next.real_memory_mb),
        changed("GPUs", now.gpus.size(), next.gpus.size()),
        changed("NodeAddr", now.address, next.address), changed("Port", now.port, next.port)})
    if (!change.empty()) return change;
  if (now.gpus != next.gpus) return fmt::format("node {}: its GPUs (gres.conf) changed", now.name);
  return "";
}

template <typename T>
void Keep(std::string_view key, T ClusterSettings::*member, const ClusterSettings& now,
          ClusterSettings& next, std::vector<std::string>& changed) {
  if (next.*member != now.*member) changed.emplace_back(key);
  next.*member = now.*member;
}

// The settings that only a restart applies: `next` keeps the running ones; their names if any
// differed.
std::vector<std::string> KeepRestartOnly(const ClusterSettings& now, ClusterSettings& next) {
  std::vector<std::string> changed;
  auto keep = [&](std::string_view key, auto member) { Keep(key, member, now, next, changed); };
  keep("ClusterName", &ClusterSettings::cluster_name);
  keep("SlurmctldPort", &ClusterSettings::controller_port);
  keep("SlurmdPort", &ClusterSettings::agent_port);
  keep("StateSaveLocation", &ClusterSettings::state_save_location);
  keep("SlurmdSpoolDir", &ClusterSettings::slurmd_spool_dir);
  keep("SlurmUser", &ClusterSettings::slurm_user);
  keep("AuthType", &ClusterSettings::auth);
  keep("SlurmctldLogFile", &ClusterSettings::controller_log_file);
  keep("SlurmctldPidFile", &ClusterSettings::controller_pid_file);
  keep("FirstJobId", &ClusterSettings::first_job_id);
  // The store the controller has open: Storage*, compared as one.
  const StorageSettings& store = now.storage;
  const StorageSettings& asked = next.storage;
  if (store.kind != asked.kind || store.host != asked.host || store.port != asked.port ||
      store.user != asked.user || store.pass_file != asked.pass_file ||
      store.database != asked.database)
    changed.emplace_back("Storage*");
  next.storage = now.storage;
  if (next.controller_hosts.size() != now.controller_hosts.size() ||
      !std::equal(
          now.controller_hosts.begin(), now.controller_hosts.end(), next.controller_hosts.begin(),
          [](const auto& a, const auto& b) { return a.name == b.name && a.address == b.address; }))
    changed.emplace_back("SlurmctldHost");
  next.controller_hosts = now.controller_hosts;
  return changed;
}

}  // namespace

std::string Engine::ReconfigureRefusal(const ClusterConfig& next) const {
  const ClusterConfig& now = cluster();
  if (now.nodes.size() != next.nodes.size())
    return fmt::format(
        "slurm.conf now has {} nodes, not {}: adding or removing nodes needs a restart of "
        "droverctld and the agents",
        next.nodes.size(), now.nodes.size());
  for (size_t i = 0; i < now.nodes.size(); ++i)
    if (std::string change = NodeChange(now.nodes[i], next.nodes[i]); !change.empty())
      return change + ": changing nodes needs a restart of droverctld and the agents";
  // Every partition a job in the queue names must still be there.
  std::set<std::string> named;
  for (const auto& [id, job] : jobs_) {
    if (job->partition >= 0) named.insert(now.partitions[job->partition].name);
    for (const std::string& partition : job->spec.partitions) named.insert(partition);
  }
  for (const std::string& partition : named)
    if (next.FindPartition(partition) < 0)
      return fmt::format(
          "partition {} still has jobs in the queue: keep it in slurm.conf until they are gone "
          "(or move them with scontrol update JobId=... Partition=...)",
          partition);
  if (next.DefaultPartition() < 0)
    for (const auto& [id, job] : jobs_)
      if (job->state == JobState::kPending && job->spec.partitions.empty())
        return "slurm.conf no longer has a default partition, and pending jobs rely on it";
  return "";
}

void Engine::On(const Reconfigure& event, EngineOutput& out) {
  if (!IsOperator(event.caller))
    return out.effects.push_back(Reply{event.token, false, "Access/permission denied", {}, {}});
  if (std::string refusal = ReconfigureRefusal(*event.cluster); !refusal.empty())
    return out.effects.push_back(Reply{event.token, false, std::move(refusal), {}, {}});
  // slurm.conf is read again from scratch: scontrol's partition changes and node weights and
  // features are dropped, as Slurm's reconfigure drops them (no ReconfigFlags=KeepPartInfo).
  for (const auto& [name, change] : partition_overrides_) out.changed_partitions.push_back(name);
  partition_overrides_.clear();
  for (size_t i = 0; i < nodes_.size(); ++i) {
    NodeStatus& node = nodes_[i];
    if (!node.weight && !node.features && !node.active_features) continue;
    node.weight.reset();
    node.features.reset();
    node.active_features.reset();
    out.changed_nodes.push_back(static_cast<int>(i));
  }
  base_ = event.cluster;
  auto next = std::make_shared<ClusterConfig>(*event.cluster);
  for (size_t i = 0; i < nodes_.size() && i < next->nodes.size(); ++i)
    MergeReportedGpus(nodes_[i].reported_gpus, next->nodes[i]);
  std::vector<std::string> kept = KeepRestartOnly(cluster().settings, next->settings);
  Adopt(std::move(next), &out);
  Reply reply{event.token, true, "", {}, {}};
  if (!kept.empty()) {
    std::string keys;
    for (const std::string& key : kept) keys += (keys.empty() ? "" : ", ") + key;
    reply.message = fmt::format("{} changed: restart droverctld (and the agents) to apply", keys);
  }
  out.effects.push_back(std::move(reply));
}

}  // namespace drover::ctld
