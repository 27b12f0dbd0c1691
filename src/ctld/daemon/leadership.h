// High availability: which controller is in charge when slurm.conf names several SlurmctldHost
// lines. The controllers share a PostgreSQL database and its leader lease
// (ctld/store/leader_lease.h). A controller that does not hold the lease is a standby: it
// answers Ping alone (scontrol ping shows it UP; commands and agents go on to the next host) and
// takes the lease once it is free, then restores the state from the database and runs as the
// controller. The leader renews the lease; one that loses it (another took over while it was
// paused or cut off) exits at once, and its commits were fenced already.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>

#include "auth/auth.h"
#include "common/cluster_config.h"
#include "common/mutex.h"
#include "common/result.h"
#include "ctld/store/leader_lease.h"
#include "proto/drover.grpc.pb.h"

namespace drover::ctld {

// Which SlurmctldHost line this controller is.
struct ControllerSelf {
  std::string name;     // the line's name
  std::string address;  // "host:port" where the others and the commands reach it
  int port = 0;         // its port: the line's own, or SlurmctldPort
};

// `explicit_name` (droverctld --name) when given, else the line whose name is this host's short
// name; with one line or none, that one (or this host). Errors name the lines.
Result<ControllerSelf> FindSelf(const ClusterSettings& settings, const std::string& explicit_name,
                                const std::string& hostname);

// How long a lease lasts: SlurmctldTimeout, at least a second.
std::chrono::milliseconds LeaseLength(const ClusterSettings& settings);

// What a standby serves, for every method of every service: Ping answered, naming itself and
// the leader; any other call refused as UNAVAILABLE ("a standby; the leader is ..."), as a
// controller that is down is, so commands and agents go on to the next SlurmctldHost line (an
// agent never takes it for a controller of an earlier version, as UNIMPLEMENTED would say).
class StandbyService final : public grpc::CallbackGenericService {
 public:
  StandbyService(std::string cluster_name, std::string name, auth::Authenticator& authenticator)
      : cluster_name_(std::move(cluster_name)),
        name_(std::move(name)),
        authenticator_(authenticator) {}
  void SetLeader(std::string leader) EXCLUDES(mutex_);
  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override;
  // The Ping reply for a caller whose credential verifies, or who sends a token (the REST API's
  // ping; not checked here: the answer says only that this standby is up and who leads); the
  // status to refuse it with else.
  grpc::Status Ping(const grpc::ServerContextBase& context, v1::PingReply* reply) EXCLUDES(mutex_);
  std::string Leader() EXCLUDES(mutex_);

 private:
  const std::string cluster_name_, name_;
  auth::Authenticator& authenticator_;
  Mutex mutex_;
  std::string leader_ GUARDED_BY(mutex_);
};

// The lease this controller holds, and the thread that renews it.
class Leadership {
 public:
  // Serves StandbyService on `listen` until this controller takes the lease (nullopt when
  // `stopping` is set first). `port` is set to the port it listened on, which the controller
  // then listens on too.
  static Result<std::optional<std::unique_ptr<Leadership>>> Wait(
      const ClusterConfig& cluster, const ControllerSelf& self, const std::string& conninfo,
      const std::string& listen, std::shared_ptr<grpc::ServerCredentials> credentials,
      auth::Authenticator& authenticator, const std::atomic<bool>& stopping, int& port);
  ~Leadership();

  int64_t term() const { return term_; }
  // Renews the lease every quarter of it; exits the process (status 1) the moment it is lost,
  // or when it could not be renewed for a whole lease (the database out of reach: another
  // controller may lead by now).
  void StartRenewing();
  // Stops renewing and hands the lease back, so a standby takes over at once (a clean stop);
  // to the controller named `to` alone for a lease (scontrol takeover).
  void Release(const std::string& to = "");

 private:
  Leadership(std::unique_ptr<LeaderLease> lease, int64_t term, std::chrono::milliseconds length)
      : lease_(std::move(lease)), term_(term), length_(length) {}

  std::unique_ptr<LeaderLease> lease_;
  const int64_t term_;
  const std::chrono::milliseconds length_;
  Mutex mutex_;
  CondVar wake_;
  bool stop_ GUARDED_BY(mutex_) = false;
  std::thread renewer_;
};

}  // namespace drover::ctld
