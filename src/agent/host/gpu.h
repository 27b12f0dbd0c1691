// The node's GPUs: found through NVML (libnvidia-ml loaded with dlopen, so building needs
// nothing from NVIDIA), else as gres.conf declares them, else emulated for emulated nodes.
// Discovery only reads; it never changes a GPU's settings.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/host/device_filter.h"
#include "common/cluster_config.h"
#include "common/result.h"

namespace drover::agent {

struct Gpu {
  int index = 0;            // the node's GPU index, as gres.conf and CUDA_VISIBLE_DEVICES use it
  std::string type;         // the GRES type ("h100"); empty when untyped
  std::string name;         // NVML's product name ("NVIDIA H100 80GB HBM3"); empty otherwise
  std::string uuid;         // "GPU-…"; empty when not from NVML
  uint64_t memory_mb = 0;   // 0 when unknown
  int minor = -1;           // N of /dev/nvidiaN (195:N); -1 for emulated GPUs
  std::string device_path;  // "/dev/nvidia3"; empty for emulated GPUs
  std::string pci_bus_id;   // NVML's "00000000:18:00.0"; empty otherwise
  // The device file's number, what ConstrainDevices denies the jobs not given this GPU: NVML's
  // 195:minor, or gres.conf File='s character device; none for a GPU without a device file.
  std::optional<DeviceNumber> device;
  std::vector<int> cores;  // cores local to the GPU (core indexes, as gres.conf Cores=)
  std::vector<int> links;  // per GPU index: NVLink count, -1 for itself; empty: unknown
  // NVML's index of the physical GPU (what the health probes watch); -1 when not from NVML.
  int nvml_index = -1;
  // A MIG device (`uuid` "MIG-…", what CUDA_VISIBLE_DEVICES names it by; `device` its GPU's
  // /dev/nvidiaN): the nvidia-caps devices of its GPU and compute instances, which
  // ConstrainDevices denies to the jobs not given it. `mig` false: a whole GPU.
  bool mig = false;
  std::string parent_uuid;  // the physical GPU's, for a MIG device
  std::vector<DeviceNumber> mig_caps;
  bool operator==(const Gpu&) const = default;
};

// The devices ConstrainDevices denies to a job (or a step) given the GPUs `given` accepts (by
// index) of `gpus`: those of every GPU not given — its device file, a MIG device's caps — but
// not a device a given one needs too (the GPU that MIG devices given are cut from).
template <typename Given>
std::vector<DeviceNumber> DevicesDenied(const std::vector<Gpu>& gpus, Given given) {
  std::vector<DeviceNumber> needed, denied;
  for (const Gpu& gpu : gpus)
    if (given(gpu.index)) {
      if (gpu.device) needed.push_back(*gpu.device);
      needed.insert(needed.end(), gpu.mig_caps.begin(), gpu.mig_caps.end());
    }
  auto deny = [&](const DeviceNumber& device) {
    if (std::find(needed.begin(), needed.end(), device) == needed.end() &&
        std::find(denied.begin(), denied.end(), device) == denied.end())
      denied.push_back(device);
  };
  for (const Gpu& gpu : gpus)
    if (!given(gpu.index)) {
      if (gpu.device) deny(*gpu.device);
      for (const DeviceNumber& cap : gpu.mig_caps) deny(cap);
    }
  return denied;
}

enum class GpuSource { kNvml, kGresConf, kEmulated, kNone };
const char* GpuSourceName(GpuSource source);  // "nvml", "gres.conf", "emulated", "none"

struct GpuDiscovery {
  GpuSource source = GpuSource::kNone;
  std::vector<Gpu> gpus;
  // Why NVML was not used or what it disagreed with, for the agent's log; empty when NVML
  // answered and matched the configuration.
  std::string note;
};

struct GpuDiscoveryOptions {
  std::string nvml_library = "libnvidia-ml.so.1";  // a path or a name for dlopen
  bool emulated = false;                           // the node is emulated: never ask NVML
  // The host's cores as OS CPU lists (HostInfo::core_cpus), to turn NVML's CPU affinity into
  // core indexes; empty: each CPU is taken as its own core.
  std::vector<std::vector<int>> core_cpus;
  // Where the driver lists MIG instances' caps minors ("gpu0/gi1/ci0/access 13"), and the
  // nvidia-caps major.
  std::string mig_minors_path = "/proc/driver/nvidia-caps/mig-minors";
  std::string proc_devices_path = "/proc/devices";
};

// The node's GPUs: emulated when options.emulated; else NVML's when it loads and finds any
// (a GPU's type comes from gres.conf when it names one for that index, else from NVML's
// name); else gres.conf's. Never fails: what went wrong with NVML is in `note`.
GpuDiscovery DiscoverGpus(const NodeConfig& node, const GpuDiscoveryOptions& options = {});

// Asks NVML through `options.nvml_library`. Errors: "NVML not available: dlopen
// libnvidia-ml.so.1: <dlerror>", "NVML: nvmlInit_v2 failed: Driver Not Loaded (9)", ...
Result<std::vector<Gpu>> DiscoverNvmlGpus(const GpuDiscoveryOptions& options);

// gres.conf's GPUs of `node` (File=, Type=, Cores=, Links=).
std::vector<Gpu> GpusFromConfig(const NodeConfig& node);

// One GPU per GPU the node's configuration declares. An emulated GPU has no device file,
// unless gres.conf's File= names a character device that exists (a test's mknod): that one
// is isolated like a real GPU's.
std::vector<Gpu> EmulatedGpus(const NodeConfig& node);

// The GRES type of a GPU that NVML found, as Slurm's AutoDetect=nvml names it: NVML's name in
// lower case with spaces as underscores ("NVIDIA H100 80GB HBM3" -> "nvidia_h100_80gb_hbm3").
std::string GpuTypeFromName(std::string_view name);

// The type a GPU found as `found` gets on `node`: the first GPU type the node's configuration
// declares (slurm.conf's Gres=, gres.conf's Type=) that is a substring of it ("h100" for
// "nvidia_h100_80gb_hbm3"), as Slurm matches them; else `found` itself.
std::string ConfiguredTypeFor(const NodeConfig& node, std::string_view found);

}  // namespace drover::agent
