// PurgeJobAfter: how long the job history keeps a finished job, with slurmdbd.conf's syntax and
// meaning. Drover's history lives in the controller's store (no slurmdbd), so the key is read
// from slurm.conf. A value is a count and a unit, any prefix of hours, days or months (months
// when none is given): "12", "12months", "30d", "24hours". A finished job submitted before the
// start of the current hour, day or month, less that many units, leaves the history.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/result.h"

namespace drover {

struct Retention {
  enum class Unit { kHours, kDays, kMonths };
  int64_t count = -1;  // -1: keep every job
  Unit unit = Unit::kMonths;
  bool enabled() const { return count >= 0; }
  bool operator==(const Retention&) const = default;
};

// slurmdbd's parse: digits (at most 65535), then an optional unit word, no space.
Result<Retention> ParseRetention(std::string_view text);

// The last submission time purged at `now` (local time): the start of the current hour, day or
// month, less `count` units, less one second.
int64_t RetentionCutoff(const Retention& retention, int64_t now);

}  // namespace drover
