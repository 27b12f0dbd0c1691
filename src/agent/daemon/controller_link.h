// droverd's side of the conversation with the controller: register (with the jobs still running
// here, so they are re-adopted), heartbeat with the health check's verdict, and report every
// job end until the controller has committed it.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "agent/daemon/agent.h"
#include "agent/host/gpu_health.h"
#include "common/mutex.h"
#include "proto/drover.grpc.pb.h"

namespace drover::agent {

struct LinkOptions {
  std::string controller;                  // host:port
  std::shared_ptr<grpc::Channel> channel;  // to `controller`, authenticated (auth::NewChannel)
  std::string address;                     // where this agent listens, sent with Register
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
  ControllerLink(Agent& agent, LinkOptions options);
  ~ControllerLink();
  void Start();
  void Stop() EXCLUDES(mutex_);
  void Wake() EXCLUDES(mutex_);  // a job may have ended: look now
  void SetAddress(std::string address) { options_.address = std::move(address); }  // before Start
  // scontrol reboot: runs `program` (bounded by `timeout`) on the link's thread, then registers
  // again as a node that has booted. An emulated node cannot restart its host: the program is
  // what the site (or a test) makes of a reboot.
  void Reboot(std::string program, std::chrono::seconds timeout) EXCLUDES(mutex_);

 private:
  void Run();
  bool Register();
  void Heartbeat();
  void ReportEnded();
  void RunHealthCheck();
  void RunReboot() EXCLUDES(mutex_);

  Agent& agent_;
  LinkOptions options_;
  std::unique_ptr<v1::Controller::Stub> stub_;
  bool registered_ = false;
  bool healthy_ = true;
  bool health_latched_ = false;
  bool health_delivered_ = true;  // the controller has heard the verdict
  std::string health_output_;
  std::unique_ptr<GpuHealthProbe> gpu_probe_;  // null: no NVML GPUs to watch
  std::vector<GpuReading> gpu_readings_;
  Mutex mutex_;
  CondVar wake_;
  bool stop_ GUARDED_BY(mutex_) = false;
  bool woken_ GUARDED_BY(mutex_) = false;  // Wake() since the loop last looked
  std::optional<std::string> reboot_program_ GUARDED_BY(mutex_);  // a reboot to run
  std::chrono::seconds reboot_timeout_ GUARDED_BY(mutex_) = std::chrono::seconds(0);
  std::thread thread_;
};

// Runs `program` with a timeout; true when it exits 0. `output` gets what it printed (trimmed).
bool RunHealthProgram(const std::string& program, std::chrono::seconds timeout,
                      std::string& output);

}  // namespace drover::agent
