// GRES as Slurm writes them in node definitions and requests: "gpu:8", "gpu:h100:8",
// "gpu:h100:2(S:0-1)", "gpu:h100:4,nic:1", "gpu" (a count of 1).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace drover {

struct GresSpec {
  std::string name;          // "gpu"
  std::string type;          // "h100", empty for any type
  uint64_t count = 1;        // K/M/G suffixes multiply by 1024 as Slurm does ("mps:1K")
  std::vector<int> sockets;  // from "(S:0-1)", empty when not given

  bool operator==(const GresSpec&) const = default;
};

// name[:type][:count][(S:list)], comma-separated. With two fields the second is the count when
// it is a number, else the type. Errors: "invalid GRES 'gpu:h100:x' (expected name[:type][:count],
// e.g. gpu:h100:8)".
Result<std::vector<GresSpec>> ParseGres(std::string_view text);

// "gpu:h100:8(S:0-1)"; the type is omitted when empty; sockets as ranges ("S:0-1", "S:0,2").
std::string FormatGres(const std::vector<GresSpec>& gres);
std::string FormatGres(const GresSpec& gres);

}  // namespace drover
