// The agent's built-in GPU health probes (NVML), run every HealthCheckInterval beside the
// site's HealthCheckProgram: XID errors, uncorrectable ECC errors, retired and remapped memory,
// NVLinks gone down, hardware slowdowns, a GPU gone from the bus. A problem drains the node
// with a reason that names the GPU ("gpu 3 (GPU-8e6a...): XID 79").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "agent/host/gpu.h"
#include "agent/host/nvml_api.h"
#include "common/gpu_health.h"
#include "common/result.h"

namespace drover::agent {

// A probe's reading of one GPU: what the heartbeat carries, and what this probe saw happen.
struct GpuReading : GpuHealth {
  std::vector<uint32_t> new_xids;  // fatal or not, seen by this probe
  bool event = false;              // the problem is an event (an XID): it does not clear by itself
};

// XIDs that mean the GPU (not the job) is in trouble: 48 double-bit ECC, 61/62 internal
// micro-controller faults, 63/64 row remapping, 74 NVLink, 79 fallen off the bus, 92 high
// single-bit ECC rate, 95 uncontained ECC, 119/120 GSP, 140 unrecovered ECC. Application
// faults (13, 31, 43, 45, ...) are counted but do not drain.
bool IsFatalXid(uint32_t xid);

// Hardware slowdowns that drain: NVML's HwSlowdown, HwThermalSlowdown and HwPowerBrakeSlowdown
// bits, seen in kThrottledProbes probes in a row (a power spike sets them for a moment).
// Software power capping and thermal slowdown only show in the metrics.
constexpr uint64_t kDrainingThrottleReasons = 0x8 | 0x40 | 0x80;
constexpr int kThrottledProbes = 3;

class GpuHealthProbe {
 public:
  // Opens NVML at `library` to watch `gpus` (as discovered; GPUs without a UUID are skipped).
  static Result<std::unique_ptr<GpuHealthProbe>> Open(const std::string& library,
                                                      const std::vector<Gpu>& gpus);
  ~GpuHealthProbe();
  // One reading per watched GPU, in index order.
  std::vector<GpuReading> Probe();

 private:
  struct Watched {
    int index = 0;  // as the node numbers its GPUs; a MIG GPU's own NVML index
    std::string uuid;
    unsigned nvml_index = 0;
    nvml::Device device;  // NVML's handle at Open, which XID events name; null when none
    uint64_t xid_errors = 0;
    uint32_t last_xid = 0;
    std::vector<unsigned> active_links;  // at discovery
    int throttled = 0;                   // probes in a row that saw a draining slowdown
  };
  GpuHealthProbe() = default;
  void DrainEvents(std::vector<GpuReading>& readings);
  std::unique_ptr<nvml::Library> nvml_;
  nvml::EventSet events_ = nullptr;
  std::vector<Watched> gpus_;
};

// The node's verdict from its readings: "" when healthy, else each problem as
// "gpu 3 (GPU-8e6a...): XID 79", joined with "; ". `event` is set when one of them is an event.
std::string GpuHealthVerdict(const std::vector<GpuReading>& readings, bool& event);

}  // namespace drover::agent
