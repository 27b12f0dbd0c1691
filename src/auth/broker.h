// auth/slurm's broker, both sides: the server (auth.h's StartBroker) hands a credential to each
// local process that connects, for the uid/gid the kernel reports; the client side lets a
// command that cannot read the key ask for one. The protocol is one line: the broker writes
// "TOKEN\n" and closes; it reads nothing, so a client cannot make it wait.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "common/result.h"

namespace drover::auth {

inline constexpr char kDefaultBrokerSocket[] = "/run/drover/auth.socket";

using SteadyClock = std::chrono::steady_clock;

// The broker's bound on each user: kBurst tokens at once, then kTokensPerSecond; a refused
// client finds the connection closed without a token.
class BrokerRateLimit {
 public:
  static constexpr double kTokensPerSecond = 200;
  static constexpr double kBurst = 400;
  static constexpr size_t kMaxBuckets = 4096;
  bool Allow(uint32_t uid, SteadyClock::time_point now);

 private:
  struct Bucket {
    double tokens;
    SteadyClock::time_point last;
  };
  std::unordered_map<uint32_t, Bucket> buckets_;
};

// A credential from the broker on `socket_path`; the error names the socket and the cause.
Result<std::string> RequestToken(const std::string& socket_path);

}  // namespace drover::auth
