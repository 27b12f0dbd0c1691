// Live readings of the node's GPUs for the agent's /metrics: utilization, memory, temperature,
// power and uncorrected ECC errors, asked of NVML at each scrape (nvml_api.h). A GPU in MIG
// mode is read once, as the physical GPU. XID counts come from the health probes
// (gpu_health.h), which own NVML's event set.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/host/gpu.h"
#include "agent/host/nvml_api.h"
#include "common/mutex.h"
#include "common/result.h"

namespace drover::agent {

// One GPU's reading; a value NVML did not give (an older driver, a GPU that does not report
// it) is unset.
struct GpuSample {
  int index = 0;  // the node's GPU index (a MIG GPU: its NVML index)
  std::string uuid;
  std::string name;   // NVML's product name
  bool lost = false;  // NVML could not reach it (no handle, or GPU_IS_LOST)
  std::optional<double> utilization, memory_utilization;  // 0 to 1
  std::optional<uint64_t> memory_used_bytes, memory_total_bytes;
  std::optional<double> temperature_c, power_watts;
  std::optional<uint64_t> ecc_uncorrected_volatile, ecc_uncorrected_aggregate;
};

class GpuMetricsReader {
 public:
  // Opens NVML at `library` for `gpus` (as discovered; GPUs without a UUID are left out).
  static Result<std::unique_ptr<GpuMetricsReader>> Open(const std::string& library,
                                                        const std::vector<Gpu>& gpus);
  // Every watched GPU, in index order. Thread-safe.
  std::vector<GpuSample> Read() EXCLUDES(mutex_);

 private:
  struct Watched {
    int index = 0;
    std::string uuid, name;
    unsigned nvml_index = 0;
  };
  GpuMetricsReader() = default;
  std::unique_ptr<nvml::Library> nvml_;
  std::vector<Watched> gpus_;
  Mutex mutex_;
};

}  // namespace drover::agent
