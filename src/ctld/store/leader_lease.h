// Which of several controllers is in charge: a lease row in the PostgreSQL database they share
// (table drover_leader, one row). The controller that holds it is the leader, under a term
// number that grows by one at every change of holder; every commit of the leader's store is
// fenced by that term (OpenPostgresStore's fence_term), so a leader that was paused past its
// lease and resumes after another took over cannot write one more row.
//
// Times are the database server's (clock_timestamp()): the controllers' clocks never matter.
// A lease lasts SlurmctldTimeout; the leader renews it several times per lease; a standby takes
// it once it has expired, or at once when it was released (a controller stopped cleanly) or
// when its holder is a dead process on the same host (a controller restarted after a crash need
// not wait out its own lease).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/result.h"

namespace drover::ctld {

// The lease row as read.
struct LeaseState {
  int64_t term = 0;      // 0: nobody has ever led
  std::string holder;    // the SlurmctldHost name of the leader; empty when released
  std::string address;   // where its gRPC service listens ("host:port")
  std::string instance;  // "<boot id>/<pid>/<start time>" of the leader's process
  bool expired = true;   // by the database's clock
  bool recent = false;   // it ended less than a lease ago
};

class LeaderLease {
 public:
  virtual ~LeaderLease() = default;
  // Takes the lease when nobody holds it (expired, released, or held by a dead process of this
  // host): the new term, or nullopt when another controller holds it. Errors are the
  // database's (it is down, say): the caller tries again.
  virtual Result<std::optional<int64_t>> TryAcquire() = 0;
  // Extends the lease of `term` by a full lease: false when another controller has taken it
  // (this one must stop acting as the leader at once).
  virtual Result<bool> Renew(int64_t term) = 0;
  // Ends the lease of `term` now (a controller stopping cleanly): a standby takes it at its next
  // look, without waiting for the lease to run out.
  // With `to` (scontrol takeover), only the controller of that name may take it for the next
  // lease; any may after that.
  virtual Status Release(int64_t term, const std::string& to = "") = 0;
  virtual Result<LeaseState> Read() = 0;
};

// The lease in the database `conninfo` names, for the controller `name` (its SlurmctldHost
// line) listening at `address`; creates the table and the fence function when missing.
Result<std::unique_ptr<LeaderLease>> OpenLeaderLease(const std::string& conninfo,
                                                     const std::string& name,
                                                     const std::string& address,
                                                     std::chrono::milliseconds lease);

// "<boot id>/<pid>/<start time>" of this process, as a lease records its holder.
std::string ThisInstance();

}  // namespace drover::ctld
