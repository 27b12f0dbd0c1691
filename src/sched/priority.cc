// priority/multifactor: each factor is normalised to [0, 1] against the cluster's totals or the
// largest configured value, weighted by the PriorityWeight* keys, and summed; nice subtracts.
// Everything the sum needs besides the job is looked up once, in the constructor.
#include "sched/priority.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

namespace drover::sched {
namespace {

constexpr std::string_view kGpuTres = "gres/gpu";

double Clamp01(double value) {
  return std::clamp(value, 0.0, 1.0);
}

double Fraction(double part, double whole) {
  return whole > 0 ? Clamp01(part / whole) : 0;
}

uint64_t RequestedCpus(const JobSpec& job) {
  return uint64_t{job.ntasks} * job.cpus_per_task;
}

// --gpus counts for the whole job, --gpus-per-node and --gpus-per-task multiply out.
uint64_t RequestedGpus(const JobSpec& job) {
  if (job.gpus > 0) return job.gpus;
  if (job.gpus_per_node > 0) return uint64_t{job.gpus_per_node} * job.min_nodes;
  return uint64_t{job.gpus_per_task} * job.ntasks;
}

// Only what the job asked for: a job relying on DefMemPer* counts as asking for no memory.
uint64_t RequestedMemoryMb(const JobSpec& job) {
  if (job.mem_per_node_mb > 0) return job.mem_per_node_mb * job.min_nodes;
  if (job.mem_per_cpu_mb > 0) return job.mem_per_cpu_mb * RequestedCpus(job);
  return job.mem_per_gpu_mb * RequestedGpus(job);
}

// "" for "gres/gpu", "h100" for "gres/gpu:h100", nothing for any other TRES.
std::optional<std::string_view> GpuTresType(std::string_view name) {
  if (!name.starts_with(kGpuTres)) return std::nullopt;
  std::string_view rest = name.substr(kGpuTres.size());
  if (rest.empty()) return rest;
  if (rest.front() != ':') return std::nullopt;
  return rest.substr(1);
}

// TRES the job's spec does not record (billing, licenses, other GRES) count as 0.
double RequestedTres(std::string_view name, const JobSpec& job) {
  if (name == "cpu") return static_cast<double>(RequestedCpus(job));
  if (name == "mem") return static_cast<double>(RequestedMemoryMb(job));
  if (name == "node") return job.min_nodes;
  std::optional<std::string_view> type = GpuTresType(name);
  if (!type) return 0;
  return type->empty() || *type == job.gpu_type ? static_cast<double>(RequestedGpus(job)) : 0;
}

double ClusterTres(std::string_view name, const ClusterConfig& cluster) {
  double total = 0;
  std::optional<std::string_view> type = GpuTresType(name);
  for (const NodeConfig& node : cluster.nodes) {
    if (name == "cpu") total += node.cpus;
    if (name == "mem") total += static_cast<double>(node.real_memory_mb);
    if (name == "node") total += 1;
    if (!type) continue;
    for (const GpuDevice& gpu : node.gpus) total += type->empty() || *type == gpu.type;
  }
  return total;
}

// sprio's PRIORITY: the rounded weighted sum plus the site factor less nice, never below 1 (0
// would read as held).
int64_t WeightedSum(const PriorityFactors& factors, const ClusterSettings& settings) {
  double sum = settings.weight_age * factors.age + settings.weight_fairshare * factors.fairshare +
               settings.weight_job_size * factors.job_size +
               settings.weight_partition * factors.partition + settings.weight_qos * factors.qos +
               settings.weight_assoc * factors.assoc;
  for (size_t i = 0; i < factors.tres.size(); ++i)
    sum += settings.weight_tres[i].second * factors.tres[i].second;
  return std::max<int64_t>(std::llround(sum) + factors.site - factors.nice, 1);
}

}  // namespace

PriorityCalculator::PriorityCalculator(const ClusterConfig& cluster,
                                       const std::vector<Association>& associations,
                                       const FairShare& fair_share, const std::vector<Qos>& qos,
                                       int64_t now, const ClusterTotals* totals)
    : cluster_(cluster),
      associations_(associations),
      fair_share_(fair_share),
      qos_(qos),
      now_(now),
      totals_(totals ? *totals : TotalsOf(cluster)) {
  max_partition_factor_ = 0;
  for (const PartitionConfig& partition : cluster_.partitions)
    max_partition_factor_ = std::max(max_partition_factor_, partition.priority_job_factor);
  for (const Qos& entry : qos_) {
    max_qos_priority_ = std::max(max_qos_priority_, entry.priority);
    qos_priorities_.emplace(entry.name, entry.priority);
  }
  // The first association wins on a duplicate, as FindUserAssociation's linear search does.
  for (size_t index = 0; index < associations_.size(); ++index) {
    const Association& association = associations_[index];
    if (association.user.empty()) continue;
    user_associations_.emplace(AssociationKey{association.account, association.user},
                               static_cast<int>(index));
  }
  for (const Association& association : associations_)
    max_assoc_priority_ = std::max(max_assoc_priority_, association.priority);
}

ClusterTotals TotalsOf(const ClusterConfig& cluster) {
  ClusterTotals totals;
  for (const NodeConfig& node : cluster.nodes) {
    totals.nodes += 1;
    totals.cpus += static_cast<uint64_t>(node.cpus);
  }
  for (const auto& [name, weight] : cluster.settings.weight_tres)
    totals.tres.push_back(ClusterTres(name, cluster));
  return totals;
}

PriorityFactors PriorityCalculator::Compute(const JobSpec& job, int partition) const {
  PriorityFactors factors;
  factors.job_id = job.job_id;
  const ClusterSettings& settings = cluster_.settings;
  if (settings.priority != PriorityType::kMultifactor) {
    factors.priority = job.priority;  // basic: 0 (submission order) unless an operator set one
    return factors;
  }

  int64_t eligible = std::max(job.submit_time, job.begin_time);
  factors.age = Fraction(static_cast<double>(now_ - eligible),
                         static_cast<double>(settings.priority_max_age_seconds));

  auto association = user_associations_.find(AssociationKey{job.account, job.user});
  if (association != user_associations_.end() &&
      static_cast<size_t>(association->second) < fair_share_.factor.size())
    factors.fairshare = fair_share_.factor[association->second];
  // The association factor: its Priority= over the largest of any association (Slurm's).
  if (association != user_associations_.end() && max_assoc_priority_ > 0)
    factors.assoc = Fraction(
        static_cast<double>(std::max<int64_t>(associations_[association->second].priority, 0)),
        static_cast<double>(max_assoc_priority_));

  // Slurm's job size: the mean of the node and CPU fractions; PriorityFavorSmall inverts it.
  double size =
      (Fraction(job.min_nodes, static_cast<double>(totals_.nodes)) +
       Fraction(static_cast<double>(RequestedCpus(job)), static_cast<double>(totals_.cpus))) /
      2;
  factors.job_size = Clamp01(settings.favor_small ? 1 - size : size);

  if (partition >= 0 && static_cast<size_t>(partition) < cluster_.partitions.size())
    factors.partition =
        Fraction(cluster_.partitions[partition].priority_job_factor, max_partition_factor_);

  auto qos = qos_priorities_.find(job.qos);
  if (qos != qos_priorities_.end()) factors.qos = Fraction(qos->second, max_qos_priority_);

  factors.tres.reserve(settings.weight_tres.size());
  for (size_t i = 0; i < settings.weight_tres.size(); ++i) {
    const std::string& name = settings.weight_tres[i].first;
    factors.tres.emplace_back(name, Fraction(RequestedTres(name, job), totals_.tres[i]));
  }
  factors.nice = job.nice;
  factors.site = job.site_factor;
  // An operator's --priority stands instead of the factors, as Slurm keeps it fixed.
  factors.priority = job.priority ? job.priority : WeightedSum(factors, settings);
  return factors;
}

}  // namespace drover::sched
