// Who is asking, as the engine needs to know it: an authenticated uid and gid become a Caller
// with the user's name and groups from the controller's NSS (passwd, group) and the operator
// role. Called from the gRPC handler threads, never the engine thread (NSS may block on LDAP).
// The name and groups are cached per uid for GroupUpdateTime, as slurmctld caches groups.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/cluster_config.h"
#include "common/mutex.h"
#include "ctld/engine/events.h"

namespace drover::ctld {

// The controller's NSS lookups: a user name (or a number) to its uid; a gid's name (the number
// when the group database has none); a user's groups with `primary` among them.
std::optional<uint32_t> UidOfName(const std::string& name);
// A user the passwd database knows by this name (no numbers): its uid and primary gid.
std::optional<std::pair<uint32_t, uint32_t>> PasswdIdsOf(const std::string& name);
std::string GroupName(gid_t gid);
std::vector<uint32_t> GroupList(const std::string& user, gid_t primary);

class Callers {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  // Most users remembered at once; beyond it the expired entries go, then all of them.
  static constexpr size_t kMaxCached = 4096;

  explicit Callers(const ClusterSettings& settings, Clock clock = std::chrono::steady_clock::now);

  // The caller for a proven uid and gid. An uid NSS does not know is named by its number and
  // has only `gid` as its group.
  Caller Of(uint32_t uid, uint32_t gid) EXCLUDES(mutex_);

  // How many times NSS was asked about a user (cache misses).
  uint64_t lookups() const { return lookups_.load(); }

  // SlurmUser's uid, when NSS knows SlurmUser.
  std::optional<uint32_t> slurm_user_uid() const { return slurm_user_uid_; }

 private:
  struct Entry {
    std::string user;
    std::vector<uint32_t> groups;  // from the group database, with the passwd primary group
    std::vector<std::string> group_names;
    std::chrono::steady_clock::time_point expires;
  };
  static Entry LookUp(uint32_t uid);
  bool IsOperator(uint32_t uid) const;

  Clock clock_;
  std::chrono::seconds ttl_;
  std::optional<uint32_t> slurm_user_uid_;
  std::atomic<uint64_t> lookups_{0};
  Mutex mutex_;
  std::unordered_map<uint32_t, Entry> cache_ GUARDED_BY(mutex_);
};

}  // namespace drover::ctld
