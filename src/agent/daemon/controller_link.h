// droverd's side of the conversation with the controller, for every node the process serves:
// register (with the jobs still running there, so they are re-adopted), heartbeat with the
// health check's verdict (all the nodes' in one call), and report every job end until the
// controller has committed it.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "agent/daemon/agent.h"
#include "agent/host/gpu_health.h"
#include "common/mutex.h"
#include "proto/drover.grpc.pb.h"

namespace drover::agent {

struct LinkOptions {
  std::string controller;                  // host:port
  std::shared_ptr<grpc::Channel> channel;  // to `controller`, authenticated (auth::NewChannel)
  // Every controller's address in SlurmctldHost's order, `controller` first, when there are
  // several: registrations that no controller takes go to the next (a takeover), through
  // channels `connect` makes.
  std::vector<std::string> controllers;
  std::function<std::shared_ptr<grpc::Channel>(const std::string&)> connect;
  std::string address;  // where this agent listens, sent with Register
  std::chrono::milliseconds heartbeat{std::chrono::seconds(30)};
  std::chrono::milliseconds poll{std::chrono::milliseconds(20)};  // for ended jobs
  std::string health_program;                                     // empty: none
  std::chrono::seconds health_interval{0};
  // The built-in GPU probes (NVML, every health_interval): the library, or empty for none;
  // whether a node drained by a condition that clears (not an XID) resumes by itself.
  std::string nvml_library;
  bool gpu_health_resume = false;
};

class ControllerLink {
 public:
  // `agents`: every node this droverd serves (one, or many emulated nodes), which outlive it.
  ControllerLink(std::vector<Agent*> agents, LinkOptions options);
  ~ControllerLink();
  void Start();
  void Stop() EXCLUDES(mutex_);
  void Wake() EXCLUDES(mutex_);  // a job may have ended: look now
  void SetAddress(std::string address) { options_.address = std::move(address); }  // before Start
  // scontrol reboot of node `node` (an index into `agents`): runs `program` (bounded by
  // `timeout`) on the link's thread, then registers the node again as one that has booted. An
  // emulated node cannot restart its host: the program is what the site (or a test) makes of it.
  void Reboot(size_t node, std::string program, std::chrono::seconds timeout) EXCLUDES(mutex_);

 private:
  // What the link knows of one node: whether the controller counts it registered, and its
  // health check's verdict.
  struct Node {
    Agent* agent = nullptr;
    bool registered = false;
    bool healthy = true;
    bool health_latched = false;
    bool health_delivered = true;  // the controller has heard the verdict
    std::string health_output;
    std::unique_ptr<GpuHealthProbe> gpu_probe;  // null: no NVML GPUs to watch
    std::vector<GpuReading> gpu_readings;
  };

  void Run();
  // Registers every node not registered; false when some could not.
  bool Register();
  v1::RegisterRequest RegistrationOf(const Node& node) const;
  void Heartbeat();
  void ReportEnded(bool full);  // full: every supervisor checked (Agent::EndedJobs)
  void RunHealthCheck(Node& node);
  void RunReboots() EXCLUDES(mutex_);
  bool AllRegistered() const;
  // The next of options_.controllers: its channel and stub replace the current ones.
  void NextController();

  LinkOptions options_;
  std::vector<Node> nodes_;
  std::unique_ptr<v1::Controller::Stub> stub_;
  size_t controller_index_ = 0;  // in options_.controllers
  Mutex mutex_;
  CondVar wake_;
  bool stop_ GUARDED_BY(mutex_) = false;
  bool woken_ GUARDED_BY(mutex_) = false;  // Wake() since the loop last looked
  bool one_end_a_call_ = false;            // the controller has no JobsEnded (an earlier version)
  struct RebootOrder {
    size_t node;
    std::string program;
    std::chrono::seconds timeout;
  };
  std::vector<RebootOrder> reboots_ GUARDED_BY(mutex_);  // reboots to run
  std::thread thread_;
};

// Runs `program` with a timeout; true when it exits 0. `output` gets what it printed (trimmed).
// `node`, when given, is the program's SLURMD_NODENAME (a process may serve many nodes).
bool RunHealthProgram(const std::string& program, std::chrono::seconds timeout, std::string& output,
                      const std::string& node = "");

}  // namespace drover::agent
