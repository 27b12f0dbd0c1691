// Prometheus metrics for droverctld's /metrics: the queue, nodes, utilization, fair-share usage
// and the engine thread's timings, rendered from one snapshot in text exposition format 0.0.4.
// Rendering reads only its arguments, so it runs on the HTTP thread without touching the engine.
#pragma once

#include <string>

#include "common/cluster_config.h"
#include "ctld/daemon/loop_stats.h"
#include "ctld/engine/engine.h"

namespace drover::ctld {

// Every family carries # HELP and # TYPE and is present even when it has no sample; label sets
// known from the configuration (partitions, states, reasons) are present with zero values so
// dashboards and rate() see stable series.
std::string RenderMetrics(const ClusterConfig& cluster, const Snapshot& snapshot,
                          const LoopStats& stats);

}  // namespace drover::ctld
