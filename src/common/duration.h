// Durations as Slurm reads and prints them: time limits ("90", "1:30", "1:00:00", "2-00",
// "2-12:30:00", "UNLIMITED", "INFINITE") and run times. Values are whole seconds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace drover {

// UNLIMITED / INFINITE.
inline constexpr int64_t kUnlimitedSeconds = INT64_MAX;

// Slurm's time formats, where a bare number is minutes:
//   "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S", "UNLIMITED", "INFINITE" (any case).
// Errors say what was expected: "invalid time '1:2:3:4' (expected minutes, MM:SS, HH:MM:SS,
// D-HH, D-HH:MM or D-HH:MM:SS, or UNLIMITED)".
Result<int64_t> ParseDuration(std::string_view text);

// squeue's TIME / TIME_LIMIT form: "0:00", "5:07", "1:00:00", "2-00:00:00", "UNLIMITED".
std::string FormatDuration(int64_t seconds);

// scontrol's form, hours always two digits: "00:00:02", "01:00:00", "2-12:30:00", "UNLIMITED".
std::string FormatDurationPadded(int64_t seconds);

}  // namespace drover
