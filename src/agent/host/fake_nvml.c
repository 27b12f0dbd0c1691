/* A stand-in for libnvidia-ml.so.1 that gpu_test.cc loads with dlopen: three GPUs with known
 * names, UUIDs, memory, minors, CPU affinity and NVLinks, so the NVML path is tested on hosts
 * without NVIDIA hardware. Built for tests only (fake_nvml.cmake); never installed.
 *
 *   GPU 0: minor 0, CPUs 0-1, 4 NVLinks to GPU 1, 1 to an NVSwitch
 *   GPU 1: minor 2, CPUs 2-3, 4 NVLinks to GPU 0
 *   GPU 2: minor 1, CPUs 0-3, 2 NVLinks to an NVSwitch
 *
 * FAKE_NVML_INIT_ERROR=<code> makes nvmlInit_v2 return that code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct {
  int index;
} FakeDevice;
typedef FakeDevice* nvmlDevice_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

enum { kSuccess = 0, kInvalidArgument = 2, kNotSupported = 3, kInsufficientSize = 7 };
enum { kGpus = 3, kSwitchBus = 0x80 };

static FakeDevice devices[kGpus] = {{0}, {1}, {2}};
static const unsigned minors[kGpus] = {0, 2, 1};
static const unsigned buses[kGpus] = {0x18, 0x2a, 0x3c};
static const unsigned long cpu_masks[kGpus] = {0x3, 0xc, 0xf};
static int initialized = 0;

/* The remote bus of each GPU's links; 0: the link is inactive. */
static unsigned RemoteBus(int gpu, unsigned link) {
  if (gpu == 0 && link < 4) return buses[1];
  if (gpu == 0 && link == 4) return kSwitchBus;
  if (gpu == 1 && link < 4) return buses[0];
  if (gpu == 2 && link < 2) return kSwitchBus;
  return 0;
}

static nvmlReturn_t Copy(char* out, unsigned length, const char* text) {
  if (length < strlen(text) + 1) return kInsufficientSize;
  strcpy(out, text);
  return kSuccess;
}

static int Valid(nvmlDevice_t device) {
  return initialized && device >= devices && device < devices + kGpus;
}

nvmlReturn_t nvmlInit_v2(void) {
  const char* error = getenv("FAKE_NVML_INIT_ERROR");
  if (error) return atoi(error);
  initialized = 1;
  return kSuccess;
}

nvmlReturn_t nvmlShutdown(void) {
  initialized = 0;
  return kSuccess;
}

const char* nvmlErrorString(nvmlReturn_t code) {
  return code == 9 ? "Driver Not Loaded" : "Unknown Error";
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* count) {
  if (!initialized) return 1;
  *count = kGpus;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* device) {
  if (!initialized || index >= kGpus) return kInvalidArgument;
  *device = &devices[index];
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned length) {
  if (!Valid(device)) return kInvalidArgument;
  return Copy(name, length, device->index == 2 ? "NVIDIA L40S" : "NVIDIA H100 80GB HBM3");
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned length) {
  char text[64];
  if (!Valid(device)) return kInvalidArgument;
  snprintf(text, sizeof text, "GPU-fake-%d", device->index);
  return Copy(uuid, length, text);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  if (!Valid(device)) return kInvalidArgument;
  memory->total = (device->index == 2 ? 46068ULL : 81559ULL) << 20;
  memory->free = memory->total;
  memory->used = 0;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned* minor) {
  if (!Valid(device)) return kInvalidArgument;
  *minor = minors[device->index];
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t device, unsigned size, unsigned long* mask) {
  if (!Valid(device) || size == 0) return kInvalidArgument;
  memset(mask, 0, size * sizeof *mask);
  mask[0] = cpu_masks[device->index];
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  if (!Valid(device)) return kInvalidArgument;
  memset(pci, 0, sizeof *pci);
  pci->bus = buses[device->index];
  snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", pci->bus);
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned link, int* active) {
  if (!Valid(device)) return kInvalidArgument;
  if (link >= 18) return kInvalidArgument;
  if (link >= 6) return kNotSupported;
  *active = RemoteBus(device->index, link) != 0;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned link,
                                                 nvmlPciInfo_t* pci) {
  if (!Valid(device) || RemoteBus(device->index, link) == 0) return kInvalidArgument;
  memset(pci, 0, sizeof *pci);
  pci->bus = RemoteBus(device->index, link);
  return kSuccess;
}
