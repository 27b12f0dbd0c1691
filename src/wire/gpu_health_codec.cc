// See gpu_health_codec.h.
#include "wire/gpu_health_codec.h"

namespace drover::wire {

void ToProto(const GpuHealth& health, v1::GpuHealth* out) {
  out->set_index(health.index);
  out->set_uuid(health.uuid);
  out->set_xid_errors(health.xid_errors);
  out->set_last_xid(health.last_xid);
  out->set_ecc_dbe_volatile(health.ecc_dbe_volatile);
  out->set_ecc_dbe_aggregate(health.ecc_dbe_aggregate);
  out->set_retired_pages_dbe(health.retired_pages_dbe);
  out->set_retired_pages_pending(health.retired_pages_pending);
  out->set_remapped_rows_failure(health.remapped_rows_failure);
  out->set_remapped_rows_pending(health.remapped_rows_pending);
  out->set_nvlinks_down(health.nvlinks_down);
  out->set_throttle_reasons(health.throttle_reasons);
  out->set_lost(health.lost);
  out->set_temperature_c(health.temperature_c);
  out->set_problem(health.problem);
}

GpuHealth FromProto(const v1::GpuHealth& health) {
  GpuHealth out;
  out.index = health.index();
  out.uuid = health.uuid();
  out.xid_errors = health.xid_errors();
  out.last_xid = health.last_xid();
  out.ecc_dbe_volatile = health.ecc_dbe_volatile();
  out.ecc_dbe_aggregate = health.ecc_dbe_aggregate();
  out.retired_pages_dbe = health.retired_pages_dbe();
  out.retired_pages_pending = health.retired_pages_pending();
  out.remapped_rows_failure = health.remapped_rows_failure();
  out.remapped_rows_pending = health.remapped_rows_pending();
  out.nvlinks_down = health.nvlinks_down();
  out.throttle_reasons = health.throttle_reasons();
  out.lost = health.lost();
  out.temperature_c = health.temperature_c();
  out.problem = health.problem();
  return out;
}

}  // namespace drover::wire
