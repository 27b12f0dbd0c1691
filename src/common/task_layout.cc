// See task_layout.h.
#include "common/task_layout.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/text.h"

namespace drover {
namespace {

Error Invalid() {
  return MakeError("Invalid --distribution specification");
}

std::optional<NodeDistribution> NodeLevel(const std::string& word) {
  if (word == "block" || word == "*") return NodeDistribution::kBlock;
  if (word == "cyclic") return NodeDistribution::kCyclic;
  if (word == "arbitrary") return NodeDistribution::kArbitrary;
  if (word == "plane") return NodeDistribution::kPlane;
  return std::nullopt;
}

bool InnerLevel(const std::string& word) {
  return word == "block" || word == "cyclic" || word == "fcyclic" || word == "*";
}

}  // namespace

Result<Distribution> ParseDistribution(std::string_view text) {
  std::string lower = ToLower(Trim(text));
  std::string methods = lower.substr(0, lower.find(','));
  Distribution distribution;
  if (methods.size() < lower.size()) {
    std::string pack = lower.substr(methods.size() + 1);
    if (pack != "pack" && pack != "nopack") return Invalid();
    distribution.pack = pack == "pack";
  }
  std::vector<std::string> levels = Split(methods, ':');
  if (levels.empty() || levels.size() > 3) return Invalid();
  std::string first = levels[0];
  if (first.starts_with("plane=")) {
    std::optional<uint64_t> size = ParseUint64(std::string_view(first).substr(6));
    if (!size || *size == 0 || *size > 1'000'000) return Invalid();
    distribution.plane_size = static_cast<uint32_t>(*size);
    first = "plane";
  }
  std::optional<NodeDistribution> nodes = NodeLevel(first);
  if (!nodes || (*nodes == NodeDistribution::kPlane && distribution.plane_size == 0))
    return Invalid();
  distribution.nodes = *nodes;
  for (size_t i = 1; i < levels.size(); ++i)
    if (!InnerLevel(levels[i])) return Invalid();
  if (levels.size() > 1 && levels[1] != "*") distribution.socket = levels[1];
  if (levels.size() > 2 && levels[2] != "*") distribution.core = levels[2];
  return distribution;
}

Result<std::vector<uint32_t>> CountTasks(const Distribution& distribution,
                                         std::span<const uint32_t> room,
                                         std::span<const uint32_t> limit, uint32_t ntasks) {
  std::vector<uint32_t> tasks(room.size(), 0);
  if (room.empty()) return tasks;
  uint32_t placed = 0;
  auto fits = [&](size_t i, uint32_t more) { return tasks[i] + more <= limit[i]; };
  if (distribution.nodes == NodeDistribution::kPlane) {
    // plane=N: N tasks to each node in turn, whatever its CPUs (Slurm's plane layout).
    for (bool any = true; placed < ntasks && any;) {
      any = false;
      for (size_t i = 0; i < room.size() && placed < ntasks; ++i) {
        uint32_t take = std::min(distribution.plane_size, ntasks - placed);
        while (take > 0 && !fits(i, take)) --take;
        tasks[i] += take;
        placed += take;
        any |= take > 0;
      }
    }
  } else {
    for (bool any = true; placed < ntasks && any;) {
      any = false;
      for (size_t i = 0; i < room.size() && placed < ntasks; ++i)
        if (tasks[i] < room[i] && fits(i, 1)) {
          ++tasks[i];
          ++placed;
          any = true;
        }
    }
    // More tasks than CPUs: the rest round-robin, as Slurm overcommits a step.
    for (bool any = true; placed < ntasks && any;) {
      any = false;
      for (size_t i = 0; i < room.size() && placed < ntasks; ++i)
        if (fits(i, 1)) {
          ++tasks[i];
          ++placed;
          any = true;
        }
    }
  }
  if (placed < ntasks)
    return MakeError(fmt::format(
        "Requested node configuration is not available: {} tasks do not fit {} nodes within "
        "--ntasks-per-core/--ntasks-per-socket",
        ntasks, room.size()));
  return tasks;
}

std::vector<std::vector<uint32_t>> AssignRanks(const Distribution& distribution,
                                               std::span<const uint32_t> counts) {
  std::vector<std::vector<uint32_t>> ranks(counts.size());
  uint32_t next = 0;
  if (distribution.nodes == NodeDistribution::kBlock ||
      distribution.nodes == NodeDistribution::kArbitrary) {
    for (size_t i = 0; i < counts.size(); ++i)
      for (uint32_t t = 0; t < counts[i]; ++t) ranks[i].push_back(next++);
    return ranks;
  }
  uint32_t chunk = distribution.nodes == NodeDistribution::kPlane ? distribution.plane_size : 1;
  for (bool any = true; any;) {
    any = false;
    for (size_t i = 0; i < counts.size(); ++i)
      for (uint32_t t = 0; t < chunk && ranks[i].size() < counts[i]; ++t) {
        ranks[i].push_back(next++);
        any = true;
      }
  }
  return ranks;
}

Result<std::vector<std::vector<uint32_t>>> ArbitraryRanks(std::span<const std::string> nodes,
                                                          std::span<const std::string> hosts) {
  std::vector<std::vector<uint32_t>> ranks(nodes.size());
  for (size_t t = 0; t < hosts.size(); ++t) {
    auto it = std::find(nodes.begin(), nodes.end(), hosts[t]);
    if (it == nodes.end())
      return MakeError(fmt::format(
          "Requested node configuration is not available: {} (task {} in SLURM_HOSTFILE) is not "
          "one of the step's nodes",
          hosts[t], t));
    ranks[static_cast<size_t>(it - nodes.begin())].push_back(static_cast<uint32_t>(t));
  }
  return ranks;
}

}  // namespace drover
