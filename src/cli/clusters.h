// -M/--clusters (and SLURM_CLUSTERS) of every command: Drover's commands speak to one cluster,
// the one slurm.conf names. As Slurm's commands do on a cluster outside a federation, they accept
// that cluster's name (any case) and "all", and refuse any other name with Slurm's message.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace drover::cli {

// The error line (without the command's "NAME: error: " prefix) for a -M value that names a
// cluster other than `local`, or nullopt when every name in the comma list is local or "all".
std::optional<std::string> ClustersError(std::string_view list, std::string_view local);

// The -M value to check: the option's when given, else SLURM_CLUSTERS from `environment`.
std::optional<std::string> ClustersRequested(const std::optional<std::string>& option,
                                             const std::map<std::string, std::string>& environment);

}  // namespace drover::cli
