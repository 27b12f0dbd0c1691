// The built-in GPU health probes; see gpu_health.h.
#include "agent/host/gpu_health.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/text.h"

namespace drover::agent {
namespace {

using nvml::Device;

constexpr unsigned kMostEventsPerProbe = 1000;  // an XID storm is read in later probes too

std::string Plural(uint64_t count, const char* one, const char* many) {
  return fmt::format("{} {}", count, count == 1 ? one : many);
}

}  // namespace

bool IsFatalXid(uint32_t xid) {
  static constexpr uint32_t kFatal[] = {48, 61, 62, 63, 64, 74, 79, 92, 95, 119, 120, 140};
  return std::find(std::begin(kFatal), std::end(kFatal), xid) != std::end(kFatal);
}

Result<std::unique_ptr<GpuHealthProbe>> GpuHealthProbe::Open(const std::string& library,
                                                             const std::vector<Gpu>& gpus) {
  auto opened = nvml::Library::Open(library);
  if (!opened) return std::move(opened).take_error();
  std::unique_ptr<GpuHealthProbe> probe(new GpuHealthProbe());
  probe->nvml_ = std::move(*opened);
  const nvml::Api& api = probe->nvml_->api();
  bool events = api.event_set_create && api.register_events && api.event_set_wait &&
                api.event_set_free && api.event_set_create(&probe->events_) == nvml::kSuccess;
  for (const Gpu& gpu : gpus) {
    if (gpu.uuid.empty()) continue;
    // A GPU in MIG mode is watched once, as itself, for all its MIG devices.
    int nvml_index = gpu.nvml_index >= 0 ? gpu.nvml_index : gpu.index;
    if (std::any_of(probe->gpus_.begin(), probe->gpus_.end(), [&](const Watched& w) {
          return w.nvml_index == static_cast<unsigned>(nvml_index);
        }))
      continue;
    Watched watched{gpu.mig ? nvml_index : gpu.index,
                    gpu.mig ? gpu.parent_uuid : gpu.uuid,
                    static_cast<unsigned>(nvml_index),
                    nullptr,
                    0,
                    0,
                    {}};
    Device& device = watched.device;
    if (api.get_handle(watched.nvml_index, &device) == nvml::kSuccess) {
      if (events) api.register_events(device, nvml::kEventXidCriticalError, probe->events_);
      for (unsigned link = 0; api.get_link_state && link < nvml::kMaxLinks; ++link) {
        int state = 0;
        if (api.get_link_state(device, link, &state) == nvml::kSuccess &&
            state == nvml::kFeatureEnabled)
          watched.active_links.push_back(link);
      }
    }
    probe->gpus_.push_back(std::move(watched));
  }
  return probe;
}

GpuHealthProbe::~GpuHealthProbe() {
  if (events_ && nvml_ && nvml_->api().event_set_free) nvml_->api().event_set_free(events_);
}

void GpuHealthProbe::DrainEvents(std::vector<GpuReading>& readings) {
  const nvml::Api& api = nvml_->api();
  if (!events_) return;
  for (unsigned n = 0; n < kMostEventsPerProbe; ++n) {
    nvml::EventData data{};
    if (api.event_set_wait(events_, &data, 0) != nvml::kSuccess) return;
    if (!(data.eventType & nvml::kEventXidCriticalError)) continue;
    // Which GPU: the one whose handle the events were registered with.
    for (size_t i = 0; i < gpus_.size(); ++i) {
      if (!gpus_[i].device || gpus_[i].device != data.device) continue;
      auto xid = static_cast<uint32_t>(data.eventData);
      ++gpus_[i].xid_errors;
      gpus_[i].last_xid = xid;
      readings[i].new_xids.push_back(xid);
      break;
    }
  }
}

std::vector<GpuReading> GpuHealthProbe::Probe() {
  const nvml::Api& api = nvml_->api();
  std::vector<GpuReading> readings(gpus_.size());
  DrainEvents(readings);
  for (size_t i = 0; i < gpus_.size(); ++i) {
    Watched& watched = gpus_[i];
    GpuReading& reading = readings[i];
    reading.index = watched.index;
    reading.uuid = watched.uuid;
    reading.xid_errors = watched.xid_errors;
    reading.last_xid = watched.last_xid;
    std::vector<std::string> problems;
    for (uint32_t xid : reading.new_xids)
      if (IsFatalXid(xid)) {
        problems.push_back(fmt::format("XID {}", xid));
        reading.event = true;
      }
    Device device = nullptr;
    nvml::Return found = api.get_handle(watched.nvml_index, &device);
    char uuid[nvml::kUuidSize] = {};
    if (found == nvml::kSuccess) found = api.get_uuid(device, uuid, sizeof uuid);
    if (found != nvml::kSuccess || watched.uuid != uuid) {
      reading.lost = true;
      problems.push_back(found != nvml::kSuccess
                             ? fmt::format("GPU gone from the bus ({})", api.Describe(found))
                             : fmt::format("GPU replaced: NVML now reports {}", uuid));
      reading.problem = Join(problems, ", ");
      continue;
    }
    unsigned long long count = 0;
    if (api.get_total_ecc) {
      if (api.get_total_ecc(device, nvml::kMemoryErrorUncorrected, nvml::kVolatileEcc, &count) ==
          nvml::kSuccess)
        reading.ecc_dbe_volatile = count;
      if (api.get_total_ecc(device, nvml::kMemoryErrorUncorrected, nvml::kAggregateEcc, &count) ==
          nvml::kSuccess)
        reading.ecc_dbe_aggregate = count;
    }
    if (reading.ecc_dbe_volatile > 0)
      problems.push_back(Plural(reading.ecc_dbe_volatile,
                                "uncorrectable ECC error since the driver loaded",
                                "uncorrectable ECC errors since the driver loaded"));
    // Asked with no buffer, NVML gives the count (and says the buffer was too small when some).
    unsigned pages = 0;
    if (api.get_retired_pages) {
      nvml::Return got = api.get_retired_pages(device, nvml::kRetiredDoubleBit, &pages, nullptr);
      if (got == nvml::kSuccess || got == nvml::kErrorInsufficientSize)
        reading.retired_pages_dbe = pages;
    }
    int pending = 0;
    if (api.get_retired_pending && api.get_retired_pending(device, &pending) == nvml::kSuccess)
      reading.retired_pages_pending = pending != 0;
    if (reading.retired_pages_pending)
      problems.push_back("page retirement pending (reset the GPU)");
    unsigned corrected = 0, uncorrected = 0, remap_pending = 0, failure = 0;
    if (api.get_remapped_rows &&
        api.get_remapped_rows(device, &corrected, &uncorrected, &remap_pending, &failure) ==
            nvml::kSuccess) {
      reading.remapped_rows_failure = failure;
      reading.remapped_rows_pending = remap_pending != 0;
    }
    if (reading.remapped_rows_failure > 0) problems.push_back("row remapping failed");
    if (reading.remapped_rows_pending) problems.push_back("row remapping pending (reset the GPU)");
    for (unsigned link : watched.active_links) {
      int state = 0;
      if (api.get_link_state(device, link, &state) == nvml::kSuccess &&
          state != nvml::kFeatureEnabled)
        ++reading.nvlinks_down;
    }
    if (reading.nvlinks_down > 0)
      problems.push_back(fmt::format("{} down", Plural(reading.nvlinks_down, "NVLink", "NVLinks")));
    unsigned long long reasons = 0;
    if (api.get_throttle_reasons && api.get_throttle_reasons(device, &reasons) == nvml::kSuccess)
      reading.throttle_reasons = reasons & ~0x3ULL;  // not idle, not application clocks
    watched.throttled =
        reading.throttle_reasons & kDrainingThrottleReasons ? watched.throttled + 1 : 0;
    if (watched.throttled >= kThrottledProbes) {
      std::vector<std::string> kinds;
      if (reading.throttle_reasons & 0x8) kinds.push_back("hardware slowdown");
      if (reading.throttle_reasons & 0x40) kinds.push_back("thermal");
      if (reading.throttle_reasons & 0x80) kinds.push_back("power brake");
      problems.push_back("throttled (" + Join(kinds, ", ") + ")");
    }
    unsigned celsius = 0;
    if (api.get_temperature &&
        api.get_temperature(device, nvml::kTemperatureGpu, &celsius) == nvml::kSuccess)
      reading.temperature_c = celsius;
    reading.problem = Join(problems, ", ");
  }
  return readings;
}

std::string GpuHealthVerdict(const std::vector<GpuReading>& readings, bool& event) {
  std::vector<std::string> parts;
  event = false;
  for (const GpuReading& reading : readings) {
    if (reading.problem.empty()) continue;
    std::string uuid = reading.uuid.size() > 12 ? reading.uuid.substr(0, 12) + "..." : reading.uuid;
    parts.push_back(fmt::format("gpu {} ({}): {}", reading.index, uuid, reading.problem));
    event = event || reading.event;
  }
  return Join(parts, "; ");
}

}  // namespace drover::agent
