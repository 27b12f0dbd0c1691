// One GPU's readings from a node's built-in health probes (agent/host/gpu_health.h takes them,
// the heartbeat carries them, the controller keeps the last ones for its metrics).
#pragma once

#include <cstdint>
#include <string>

namespace drover {

struct GpuHealth {
  int index = 0;
  std::string uuid;
  uint64_t xid_errors = 0;  // XID events seen since the agent started
  uint32_t last_xid = 0;
  uint64_t ecc_dbe_volatile = 0, ecc_dbe_aggregate = 0;
  uint32_t retired_pages_dbe = 0;
  bool retired_pages_pending = false;
  uint32_t remapped_rows_failure = 0;
  bool remapped_rows_pending = false;
  uint32_t nvlinks_down = 0;      // links active at discovery that are not now
  uint64_t throttle_reasons = 0;  // NVML's bits, less idle and application clocks
  bool lost = false;              // gone from the bus, or another GPU at its index
  double temperature_c = 0;
  std::string problem;  // what drains the node ("XID 79"); empty: healthy
  bool operator==(const GpuHealth&) const = default;
};

}  // namespace drover
