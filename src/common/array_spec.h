// --array as Slurm writes it: "0-999%50", "1,3,5", "0-15:4", "1-5,10%2". Parsed at the edge into
// the task indexes and the limit on tasks running at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace drover {

struct ArraySpec {
  std::vector<uint32_t> indexes;  // ascending, no duplicates
  uint32_t max_running = 0;       // the %N; 0: no limit
};

// The longest --array text accepted (ranges say in a few characters what a list cannot).
inline constexpr size_t kMaxArraySpecLength = 64 * 1024;

// The tasks are counted before any is expanded: more than `max_array_size` tasks in all (the
// ranges' lengths summed, duplicates included) is refused. Errors start with Slurm's words:
// "Invalid job array specification '0-x' (expected indexes such as 0-99, 1,3,5 or 0-15:4,
// optionally with %N)", "Invalid job array specification: index 5000 is at or above
// MaxArraySize=1001".
Result<ArraySpec> ParseArraySpec(std::string_view text, uint64_t max_array_size);

// Slurm's compact form of indexes, as squeue prints pending tasks: "0-3,7,9-10" (with "%N").
std::string FormatArrayIndexes(const std::vector<uint32_t>& indexes, uint32_t max_running = 0);

}  // namespace drover
