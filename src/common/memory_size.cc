// Reads memory sizes as Slurm accepts them ("512", "16G", "16GB", "2048K") into megabytes and
// prints them in the compact form Slurm's TRES strings use ("4000M", "16G").
#include "common/memory_size.h"

#include <fmt/format.h>

#include <limits>
#include <optional>

#include "common/text.h"

namespace drover {
namespace {

constexpr uint64_t kKibi = 1024;

Error InvalidMemory(std::string_view text) {
  return MakeError(fmt::format(
      "invalid memory size '{}' (expected a number of megabytes, or a number with K, M, G or T, "
      "e.g. 16G)",
      text));
}

Error MemoryTooLarge(std::string_view text) {
  return MakeError(fmt::format("invalid memory size '{}' (too large)", text));
}

// How many times to multiply by 1024 to reach megabytes: K is -1, none or M is 0, G is 1, ...
// A trailing "B" is allowed after a unit ("16GB"), never alone.
std::optional<int> SuffixPower(std::string_view suffix) {
  if (suffix.empty()) return 0;
  const bool unit_then_b = suffix.size() == 2 && (suffix[1] == 'B' || suffix[1] == 'b');
  if (suffix.size() != 1 && !unit_then_b) return std::nullopt;
  constexpr std::string_view kUnits = "kmgtp";
  size_t unit = kUnits.find(ToLower(suffix.substr(0, 1)));
  if (unit == std::string_view::npos) return std::nullopt;
  return static_cast<int>(unit) - 1;
}

}  // namespace

Result<uint64_t> ParseMemoryMB(std::string_view text) {
  std::string_view trimmed = Trim(text);
  size_t digits_end = trimmed.find_first_not_of("0123456789");
  if (digits_end == std::string_view::npos) digits_end = trimmed.size();
  std::optional<int> power = SuffixPower(trimmed.substr(digits_end));
  if (digits_end == 0 || !power) return InvalidMemory(text);
  std::optional<uint64_t> value = ParseUint64(trimmed.substr(0, digits_end));
  if (!value) return MemoryTooLarge(text);
  // Slurm rounds kilobytes up, so a request never gets less memory than it asked for.
  if (*power < 0) return *value / kKibi + (*value % kKibi != 0 ? 1 : 0);
  for (int i = 0; i < *power; ++i) {
    if (*value > std::numeric_limits<uint64_t>::max() / kKibi) return MemoryTooLarge(text);
    *value *= kKibi;
  }
  return *value;
}

std::string FormatMemoryMB(uint64_t megabytes) {
  if (megabytes == 0) return "0";
  constexpr std::string_view kUnits = "MGTP";
  size_t unit = 0;
  while (unit + 1 < kUnits.size() && megabytes % kKibi == 0) {
    megabytes /= kKibi;
    ++unit;
  }
  return fmt::format("{}{}", megabytes, kUnits[unit]);
}

}  // namespace drover
