// Slurm's license lists; see licenses.h.
#include "common/licenses.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/text.h"

namespace drover {
namespace {

Result<LicenseCount> ParseOne(std::string_view item) {
  item = Trim(item);
  size_t colon = item.find_first_of(":*");
  LicenseCount license{std::string(Trim(item.substr(0, colon))), 1};
  if (license.name.empty())
    return MakeError(fmt::format("'{}' has no license name (expected name[:count])", item));
  if (license.name.find('@') != std::string::npos)
    return MakeError(
        fmt::format("'{}' names a remote license; Drover has only local ones", license.name));
  if (colon == std::string_view::npos) return license;
  std::optional<uint64_t> count = ParseUint64(Trim(item.substr(colon + 1)));
  if (!count || *count == 0 || *count > UINT32_MAX)
    return MakeError(fmt::format("'{}': the count must be a whole number from 1", item));
  license.count = static_cast<uint32_t>(*count);
  return license;
}

}  // namespace

Result<std::vector<LicenseCount>> ParseLicenses(std::string_view text) {
  std::vector<LicenseCount> licenses;
  if (Trim(text).empty()) return licenses;
  for (const std::string& item : Split(text, ',')) {
    Result<LicenseCount> license = ParseOne(item);
    if (!license) return std::move(license).take_error();
    auto same = std::find_if(licenses.begin(), licenses.end(),
                             [&](const LicenseCount& l) { return l.name == license->name; });
    if (same == licenses.end())
      licenses.push_back(std::move(*license));
    else
      same->count += license->count;
  }
  return licenses;
}

std::string FormatLicenses(const std::vector<LicenseCount>& licenses) {
  std::string out;
  for (const LicenseCount& license : licenses) {
    if (!out.empty()) out += ',';
    out += fmt::format("{}:{}", license.name, license.count);
  }
  return out;
}

std::string NormalisedLicenses(std::string_view requested) {
  Result<std::vector<LicenseCount>> licenses = ParseLicenses(requested);
  return licenses ? FormatLicenses(*licenses) : std::string(requested);
}

}  // namespace drover
