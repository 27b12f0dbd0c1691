// Reads Slurm's time limits ("90", "1:30:00", "2-12", "UNLIMITED") into seconds and prints
// durations the way squeue's TIME column and scontrol's TimeLimit/RunTime fields do.
#include "common/duration.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <span>
#include <vector>

#include "common/text.h"

namespace drover {
namespace {

constexpr int64_t kMinute = 60;
constexpr int64_t kHour = 60 * kMinute;
constexpr int64_t kDay = 24 * kHour;

Error InvalidTime(std::string_view text) {
  return MakeError(fmt::format(
      "invalid time '{}' (expected minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS, "
      "or UNLIMITED)",
      text));
}

Error TimeTooLarge(std::string_view text) {
  return MakeError(fmt::format("invalid time '{}' (too large)", text));
}

bool AllDigits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The unit of each clock field, most significant first. After "D-" the fields are H[:M[:S]];
// without days, a lone number is minutes (Slurm's rule) and two or three are [H:]M:S.
std::span<const int64_t> ClockUnits(size_t fields, bool has_days) {
  static constexpr int64_t kHms[] = {kHour, kMinute, 1};
  if (has_days) return std::span(kHms).first(fields);
  if (fields == 1) return std::span(kHms).subspan(1, 1);
  return std::span(kHms).last(fields);
}

// Adds digits * unit to total, refusing sums that reach kUnlimitedSeconds so that a huge limit
// can never silently become "unlimited" or wrap negative.
bool AddScaled(std::string_view digits, int64_t unit, int64_t& total) {
  std::optional<uint64_t> value = ParseUint64(digits);
  if (!value) return false;
  const uint64_t room = static_cast<uint64_t>((kUnlimitedSeconds - 1 - total) / unit);
  if (*value > room) return false;
  total += static_cast<int64_t>(*value) * unit;
  return true;
}

struct Clock {
  int64_t days, hours, minutes, seconds;
};

// Negative durations (an end before a start, a clock stepped back) are shown as zero: no Slurm
// tool prints a negative time, and "-1:-05" would only confuse.
Clock SplitClock(int64_t seconds) {
  seconds = std::max<int64_t>(seconds, 0);
  return {seconds / kDay, seconds / kHour % 24, seconds / kMinute % 60, seconds % 60};
}

}  // namespace

Result<int64_t> ParseDuration(std::string_view text) {
  std::string_view trimmed = Trim(text);
  if (EqualsIgnoreCase(trimmed, "UNLIMITED") || EqualsIgnoreCase(trimmed, "INFINITE")) {
    return kUnlimitedSeconds;
  }
  std::vector<std::string> fields;
  size_t dash = trimmed.find('-');
  const bool has_days = dash != std::string_view::npos;
  if (has_days) fields.emplace_back(trimmed.substr(0, dash));
  for (std::string& field : Split(trimmed.substr(has_days ? dash + 1 : 0), ':')) {
    fields.push_back(std::move(field));
  }
  const size_t clock_fields = fields.size() - (has_days ? 1 : 0);
  if (clock_fields > 3 || !std::all_of(fields.begin(), fields.end(),
                                       [](const std::string& f) { return AllDigits(f); })) {
    return InvalidTime(text);
  }
  int64_t total = 0;
  size_t next = 0;
  if (has_days && !AddScaled(fields[next++], kDay, total)) return TimeTooLarge(text);
  for (int64_t unit : ClockUnits(clock_fields, has_days)) {
    if (!AddScaled(fields[next++], unit, total)) return TimeTooLarge(text);
  }
  return total;
}

std::string FormatDuration(int64_t seconds) {
  if (seconds == kUnlimitedSeconds) return "UNLIMITED";
  const Clock c = SplitClock(seconds);
  if (c.days > 0) {
    return fmt::format("{}-{:02}:{:02}:{:02}", c.days, c.hours, c.minutes, c.seconds);
  }
  if (c.hours > 0) return fmt::format("{}:{:02}:{:02}", c.hours, c.minutes, c.seconds);
  return fmt::format("{}:{:02}", c.minutes, c.seconds);
}

std::string FormatDurationPadded(int64_t seconds) {
  if (seconds == kUnlimitedSeconds) return "UNLIMITED";
  const Clock c = SplitClock(seconds);
  std::string clock = fmt::format("{:02}:{:02}:{:02}", c.hours, c.minutes, c.seconds);
  return c.days > 0 ? fmt::format("{}-{}", c.days, clock) : clock;
}

}  // namespace drover
