// NVML (libnvidia-ml) loaded with dlopen, for GPU discovery (gpu.cc) and the health probes
// (gpu_health.cc). NVML's types and functions are declared here as NVML's documentation gives
// them, so the build needs nothing from NVIDIA.
#pragma once

#include <memory>
#include <string>

#include "common/result.h"

namespace drover::agent::nvml {

using Return = int;  // nvmlReturn_t
constexpr Return kSuccess = 0;
constexpr Return kErrorInsufficientSize = 7;
constexpr Return kErrorTimeout = 10;  // NVML_ERROR_TIMEOUT: no event within the wait
constexpr Return kErrorGpuIsLost = 15;
struct DeviceSt;
using Device = DeviceSt*;  // nvmlDevice_t
struct EventSetSt;
using EventSet = EventSetSt*;  // nvmlEventSet_t
struct Memory {
  unsigned long long total, free, used;
};
struct Utilization {  // nvmlUtilization_t: percent of the last sample period
  unsigned gpu, memory;
};
struct PciInfo {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
struct EventData {
  Device device;
  unsigned long long eventType, eventData;
  unsigned int gpuInstanceId, computeInstanceId;
};
// nvmlDeviceAttributes_t: what a MIG device is cut from its GPU.
struct DeviceAttributes {
  unsigned multiprocessorCount, sharedCopyEngineCount, sharedDecoderCount, sharedEncoderCount,
      sharedJpegCount, sharedOfaCount, gpuInstanceSliceCount, computeInstanceSliceCount;
  unsigned long long memorySizeMB;
};
constexpr unsigned kMigEnabled = 1;                         // NVML_DEVICE_MIG_ENABLE
constexpr unsigned kNameSize = 96;                          // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kUuidSize = 80;                          // NVML_DEVICE_UUID_V2_BUFFER_SIZE
constexpr unsigned kMaxLinks = 18;                          // NVML_NVLINK_MAX_LINKS (Hopper)
constexpr int kFeatureEnabled = 1;                          // NVML_FEATURE_ENABLED
constexpr unsigned long long kEventXidCriticalError = 0x8;  // nvmlEventTypeXidCriticalError
constexpr int kMemoryErrorUncorrected = 1;                  // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
constexpr int kVolatileEcc = 0, kAggregateEcc = 1;          // nvmlEccCounterType_t
constexpr int kRetiredDoubleBit = 1;  // NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR
constexpr int kTemperatureGpu = 0;    // NVML_TEMPERATURE_GPU

// The functions; the optional ones are null when the library lacks them (an older driver).
struct Api {
  Return (*init)();
  Return (*shutdown)();
  const char* (*error_string)(Return);  // optional
  Return (*get_count)(unsigned*);
  Return (*get_handle)(unsigned, Device*);
  Return (*get_name)(Device, char*, unsigned);
  Return (*get_uuid)(Device, char*, unsigned);
  Return (*get_memory)(Device, Memory*);
  Return (*get_minor)(Device, unsigned*);
  Return (*get_cpu_affinity)(Device, unsigned, unsigned long*);  // optional, and below
  Return (*get_pci)(Device, PciInfo*);
  Return (*get_link_state)(Device, unsigned, int*);
  Return (*get_link_remote_pci)(Device, unsigned, PciInfo*);
  Return (*get_total_ecc)(Device, int, int, unsigned long long*);
  Return (*get_retired_pages)(Device, int, unsigned*, unsigned long long*);
  Return (*get_retired_pending)(Device, int*);
  Return (*get_remapped_rows)(Device, unsigned*, unsigned*, unsigned*, unsigned*);
  Return (*get_throttle_reasons)(Device, unsigned long long*);
  Return (*get_temperature)(Device, int, unsigned*);
  Return (*get_utilization)(Device, Utilization*);  // optional, and below
  Return (*get_power)(Device, unsigned*);           // milliwatts
  Return (*event_set_create)(EventSet*);
  Return (*register_events)(Device, unsigned long long, EventSet);
  Return (*event_set_wait)(EventSet, EventData*, unsigned);
  Return (*event_set_free)(EventSet);
  // MIG (optional): a GPU's mode, its MIG devices, and theirs slices and instance ids.
  Return (*get_mig_mode)(Device, unsigned*, unsigned*);
  Return (*get_max_mig_count)(Device, unsigned*);
  Return (*get_mig_handle)(Device, unsigned, Device*);
  Return (*get_attributes)(Device, DeviceAttributes*);
  Return (*get_gpu_instance_id)(Device, unsigned*);
  Return (*get_compute_instance_id)(Device, unsigned*);

  // "Driver Not Loaded (9)".
  std::string Describe(Return code) const;
};

// The library loaded and initialised; shut down and closed when destroyed.
class Library {
 public:
  // Errors: "NVML not available: dlopen libnvidia-ml.so.1: <dlerror>", "NVML not usable: ... has
  // no nvmlInit_v2 (driver too old?)", "NVML: nvmlInit_v2 failed: Driver Not Loaded (9) (is
  // the NVIDIA driver loaded? try nvidia-smi)".
  static Result<std::unique_ptr<Library>> Open(const std::string& path);
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  const Api& api() const { return api_; }

 private:
  Library() = default;
  void* handle_ = nullptr;
  Api api_{};
};

}  // namespace drover::agent::nvml
