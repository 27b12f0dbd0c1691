// GPU discovery through NVML (nvml_api.h), gres.conf or emulation; see gpu.h.
#include "agent/host/gpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <tuple>

#include "agent/host/nvml_api.h"
#include "common/text.h"

namespace drover::agent {
namespace {

constexpr uint32_t kNvidiaMajor = 195;  // /dev/nvidiaN
constexpr unsigned kCpuMaskWords = 64;  // 4096 CPUs in unsigned longs

using nvml::Api;
using nvml::Device;

using PciAddress = std::tuple<unsigned, unsigned, unsigned>;  // domain, bus, device

std::vector<int> AffinityCores(const Api& api, Device device,
                               const std::vector<std::vector<int>>& core_cpus) {
  if (!api.get_cpu_affinity) return {};
  unsigned long mask[kCpuMaskWords] = {};
  if (api.get_cpu_affinity(device, kCpuMaskWords, mask) != nvml::kSuccess) return {};
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
void FillLinks(const Api& api, const std::vector<Device>& devices, std::vector<Gpu>& gpus) {
  if (!api.get_pci || !api.get_link_state || !api.get_link_remote_pci) return;
  std::map<PciAddress, size_t> gpu_at;
  for (size_t i = 0; i < devices.size(); ++i) {
    nvml::PciInfo pci{};
    if (api.get_pci(devices[i], &pci) != nvml::kSuccess) return;
    gpu_at[{pci.domain, pci.bus, pci.device}] = i;
  }
  std::vector<int> switch_links(devices.size(), 0);
  for (size_t i = 0; i < devices.size(); ++i) {
    gpus[i].links.assign(devices.size(), 0);
    gpus[i].links[i] = -1;
    for (unsigned link = 0; link < nvml::kMaxLinks; ++link) {
      int state = 0;
      nvml::PciInfo remote{};
      if (api.get_link_state(devices[i], link, &state) != nvml::kSuccess ||
          state != nvml::kFeatureEnabled ||
          api.get_link_remote_pci(devices[i], link, &remote) != nvml::kSuccess)
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

Result<Gpu> ReadDevice(const Api& api, unsigned index, Device device,
                       const GpuDiscoveryOptions& options) {
  auto fail = [&](const char* call, nvml::Return code) {
    return MakeError(
        fmt::format("NVML: {} failed for GPU {}: {}", call, index, api.Describe(code)));
  };
  Gpu gpu;
  gpu.index = static_cast<int>(index);
  char name[nvml::kNameSize] = {};
  if (nvml::Return code = api.get_name(device, name, sizeof name); code != nvml::kSuccess)
    return fail("nvmlDeviceGetName", code);
  gpu.name = name;
  gpu.type = GpuTypeFromName(gpu.name);
  char uuid[nvml::kUuidSize] = {};
  if (nvml::Return code = api.get_uuid(device, uuid, sizeof uuid); code != nvml::kSuccess)
    return fail("nvmlDeviceGetUUID", code);
  gpu.uuid = uuid;
  nvml::Memory memory{};
  if (nvml::Return code = api.get_memory(device, &memory); code != nvml::kSuccess)
    return fail("nvmlDeviceGetMemoryInfo", code);
  gpu.memory_mb = memory.total >> 20;
  unsigned minor = 0;
  if (nvml::Return code = api.get_minor(device, &minor); code != nvml::kSuccess)
    return fail("nvmlDeviceGetMinorNumber", code);
  gpu.minor = static_cast<int>(minor);
  gpu.device_path = fmt::format("/dev/nvidia{}", minor);
  gpu.device = DeviceNumber{kNvidiaMajor, minor};
  gpu.cores = AffinityCores(api, device, options.core_cpus);
  nvml::PciInfo pci{};
  if (api.get_pci && api.get_pci(device, &pci) == nvml::kSuccess) gpu.pci_bus_id = pci.busId;
  return gpu;
}

// The driver's caps minors of MIG instances ("gpu0/gi1/access 12", "gpu0/gi1/ci0/access 13")
// and the nvidia-caps major; empty when the driver lists none (no MIG, or not a real node).
struct MigCaps {
  std::map<std::string, uint32_t> minors;
  std::optional<uint32_t> major;
};

MigCaps ReadMigCaps(const GpuDiscoveryOptions& options) {
  MigCaps caps;
  std::ifstream minors(options.mig_minors_path);
  std::string key, number;
  while (minors >> key >> number)
    if (auto minor = ParseUint64(number); minor && *minor <= UINT32_MAX)
      caps.minors[key] = static_cast<uint32_t>(*minor);
  std::ifstream devices(options.proc_devices_path);
  std::string line;
  while (std::getline(devices, line)) {
    std::istringstream fields(line);
    std::string major, name;
    if (fields >> major >> name && name == "nvidia-caps")
      if (auto value = ParseUint64(major); value && *value <= UINT32_MAX)
        caps.major = static_cast<uint32_t>(*value);
  }
  return caps;
}

// The MIG devices of `parent` (NVML's GPU `index`, read already), as GPUs of a type named as
// Slurm's AutoDetect=nvml names them: the GPU's type, then "_<slices>g.<memory>gb"
// ("nvidia_h100_80gb_hbm3_1g.10gb"). Empty when MIG is off (or NVML cannot tell).
std::vector<Gpu> ReadMigDevices(const Api& api, Device device, const Gpu& parent, unsigned index,
                                const MigCaps& caps) {
  std::vector<Gpu> found;
  unsigned current = 0, pending = 0, most = 0;
  if (!api.get_mig_mode || !api.get_max_mig_count || !api.get_mig_handle || !api.get_attributes ||
      api.get_mig_mode(device, &current, &pending) != nvml::kSuccess ||
      current != nvml::kMigEnabled || api.get_max_mig_count(device, &most) != nvml::kSuccess)
    return found;
  for (unsigned m = 0; m < most && m < 64; ++m) {
    Device mig = nullptr;
    nvml::DeviceAttributes attributes{};
    char uuid[nvml::kUuidSize] = {};
    if (api.get_mig_handle(device, m, &mig) != nvml::kSuccess ||
        api.get_attributes(mig, &attributes) != nvml::kSuccess ||
        api.get_uuid(mig, uuid, sizeof uuid) != nvml::kSuccess)
      continue;  // an empty slot
    Gpu gpu = parent;
    gpu.mig = true;
    gpu.uuid = uuid;
    gpu.parent_uuid = parent.uuid;
    gpu.links.clear();
    gpu.memory_mb = attributes.memorySizeMB;
    gpu.type = fmt::format("{}_{}g.{}gb", parent.type, attributes.gpuInstanceSliceCount,
                           (attributes.memorySizeMB + 1023) / 1024);
    char name[nvml::kNameSize] = {};
    if (api.get_name(mig, name, sizeof name) == nvml::kSuccess) gpu.name = name;
    unsigned gi = 0, ci = 0;
    if (caps.major && api.get_gpu_instance_id && api.get_compute_instance_id &&
        api.get_gpu_instance_id(mig, &gi) == nvml::kSuccess &&
        api.get_compute_instance_id(mig, &ci) == nvml::kSuccess) {
      for (const std::string& key : {fmt::format("gpu{}/gi{}/access", parent.minor, gi),
                                     fmt::format("gpu{}/gi{}/ci{}/access", parent.minor, gi, ci)})
        if (auto it = caps.minors.find(key); it != caps.minors.end())
          gpu.mig_caps.push_back(DeviceNumber{*caps.major, it->second});
    }
    gpu.nvml_index = static_cast<int>(index);
    found.push_back(std::move(gpu));
  }
  return found;
}

Result<std::vector<Gpu>> ReadDevices(const Api& api, const GpuDiscoveryOptions& options) {
  unsigned count = 0;
  if (nvml::Return code = api.get_count(&count); code != nvml::kSuccess)
    return MakeError(fmt::format("NVML: nvmlDeviceGetCount_v2 failed: {}", api.Describe(code)));
  std::vector<Device> devices;
  std::vector<Gpu> gpus;
  for (unsigned index = 0; index < count; ++index) {
    Device device = nullptr;
    if (nvml::Return code = api.get_handle(index, &device); code != nvml::kSuccess)
      return MakeError(fmt::format("NVML: nvmlDeviceGetHandleByIndex_v2 failed for GPU {}: {}",
                                   index, api.Describe(code)));
    auto gpu = ReadDevice(api, index, device, options);
    if (!gpu) return std::move(gpu).take_error();
    gpu->nvml_index = static_cast<int>(index);
    devices.push_back(device);
    gpus.push_back(std::move(*gpu));
  }
  FillLinks(api, devices, gpus);
  // A GPU in MIG mode is its MIG devices, numbered on from the GPUs before them, as Slurm's
  // AutoDetect=nvml numbers them; NVLinks then join none of them (the links are the GPUs').
  MigCaps caps = ReadMigCaps(options);
  std::vector<Gpu> expanded;
  bool any_mig = false;
  for (size_t i = 0; i < gpus.size(); ++i) {
    std::vector<Gpu> migs =
        ReadMigDevices(api, devices[i], gpus[i], static_cast<unsigned>(i), caps);
    any_mig = any_mig || !migs.empty();
    if (migs.empty()) migs.push_back(std::move(gpus[i]));
    for (Gpu& gpu : migs) {
      gpu.index = static_cast<int>(expanded.size());
      expanded.push_back(std::move(gpu));
    }
  }
  if (any_mig)
    for (Gpu& gpu : expanded) gpu.links.clear();
  return expanded;
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
    // gres.conf's type for the GPU it describes; with AutoDetect and no File= the configured
    // GPUs are only counts by type, so NVML's name picks among the configured types.
    bool described =
        device && !device->type.empty() && (!device->file.empty() || !node.gpus_autodetect);
    gpu.type = described ? device->type : ConfiguredTypeFor(node, gpu.type);
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
  auto library = nvml::Library::Open(options.nvml_library);
  if (!library) return std::move(library).take_error();
  return ReadDevices((*library)->api(), options);
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
  std::replace(type.begin(), type.end(), ' ', '_');
  return type;
}

std::string ConfiguredTypeFor(const NodeConfig& node, std::string_view found) {
  std::vector<std::string> types;
  for (const GresSpec& gres : node.gres)
    if (gres.name == "gpu" && !gres.type.empty()) types.push_back(ToLower(gres.type));
  for (const GpuDevice& device : node.gpus)
    if (!device.type.empty()) types.push_back(ToLower(device.type));
  // The longest that is part of NVML's name: "1g.10gb" over "h100" for a MIG device of an H100.
  const std::string* best = nullptr;
  for (const std::string& type : types)
    if (found.find(type) != std::string_view::npos && (!best || type.size() > best->size()))
      best = &type;
  return best ? *best : std::string(found);
}

}  // namespace drover::agent
