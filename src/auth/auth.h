// Who is calling, proven: the credential a local trusted daemon vouches for (MUNGE's munged, or
// the cluster key of auth/slurm and its broker), never a uid the message claims. Every RPC
// carries one fresh credential; the receiver decodes it once (a replayed or expired one is
// refused) and the uid/gid it names are the caller's. The controller also seals claims about a
// job (the job credential) that only the agents' verification accepts. See docs/security.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/cluster_config.h"
#include "common/result.h"

namespace drover::auth {

struct Identity {
  uint32_t uid = 0;
  uint32_t gid = 0;
  bool operator==(const Identity&) const = default;
};

enum class Scheme { kNone, kMunge, kSlurm };

// AuthType and AuthInfo, read as Slurm reads them.
//   auth/munge: AuthInfo socket=PATH (munged's socket; default libmunge's), ttl=SECONDS.
//   auth/slurm: AuthInfo key=PATH (default: slurm.key beside slurm.conf), socket=PATH (the
//     broker that droverd and `drover authd` serve to users who cannot read the key; default
//     /run/drover/auth.socket), ttl=SECONDS (a token's lifetime; default 60).
//   auth/none: no authentication at all; every daemon warns at start.
struct Settings {
  Scheme scheme = Scheme::kMunge;
  std::string socket;               // munged's, or the auth/slurm broker's
  std::string key_path;             // auth/slurm
  int64_t ttl_seconds = 0;          // 0: the scheme's default
  std::string slurm_user = "root";  // SlurmUser: whose credentials are the daemons'
  // AuthAltTypes=auth/jwt with AuthAltParameters (jwt.h): jwt_key=PATH (default
  // StateSaveLocation/jwt_hs256.key, as Slurm's), disable_token_creation,
  // max_token_lifespan=SECONDS.
  bool jwt = false;
  std::string jwt_key_path;
  bool token_creation = true;
  int64_t max_token_lifespan_seconds = 0;  // 0: no bound but the request's
};
// An error names the key and the value it cannot use.
Result<Settings> SettingsOf(const ClusterConfig& cluster);

// A sealed claim opened: who sealed it (a daemon: root or SlurmUser) and what it says.
struct Sealed {
  Identity sealer;
  std::string payload;
};

// One process's side of authentication. Thread-safe.
class Authenticator {
 public:
  virtual ~Authenticator() = default;
  // A fresh credential proving this process's uid/gid, good for one call within its ttl.
  virtual Result<std::string> Credential() = 0;
  // The identity a credential proves; refuses a malformed, badly signed, expired or replayed
  // one (each with its own message).
  virtual Result<Identity> Verify(std::string_view credential) = 0;
  // Daemons only (root or SlurmUser; auth/slurm: whoever can read the key): a claim about a job
  // that Open accepts, until `ttl_seconds` pass, however often it is presented.
  virtual Result<std::string> Seal(std::string_view payload, int64_t ttl_seconds) = 0;
  virtual Result<Sealed> Open(std::string_view sealed) = 0;
  virtual Scheme scheme() const = 0;
};

enum class Role {
  kClient,  // a command: auth/slurm signs with the key when it can read it, else asks the broker
  kDaemon,  // droverctld, droverd, drover authd: must be able to verify and seal
};
// Errors say what is missing and how to fix it (munged not running, key unreadable, ...). A
// daemon's authenticator checks itself once (a credential it makes must verify).
Result<std::unique_ptr<Authenticator>> Create(const Settings& settings, Role role);

// auth/slurm only: a credential for `identity`, signed with the key. The broker's way of serving
// users who cannot read the key, and the tests' way of calling as another user; whoever can read
// the key can already be anyone. `issued_at` (seconds since the epoch; 0: now) lets a test make
// an expired one.
Result<std::string> CredentialFor(const Settings& settings, const Identity& identity,
                                  int64_t issued_at = 0);

// uid 0 or SlurmUser's uid: the identities whose calls are the daemons'.
bool IsDaemonIdentity(const Identity& identity, const Settings& settings);

// auth/slurm: a new random key, written to `path` with mode 0600 (an existing file is not
// overwritten unless `replace`).
Status WriteKey(const std::string& path, bool replace);

// auth/slurm's broker: serves tokens on settings.socket to local processes, for the uid/gid the
// kernel reports (SO_PEERCRED). Runs on its own thread until destroyed.
class Broker {
 public:
  virtual ~Broker() = default;
  virtual std::string path() const = 0;
};
// Only one broker serves a socket on a host; when another live one already does, returns null
// (not an error). `authenticator` must be a kDaemon one of auth/slurm and outlive the broker.
Result<std::unique_ptr<Broker>> StartBroker(const Settings& settings, Authenticator& authenticator);

}  // namespace drover::auth
