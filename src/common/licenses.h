// Licenses: slurm.conf's `Licenses=name[:count],...` (cluster-wide counts) and a job's
// -L/--licenses request (the same form: it needs all of them), in Slurm 22.05's syntax.
// Parsing only; who holds how many is the scheduler's count.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace drover {

struct LicenseCount {
  std::string name;
  uint32_t count = 1;
  bool operator==(const LicenseCount&) const = default;
};

// "foo:4,bar" (also Slurm's older "foo*4"); a name without a count counts one, a name given
// twice counts the sum, as Slurm. Errors say which part is wrong. "" is no licenses.
Result<std::vector<LicenseCount>> ParseLicenses(std::string_view text);
// "foo:4,bar:1", as Slurm prints a job's Licenses= and squeue's %W.
std::string FormatLicenses(const std::vector<LicenseCount>& licenses);
// A job's request as Slurm shows it once validated ("fluent:2"); as given if it does not parse.
std::string NormalisedLicenses(std::string_view requested);

}  // namespace drover
