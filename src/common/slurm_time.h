// Slurm's date and time forms (its parse_time), as sbatch --begin/--deadline and scontrol's
// reservation times read them. Pure apart from the local time zone, which Slurm uses too; it
// never reads the clock: `now` is an argument.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace drover {

// Relative to `now` and in local time: "now[+|-count[seconds|minutes|hours|days|weeks]]",
// "HH:MM[:SS][AM|PM]" (the next such time), "midnight", "noon", "fika" (15:00), "teatime"
// (16:00), "today", "tomorrow", "YYYY-MM-DD", "MMDD[YY]", "MM/DD[/YY]", "MM.DD[.YY]", a date and
// time joined by 'T' or '-', and "uts<epoch>". nullopt when the text is none of these.
std::optional<int64_t> ParseSlurmTime(std::string_view text, int64_t now);

}  // namespace drover
