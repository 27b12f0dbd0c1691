// droverd's Prometheus /metrics (DroverAgentMetricsPort, or --metrics-listen): for every node the
// process serves, the host's CPU time and memory, each GPU's NVML readings (utilization, memory,
// temperature, power, uncorrected ECC errors, XIDs from the health probes) and allocation, and
// each running job's cgroup CPU time and memory with the GPUs it holds and their use.
//
// Labels are bounded: node names and GPU indexes come from the configuration, job IDs and users
// from the jobs running here (as many as the node holds), nothing from what a job names itself
// (no job name, comment or account: accounts are the controller's, by accounting).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "agent/daemon/agent.h"
#include "common/result.h"

namespace httplib {
class Server;
}

namespace drover::agent {

// The /metrics text (Prometheus' format 0.0.4) of `agents` (their GPUs' readings through each
// one's gpu_reader(): none for emulated or gres.conf GPUs). `proc`: where /proc is.
std::string RenderNodeMetrics(const std::vector<Agent*>& agents, const std::string& proc = "/proc");

// The HTTP server for it, on threads of its own.
class MetricsServer {
 public:
  explicit MetricsServer(std::vector<Agent*> agents);
  ~MetricsServer();  // stops
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;
  // Binds host:port (port 0: any free port) and serves until destroyed.
  Status Start(const std::string& host, int port);
  int port() const { return port_; }

 private:
  std::vector<Agent*> agents_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::atomic<bool> serving_done_{false};
  int port_ = 0;
};

}  // namespace drover::agent
