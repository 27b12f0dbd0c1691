// See nodes.h.
#include "ctld/views/nodes.h"

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

wire::NodeListing ListNodes(const Snapshot& snapshot) {
  const ClusterConfig& cluster = *snapshot.cluster;
  std::vector<NodeUsage> usage = UsageByNode(cluster, snapshot);
  std::vector<std::string> reserved = ReservedNow(snapshot);
  wire::NodeListing listing;
  listing.time = snapshot.time;
  for (size_t i = 0; i < snapshot.nodes.size() && i < cluster.nodes.size(); ++i) {
    wire::NodeInfo info =
        NodeInfoOf(snapshot.nodes[i], cluster.nodes[i].name, FullyAllocated(cluster, usage, i));
    info.reservation = reserved[i];
    const NodeConfig& config = cluster.nodes[i];
    info.weight = config.weight;
    info.gres = FormatGres(config.gres);
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
