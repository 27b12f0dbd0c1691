/* A stand-in for libnvidia-ml.so.1 that tests load with dlopen (gpu_test.cc, gpu_health_test.cc)
 * or hand to droverd with --nvml (the cluster tests): GPUs with known names, UUIDs, memory,
 * minors, PCI addresses, CPU affinity, NVLinks and health readings, so every NVML path runs on
 * hosts without NVIDIA hardware. Built for tests only (fake_nvml.cmake); never installed.
 *
 * Without FAKE_NVML_CONFIG it has three GPUs:
 *   GPU 0: minor 0, CPUs 0-1, 4 NVLinks to GPU 1, 1 to an NVSwitch
 *   GPU 1: minor 2, CPUs 2-3, 4 NVLinks to GPU 0
 *   GPU 2: minor 1, CPUs 0-3, 2 NVLinks to an NVSwitch
 *
 * FAKE_NVML_CONFIG=<file> describes them instead, one GPU a line (read again whenever the file
 * changes, so a test can make a GPU fail under a running agent):
 *   # a comment
 *   node n1                       the lines below apply to the droverd of node n1 only
 *                                 (SLURMD_NODENAME); "node *" applies to every node again
 *   gpu name="NVIDIA H100 80GB HBM3" uuid=GPU-0a1b minor=0 bus=0x18 cpus=0-1 memory=81559
 *       links=1:4,switch:1 xid=79,13 ecc_dbe_volatile=0 ecc_dbe_aggregate=0 retired_dbe=0
 *       retired_pending=0 remap_failure=0 remap_pending=0 throttle=0x40 lost=0 temp=41
 *       links_down=0 util=87 mem_util=40 used=20480 power=312             (all on one line)
 * util=/mem_util=: the utilization rates in percent; used=: memory in use (MiB); power=: the
 * draw in watts (defaults 0, 0, 0 and 70).
 * links=: NVLinks to another GPU of the file (by its position) or to a switch; links_down=N
 * turns the last N active links off; xid=: XID events delivered once each time the file is
 * read; lost=1: the GPU answers NVML_ERROR_GPU_IS_LOST; mig=SLICES:MEMORY_MB[xCOUNT],... puts
 * the GPU in MIG mode with those MIG devices (mig=1:9856x7: seven 1g.10gb devices), each with
 * its own UUID (MIG-<the GPU's UUID without GPU->-<n>), GPU instance n + 1 and compute
 * instance 0.
 *
 * FAKE_NVML_INIT_ERROR=<code> makes nvmlInit_v2 return that code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef int nvmlReturn_t;
typedef struct {
  int index; /* the GPU's position */
  int mig;   /* -1: the GPU itself; else its MIG device */
} FakeDevice;
typedef struct {
  unsigned multiprocessorCount, sharedCopyEngineCount, sharedDecoderCount, sharedEncoderCount,
      sharedJpegCount, sharedOfaCount, gpuInstanceSliceCount, computeInstanceSliceCount;
  unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;
typedef FakeDevice* nvmlDevice_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;
typedef struct {
  nvmlDevice_t device;
  unsigned long long eventType, eventData;
  unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;
typedef struct {
  int used;
} FakeEventSet;
typedef FakeEventSet* nvmlEventSet_t;

enum {
  kSuccess = 0,
  kUninitialized = 1,
  kInvalidArgument = 2,
  kNotSupported = 3,
  kNotFound = 6,
  kInsufficientSize = 7,
  kTimeout = 10,
  kGpuIsLost = 15
};
enum { kMaxGpus = 16, kMaxLinks = 18, kMaxXids = 8, kMaxMig = 8, kSwitch = -1 };
enum { kSwitchBus = 0x80 };

typedef struct {
  char name[96], uuid[80];
  unsigned minor, bus;
  unsigned long cpu_mask;
  unsigned long long memory_mib;
  int link_to[kMaxLinks]; /* the GPU position at the link's far end, kSwitch, or -2: none */
  unsigned links_down;
  unsigned xids[kMaxXids], xid_count, xid_delivered;
  unsigned long long ecc_dbe_volatile, ecc_dbe_aggregate, throttle;
  unsigned retired_dbe, retired_pending, remap_failure, remap_pending, lost, temperature;
  unsigned util, mem_util, power_w;
  unsigned long long used_mib;
  unsigned mig_count, mig_slices[kMaxMig];
  unsigned long long mig_memory[kMaxMig];
} Gpu;

static FakeDevice devices[kMaxGpus];
static FakeDevice mig_devices[kMaxGpus][kMaxMig];
static Gpu gpus[kMaxGpus];
static int gpu_count = 0;
static int initialized = 0;
static FakeEventSet event_set;
static struct timespec loaded_mtime;
static off_t loaded_size = -1;

static void NoLinks(Gpu* gpu) {
  for (int link = 0; link < kMaxLinks; ++link) gpu->link_to[link] = -2;
}

static void Defaults(void) {
  static const unsigned minors[3] = {0, 2, 1}, buses[3] = {0x18, 0x2a, 0x3c};
  static const unsigned long masks[3] = {0x3, 0xc, 0xf};
  memset(gpus, 0, sizeof gpus);
  gpu_count = 3;
  for (int i = 0; i < 3; ++i) {
    Gpu* gpu = &gpus[i];
    snprintf(gpu->name, sizeof gpu->name, "%s", i == 2 ? "NVIDIA L40S" : "NVIDIA H100 80GB HBM3");
    snprintf(gpu->uuid, sizeof gpu->uuid, "GPU-fake-%d", i);
    gpu->minor = minors[i];
    gpu->bus = buses[i];
    gpu->cpu_mask = masks[i];
    gpu->memory_mib = i == 2 ? 46068 : 81559;
    gpu->temperature = 35;
    gpu->power_w = 70;
    NoLinks(gpu);
  }
  for (int link = 0; link < 4; ++link) gpus[0].link_to[link] = 1, gpus[1].link_to[link] = 0;
  gpus[0].link_to[4] = kSwitch;
  gpus[2].link_to[0] = gpus[2].link_to[1] = kSwitch;
}

static unsigned long CpuMask(const char* text) {
  unsigned long mask = 0;
  while (*text) {
    char* end;
    unsigned long first = strtoul(text, &end, 10), last = first;
    if (*end == '-') last = strtoul(end + 1, &end, 10);
    for (unsigned long cpu = first; cpu <= last && cpu < 64; ++cpu) mask |= 1UL << cpu;
    text = *end == ',' ? end + 1 : end;
    if (end == text && *text) break;
  }
  return mask;
}

/* "1:4,switch:1": links in order. */
static void Links(Gpu* gpu, const char* text) {
  int next = 0;
  NoLinks(gpu);
  while (*text && next < kMaxLinks) {
    int target = strncmp(text, "switch", 6) == 0 ? kSwitch : atoi(text);
    const char* colon = strchr(text, ':');
    int count = colon ? atoi(colon + 1) : 1;
    for (int i = 0; i < count && next < kMaxLinks; ++i) gpu->link_to[next++] = target;
    const char* comma = strchr(text, ',');
    if (!comma) break;
    text = comma + 1;
  }
}

/* "1:9856x7,3:40192": MIG devices of 1 slice and 9856 MB (seven), then one of 3 slices. */
static void Migs(Gpu* gpu, const char* text) {
  gpu->mig_count = 0;
  while (*text && gpu->mig_count < kMaxMig) {
    char* end;
    unsigned slices = (unsigned)strtoul(text, &end, 10);
    unsigned long long memory = *end == ':' ? strtoull(end + 1, &end, 10) : 0;
    unsigned count = *end == 'x' ? (unsigned)strtoul(end + 1, &end, 10) : 1;
    for (unsigned i = 0; i < count && gpu->mig_count < kMaxMig; ++i) {
      gpu->mig_slices[gpu->mig_count] = slices;
      gpu->mig_memory[gpu->mig_count++] = memory;
    }
    if (*end != ',') break;
    text = end + 1;
  }
}

static void Xids(Gpu* gpu, const char* text) {
  gpu->xid_count = 0;
  while (*text && gpu->xid_count < kMaxXids) {
    gpu->xids[gpu->xid_count++] = (unsigned)strtoul(text, NULL, 10);
    const char* comma = strchr(text, ',');
    if (!comma) break;
    text = comma + 1;
  }
}

/* One "key=value" of a gpu line; value may be "quoted text". */
static void Set(Gpu* gpu, const char* key, const char* value) {
  if (!strcmp(key, "name"))
    snprintf(gpu->name, sizeof gpu->name, "%s", value);
  else if (!strcmp(key, "uuid"))
    snprintf(gpu->uuid, sizeof gpu->uuid, "%s", value);
  else if (!strcmp(key, "minor"))
    gpu->minor = (unsigned)strtoul(value, NULL, 0);
  else if (!strcmp(key, "bus"))
    gpu->bus = (unsigned)strtoul(value, NULL, 0);
  else if (!strcmp(key, "cpus"))
    gpu->cpu_mask = CpuMask(value);
  else if (!strcmp(key, "memory"))
    gpu->memory_mib = strtoull(value, NULL, 0);
  else if (!strcmp(key, "links"))
    Links(gpu, value);
  else if (!strcmp(key, "links_down"))
    gpu->links_down = (unsigned)strtoul(value, NULL, 0);
  else if (!strcmp(key, "xid"))
    Xids(gpu, value);
  else if (!strcmp(key, "ecc_dbe_volatile"))
    gpu->ecc_dbe_volatile = strtoull(value, NULL, 0);
  else if (!strcmp(key, "ecc_dbe_aggregate"))
    gpu->ecc_dbe_aggregate = strtoull(value, NULL, 0);
  else if (!strcmp(key, "retired_dbe"))
    gpu->retired_dbe = (unsigned)strtoul(value, NULL, 0);
  else if (!strcmp(key, "retired_pending"))
    gpu->retired_pending = (unsigned)atoi(value);
  else if (!strcmp(key, "remap_failure"))
    gpu->remap_failure = (unsigned)atoi(value);
  else if (!strcmp(key, "remap_pending"))
    gpu->remap_pending = (unsigned)atoi(value);
  else if (!strcmp(key, "throttle"))
    gpu->throttle = strtoull(value, NULL, 0);
  else if (!strcmp(key, "lost"))
    gpu->lost = (unsigned)atoi(value);
  else if (!strcmp(key, "temp"))
    gpu->temperature = (unsigned)atoi(value);
  else if (!strcmp(key, "util"))
    gpu->util = (unsigned)atoi(value);
  else if (!strcmp(key, "mem_util"))
    gpu->mem_util = (unsigned)atoi(value);
  else if (!strcmp(key, "used"))
    gpu->used_mib = strtoull(value, NULL, 0);
  else if (!strcmp(key, "power"))
    gpu->power_w = (unsigned)atoi(value);
  else if (!strcmp(key, "mig"))
    Migs(gpu, value);
}

static void ParseGpu(char* line, Gpu* gpu) {
  memset(gpu, 0, sizeof *gpu);
  NoLinks(gpu);
  gpu->memory_mib = 81559;
  gpu->temperature = 35;
  gpu->power_w = 70;
  gpu->cpu_mask = 0x1;
  char* at = line;
  while (*at) {
    while (*at == ' ' || *at == '\t') ++at;
    char* equals = strchr(at, '=');
    if (!equals) break;
    *equals = 0;
    char* value = equals + 1;
    char* end;
    if (*value == '"') {
      ++value;
      end = strchr(value, '"');
      if (!end) end = value + strlen(value);
    } else {
      end = value + strcspn(value, " \t\n");
    }
    char saved = *end;
    *end = 0;
    Set(gpu, at, value);
    if (!saved) break;
    at = end + 1;
  }
}

/* Reads FAKE_NVML_CONFIG when it changed since the last read; the defaults without it. */
static void Load(void) {
  const char* path = getenv("FAKE_NVML_CONFIG");
  if (!path) {
    if (loaded_size != -2) Defaults();
    loaded_size = -2;
    return;
  }
  struct stat info;
  if (stat(path, &info) != 0) return;
  if (info.st_size == loaded_size && info.st_mtim.tv_sec == loaded_mtime.tv_sec &&
      info.st_mtim.tv_nsec == loaded_mtime.tv_nsec)
    return;
  FILE* file = fopen(path, "r");
  if (!file) return;
  const char* node = getenv("SLURMD_NODENAME");
  int mine = 1;
  char line[1024];
  gpu_count = 0;
  memset(gpus, 0, sizeof gpus);
  while (fgets(line, sizeof line, file)) {
    char* text = line + strspn(line, " \t");
    if (!strncmp(text, "node ", 5)) {
      char name[128] = "";
      sscanf(text + 5, "%127s", name);
      mine = !strcmp(name, "*") || (node && !strcmp(name, node));
    } else if (!strncmp(text, "gpu ", 4) && mine && gpu_count < kMaxGpus) {
      ParseGpu(text + 4, &gpus[gpu_count++]);
    }
  }
  fclose(file);
  loaded_size = info.st_size;
  loaded_mtime = info.st_mtim;
}

static nvmlReturn_t Copy(char* out, unsigned length, const char* text) {
  if (length < strlen(text) + 1) return kInsufficientSize;
  strcpy(out, text);
  return kSuccess;
}

/* 0 when `device` is a known GPU that answers; an NVML error otherwise. */
static nvmlReturn_t Check(nvmlDevice_t device) {
  if (!initialized) return kUninitialized;
  int mig = device >= &mig_devices[0][0] && device < &mig_devices[0][0] + kMaxGpus * kMaxMig;
  if ((!mig && (device < devices || device >= devices + kMaxGpus)) || device->index >= gpu_count)
    return kInvalidArgument;
  if (mig && (unsigned)device->mig >= gpus[device->index].mig_count) return kInvalidArgument;
  Load();
  if (device->index >= gpu_count) return kInvalidArgument;
  return gpus[device->index].lost ? kGpuIsLost : kSuccess;
}

/* The far end of a link: a GPU position, kSwitch, or -2 (no link, or turned off). */
static int LinkTarget(int gpu, unsigned link) {
  const Gpu* g = &gpus[gpu];
  unsigned active = 0;
  for (int i = 0; i < kMaxLinks; ++i) active += g->link_to[i] != -2;
  if (link >= kMaxLinks || g->link_to[link] == -2) return -2;
  return link >= active - (g->links_down < active ? g->links_down : active) ? -2 : g->link_to[link];
}

nvmlReturn_t nvmlInit_v2(void) {
  const char* error = getenv("FAKE_NVML_INIT_ERROR");
  if (error) return atoi(error);
  for (int i = 0; i < kMaxGpus; ++i) {
    devices[i].index = i;
    devices[i].mig = -1;
    for (int m = 0; m < kMaxMig; ++m) {
      mig_devices[i][m].index = i;
      mig_devices[i][m].mig = m;
    }
  }
  Load();
  initialized = 1;
  return kSuccess;
}

nvmlReturn_t nvmlShutdown(void) {
  initialized = 0;
  return kSuccess;
}

const char* nvmlErrorString(nvmlReturn_t code) {
  switch (code) {
    case 9:
      return "Driver Not Loaded";
    case kGpuIsLost:
      return "GPU is lost";
    case kTimeout:
      return "Timeout";
    default:
      return "Unknown Error";
  }
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* count) {
  if (!initialized) return kUninitialized;
  Load();
  *count = (unsigned)gpu_count;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* device) {
  if (!initialized) return kUninitialized;
  Load();
  if (index >= (unsigned)gpu_count) return kInvalidArgument;
  if (gpus[index].lost) return kGpuIsLost;
  *device = &devices[index];
  return kSuccess;
}

static unsigned long long MigGigabytes(const Gpu* gpu, int mig) {
  return (gpu->mig_memory[mig] + 1023) / 1024;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned length) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  const Gpu* gpu = &gpus[device->index];
  if (device->mig < 0) return Copy(name, length, gpu->name);
  char text[160];
  snprintf(text, sizeof text, "%s MIG %ug.%llugb", gpu->name, gpu->mig_slices[device->mig],
           MigGigabytes(gpu, device->mig));
  return Copy(name, length, text);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned length) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  const char* own = gpus[device->index].uuid;
  if (device->mig < 0) return Copy(uuid, length, own);
  char text[128];
  snprintf(text, sizeof text, "MIG-%s-%d", strncmp(own, "GPU-", 4) ? own : own + 4, device->mig);
  return Copy(uuid, length, text);
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned* current, unsigned* pending) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  if (device->mig >= 0) return kNotSupported;
  *current = *pending = gpus[device->index].mig_count > 0;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned* count) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  *count = gpus[device->index].mig_count ? kMaxMig : 0;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned index,
                                                 nvmlDevice_t* mig) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  if (device->mig >= 0) return kNotSupported;
  if (index >= gpus[device->index].mig_count) return kNotFound;
  *mig = &mig_devices[device->index][index];
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t* out) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  const Gpu* gpu = &gpus[device->index];
  memset(out, 0, sizeof *out);
  out->gpuInstanceSliceCount = device->mig < 0 ? 7 : gpu->mig_slices[device->mig];
  out->computeInstanceSliceCount = out->gpuInstanceSliceCount;
  out->multiprocessorCount = 16 * out->gpuInstanceSliceCount;
  out->memorySizeMB = device->mig < 0 ? gpu->memory_mib : gpu->mig_memory[device->mig];
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned* id) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  if (device->mig < 0) return kNotSupported;
  *id = (unsigned)device->mig + 1;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned* id) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  if (device->mig < 0) return kNotSupported;
  *id = 0;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  memory->total = gpus[device->index].memory_mib << 20;
  memory->used = gpus[device->index].used_mib << 20;
  if (memory->used > memory->total) memory->used = memory->total;
  memory->free = memory->total - memory->used;
  return kSuccess;
}

typedef struct {
  unsigned gpu, memory;
} nvmlUtilization_t;

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* rates) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  rates->gpu = gpus[device->index].util;
  rates->memory = gpus[device->index].mem_util;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned* milliwatts) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  *milliwatts = gpus[device->index].power_w * 1000;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned* minor) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  *minor = gpus[device->index].minor;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t device, unsigned size, unsigned long* mask) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  if (size == 0) return kInvalidArgument;
  memset(mask, 0, size * sizeof *mask);
  mask[0] = gpus[device->index].cpu_mask;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  memset(pci, 0, sizeof *pci);
  pci->bus = gpus[device->index].bus;
  snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", pci->bus);
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned link, int* active) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  if (link >= kMaxLinks) return kInvalidArgument;
  if (gpus[device->index].link_to[link] == -2 && link >= 6) return kNotSupported;
  *active = LinkTarget(device->index, link) != -2;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned link,
                                                 nvmlPciInfo_t* pci) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  int target = LinkTarget(device->index, link);
  if (target == -2 || target >= gpu_count) return kInvalidArgument;
  memset(pci, 0, sizeof *pci);
  pci->bus = target == kSwitch ? kSwitchBus : gpus[target].bus;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int error_type, int counter_type,
                                         unsigned long long* count) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  if (error_type != 1) return kNotSupported; /* uncorrected only */
  *count = counter_type == 0 ? gpus[device->index].ecc_dbe_volatile
                             : gpus[device->index].ecc_dbe_aggregate;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, int cause, unsigned* count,
                                       unsigned long long* addresses) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  unsigned pages = cause == 1 ? gpus[device->index].retired_dbe : 0;
  if (*count < pages) { /* as NVML: the count, and the buffer was too small */
    *count = pages;
    return kInsufficientSize;
  }
  for (unsigned i = 0; i < pages && addresses; ++i) addresses[i] = 0x1000ULL * (i + 1);
  *count = pages;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device, int* pending) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  *pending = gpus[device->index].retired_pending ? 1 : 0;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned* corrected,
                                       unsigned* uncorrected, unsigned* pending,
                                       unsigned* failure) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  *corrected = 0;
  *uncorrected = gpus[device->index].remap_failure ? 1 : 0;
  *pending = gpus[device->index].remap_pending;
  *failure = gpus[device->index].remap_failure;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                       unsigned long long* reasons) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  *reasons = gpus[device->index].throttle;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned* celsius) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  if (sensor != 0) return kNotSupported;
  *celsius = gpus[device->index].temperature;
  return kSuccess;
}

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  if (!initialized) return kUninitialized;
  event_set.used = 1;
  *set = &event_set;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long types,
                                      nvmlEventSet_t set) {
  nvmlReturn_t status = Check(device);
  if (status) return status;
  return set == &event_set && (types & 0x8) ? kSuccess : kNotSupported;
}

/* Each XID of the file once per read of the file; then a timeout. */
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data, unsigned timeout) {
  (void)timeout;
  if (!initialized || set != &event_set) return kUninitialized;
  Load();
  for (int i = 0; i < gpu_count; ++i) {
    Gpu* gpu = &gpus[i];
    if (gpu->xid_delivered < gpu->xid_count) {
      memset(data, 0, sizeof *data);
      data->device = &devices[i];
      data->eventType = 0x8;
      data->eventData = gpu->xids[gpu->xid_delivered++];
      return kSuccess;
    }
  }
  return kTimeout;
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  if (set != &event_set) return kInvalidArgument;
  event_set.used = 0;
  return kSuccess;
}
