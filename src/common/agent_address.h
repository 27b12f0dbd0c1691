// Where a node's agent listens, as the agent records it in its spool directory for the
// commands on the same host (scontrol listpids and pidinfo), the way Slurm's commands find
// slurmstepd's sockets in SlurmdSpoolDir: an agent on port 0 (drover up's emulated nodes) has
// no address slurm.conf could give.
#pragma once

#include <filesystem>
#include <string>

#include "common/cluster_config.h"
#include "common/result.h"

namespace drover {

// The metadata key that names the node a call to an agent is for: one droverd may serve many
// emulated nodes on one address. A call without it goes to the agent's only node.
inline constexpr char kAgentNodeMetadata[] = "drover-node";

// SlurmdSpoolDir with %n replaced by the node's name.
std::filesystem::path AgentSpoolDir(const ClusterSettings& settings, const std::string& node);

// HOST:PORT in <spool>/droverd.address, replaced atomically, readable by every user.
Status WriteAgentAddress(const std::filesystem::path& spool, const std::string& address);
// The error says which file is missing and what to do.
Result<std::string> ReadAgentAddress(const std::filesystem::path& spool);

}  // namespace drover
