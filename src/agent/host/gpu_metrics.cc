// See gpu_metrics.h.
#include "agent/host/gpu_metrics.h"

#include <algorithm>

namespace drover::agent {

Result<std::unique_ptr<GpuMetricsReader>> GpuMetricsReader::Open(const std::string& library,
                                                                 const std::vector<Gpu>& gpus) {
  auto opened = nvml::Library::Open(library);
  if (!opened) return std::move(opened).take_error();
  std::unique_ptr<GpuMetricsReader> reader(new GpuMetricsReader());
  reader->nvml_ = std::move(*opened);
  for (const Gpu& gpu : gpus) {
    if (gpu.uuid.empty()) continue;
    int nvml_index = gpu.nvml_index >= 0 ? gpu.nvml_index : gpu.index;
    if (std::any_of(reader->gpus_.begin(), reader->gpus_.end(), [&](const Watched& w) {
          return w.nvml_index == static_cast<unsigned>(nvml_index);
        }))
      continue;
    reader->gpus_.push_back({gpu.mig ? nvml_index : gpu.index, gpu.mig ? gpu.parent_uuid : gpu.uuid,
                             gpu.name, static_cast<unsigned>(nvml_index)});
  }
  std::sort(reader->gpus_.begin(), reader->gpus_.end(),
            [](const Watched& a, const Watched& b) { return a.index < b.index; });
  return reader;
}

std::vector<GpuSample> GpuMetricsReader::Read() {
  MutexLock lock(mutex_);
  const nvml::Api& api = nvml_->api();
  std::vector<GpuSample> samples;
  for (const Watched& watched : gpus_) {
    GpuSample& sample = samples.emplace_back();
    sample.index = watched.index;
    sample.uuid = watched.uuid;
    sample.name = watched.name;
    nvml::Device device = nullptr;
    if (api.get_handle(watched.nvml_index, &device) != nvml::kSuccess) {
      sample.lost = true;
      continue;
    }
    // Another GPU at this index (a GPU replaced or fallen off the bus): not this one's reading.
    char uuid[nvml::kUuidSize] = {};
    nvml::Return found = api.get_uuid(device, uuid, sizeof uuid);
    if (found != nvml::kSuccess || watched.uuid != uuid) {
      sample.lost = true;
      continue;
    }
    nvml::Utilization rates{};
    if (api.get_utilization && api.get_utilization(device, &rates) == nvml::kSuccess) {
      sample.utilization = rates.gpu / 100.0;
      sample.memory_utilization = rates.memory / 100.0;
    }
    nvml::Memory memory{};
    if (api.get_memory(device, &memory) == nvml::kSuccess) {
      sample.memory_used_bytes = memory.used;
      sample.memory_total_bytes = memory.total;
    }
    unsigned celsius = 0;
    if (api.get_temperature &&
        api.get_temperature(device, nvml::kTemperatureGpu, &celsius) == nvml::kSuccess)
      sample.temperature_c = celsius;
    unsigned milliwatts = 0;
    if (api.get_power && api.get_power(device, &milliwatts) == nvml::kSuccess)
      sample.power_watts = milliwatts / 1000.0;
    unsigned long long count = 0;
    if (api.get_total_ecc && api.get_total_ecc(device, nvml::kMemoryErrorUncorrected,
                                               nvml::kVolatileEcc, &count) == nvml::kSuccess)
      sample.ecc_uncorrected_volatile = count;
    if (api.get_total_ecc && api.get_total_ecc(device, nvml::kMemoryErrorUncorrected,
                                               nvml::kAggregateEcc, &count) == nvml::kSuccess)
      sample.ecc_uncorrected_aggregate = count;
  }
  return samples;
}

}  // namespace drover::agent
