// Carries the engine's launches, signals and terminations to the agents over gRPC, on its own
// thread, retrying launches that did not get through (an agent runs a launch it has seen once).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "auth/auth.h"
#include "common/cluster_config.h"
#include "common/mutex.h"
#include "ctld/daemon/engine_loop.h"
#include "ctld/daemon/mailer.h"
#include "proto/drover.grpc.pb.h"

namespace drover::ctld {

class AgentDispatcher : public EffectSink {
 public:
  // `authenticator` (a daemon's; it outlives the dispatcher) proves the controller on every call
  // and seals each launch's job credential.
  AgentDispatcher(std::shared_ptr<const ClusterConfig> cluster, auth::Authenticator& authenticator,
                  auth::Settings auth_settings);
  ~AgentDispatcher() override;

  void Launch(const drover::ctld::Launch& launch, std::string script,
              std::vector<std::string> environment) override;
  void Signal(const SignalJob& signal) override;
  void Terminate(const TerminateJob& terminate) override;
  void Reboot(const RebootNode& reboot) override;
  void Reconfigured(std::shared_ptr<const ClusterConfig> cluster) override;
  // scontrol notify: the message to the job's batch shell on `node` (its stderr).
  void Notify(int node, uint64_t job_id, const std::string& message);
  void Mail(const MailJob& mail) override { mailer_.Send(mail); }
  // The address (host:port) an agent registered with; replaces slurm.conf's NodeAddr/Port.
  void SetAddress(int node, std::string address);
  // sdiag: calls waiting for a worker, calls under way, and the workers.
  struct Load {
    size_t queued = 0, busy = 0, workers = 0;
  };
  Load CurrentLoad() EXCLUDES(mutex_);
  // Where the node's agent is: its registered address, else slurm.conf's NodeAddr:Port.
  std::string AddressOf(int node);

 private:
  struct LaunchParts {
    v1::LaunchRequest request;  // without its credential: sealed for each attempt
    v1::JobCredential claims;
  };
  struct Call {
    // The node the call goes to; a relay's span besides (the call goes to the first's agent).
    std::vector<int> nodes;
    uint64_t job_id;  // calls about one job on one node go in order
    std::function<grpc::Status(v1::Agent::Stub&, grpc::ClientContext&)> send;
    int attempts_left;
    std::chrono::steady_clock::time_point not_before;
    bool relay = false;  // a Relay call: routed by its targets, not by drover-node
    // A launch: sent with the others due for the same agent address in one LaunchMany call.
    std::shared_ptr<const LaunchParts> launch = nullptr;
  };
  static constexpr size_t kAtBack = static_cast<size_t>(-1);
  // `front`: the call's position from the queue's front (kAtBack: at the back).
  void Enqueue(int node, uint64_t job_id,
               std::function<grpc::Status(v1::Agent::Stub&, grpc::ClientContext&)> send,
               int attempts, size_t front = kAtBack);
  template <typename Request, typename Rpc>
  void EnqueueOnNodes(const std::vector<int>& nodes, uint64_t job_id, const Request& request,
                      Rpc rpc, int attempts, bool front = false);
  // A signal or termination for several nodes: down the tree of agents (TreeWidth), one Relay
  // call per span of the controller's; the nodes a relay did not reach get direct calls.
  template <typename Request, typename Rpc>
  void RelayToNodes(const std::vector<int>& nodes, uint64_t job_id, const Request& request, Rpc rpc,
                    int attempts);
  void Run();
  // The next call that is due, with the launches due for the same agent address when it is a
  // launch, each marked busy; empty once stopping.
  std::vector<Call> NextCalls() EXCLUDES(mutex_);
  std::deque<Call>::iterator FirstDue(std::chrono::steady_clock::time_point now) REQUIRES(mutex_);
  // Takes out of the queue the launches due for `address` that keep each (node, job)'s order.
  void GatherLaunches(const std::string& address, std::chrono::steady_clock::time_point now,
                      std::vector<Call>& calls) REQUIRES(mutex_);
  // Several launches in one LaunchMany call; those that did not start are tried again.
  void SendLaunches(std::vector<Call>& calls);
  // A call done: its (node, job) free again; a failed one queued again while it has tries left.
  void Done(Call& call, bool ok) REQUIRES(mutex_);
  std::string AddressLocked(int node) REQUIRES(mutex_);
  std::shared_ptr<v1::Agent::Stub> StubFor(int node) EXCLUDES(stubs_mutex_);

  std::shared_ptr<const ClusterConfig> cluster() EXCLUDES(mutex_);
  auth::Authenticator& authenticator_;
  const auth::Settings auth_settings_;

  // Per agent address, its stub: the nodes one agent process serves share its connection (each
  // call names its node). A worker keeps its own reference while it calls, so a stub dropped
  // meanwhile lives on.
  Mutex stubs_mutex_;
  std::map<std::string, std::shared_ptr<v1::Agent::Stub>> stubs_ GUARDED_BY(stubs_mutex_);
  Mutex mutex_;
  CondVar wake_;
  std::shared_ptr<const ClusterConfig> cluster_ GUARDED_BY(mutex_);  // nodes never change
  std::map<int, std::string> addresses_ GUARDED_BY(mutex_);          // registered
  // Agents that answered LaunchMany as unknown (an earlier version): one launch a call.
  std::set<std::string> unbatched_ GUARDED_BY(mutex_);
  std::deque<Call> queue_ GUARDED_BY(mutex_);
  // (node, job) a worker is calling about now
  std::set<std::pair<int, uint64_t>> busy_ GUARDED_BY(mutex_);
  bool stop_ GUARDED_BY(mutex_) = false;
  Mailer mailer_;  // MailProg runs: not the agents', but carried out beside them
  static constexpr int kWorkers = 8;
  std::vector<std::thread> workers_;
};

}  // namespace drover::ctld
