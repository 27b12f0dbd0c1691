// NVML loaded with dlopen; see nvml_api.h.
#include "agent/host/nvml_api.h"

#include <dlfcn.h>
#include <fmt/format.h>

namespace drover::agent::nvml {
namespace {

template <typename Function>
void Bind(void* library, const char* symbol, Function& function, std::string& missing) {
  function = reinterpret_cast<Function>(dlsym(library, symbol));
  if (!function && missing.empty()) missing = symbol;
}

}  // namespace

std::string Api::Describe(Return code) const {
  const char* text = error_string ? error_string(code) : nullptr;
  return fmt::format("{} ({})", text ? text : "error", code);
}

Result<std::unique_ptr<Library>> Library::Open(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* reason = dlerror();
    return MakeError(
        fmt::format("NVML not available: dlopen {}: {}", path, reason ? reason : "unknown error"));
  }
  std::unique_ptr<Library> library(new Library());
  library->handle_ = handle;
  Api& api = library->api_;
  std::string missing;
  Bind(handle, "nvmlInit_v2", api.init, missing);
  Bind(handle, "nvmlShutdown", api.shutdown, missing);
  Bind(handle, "nvmlDeviceGetCount_v2", api.get_count, missing);
  Bind(handle, "nvmlDeviceGetHandleByIndex_v2", api.get_handle, missing);
  Bind(handle, "nvmlDeviceGetName", api.get_name, missing);
  Bind(handle, "nvmlDeviceGetUUID", api.get_uuid, missing);
  Bind(handle, "nvmlDeviceGetMemoryInfo", api.get_memory, missing);
  Bind(handle, "nvmlDeviceGetMinorNumber", api.get_minor, missing);
  if (!missing.empty()) {
    api.shutdown = nullptr;  // never initialised: nothing to shut down
    return MakeError(fmt::format("NVML not usable: {} has no {} (driver too old?)", path, missing));
  }
  std::string optional;
  Bind(handle, "nvmlErrorString", api.error_string, optional);
  Bind(handle, "nvmlDeviceGetCpuAffinity", api.get_cpu_affinity, optional);
  Bind(handle, "nvmlDeviceGetPciInfo_v3", api.get_pci, optional);
  Bind(handle, "nvmlDeviceGetNvLinkState", api.get_link_state, optional);
  Bind(handle, "nvmlDeviceGetNvLinkRemotePciInfo_v2", api.get_link_remote_pci, optional);
  Bind(handle, "nvmlDeviceGetTotalEccErrors", api.get_total_ecc, optional);
  Bind(handle, "nvmlDeviceGetRetiredPages", api.get_retired_pages, optional);
  Bind(handle, "nvmlDeviceGetRetiredPagesPendingStatus", api.get_retired_pending, optional);
  Bind(handle, "nvmlDeviceGetRemappedRows", api.get_remapped_rows, optional);
  Bind(handle, "nvmlDeviceGetCurrentClocksThrottleReasons", api.get_throttle_reasons, optional);
  Bind(handle, "nvmlDeviceGetTemperature", api.get_temperature, optional);
  Bind(handle, "nvmlDeviceGetUtilizationRates", api.get_utilization, optional);
  Bind(handle, "nvmlDeviceGetPowerUsage", api.get_power, optional);
  Bind(handle, "nvmlEventSetCreate", api.event_set_create, optional);
  Bind(handle, "nvmlDeviceRegisterEvents", api.register_events, optional);
  Bind(handle, "nvmlEventSetWait_v2", api.event_set_wait, optional);
  Bind(handle, "nvmlEventSetFree", api.event_set_free, optional);
  Bind(handle, "nvmlDeviceGetMigMode", api.get_mig_mode, optional);
  Bind(handle, "nvmlDeviceGetMaxMigDeviceCount", api.get_max_mig_count, optional);
  Bind(handle, "nvmlDeviceGetMigDeviceHandleByIndex", api.get_mig_handle, optional);
  Bind(handle, "nvmlDeviceGetAttributes_v2", api.get_attributes, optional);
  Bind(handle, "nvmlDeviceGetGpuInstanceId", api.get_gpu_instance_id, optional);
  Bind(handle, "nvmlDeviceGetComputeInstanceId", api.get_compute_instance_id, optional);
  if (Return code = api.init(); code != kSuccess) {
    api.shutdown = nullptr;
    return MakeError(
        fmt::format("NVML: nvmlInit_v2 failed: {} (is the NVIDIA driver loaded? try nvidia-smi)",
                    api.Describe(code)));
  }
  return library;
}

Library::~Library() {
  if (api_.shutdown) api_.shutdown();
  if (handle_) dlclose(handle_);
}

}  // namespace drover::agent::nvml
