// What sdiag shows of the controller's RPCs: for each method and each user, how many calls and
// how long they took (from the call's arrival to its status leaving, as slurmctld times its
// RPCs). A gRPC server interceptor times every call; admission (service_admission.cc) names the
// call's proven user. Thread-safe; `sdiag -r` resets it.
#pragma once

#include <grpcpp/support/server_interceptor.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/mutex.h"

namespace drover::ctld {

class RpcStats {
 public:
  struct Entry {
    std::string name;  // the method ("Submit"), or the user's uid as text
    uint32_t id = 0;   // by method: its place among the known methods (sdiag -i)
    uint32_t uid = 0;  // by user only
    uint64_t count = 0;
    uint64_t total_micros = 0;
  };
  // Most users counted apart; the calls of further users count under uid 4294967295.
  static constexpr size_t kMaxUsers = 4096;

  // The methods served ("/drover.v1.Controller/Submit"), before serving: any other path a
  // client names counts as "UNKNOWN", so the table stays bounded.
  explicit RpcStats(std::vector<std::string> methods = {});

  // A call arrives (the interceptor).
  void Begin(const void* call) EXCLUDES(mutex_);
  // Its proven caller (admission); a call that never gets here counts by method only.
  void NameCaller(const void* call, uint32_t uid) EXCLUDES(mutex_);
  // Its status leaves: `method` is gRPC's "/drover.v1.Controller/Submit".
  void End(const void* call, const std::string& method) EXCLUDES(mutex_);
  // The call is gone (a call that ended without a status counts nowhere).
  void Forget(const void* call) EXCLUDES(mutex_);

  std::vector<Entry> ByMethod() const EXCLUDES(mutex_);
  std::vector<Entry> ByUser() const EXCLUDES(mutex_);
  int64_t since() const EXCLUDES(mutex_);       // when counting began (seconds since the epoch)
  size_t in_progress() const EXCLUDES(mutex_);  // calls arrived and not yet answered
  void Reset() EXCLUDES(mutex_);

  // The interceptors for grpc::ServerBuilder::experimental().SetInterceptorCreators.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> InterceptorFactory();

 private:
  struct Open {
    std::chrono::steady_clock::time_point started;
    std::optional<uint32_t> uid;
  };
  struct Totals {
    uint64_t count = 0, micros = 0;
  };
  const std::vector<std::string> methods_;  // sorted
  mutable Mutex mutex_;
  std::unordered_map<const void*, Open> open_ GUARDED_BY(mutex_);
  std::map<std::string, Totals> by_method_ GUARDED_BY(mutex_);
  std::map<uint32_t, Totals> by_user_ GUARDED_BY(mutex_);
  int64_t since_ GUARDED_BY(mutex_) = 0;
};

}  // namespace drover::ctld
