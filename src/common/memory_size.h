// Memory sizes as Slurm reads and prints them, in megabytes (MiB): "512" (MB by default),
// "512M", "16G", "1T", "16GB", "2048K" (rounded up to whole MB).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace drover {

// Accepts a decimal count with an optional suffix K, M, G, T, P (any case, optionally followed
// by "B"). Errors: "invalid memory size '16X' (expected a number of megabytes, or a number with
// K, M, G or T, e.g. 16G)".
Result<uint64_t> ParseMemoryMB(std::string_view text);

// Slurm's TRES form: the largest unit that divides exactly: 4000 -> "4000M", 16384 -> "16G",
// 1048576 -> "1T", 0 -> "0".
std::string FormatMemoryMB(uint64_t megabytes);

}  // namespace drover
