// See launch_settings.h.
#include "common/launch_settings.h"

#include "common/resource_limits.h"
#include "common/text.h"

namespace drover {
namespace {

using S = LaunchSettings;
using conf::Invalid;

// PropagateResourceLimits and PropagateResourceLimitsExcept: lists of limit names, and only one
// of the two (Slurm refuses to start with both).
SetResult SetPropagateLimits(S& s, std::string_view value) {
  if (auto names = ParseLimitList(value); !names) return Invalid(value, names.error());
  if (!s.propagate_resource_limits_except.empty())
    return Invalid(value, "PropagateResourceLimitsExcept is set too; give one of the two");
  s.propagate_resource_limits = std::string(value);
  return std::nullopt;
}

SetResult SetPropagateLimitsExcept(S& s, std::string_view value) {
  if (auto names = ParseLimitList(value); !names) return Invalid(value, names.error());
  if (s.propagate_resource_limits)
    return Invalid(value, "PropagateResourceLimits is set too; give one of the two");
  s.propagate_resource_limits_except = std::string(value);
  return std::nullopt;
}

// BcastParameters: DestDir=PATH, Compression=lz4|none, send_libs (slurm.conf(5)).
SetResult SetBcastParameters(S& s, std::string_view value) {
  s.bcast_dest_dir.clear();
  s.bcast_compression.clear();
  s.bcast_send_libs = false;
  for (const std::string& item : Split(value, ',')) {
    std::string_view option = Trim(item);
    size_t equals = option.find('=');
    std::string_view name = option.substr(0, equals);
    std::string_view given = equals == std::string_view::npos ? "" : option.substr(equals + 1);
    if (EqualsIgnoreCase(name, "DestDir") && given.starts_with('/')) {
      s.bcast_dest_dir = std::string(given);
    } else if (EqualsIgnoreCase(name, "Compression") &&
               (EqualsIgnoreCase(given, "lz4") || EqualsIgnoreCase(given, "none"))) {
      s.bcast_compression = ToLower(given);
    } else if (EqualsIgnoreCase(option, "send_libs")) {
      s.bcast_send_libs = true;
    } else {
      return Invalid(option, "expected DestDir=/absolute/path, Compression=lz4|none or send_libs");
    }
  }
  return std::nullopt;
}

SetResult SetBcastExclude(S& s, std::string_view value) {
  if (!EqualsIgnoreCase(value, "none"))
    for (const std::string& item : Split(value, ','))
      if (!Trim(item).starts_with('/')) return Invalid(item, "expected absolute paths or none");
  s.bcast_exclude = std::string(value);
  return std::nullopt;
}

// MpiDefault: the types srun --mpi takes that Drover serves (pmix_v2 to pmix_v5 are pmix).
SetResult SetMpiDefault(S& s, std::string_view value) {
  std::string type = ToLower(Trim(value));
  bool pmix_version =
      type.size() == 7 && type.starts_with("pmix_v") && type[6] >= '2' && type[6] <= '5';
  if (type != "none" && type != "pmi2" && type != "pmix" && !pmix_version)
    return Invalid(value, "expected none, pmi2 or pmix (pmix_v2 to pmix_v5)");
  s.mpi_default = type;
  return std::nullopt;
}

}  // namespace

const std::vector<ConfField<LaunchSettings>>& LaunchSettingsFields() {
  static const std::vector<ConfField<LaunchSettings>> fields = {
      {"PropagateResourceLimits", SetPropagateLimits},
      {"PropagateResourceLimitsExcept", SetPropagateLimitsExcept},
      {"BcastParameters", SetBcastParameters},
      {"BcastExclude", SetBcastExclude},
      {"MpiDefault", SetMpiDefault},
  };
  return fields;
}

LaunchSettings LaunchSettingsOf(const std::vector<ConfLine>& lines) {
  LaunchSettings settings;
  for (const ConfLine& line : lines)
    for (const ConfPair& pair : line.pairs)
      if (const auto* field = FindField(LaunchSettingsFields(), pair.key)) {
        LaunchSettings tried = settings;
        if (!field->set(tried, pair.value)) settings = std::move(tried);
      }
  return settings;
}

LaunchSettings ReadLaunchSettings(const std::string& slurm_conf) {
  Diagnostics ignored;  // the commands' loader has reported them already
  return LaunchSettingsOf(ReadConfFile(slurm_conf, ignored));
}

}  // namespace drover
