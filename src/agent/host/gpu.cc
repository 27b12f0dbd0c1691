// GPU discovery through NVML, gres.conf or emulation; see gpu.h. NVML's types and functions
// are declared here as NVML's documentation gives them, so the build needs no NVIDIA headers.
#include "agent/host/gpu.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>

#include "common/text.h"

namespace drover::agent {
namespace {

constexpr uint32_t kNvidiaMajor = 195;  // /dev/nvidiaN

// ---- NVML's ABI (nvml.h), the few pieces used here --------------------------------------
using nvmlReturn_t = int;
constexpr nvmlReturn_t kNvmlSuccess = 0;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
constexpr unsigned kNvmlNameSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kNvmlUuidSize = 80;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE
constexpr unsigned kNvmlMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS (Hopper)
constexpr unsigned kCpuMaskWords = 64;  // 4096 CPUs in unsigned longs
constexpr int kNvmlFeatureEnabled = 1;  // NVML_FEATURE_ENABLED

struct NvmlApi {
  nvmlReturn_t (*init)();
  nvmlReturn_t (*shutdown)();
  const char* (*error_string)(nvmlReturn_t);
  nvmlReturn_t (*get_count)(unsigned*);
  nvmlReturn_t (*get_handle)(unsigned, nvmlDevice_t*);
  nvmlReturn_t (*get_name)(nvmlDevice_t, char*, unsigned);
  nvmlReturn_t (*get_uuid)(nvmlDevice_t, char*, unsigned);
  nvmlReturn_t (*get_memory)(nvmlDevice_t, nvmlMemory_t*);
  nvmlReturn_t (*get_minor)(nvmlDevice_t, unsigned*);
  nvmlReturn_t (*get_cpu_affinity)(nvmlDevice_t, unsigned, unsigned long*);     // optional
  nvmlReturn_t (*get_pci)(nvmlDevice_t, nvmlPciInfo_t*);                        // optional
  nvmlReturn_t (*get_link_state)(nvmlDevice_t, unsigned, int*);                 // optional
  nvmlReturn_t (*get_link_remote_pci)(nvmlDevice_t, unsigned, nvmlPciInfo_t*);  // optional

  std::string Describe(nvmlReturn_t code) const {
    const char* text = error_string ? error_string(code) : nullptr;
    return fmt::format("{} ({})", text ? text : "error", code);
  }
};

struct LibraryCloser {
  void operator()(void* handle) const { dlclose(handle); }
};
using Library = std::unique_ptr<void, LibraryCloser>;

template <typename Function>
void Bind(void* library, const char* symbol, Function& function, std::string& missing) {
  function = reinterpret_cast<Function>(dlsym(library, symbol));
  if (!function && missing.empty()) missing = symbol;
}

Result<NvmlApi> BindNvml(void* library, const std::string& path) {
  NvmlApi api{};
  std::string missing;
  Bind(library, "nvmlInit_v2", api.init, missing);
  Bind(library, "nvmlShutdown", api.shutdown, missing);
  Bind(library, "nvmlDeviceGetCount_v2", api.get_count, missing);
  Bind(library, "nvmlDeviceGetHandleByIndex_v2", api.get_handle, missing);
  Bind(library, "nvmlDeviceGetName", api.get_name, missing);
  Bind(library, "nvmlDeviceGetUUID", api.get_uuid, missing);
  Bind(library, "nvmlDeviceGetMemoryInfo", api.get_memory, missing);
  Bind(library, "nvmlDeviceGetMinorNumber", api.get_minor, missing);
  if (!missing.empty())
    return MakeError(fmt::format("NVML not usable: {} has no {} (driver too old?)", path, missing));
  std::string optional;
  Bind(library, "nvmlErrorString", api.error_string, optional);
  Bind(library, "nvmlDeviceGetCpuAffinity", api.get_cpu_affinity, optional);
  Bind(library, "nvmlDeviceGetPciInfo_v3", api.get_pci, optional);
  Bind(library, "nvmlDeviceGetNvLinkState", api.get_link_state, optional);
  Bind(library, "nvmlDeviceGetNvLinkRemotePciInfo_v2", api.get_link_remote_pci, optional);
  return api;
}

using PciAddress = std::tuple<unsigned, unsigned, unsigned>;  // domain, bus, device

std::vector<int> AffinityCores(const NvmlApi& api, nvmlDevice_t device,
                               const std::vector<std::vector<int>>& core_cpus) {
  if (!api.get_cpu_affinity) return {};
  unsigned long mask[kCpuMaskWords] = {};
  if (api.get_cpu_affinity(device, kCpuMaskWords, mask) != kNvmlSuccess) return {};
  constexpr int kBits = 8 * sizeof(unsigned long);
  std::vector<int> cpus;
  for (unsigned word = 0; word < kCpuMaskWords; ++word)
    for (int bit = 0; bit < kBits; ++bit)
      if (mask[word] >> bit & 1UL) cpus.push_back(static_cast<int>(word) * kBits + bit);
  if (core_cpus.empty()) return cpus;
  std::vector<int> cores;
  for (size_t core = 0; core < core_cpus.size(); ++core)
    for (int cpu : core_cpus[core])
      if (std::binary_search(cpus.begin(), cpus.end(), cpu)) {
        cores.push_back(static_cast<int>(core));
        break;
      }
  return cores;
}

// Fills every GPU's `links` from its active NVLinks' remote PCI addresses. Links that end on
// something other than a GPU (an NVSwitch) also join the GPU to every other GPU with switch
// links: as many links as the lesser of the two has.
void FillLinks(const NvmlApi& api, const std::vector<nvmlDevice_t>& devices,
               std::vector<Gpu>& gpus) {
  if (!api.get_pci || !api.get_link_state || !api.get_link_remote_pci) return;
  std::map<PciAddress, size_t> gpu_at;
  for (size_t i = 0; i < devices.size(); ++i) {
    nvmlPciInfo_t pci{};
    if (api.get_pci(devices[i], &pci) != kNvmlSuccess) return;
    gpu_at[{pci.domain, pci.bus, pci.device}] = i;
  }
  std::vector<int> switch_links(devices.size(), 0);
  for (size_t i = 0; i < devices.size(); ++i) {
    gpus[i].links.assign(devices.size(), 0);
    gpus[i].links[i] = -1;
    for (unsigned link = 0; link < kNvmlMaxLinks; ++link) {
      int state = 0;
      nvmlPciInfo_t remote{};
      if (api.get_link_state(devices[i], link, &state) != kNvmlSuccess ||
          state != kNvmlFeatureEnabled ||
          api.get_link_remote_pci(devices[i], link, &remote) != kNvmlSuccess)
        continue;
      auto peer = gpu_at.find({remote.domain, remote.bus, remote.device});
      if (peer == gpu_at.end()) {
        ++switch_links[i];
      } else if (peer->second != i) {
        ++gpus[i].links[peer->second];
      }
    }
  }
  for (size_t i = 0; i < devices.size(); ++i)
    for (size_t j = 0; j < devices.size(); ++j)
      if (i != j) gpus[i].links[j] += std::min(switch_links[i], switch_links[j]);
}

Result<Gpu> ReadDevice(const NvmlApi& api, unsigned index, nvmlDevice_t device,
                       const GpuDiscoveryOptions& options) {
  auto fail = [&](const char* call, nvmlReturn_t code) {
    return MakeError(
        fmt::format("NVML: {} failed for GPU {}: {}", call, index, api.Describe(code)));
  };
  Gpu gpu;
  gpu.index = static_cast<int>(index);
  char name[kNvmlNameSize] = {};
  if (nvmlReturn_t code = api.get_name(device, name, sizeof name); code != kNvmlSuccess)
    return fail("nvmlDeviceGetName", code);
  gpu.name = name;
  gpu.type = GpuTypeFromName(gpu.name);
  char uuid[kNvmlUuidSize] = {};
  if (nvmlReturn_t code = api.get_uuid(device, uuid, sizeof uuid); code != kNvmlSuccess)
    return fail("nvmlDeviceGetUUID", code);
  gpu.uuid = uuid;
  nvmlMemory_t memory{};
  if (nvmlReturn_t code = api.get_memory(device, &memory); code != kNvmlSuccess)
    return fail("nvmlDeviceGetMemoryInfo", code);
  gpu.memory_mb = memory.total >> 20;
  unsigned minor = 0;
  if (nvmlReturn_t code = api.get_minor(device, &minor); code != kNvmlSuccess)
    return fail("nvmlDeviceGetMinorNumber", code);
  gpu.minor = static_cast<int>(minor);
  gpu.device_path = fmt::format("/dev/nvidia{}", minor);
  gpu.device = DeviceNumber{kNvidiaMajor, minor};
  gpu.cores = AffinityCores(api, device, options.core_cpus);
  return gpu;
}

Result<std::vector<Gpu>> ReadDevices(const NvmlApi& api, const GpuDiscoveryOptions& options) {
  unsigned count = 0;
  if (nvmlReturn_t code = api.get_count(&count); code != kNvmlSuccess)
    return MakeError(fmt::format("NVML: nvmlDeviceGetCount_v2 failed: {}", api.Describe(code)));
  std::vector<nvmlDevice_t> devices;
  std::vector<Gpu> gpus;
  for (unsigned index = 0; index < count; ++index) {
    nvmlDevice_t device = nullptr;
    if (nvmlReturn_t code = api.get_handle(index, &device); code != kNvmlSuccess)
      return MakeError(fmt::format("NVML: nvmlDeviceGetHandleByIndex_v2 failed for GPU {}: {}",
                                   index, api.Describe(code)));
    auto gpu = ReadDevice(api, index, device, options);
    if (!gpu) return std::move(gpu).take_error();
    devices.push_back(device);
    gpus.push_back(std::move(*gpu));
  }
  FillLinks(api, devices, gpus);
  return gpus;
}

// The configured GPU that describes NVML's `gpu`: by device file when gres.conf names files,
// else by position.
const GpuDevice* ConfiguredFor(const NodeConfig& node, const Gpu& gpu) {
  for (const GpuDevice& device : node.gpus)
    if (device.file.empty() ? device.index == gpu.index : device.index == gpu.minor) return &device;
  return nullptr;
}

std::string CheckAgainstConfig(const NodeConfig& node, std::vector<Gpu>& gpus) {
  for (Gpu& gpu : gpus) {
    const GpuDevice* device = ConfiguredFor(node, gpu);
    if (device && !device->type.empty()) gpu.type = device->type;
  }
  if (node.gpus.empty() || node.gpus.size() == gpus.size()) return "";
  return fmt::format(
      "NVML found {} GPU{} but the configuration of node {} declares {}; "
      "the node reports what NVML found",
      gpus.size(), gpus.size() == 1 ? "" : "s", node.name, node.gpus.size());
}

Gpu FromDevice(const GpuDevice& device) {
  Gpu gpu;
  gpu.index = device.index;
  gpu.type = device.type;
  gpu.cores = device.cores;
  gpu.links = device.links;
  return gpu;
}

}  // namespace

const char* GpuSourceName(GpuSource source) {
  switch (source) {
    case GpuSource::kNvml:
      return "nvml";
    case GpuSource::kGresConf:
      return "gres.conf";
    case GpuSource::kEmulated:
      return "emulated";
    case GpuSource::kNone:
      break;
  }
  return "none";
}

Result<std::vector<Gpu>> DiscoverNvmlGpus(const GpuDiscoveryOptions& options) {
  const std::string& path = options.nvml_library;
  Library library(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!library) {
    const char* reason = dlerror();
    return MakeError(
        fmt::format("NVML not available: dlopen {}: {}", path, reason ? reason : "unknown error"));
  }
  auto api = BindNvml(library.get(), path);
  if (!api) return std::move(api).take_error();
  if (nvmlReturn_t code = api->init(); code != kNvmlSuccess)
    return MakeError(
        fmt::format("NVML: nvmlInit_v2 failed: {} (is the NVIDIA driver loaded? "
                    "try nvidia-smi)",
                    api->Describe(code)));
  auto gpus = ReadDevices(*api, options);
  api->shutdown();
  return gpus;
}

std::vector<Gpu> GpusFromConfig(const NodeConfig& node) {
  std::vector<Gpu> gpus;
  for (const GpuDevice& device : node.gpus) {
    Gpu gpu = FromDevice(device);
    if (!device.file.empty()) {
      gpu.device_path = device.file;
      gpu.minor = device.index;  // gres.conf's index is the device file's number
      // The file's own number; NVIDIA's when it cannot be read (the driver not loaded yet).
      auto number = CharDeviceAt(device.file);
      gpu.device =
          number ? *number : DeviceNumber{kNvidiaMajor, static_cast<uint32_t>(device.index)};
    }
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

std::vector<Gpu> EmulatedGpus(const NodeConfig& node) {
  std::vector<Gpu> gpus;
  for (const GpuDevice& device : node.gpus) {
    Gpu gpu = FromDevice(device);
    if (auto number = device.file.empty() ? Result<DeviceNumber>(MakeError("no file"))
                                          : CharDeviceAt(device.file)) {
      gpu.device_path = device.file;
      gpu.device = *number;
    }
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

GpuDiscovery DiscoverGpus(const NodeConfig& node, const GpuDiscoveryOptions& options) {
  GpuDiscovery found;
  if (options.emulated) {
    found.gpus = EmulatedGpus(node);
    found.source = found.gpus.empty() ? GpuSource::kNone : GpuSource::kEmulated;
    return found;
  }
  auto nvml = DiscoverNvmlGpus(options);
  if (nvml && !nvml->empty()) {
    found.source = GpuSource::kNvml;
    found.note = CheckAgainstConfig(node, *nvml);
    found.gpus = std::move(*nvml);
    return found;
  }
  found.note = nvml ? "NVML found no GPUs" : nvml.error();
  if (node.gpus_autodetect) found.note += " (gres.conf asks for AutoDetect=nvml)";
  found.gpus = GpusFromConfig(node);
  found.source = found.gpus.empty() ? GpuSource::kNone : GpuSource::kGresConf;
  size_t without_file = std::count_if(found.gpus.begin(), found.gpus.end(),
                                      [](const Gpu& gpu) { return gpu.device_path.empty(); });
  if (without_file > 0)
    found.note += fmt::format(
        "; {} of the node's {} configured GPUs have no File= in gres.conf, so their device "
        "files are unknown and jobs cannot be confined to them",
        without_file, found.gpus.size());
  return found;
}

std::string GpuTypeFromName(std::string_view name) {
  std::string type = ToLower(Trim(name));
  if (type.starts_with("nvidia ")) type.erase(0, 7);
  std::replace(type.begin(), type.end(), ' ', '_');
  return type;
}

}  // namespace drover::agent
