// cgroup.conf and the enforcement it asks for; see cgroup_conf.h.
#include "common/cgroup_conf.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string_view>

#include "common/conf_fields.h"
#include "common/documented_keys.h"
#include "common/text.h"

namespace drover {
namespace {

// A percentage: a non-negative number, maybe with a fraction (AllowedRAMSpace=101.5).
auto Percent(double CgroupConf::*member) {
  return [=](CgroupConf& target, std::string_view value) -> SetResult {
    double parsed = 0;
    auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (error != std::errc() || end != value.data() + value.size() || parsed < 0)
      return fmt::format("'{}' is not a percentage; expected a number such as 100 or 101.5", value);
    target.*member = parsed;
    return std::nullopt;
  };
}

const std::vector<ConfField<CgroupConf>>& CgroupConfFields() {
  using C = CgroupConf;
  static const std::vector<ConfField<C>> fields = {
      {"ConstrainCores", conf::Bool(&C::constrain_cores)},
      {"ConstrainDevices", conf::Bool(&C::constrain_devices)},
      {"ConstrainRAMSpace", conf::Bool(&C::constrain_ram_space)},
      {"ConstrainSwapSpace", conf::Bool(&C::constrain_swap_space)},
      {"AllowedRAMSpace", Percent(&C::allowed_ram_space)},
      {"AllowedSwapSpace", Percent(&C::allowed_swap_space)},
      {"MaxRAMPercent", Percent(&C::max_ram_percent)},
      {"MaxSwapPercent", Percent(&C::max_swap_percent)},
      {"MinRAMSpace", conf::Memory(&C::min_ram_space_mb)},
  };
  return fields;
}

// Keys cgroup.conf(5) documents whose work Drover does its own way or not at all: accepted.
constexpr std::string_view kCgroupConfDocumented[] = {
    "AllowedDevicesFile", "AllowedKmemSpace",       "CgroupAutomount",    "CgroupMountpoint",
    "CgroupPlugin",       "CgroupReleaseAgentDir",  "ConstrainKmemSpace", "EnableControllers",
    "IgnoreSystemd",      "IgnoreSystemdOnFailure", "MaxKmemPercent",     "MemorySwappiness",
    "MinKmemSpace",
};

bool HasWord(const std::string& list, std::string_view word) {
  for (const std::string& item : Split(list, ','))
    if (EqualsIgnoreCase(Trim(item), word)) return true;
  return false;
}

uint64_t PercentOf(uint64_t mb, double percent) {
  return static_cast<uint64_t>(static_cast<double>(mb) * percent / 100.0);
}

}  // namespace

void ApplyCgroupConf(const std::vector<ConfLine>& lines, ClusterConfig& config,
                     Diagnostics& diagnostics, KeyReporter& reporter) {
  const auto& fields = CgroupConfFields();
  static const std::vector<std::string_view> implemented = [&] {
    std::vector<std::string_view> names;
    for (const auto& field : fields) names.push_back(field.name);
    return names;
  }();
  for (const ConfLine& line : lines)
    for (const ConfPair& pair : line.pairs) {
      const ConfField<CgroupConf>* field = FindField(fields, pair.key);
      if (!field) {
        reporter.Report(diagnostics, line.where, pair.key, "cgroup.conf", implemented,
                        kCgroupConfDocumented);
        continue;
      }
      if (SetResult error = field->set(config.settings.cgroup, pair.value))
        diagnostics.Error(line.where, fmt::format("{}: {}", field->name, *error));
    }
}

Enforcement EnforcementOf(const ClusterSettings& settings) {
  Enforcement e;
  const bool task_cgroup = HasWord(settings.task_plugin, "task/cgroup");
  const CgroupConf& c = settings.cgroup;
  e.constrain_ram = task_cgroup && (c.constrain_ram_space || c.constrain_swap_space);
  e.constrain_swap = task_cgroup && c.constrain_swap_space;
  e.constrain_cores = task_cgroup && c.constrain_cores;
  e.constrain_devices = task_cgroup && c.constrain_devices;
  e.track_by_cgroup = HasWord(settings.proctrack_type, "proctrack/cgroup") || e.constrain_ram ||
                      e.constrain_cores || e.constrain_devices;
  bool gathering = !EqualsIgnoreCase(settings.job_acct_gather_type, "jobacct_gather/none");
  e.over_memory_kill =
      gathering &&
      std::any_of(settings.job_acct_gather_params.begin(), settings.job_acct_gather_params.end(),
                  [](const std::string& p) { return EqualsIgnoreCase(p, "OverMemoryKill"); });
  // JobAcctGatherFrequency: "N" or "task=N[,energy=...]"; 0 turns the sampling off.
  for (const std::string& item : Split(settings.job_acct_gather_frequency, ',')) {
    std::string_view text = Trim(item);
    if (StartsWithIgnoreCase(text, "task="))
      text.remove_prefix(5);
    else if (text.find('=') != std::string_view::npos)
      continue;
    if (auto seconds = ParseUint64(text)) e.poll_seconds = static_cast<int64_t>(*seconds);
  }
  if (e.poll_seconds == 0) e.over_memory_kill = false;
  return e;
}

MemoryLimits MemoryLimitsOf(const ClusterSettings& settings, uint64_t allocated_mb,
                            uint64_t real_memory_mb) {
  MemoryLimits limits;
  Enforcement e = EnforcementOf(settings);
  if (!e.constrain_ram || allocated_mb == 0) return limits;
  const CgroupConf& c = settings.cgroup;
  // ConstrainSwapSpace alone: RAM and RAM+swap both at 100% plus the allowed swap.
  double ram_percent = c.constrain_ram_space ? c.allowed_ram_space : 100 + c.allowed_swap_space;
  uint64_t ram = PercentOf(allocated_mb, ram_percent);
  if (real_memory_mb) ram = std::min(ram, PercentOf(real_memory_mb, c.max_ram_percent));
  limits.ram_mb = std::max(ram, c.min_ram_space_mb);
  if (!e.constrain_swap) return limits;
  uint64_t both = c.constrain_ram_space ? ram + PercentOf(allocated_mb, c.allowed_swap_space) : ram;
  if (real_memory_mb) both = std::min(both, PercentOf(real_memory_mb, c.max_swap_percent));
  limits.ram_and_swap_mb = std::max({both, limits.ram_mb, c.min_ram_space_mb});
  return limits;
}

}  // namespace drover
