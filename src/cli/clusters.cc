// See clusters.h.
#include "cli/clusters.h"

#include <fmt/format.h>

#include "common/text.h"

namespace drover::cli {

std::optional<std::string> ClustersError(std::string_view list, std::string_view local) {
  for (const std::string& item : Split(std::string(list), ',')) {
    std::string name(Trim(item));
    if (name.empty() || EqualsIgnoreCase(name, "all") || EqualsIgnoreCase(name, local)) continue;
    return fmt::format(
        "'{}' can't be reached now, or it is an invalid entry for --cluster.  Use 'sacctmgr list "
        "clusters' to see available clusters.",
        name);
  }
  return std::nullopt;
}

std::optional<std::string> ClustersRequested(
    const std::optional<std::string>& option,
    const std::map<std::string, std::string>& environment) {
  if (option) return option;
  if (auto it = environment.find("SLURM_CLUSTERS"); it != environment.end()) return it->second;
  return std::nullopt;
}

}  // namespace drover::cli
