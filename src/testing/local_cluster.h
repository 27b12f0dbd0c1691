// For tests and benchmarks: droverctld and emulated droverd agents started from the build on
// loopback, on ports chosen at run time, with state in a temporary directory; every process
// they start is stopped by PID (the jobs' supervisors too) when the cluster is destroyed.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "auth/auth.h"
#include "proto/drover.grpc.pb.h"

namespace drover::testing {

// A daemon this process started; SIGKILLed when destroyed unless stopped before.
class Daemon {
 public:
  Daemon() = default;
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;
  ~Daemon() { Stop(SIGKILL); }

  // Starts `argv` with stderr to `log` and waits (up to 5 s) for `port_file` to name a port;
  // returns it, or 0.
  int Start(std::vector<std::string> argv, const std::filesystem::path& log,
            const std::filesystem::path& port_file);
  void Stop(int signal);
  void Signal(int signal);  // kill(2), no wait
  // Waits for it to exit, SIGKILL once `limit` has passed; then reaps it.
  void StopWithin(std::chrono::milliseconds limit);
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = 0;
};

struct ClusterPaths {
  std::string droverctld, droverd;
};

class LocalCluster {
 public:
  // `conf` is slurm.conf's text; "SlurmctldHost=localhost(127.0.0.1)" is put first, and
  // auth/slurm with a key of the cluster's own (this process's user is SlurmUser) last. `nodes`
  // are the NodeNames to start agents for.
  LocalCluster(ClusterPaths paths, std::string conf, std::vector<std::string> nodes);
  ~LocalCluster();

  // Starts the controller and every agent and waits until every node is IDLE; false (with the
  // reason in error()) when that does not happen within 60 s.
  bool Boot();
  bool StartAgent(const std::string& node);
  // More arguments for every droverd started after this (e.g. --nvml with a stand-in library).
  void SetAgentArgs(std::vector<std::string> args) { agent_args_ = std::move(args); }
  void StopAgent(const std::string& node, int signal);
  void StopController(int signal) { ctld_.Stop(signal); }

  const std::filesystem::path& dir() const { return dir_; }
  v1::Controller::Stub& stub() { return *stub_; }  // calls as this process's user
  // Makes `context`'s call one of `uid`/`gid` (the test holds the key, as root could).
  void As(grpc::ClientContext& context, uint32_t uid, uint32_t gid);
  const std::string& error() const { return error_; }
  // The daemons' logs, for a failing test to print.
  std::string Logs() const;

  std::map<std::string, v1::NodeStatus> Nodes();
  std::string NodeState(const std::string& node) { return Nodes()[node].state(); }
  v1::Job Job(uint64_t id);
  // Polls `done` every 10 ms until it holds or `limit` passes.
  static bool WaitFor(const std::function<bool()>& done,
                      std::chrono::milliseconds limit = std::chrono::seconds(60));

 private:
  ClusterPaths paths_;
  std::filesystem::path dir_;
  std::vector<std::string> nodes_;
  std::vector<std::string> agent_args_;
  Daemon ctld_;
  std::map<std::string, std::unique_ptr<Daemon>> agents_;
  std::string controller_;
  std::unique_ptr<auth::Authenticator> authenticator_;
  std::unique_ptr<v1::Controller::Stub> stub_;
  std::string error_;
};

}  // namespace drover::testing
