// See node_metrics.h.
#include "agent/daemon/node_metrics.h"

#include <httplib.h>
#include <sys/socket.h>

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

namespace drover::agent {
namespace {

// Scrapes are rare: two threads, so one slow scrape does not hold the next.
constexpr size_t kServerThreads = 2;

std::string Escape(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// Prometheus' text format: each family's HELP and TYPE once, then every sample of it (from
// every node), families in the order first declared.
class Text {
 public:
  void Family(std::string_view name, std::string_view type, std::string_view help) {
    auto [family, added] = families_.try_emplace(std::string(name));
    if (!added) return;
    order_.push_back(family->first);
    family->second = fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  using Labels = std::vector<std::pair<std::string_view, std::string>>;
  // `name`'s family must have been declared.
  void Sample(std::string_view name, const Labels& labels, double value) {
    std::string& out = families_.at(std::string(name));
    out += name;
    if (!labels.empty()) {
      out += '{';
      bool first = true;
      for (const auto& [key, label] : labels) {
        out += fmt::format("{}{}=\"{}\"", first ? "" : ",", key, Escape(label));
        first = false;
      }
      out += '}';
    }
    out += fmt::format(" {}\n", value);
  }
  std::string Take() {
    std::string out;
    for (const std::string& name : order_) out += families_.at(name);
    return out;
  }

 private:
  std::map<std::string, std::string> families_;  // name -> its lines
  std::vector<std::string> order_;
};

struct HostReading {
  std::map<std::string, double> cpu_seconds;  // by mode
  std::optional<uint64_t> memory_total, memory_available;
  std::optional<double> load1;
};

HostReading ReadHost(const std::string& proc) {
  HostReading host;
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100);
  std::ifstream stat(proc + "/stat");
  std::string label;
  if (stat >> label && label == "cpu") {
    // user nice system idle iowait irq softirq steal (guest time is inside user's)
    uint64_t ticks[8] = {};
    for (uint64_t& tick : ticks) stat >> tick;
    if (stat) {
      host.cpu_seconds["user"] = static_cast<double>(ticks[0] + ticks[1]) / hz;
      host.cpu_seconds["system"] = static_cast<double>(ticks[2] + ticks[5] + ticks[6]) / hz;
      host.cpu_seconds["idle"] = static_cast<double>(ticks[3]) / hz;
      host.cpu_seconds["iowait"] = static_cast<double>(ticks[4]) / hz;
      host.cpu_seconds["steal"] = static_cast<double>(ticks[7]) / hz;
    }
  }
  std::ifstream meminfo(proc + "/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib) {
    std::getline(meminfo, unit);
    if (key == "MemTotal:") host.memory_total = kib * 1024;
    if (key == "MemAvailable:") host.memory_available = kib * 1024;
  }
  std::ifstream loadavg(proc + "/loadavg");
  double load = 0;
  if (loadavg >> load) host.load1 = load;
  return host;
}

void RenderNode(Text& text, Agent& agent, const HostReading& host) {
  const std::string name = agent.node_name();
  std::vector<Agent::JobUsage> jobs = agent.JobUsages();
  text.Family("drover_node_cpus", "gauge", "CPUs the node has (its configuration).");
  text.Sample("drover_node_cpus", {{"node", name}}, agent.host().cpus);
  text.Family("drover_node_cpu_seconds_total", "counter",
              "CPU time of the node's host by mode (an emulated node reports its host's).");
  for (const auto& [mode, seconds] : host.cpu_seconds)
    text.Sample("drover_node_cpu_seconds_total", {{"node", name}, {"mode", mode}}, seconds);
  if (host.memory_total) {
    text.Family("drover_node_memory_total_bytes", "gauge", "Memory of the node's host.");
    text.Sample("drover_node_memory_total_bytes", {{"node", name}},
                static_cast<double>(*host.memory_total));
  }
  if (host.memory_available) {
    text.Family("drover_node_memory_available_bytes", "gauge",
                "Memory available for new work on the node's host (MemAvailable).");
    text.Sample("drover_node_memory_available_bytes", {{"node", name}},
                static_cast<double>(*host.memory_available));
  }
  if (host.load1) {
    text.Family("drover_node_load1", "gauge", "The host's one-minute load average.");
    text.Sample("drover_node_load1", {{"node", name}}, *host.load1);
  }
  // The node's partitions, to group its GPUs' readings by partition (PromQL's group_left).
  const ClusterConfig& cluster = agent.cluster();
  const int node_index = cluster.FindNode(name);
  for (const PartitionConfig& partition : cluster.partitions)
    if (std::find(partition.nodes.begin(), partition.nodes.end(), node_index) !=
        partition.nodes.end()) {
      text.Family("drover_node_partition", "gauge", "1 for each partition the node is in.");
      text.Sample("drover_node_partition", {{"node", name}, {"partition", partition.name}}, 1);
    }
  text.Family("drover_node_jobs", "gauge", "Jobs running on the node.");
  text.Sample("drover_node_jobs", {{"node", name}}, static_cast<double>(jobs.size()));

  // GPUs: which job holds each, NVML's readings, the health probes' XIDs.
  std::map<int, const Agent::JobUsage*> holder;
  for (const Agent::JobUsage& job : jobs)
    for (int gpu : job.gpus) holder[gpu] = &job;
  text.Family("drover_node_gpus", "gauge", "GPUs the node has.");
  text.Sample("drover_node_gpus", {{"node", name}}, static_cast<double>(agent.gpus().gpus.size()));
  text.Family("drover_node_gpu_allocated", "gauge", "1 while a running job holds the GPU.");
  for (const Gpu& gpu : agent.gpus().gpus)
    text.Sample("drover_node_gpu_allocated", {{"node", name}, {"gpu", std::to_string(gpu.index)}},
                holder.count(gpu.index) ? 1 : 0);
  std::map<int, GpuSample> samples;
  if (GpuMetricsReader* reader = agent.gpu_reader())
    for (GpuSample& sample : reader->Read()) samples[sample.index] = std::move(sample);
  for (const auto& [index, sample] : samples) {
    const std::string gpu = std::to_string(index);
    auto gauge = [&](std::string_view metric, std::string_view help,
                     const std::optional<double>& value) {
      if (!value) return;
      text.Family(metric, "gauge", help);
      text.Sample(metric, {{"node", name}, {"gpu", gpu}}, *value);
    };
    text.Family("drover_node_gpu_info", "gauge", "A GPU NVML reports: its UUID and product name.");
    text.Sample("drover_node_gpu_info",
                {{"node", name}, {"gpu", gpu}, {"uuid", sample.uuid}, {"model", sample.name}}, 1);
    text.Family("drover_node_gpu_lost", "gauge", "1 when NVML cannot reach the GPU.");
    text.Sample("drover_node_gpu_lost", {{"node", name}, {"gpu", gpu}}, sample.lost ? 1 : 0);
    gauge("drover_node_gpu_utilization_ratio", "The GPU's utilization (NVML, 0 to 1).",
          sample.utilization);
    gauge("drover_node_gpu_memory_utilization_ratio",
          "The share of time the GPU's memory was read or written (NVML, 0 to 1).",
          sample.memory_utilization);
    auto bytes = [](const std::optional<uint64_t>& value) -> std::optional<double> {
      if (!value) return std::nullopt;
      return static_cast<double>(*value);
    };
    gauge("drover_node_gpu_memory_used_bytes", "GPU memory in use.",
          bytes(sample.memory_used_bytes));
    gauge("drover_node_gpu_memory_total_bytes", "GPU memory.", bytes(sample.memory_total_bytes));
    gauge("drover_node_gpu_temperature_celsius", "The GPU's temperature.", sample.temperature_c);
    gauge("drover_node_gpu_power_watts", "The GPU's power draw.", sample.power_watts);
    gauge("drover_node_gpu_ecc_uncorrected_volatile_errors",
          "Uncorrected ECC errors since the driver loaded.",
          bytes(sample.ecc_uncorrected_volatile));
    if (sample.ecc_uncorrected_aggregate) {
      text.Family("drover_node_gpu_ecc_uncorrected_errors_total", "counter",
                  "Uncorrected ECC errors over the GPU's life.");
      text.Sample("drover_node_gpu_ecc_uncorrected_errors_total", {{"node", name}, {"gpu", gpu}},
                  static_cast<double>(*sample.ecc_uncorrected_aggregate));
    }
  }
  for (const GpuHealth& health : agent.GpuHealthNow()) {
    text.Family("drover_node_gpu_xid_errors_total", "counter",
                "XID events the agent's health probes saw since it started.");
    text.Sample("drover_node_gpu_xid_errors_total",
                {{"node", name}, {"gpu", std::to_string(health.index)}},
                static_cast<double>(health.xid_errors));
    text.Family("drover_node_gpu_last_xid", "gauge", "The last XID seen on the GPU (0: none).");
    text.Sample("drover_node_gpu_last_xid", {{"node", name}, {"gpu", std::to_string(health.index)}},
                health.last_xid);
  }

  // Jobs: their cgroup's use, their GPUs and what those are doing.
  for (const Agent::JobUsage& job : jobs) {
    const std::string id = std::to_string(job.job_id);
    const Text::Labels job_labels = {
        {"node", name}, {"job_id", id}, {"user", job.user}, {"account", job.account}};
    auto labels = [&job_labels]() -> const Text::Labels& { return job_labels; };
    if (job.cpu_seconds) {
      text.Family("drover_job_cpu_seconds_total", "counter",
                  "CPU time of the job's processes on the node (its cgroup).");
      text.Sample("drover_job_cpu_seconds_total", labels(), *job.cpu_seconds);
    }
    if (job.memory_bytes) {
      text.Family("drover_job_memory_bytes", "gauge", "Memory the job's cgroup holds now.");
      text.Sample("drover_job_memory_bytes", labels(), static_cast<double>(*job.memory_bytes));
    }
    if (job.peak_memory_bytes) {
      text.Family("drover_job_memory_peak_bytes", "gauge",
                  "The most memory the job's cgroup held.");
      text.Sample("drover_job_memory_peak_bytes", labels(),
                  static_cast<double>(*job.peak_memory_bytes));
    }
    text.Family("drover_job_gpus", "gauge", "GPUs the job holds on the node.");
    text.Sample("drover_job_gpus", labels(), static_cast<double>(job.gpus.size()));
    double utilization = 0, memory = 0;
    int read = 0;
    for (int gpu : job.gpus) {
      auto found = samples.find(gpu);
      if (found == samples.end() || !found->second.utilization) continue;
      utilization += *found->second.utilization;
      memory += static_cast<double>(found->second.memory_used_bytes.value_or(0));
      ++read;
    }
    if (read > 0) {
      text.Family("drover_job_gpu_utilization_ratio", "gauge",
                  "The mean utilization of the job's GPUs on the node (NVML, 0 to 1).");
      text.Sample("drover_job_gpu_utilization_ratio", labels(), utilization / read);
      text.Family("drover_job_gpu_memory_used_bytes", "gauge",
                  "GPU memory in use on the job's GPUs on the node.");
      text.Sample("drover_job_gpu_memory_used_bytes", labels(), memory);
    }
  }
}

}  // namespace

std::string RenderNodeMetrics(const std::vector<Agent*>& agents, const std::string& proc) {
  const HostReading host = ReadHost(proc);
  Text text;  // one for every node: each family's samples stay together, as Prometheus wants
  for (Agent* agent : agents) RenderNode(text, *agent, host);
  return text.Take();
}

MetricsServer::MetricsServer(std::vector<Agent*> agents)
    : agents_(std::move(agents)), server_(std::make_unique<httplib::Server>()) {
  server_->new_task_queue = [] { return new httplib::ThreadPool(kServerThreads); };
  server_->set_socket_options([](socket_t socket) {
    int yes = 1;
    setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server_->set_read_timeout(10);
  server_->set_payload_max_length(4096);
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& response) {
    response.set_content(RenderNodeMetrics(agents_), "text/plain; version=0.0.4");
  });
  server_->Get("/", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("droverd: Prometheus metrics at /metrics\n", "text/plain");
  });
}

MetricsServer::~MetricsServer() {
  if (!thread_.joinable()) return;
  while (!server_->is_running() && !serving_done_)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  server_->stop();
  thread_.join();
}

Status MetricsServer::Start(const std::string& host, int port) {
  port_ =
      port == 0 ? server_->bind_to_any_port(host) : (server_->bind_to_port(host, port) ? port : -1);
  if (port_ <= 0) {
    port_ = 0;
    return MakeError(fmt::format("cannot listen for /metrics on {}:{}", host, port));
  }
  thread_ = std::thread([this] {
    server_->listen_after_bind();
    serving_done_ = true;
  });
  return OkStatus();
}

}  // namespace drover::agent
