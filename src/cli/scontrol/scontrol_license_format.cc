// `scontrol show licenses`: slurm.conf's Licenses= with what running jobs hold, as Slurm 22.05
// prints them.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "cli/scontrol/scontrol_format.h"
#include "common/licenses.h"

namespace drover::cli::scontrol {

std::string LicensesText(const ClusterConfig& cluster, std::span<const v1::Job> jobs,
                         const std::optional<std::string>& name, bool one_liner) {
  if (cluster.settings.licenses.empty()) return "No licenses configured in Slurm.\n";
  // Running and suspended jobs hold their licenses, as the scheduler counts them.
  std::map<std::string, uint64_t> used;
  for (const v1::Job& job : jobs) {
    if (job.state() != "RUNNING" && job.state() != "SUSPENDED") continue;
    if (Result<std::vector<LicenseCount>> held = ParseLicenses(job.spec().licenses()))
      for (const LicenseCount& license : *held) used[license.name] += license.count;
  }
  std::vector<LicenseCount> sorted = cluster.settings.licenses;
  std::sort(sorted.begin(), sorted.end(),
            [](const LicenseCount& a, const LicenseCount& b) { return a.name < b.name; });
  std::string out;
  for (const LicenseCount& license : sorted) {
    if (name && license.name != *name) continue;
    uint64_t in_use = used[license.name];
    uint64_t free = in_use >= license.count ? 0 : license.count - in_use;
    out += fmt::format("LicenseName={}{}Total={} Used={} Free={} Reserved=0 Remote=no\n",
                       license.name, one_liner ? " " : "\n    ", license.count, in_use, free);
  }
  return out;
}

}  // namespace drover::cli::scontrol
