// Slurm's compressed count lists; see count_list.h.
#include "common/count_list.h"

#include <fmt/format.h>

namespace drover {

std::string FormatCountList(std::span<const uint32_t> counts) {
  std::string out;
  for (size_t i = 0; i < counts.size();) {
    size_t run = 1;
    while (i + run < counts.size() && counts[i + run] == counts[i]) ++run;
    if (!out.empty()) out += ',';
    out += run > 1 ? fmt::format("{}(x{})", counts[i], run) : std::to_string(counts[i]);
    i += run;
  }
  return out;
}

}  // namespace drover
