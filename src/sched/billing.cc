// Billing TRES; see billing.h.
#include "sched/billing.h"

namespace drover::sched {

double BillingOf(const std::vector<std::pair<std::string, double>>& weights, const JobUsage& usage,
                 const std::string& gpu_type) {
  if (weights.empty()) return static_cast<double>(usage.cpus);
  double billing = 0;
  for (const auto& [name, weight] : weights) {
    double amount = 0;
    if (name == "cpu") amount = static_cast<double>(usage.cpus);
    if (name == "mem") amount = static_cast<double>(usage.memory_mb);
    if (name == "node") amount = static_cast<double>(usage.nodes);
    if (name == "gres/gpu" || (!gpu_type.empty() && name == "gres/gpu:" + gpu_type))
      amount = static_cast<double>(usage.gpus);
    billing += weight * amount;
  }
  return billing;
}

}  // namespace drover::sched
