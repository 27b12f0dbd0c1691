// A synthetic workload for a cluster that has no trace of its own (the 10,000-node benchmark):
// the mix of sched_bench — on a GPU cluster 70% single-node jobs of 1-8 GPUs and 30% jobs of 2-64
// whole nodes, on a CPU cluster jobs of 1-64 cores — from 100 users in 10 accounts, run times up
// to 12 hours whose limits overestimate them 1-3 times, arriving at the rate that keeps the
// cluster about 90% busy. The same count and seed give the same trace.
#pragma once

#include <cstdint>

#include "common/cluster_config.h"
#include "sim/trace.h"

namespace drover::sim {

Trace SyntheticTrace(const ClusterConfig& cluster, uint64_t jobs, uint64_t seed = 1);

}  // namespace drover::sim
