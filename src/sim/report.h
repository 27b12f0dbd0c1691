// What a replay measured, as people and tools read it: a summary (jobs, makespan, utilization,
// waits, bounded slowdown, per-account waits and usage, fragmentation, preemptions, and the
// scheduler's own cost), the same as one JSON object, per-job records as CSV, and two runs side
// by side. Everything but the scheduler's cost is a pure function of the replay, so the same
// inputs give byte-identical reports; with timing off the cost fields are null.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sim/simulator.h"

namespace drover::sim {

inline constexpr double kSlowdownBound = 10;  // seconds: τ of the bounded slowdown

nlohmann::ordered_json ReportJson(const SimResult& result);
std::string ReportText(const SimResult& result);
std::string JobsCsv(const SimResult& result);
// The headline figures of two runs and how they differ, one line each.
std::string CompareText(const SimResult& a, const std::string& a_name, const SimResult& b,
                        const std::string& b_name);

}  // namespace drover::sim
