// The synthetic workload; see synthetic.h. A fixed generator (std::mt19937_64) and seed: the same
// trace on every run of one build.
#include "sim/synthetic.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>

namespace drover::sim {

Trace SyntheticTrace(const ClusterConfig& cluster, uint64_t count, uint64_t seed) {
  std::mt19937_64 random(seed);
  uint64_t total_gpus = 0, total_cores = 0;
  uint32_t gpus_per_node = 0, cores_per_node = 1;
  for (const NodeConfig& node : cluster.nodes) {
    total_gpus += node.gpus.size();
    total_cores += static_cast<uint64_t>(node.cpus);
    gpus_per_node = std::max<uint32_t>(gpus_per_node, static_cast<uint32_t>(node.gpus.size()));
    cores_per_node = std::max<uint32_t>(cores_per_node, static_cast<uint32_t>(node.cpus));
  }
  bool gpu = total_gpus > 0;
  Trace trace;
  trace.name = fmt::format("synthetic:{}:{}", count, seed);
  static constexpr uint32_t kSingle[] = {1, 2, 4, 8};
  static constexpr uint32_t kNodes[] = {2, 4, 8, 16, 32, 64};
  double demand = 0;  // resource-seconds asked for in all
  for (uint64_t i = 0; i < count; ++i) {
    TraceJob job;
    job.id = i + 1;
    uint64_t user = random() % 100;
    job.user = fmt::format("u{}", user);
    job.account = fmt::format("a{}", user % 10);
    job.run_seconds = 60 + static_cast<int64_t>(random() % 43200);
    job.limit_seconds = job.run_seconds * (100 + static_cast<int64_t>(random() % 200)) / 100;
    double size = 0;
    if (gpu) {
      if (random() % 10 < 7) {
        job.gpus = std::min(kSingle[random() % 4], gpus_per_node);
        job.nodes = 1;
      } else {
        job.nodes = kNodes[random() % 6];
        job.gpus = job.nodes * gpus_per_node;
      }
      job.cpus = std::max<uint32_t>(job.gpus * cores_per_node / std::max(gpus_per_node, 1u), 1);
      size = job.gpus;
    } else {
      job.cpus = 1 + static_cast<uint32_t>(random() % std::min<uint32_t>(64, cores_per_node));
      size = job.cpus;
    }
    demand += size * static_cast<double>(job.run_seconds);
    trace.jobs.push_back(std::move(job));
  }
  // Arrivals spread so that the demand fills 90% of the cluster over the trace's span.
  double capacity = static_cast<double>(gpu ? total_gpus : total_cores);
  double span = count ? demand / (0.9 * capacity) : 0;
  double mean_gap = count ? span / static_cast<double>(count) : 0;
  std::exponential_distribution<double> gap(mean_gap > 0 ? 1.0 / mean_gap : 1.0);
  double t = 0;
  for (TraceJob& job : trace.jobs) {
    job.submit_time = static_cast<int64_t>(t);
    t += gap(random);
  }
  return trace;
}

}  // namespace drover::sim
