// Renders /metrics (see metrics.h): one function per family. The node and resource families
// share per-node usage, computed once from the allocations of the jobs that hold them; node
// states, partition sums and a job's partition come from the views, as sinfo and squeue get them.
#include "ctld/daemon/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <initializer_list>
#include <iterator>
#include <map>
#include <numeric>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "ctld/views/jobs.h"
#include "ctld/views/node_usage.h"
#include "ctld/views/partitions.h"

namespace drover::ctld {
namespace {

using Label = std::pair<std::string_view, std::string_view>;

// The text format reserves backslash, double quote and newline inside label values.
std::string EscapeLabel(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

// Prometheus parses values as Go does: fmt's "inf" and "nan" would be rejected.
std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);  // shortest round-trip form: "0.0005", "1", "2.5"
}

// Accumulates the exposition text; families are written whole, in order.
class Exposition {
 public:
  void Family(std::string_view name, std::string_view type, std::string_view help) {
    fmt::format_to(std::back_inserter(out_), "# HELP {} {}\n# TYPE {} {}\n", name, help, name,
                   type);
  }
  void Sample(std::string_view name, std::initializer_list<Label> labels,
              std::integral auto value) {
    Series(name, labels);
    fmt::format_to(std::back_inserter(out_), " {}\n", value);
  }
  void Sample(std::string_view name, std::initializer_list<Label> labels, double value) {
    Series(name, labels);
    fmt::format_to(std::back_inserter(out_), " {}\n", FormatValue(value));
  }
  std::string Take() { return std::move(out_); }

 private:
  void Series(std::string_view name, std::initializer_list<Label> labels) {
    out_ += name;
    char separator = '{';
    for (const auto& [key, value] : labels) {
      fmt::format_to(std::back_inserter(out_), "{}{}=\"{}\"", separator, key, EscapeLabel(value));
      separator = ',';
    }
    if (labels.size() > 0) out_ += '}';
  }

  std::string out_;
};

// --- jobs ---

// Every state a job in the live queue can have; kRequeued only appears in a job's history.
std::vector<JobState> LiveStates() {
  std::vector<JobState> states;
  for (int s = 0; s <= static_cast<int>(JobState::kDeadline); ++s)
    states.push_back(static_cast<JobState>(s));
  return states;
}

void RenderJobs(Exposition& out, const ClusterConfig& cluster, const Snapshot& snapshot) {
  std::map<std::pair<JobState, std::string>, uint64_t> jobs;
  for (JobState state : LiveStates())
    for (const PartitionConfig& partition : cluster.partitions) jobs[{state, partition.name}] = 0;
  for (const JobPtr& job : snapshot.jobs)
    ++jobs[{job->state, views::PartitionLabel(*job, cluster)}];
  out.Family("drover_jobs", "gauge", "Jobs in the live queue by Slurm state and partition.");
  for (const auto& [key, count] : jobs)
    out.Sample("drover_jobs", {{"state", JobStateName(key.first)}, {"partition", key.second}},
               count);
}

void RenderPendingReasons(Exposition& out, const Snapshot& snapshot) {
  std::map<sched::PendingReason, uint64_t> reasons;
  // Seeded from the enum so every reason is a stable series.
  for (int r = 0; r <= static_cast<int>(sched::kLastPendingReason); ++r)
    reasons[static_cast<sched::PendingReason>(r)] = 0;
  for (const JobPtr& job : snapshot.jobs)
    if (job->state == JobState::kPending) ++reasons[job->reason];
  out.Family("drover_jobs_pending", "gauge", "Pending jobs by Slurm pending reason.");
  for (const auto& [reason, count] : reasons)
    out.Sample("drover_jobs_pending", {{"reason", sched::PendingReasonName(reason)}}, count);
}

// --- nodes ---

size_t NodeCount(const ClusterConfig& cluster, const Snapshot& snapshot) {
  return std::min(cluster.nodes.size(), snapshot.nodes.size());
}

void RenderNodes(Exposition& out, const ClusterConfig& cluster, const Snapshot& snapshot,
                 const std::vector<NodeUsage>& usage) {
  std::map<std::string, uint64_t> states;
  for (const char* state : {"IDLE", "MIXED", "ALLOCATED", "DRAINING", "DRAINED", "DOWN", "UNKNOWN"})
    states[state] = 0;
  for (size_t n = 0; n < NodeCount(cluster, snapshot); ++n)
    ++states[NodeState(cluster, snapshot, usage, n)];
  out.Family("drover_nodes", "gauge", "Nodes by Slurm state (\"*\": not responding).");
  for (const auto& [state, count] : states) out.Sample("drover_nodes", {{"state", state}}, count);
}

constexpr size_t kReasonLength = 64;  // characters of a reason kept in a label
constexpr size_t kReasonSeries = 20;  // distinct reasons before the rest become "other"

// Bytes in the UTF-8 sequence this lead byte starts; 0 for a byte that cannot start one.
size_t Utf8Length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  return (lead >> 3) == 0x1E ? 4 : 0;
}

// Reasons are free text from scontrol or a health check: keep at most kReasonLength characters,
// cut on a UTF-8 character boundary, and replace bytes that are not UTF-8 (Prometheus rejects
// them).
std::string BoundReason(std::string_view reason) {
  std::string out;
  size_t characters = 0;
  for (size_t i = 0; i < reason.size() && characters < kReasonLength; ++characters) {
    size_t length = Utf8Length(static_cast<unsigned char>(reason[i]));
    bool valid = length > 0 && i + length <= reason.size();
    for (size_t k = 1; valid && k < length; ++k)
      valid = (static_cast<unsigned char>(reason[i + k]) >> 6) == 0x2;
    out += valid ? reason.substr(i, length) : "?";
    i += valid ? length : 1;
  }
  return out;
}

// The kReasonSeries most frequent reasons (ties by name, so the choice is stable).
std::set<std::string> FrequentReasons(const std::map<std::string, uint64_t>& counts) {
  std::vector<std::pair<uint64_t, std::string>> ranked;
  for (const auto& [reason, count] : counts) ranked.emplace_back(count, reason);
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::set<std::string> kept;
  for (size_t i = 0; i < ranked.size() && i < kReasonSeries; ++i) kept.insert(ranked[i].second);
  return kept;
}

void RenderUnavailableNodes(Exposition& out, const ClusterConfig& cluster, const Snapshot& snapshot,
                            const std::vector<NodeUsage>& usage) {
  std::vector<std::pair<std::string, std::string>> nodes;  // state, bounded reason
  std::map<std::string, uint64_t> reason_counts;
  for (size_t n = 0; n < NodeCount(cluster, snapshot); ++n) {
    if (!snapshot.nodes[n].down && !snapshot.nodes[n].drain) continue;
    nodes.emplace_back(NodeState(cluster, snapshot, usage, n),
                       BoundReason(snapshot.nodes[n].reason));
    ++reason_counts[nodes.back().second];
  }
  std::set<std::string> kept = FrequentReasons(reason_counts);
  std::map<std::pair<std::string, std::string>, uint64_t> series;
  for (const auto& [state, reason] : nodes)
    ++series[{state, kept.count(reason) ? reason : "other"}];
  out.Family("drover_nodes_unavailable", "gauge",
             "Drained and down nodes by state and reason (the 20 most frequent reasons; the rest "
             "are \"other\").");
  for (const auto& [key, count] : series)
    out.Sample("drover_nodes_unavailable", {{"state", key.first}, {"reason", key.second}}, count);
}

// --- resources, by partition (a node in two partitions counts in both, as sinfo shows it) ---

void RenderCpus(Exposition& out, const ClusterConfig& cluster, const Snapshot& snapshot,
                const std::vector<NodeUsage>& usage) {
  std::vector<views::PartitionLoad> loads;  // as sinfo sums them
  for (const PartitionConfig& partition : cluster.partitions)
    loads.push_back(views::LoadOf(partition, cluster, snapshot, usage));
  out.Family("drover_cpus_configured", "gauge", "Configured CPUs of each partition's nodes.");
  for (size_t p = 0; p < loads.size(); ++p)
    out.Sample("drover_cpus_configured", {{"partition", cluster.partitions[p].name}},
               loads[p].cpus);
  out.Family("drover_cpus_allocated", "gauge", "CPUs of each partition's nodes held by jobs.");
  for (size_t p = 0; p < loads.size(); ++p)
    out.Sample("drover_cpus_allocated", {{"partition", cluster.partitions[p].name}},
               loads[p].cpus_allocated);
}

constexpr uint64_t kBytesPerMb = 1048576;

void RenderMemory(Exposition& out, const ClusterConfig& cluster,
                  const std::vector<NodeUsage>& usage) {
  out.Family("drover_memory_bytes_configured", "gauge",
             "Configured memory (RealMemory) of each partition's nodes.");
  for (const PartitionConfig& partition : cluster.partitions) {
    uint64_t total = 0;
    for (int n : partition.nodes) total += cluster.nodes[n].real_memory_mb * kBytesPerMb;
    out.Sample("drover_memory_bytes_configured", {{"partition", partition.name}}, total);
  }
  out.Family("drover_memory_bytes_allocated", "gauge",
             "Memory of each partition's nodes held by jobs.");
  for (const PartitionConfig& partition : cluster.partitions) {
    uint64_t allocated = 0;
    for (int n : partition.nodes)
      allocated += std::min(usage[n].memory_mb, cluster.nodes[n].real_memory_mb) * kBytesPerMb;
    out.Sample("drover_memory_bytes_allocated", {{"partition", partition.name}}, allocated);
  }
}

// Type of a GPU by device index; "" when untyped or not configured.
std::string GpuType(const NodeConfig& node, int index) {
  for (const GpuDevice& gpu : node.gpus)
    if (gpu.index == index) return gpu.type;
  return "";
}

using GpuCounts = std::map<std::pair<std::string, std::string>, uint64_t>;  // partition, type

void RenderGpus(Exposition& out, const ClusterConfig& cluster,
                const std::vector<NodeUsage>& usage) {
  GpuCounts total, allocated;
  for (const PartitionConfig& partition : cluster.partitions)
    for (int n : partition.nodes) {
      for (const GpuDevice& gpu : cluster.nodes[n].gpus) {
        ++total[{partition.name, gpu.type}];
        allocated[{partition.name, gpu.type}] += 0;  // a known label set, shown at zero
      }
      for (int index : usage[n].gpus)
        ++allocated[{partition.name, GpuType(cluster.nodes[n], index)}];
    }
  out.Family("drover_gpus_configured", "gauge",
             "Configured GPUs of each partition's nodes by type.");
  for (const auto& [key, count] : total)
    out.Sample("drover_gpus_configured", {{"partition", key.first}, {"type", key.second}}, count);
  out.Family("drover_gpus_allocated", "gauge", "GPUs of each partition's nodes held by jobs.");
  for (const auto& [key, count] : allocated)
    out.Sample("drover_gpus_allocated", {{"partition", key.first}, {"type", key.second}}, count);
}

// Each probed GPU's readings (the agents' built-in NVML probes), labelled by node, index and
// UUID: how a dashboard finds the GPU that drained a node.
void RenderGpuHealth(Exposition& out, const ClusterConfig& cluster, const Snapshot& snapshot) {
  struct Metric {
    const char* name;
    const char* type;
    const char* help;
    double (*value)(const GpuHealth&);
  };
  static constexpr Metric kMetrics[] = {
      {"drover_gpu_healthy", "gauge", "1 when the GPU's probes found nothing wrong, else 0.",
       [](const GpuHealth& g) { return g.problem.empty() ? 1.0 : 0.0; }},
      {"drover_gpu_xid_errors_total", "counter", "XID errors seen since the agent started.",
       [](const GpuHealth& g) { return static_cast<double>(g.xid_errors); }},
      {"drover_gpu_last_xid", "gauge", "The last XID error seen (0: none).",
       [](const GpuHealth& g) { return static_cast<double>(g.last_xid); }},
      {"drover_gpu_ecc_dbe_volatile", "gauge", "Uncorrectable ECC errors since the last boot.",
       [](const GpuHealth& g) { return static_cast<double>(g.ecc_dbe_volatile); }},
      {"drover_gpu_ecc_dbe_aggregate", "gauge", "Uncorrectable ECC errors over the GPU's life.",
       [](const GpuHealth& g) { return static_cast<double>(g.ecc_dbe_aggregate); }},
      {"drover_gpu_retired_pages_dbe", "gauge", "Pages retired for double-bit ECC errors.",
       [](const GpuHealth& g) { return static_cast<double>(g.retired_pages_dbe); }},
      {"drover_gpu_retired_pages_pending", "gauge", "1 while a page retirement awaits a reset.",
       [](const GpuHealth& g) { return g.retired_pages_pending ? 1.0 : 0.0; }},
      {"drover_gpu_remapped_rows_failure", "gauge", "1 when row remapping has failed.",
       [](const GpuHealth& g) { return static_cast<double>(g.remapped_rows_failure); }},
      {"drover_gpu_remapped_rows_pending", "gauge", "1 while a row remapping awaits a reset.",
       [](const GpuHealth& g) { return g.remapped_rows_pending ? 1.0 : 0.0; }},
      {"drover_gpu_nvlinks_down", "gauge", "NVLinks active at discovery that are down now.",
       [](const GpuHealth& g) { return static_cast<double>(g.nvlinks_down); }},
      {"drover_gpu_throttle_reasons", "gauge",
       "NVML's clock throttle reason bits (idle and application clocks left out).",
       [](const GpuHealth& g) { return static_cast<double>(g.throttle_reasons); }},
      {"drover_gpu_lost", "gauge", "1 when the GPU is gone from the bus or replaced.",
       [](const GpuHealth& g) { return g.lost ? 1.0 : 0.0; }},
      {"drover_gpu_temperature_celsius", "gauge", "The GPU's temperature.",
       [](const GpuHealth& g) { return g.temperature_c; }},
  };
  bool any = std::any_of(snapshot.nodes.begin(), snapshot.nodes.end(),
                         [](const NodeStatus& node) { return !node.gpu_health.empty(); });
  if (!any) return;
  for (const Metric& metric : kMetrics) {
    out.Family(metric.name, metric.type, metric.help);
    for (size_t n = 0; n < snapshot.nodes.size() && n < cluster.nodes.size(); ++n)
      for (const GpuHealth& gpu : snapshot.nodes[n].gpu_health)
        out.Sample(metric.name,
                   {{"node", cluster.nodes[n].name},
                    {"gpu", std::to_string(gpu.index)},
                    {"uuid", gpu.uuid}},
                   metric.value(gpu));
  }
}

// --- fair share, counters, timings ---

void RenderFairShare(Exposition& out, const Snapshot& snapshot) {
  std::map<std::string, double> usage;
  for (const sched::Association& association : snapshot.associations)
    usage[association.account] += association.user.empty() ? 0 : association.usage;
  out.Family("drover_fairshare_usage", "gauge",
             "Decayed usage (billing-seconds) of each account's users, summed.");
  for (const auto& [account, value] : usage)
    out.Sample("drover_fairshare_usage", {{"account", account}}, value);
}

// GPUs held by running jobs, by account: the accounts sacctmgr knows (a job's own account name
// is the user's choice where accounting does not check it, so it never becomes a label), the
// rest "other".
void RenderGpusByAccount(Exposition& out, const ClusterConfig& cluster, const Snapshot& snapshot) {
  std::vector<size_t> every(cluster.nodes.size());
  std::iota(every.begin(), every.end(), size_t{0});
  std::map<std::string, uint64_t> by_account;
  if (snapshot.accounting)
    for (const acct::Account& account : snapshot.accounting->accounts) by_account[account.name];
  for (uint64_t id : JobsOnNodes(snapshot, every)) {
    const JobPtr* job = snapshot.jobs.Find(id);
    if (!job || !HoldsAllocation(**job)) continue;
    uint64_t gpus = 0;
    for (const sched::NodeAllocation& share : (*job)->allocation.nodes) gpus += share.gpus.size();
    if (gpus == 0) continue;
    const std::string& account = (*job)->spec.account;
    bool known = snapshot.accounting && snapshot.accounting->FindAccount(account) != nullptr;
    by_account[known ? account : std::string("other")] += gpus;
  }
  out.Family(
      "drover_gpus_allocated_by_account", "gauge",
      "GPUs held by running jobs, by account (accounts sacctmgr knows; the rest \"other\").");
  for (const auto& [account, count] : by_account)
    out.Sample("drover_gpus_allocated_by_account", {{"account", account}}, count);
}

void RenderJobCounters(Exposition& out, const Snapshot& snapshot) {
  out.Family("drover_jobs_submitted_total", "counter",
             "Jobs accepted since the controller started.");
  out.Sample("drover_jobs_submitted_total", {}, snapshot.submitted_total);
  out.Family("drover_jobs_started_total", "counter",
             "Job starts since the controller started (a requeued job's each time).");
  out.Sample("drover_jobs_started_total", {}, snapshot.started_total);
  out.Family("drover_job_wait_seconds", "histogram",
             "How long the jobs started since the controller started waited to start (from "
             "submission, or --begin).");
  const JobWaits& waits = snapshot.waits;
  for (size_t i = 0; i < JobWaits::kBounds.size(); ++i)
    out.Sample("drover_job_wait_seconds_bucket", {{"le", std::to_string(JobWaits::kBounds[i])}},
               waits.buckets[i]);
  out.Sample("drover_job_wait_seconds_bucket", {{"le", "+Inf"}}, waits.count);
  out.Sample("drover_job_wait_seconds_sum", {}, waits.sum_seconds);
  out.Sample("drover_job_wait_seconds_count", {}, waits.count);
  std::map<JobState, uint64_t> finished;
  for (JobState state : LiveStates())
    if (IsFinal(state)) finished[state] = 0;
  for (const auto& [state, count] : snapshot.finished_total) finished[state] = count;
  out.Family("drover_jobs_finished_total", "counter",
             "Jobs ended since the controller started, by final state.");
  for (const auto& [state, count] : finished)
    out.Sample("drover_jobs_finished_total", {{"state", JobStateName(state)}}, count);
}

void RenderHistogram(Exposition& out, std::string_view name, std::string_view help,
                     const Histogram& histogram) {
  out.Family(name, "histogram", help);
  std::string bucket = fmt::format("{}_bucket", name);
  // The engine thread observes while this reads: count first, then clamp each bucket between
  // the previous one and the count so the series stays cumulative.
  uint64_t count = histogram.count();
  uint64_t previous = 0;
  for (size_t i = 0; i < Histogram::kBounds.size(); ++i) {
    previous = std::min(std::max(previous, histogram.bucket(i)), count);
    out.Sample(bucket, {{"le", FormatValue(Histogram::kBounds[i])}}, previous);
  }
  out.Sample(bucket, {{"le", "+Inf"}}, count);
  out.Sample(fmt::format("{}_sum", name), {}, histogram.sum());
  out.Sample(fmt::format("{}_count", name), {}, count);
}

void RenderEngine(Exposition& out, const Snapshot& snapshot, const LoopStats& stats) {
  out.Family("drover_scheduler_cycles_total", "counter", "Scheduling cycles run since start.");
  out.Sample("drover_scheduler_cycles_total", {}, snapshot.cycles);
  out.Family("drover_scheduler_jobs_considered", "gauge",
             "Pending jobs the last scheduling cycle considered.");
  out.Sample("drover_scheduler_jobs_considered", {}, snapshot.last_cycle_considered);
  RenderHistogram(out, "drover_scheduler_cycle_seconds",
                  "Duration of engine batches that ran a scheduling cycle.", stats.cycle_seconds);
  RenderHistogram(out, "drover_store_commit_seconds",
                  "Duration of one store transaction (a group commit).", stats.commit_seconds);
  out.Family("drover_engine_batches_total", "counter", "Event batches the engine has applied.");
  out.Sample("drover_engine_batches_total", {}, stats.batches.load());
}

}  // namespace

std::string RenderMetrics(const ClusterConfig& cluster, const Snapshot& snapshot,
                          const LoopStats& stats) {
  Exposition out;
  std::vector<NodeUsage> usage = UsageByNode(cluster, snapshot);
  RenderJobs(out, cluster, snapshot);
  RenderPendingReasons(out, snapshot);
  RenderNodes(out, cluster, snapshot, usage);
  RenderUnavailableNodes(out, cluster, snapshot, usage);
  RenderCpus(out, cluster, snapshot, usage);
  RenderMemory(out, cluster, usage);
  RenderGpus(out, cluster, usage);
  RenderGpusByAccount(out, cluster, snapshot);
  RenderGpuHealth(out, cluster, snapshot);
  RenderFairShare(out, snapshot);
  RenderJobCounters(out, snapshot);
  RenderEngine(out, snapshot, stats);
  return out.Take();
}

}  // namespace drover::ctld
