// See nodes.h.
#include "ctld/views/nodes.h"

#include <algorithm>

#include "common/gres.h"
#include "common/text.h"
#include "ctld/views/node_usage.h"

namespace drover::ctld::views {

wire::NodeInfo NodeInfoOf(const NodeStatus& node, const std::string& name, bool fully_allocated) {
  wire::NodeInfo info;
  info.name = name;
  info.state = NodeStateName(node, fully_allocated);
  info.registered = node.registered;
  info.down = node.down;
  info.drain = node.drain;
  info.drained_by_health = node.drained_by_health;
  info.not_responding = node.not_responding;
  info.reason = node.reason;
  info.reason_time = node.reason_time;
  info.reason_uid = node.reason_uid;
  info.last_heard = node.last_heard;
  info.jobs.assign(node.jobs.begin(), node.jobs.end());
  info.comment = node.comment;
  info.extra = node.extra;
  info.reboot_requested = node.reboot_requested;
  info.boot_time = node.boot_time;
  info.next_state = node.next_state;
  info.health_latched = node.health_latched;
  return info;
}

std::vector<std::string> ReservedNow(const Snapshot& snapshot) {
  std::vector<std::string> reserved(snapshot.cluster->nodes.size());
  if (!snapshot.reservations) return reserved;
  for (const auto& [name, reservation] : *snapshot.reservations)
    if (reservation.start_time <= snapshot.time && snapshot.time < reservation.end_time)
      for (int node : reservation.nodes)
        if (reserved[node] != "MAINT")
          reserved[node] = reservation.Has("MAINT") ? "MAINT" : "RESERVED";
  return reserved;
}

// The node's GRES as scontrol show node prints them: its GPUs grouped by type, each group with
// the sockets of its GPUs' local cores ("gpu:h100:8(S:0-1)") once known for every GPU of it
// (gres.conf Cores=, or NVML's affinity); its other GRES as configured.
std::string NodeGres(const NodeConfig& config) {
  if (config.gpus.empty()) return FormatGres(config.gres);
  std::vector<GresSpec> shown;
  bool gpus_added = false;
  for (const GresSpec& gres : config.gres) {
    if (gres.name != "gpu") {
      shown.push_back(gres);
      continue;
    }
    if (gpus_added) continue;
    gpus_added = true;
    std::vector<GresSpec> groups;
    std::vector<bool> unbound;
    for (const GpuDevice& gpu : config.gpus) {
      auto group = std::find_if(groups.begin(), groups.end(),
                                [&](const GresSpec& g) { return g.type == gpu.type; });
      if (group == groups.end()) {
        groups.push_back(GresSpec{"gpu", gpu.type, 0, {}});
        unbound.push_back(false);
        group = groups.end() - 1;
      }
      ++group->count;
      size_t at = static_cast<size_t>(group - groups.begin());
      if (gpu.cores.empty()) unbound[at] = true;
      for (int core : gpu.cores)
        group->sockets.push_back(core / std::max(config.cores_per_socket, 1));
    }
    for (size_t g = 0; g < groups.size(); ++g) {
      std::vector<int>& sockets = groups[g].sockets;
      std::sort(sockets.begin(), sockets.end());
      sockets.erase(std::unique(sockets.begin(), sockets.end()), sockets.end());
      if (unbound[g]) sockets.clear();
      shown.push_back(std::move(groups[g]));
    }
  }
  return FormatGres(shown);
}

wire::NodeListing ListNodes(const Snapshot& snapshot, std::span<const std::string> names) {
  const ClusterConfig& cluster = *snapshot.cluster;
  std::vector<std::string> reserved = ReservedNow(snapshot);
  wire::NodeListing listing;
  listing.time = snapshot.time;
  std::vector<size_t> shown;
  if (names.empty()) {
    for (size_t i = 0; i < snapshot.nodes.size() && i < cluster.nodes.size(); ++i)
      shown.push_back(i);
  } else {
    for (const std::string& name : names)
      if (int index = cluster.FindNode(name);
          index >= 0 && static_cast<size_t>(index) < snapshot.nodes.size())
        shown.push_back(static_cast<size_t>(index));
    std::sort(shown.begin(), shown.end());
    shown.erase(std::unique(shown.begin(), shown.end()), shown.end());
  }
  if (!names.empty() && shown.empty()) return listing;
  // Only the named nodes' jobs are read (scontrol show node NAME).
  std::vector<NodeUsage> usage =
      UsageByNode(cluster, snapshot, names.empty() ? std::span<const size_t>() : shown);
  for (size_t i : shown) {
    wire::NodeInfo info =
        NodeInfoOf(snapshot.nodes[i], cluster.nodes[i].name, FullyAllocated(cluster, usage, i));
    info.reservation = reserved[i];
    const NodeConfig& config = cluster.nodes[i];
    info.weight = config.weight;
    info.gres = NodeGres(config);
    info.active_features = Join(config.features, ",");
    info.features =
        snapshot.nodes[i].features ? Join(*snapshot.nodes[i].features, ",") : info.active_features;
    if (!reserved[i].empty() && info.state.starts_with("IDLE"))
      info.state = reserved[i] + info.state.substr(4);
    listing.nodes.push_back(std::move(info));
  }
  return listing;
}

}  // namespace drover::ctld::views
