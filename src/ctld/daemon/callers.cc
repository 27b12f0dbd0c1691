// See callers.h.
#include "ctld/daemon/callers.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>

namespace drover::ctld {
namespace {

// Room for one NSS record; grown when NSS says ERANGE.
std::vector<char> Buffer(int name) {
  long size = sysconf(name);
  return std::vector<char>(size > 0 ? static_cast<size_t>(size) : 16384);
}

}  // namespace

std::optional<uint32_t> UidOfName(const std::string& name) {
  uint32_t number = 0;
  auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), number);
  if (error == std::errc() && end == name.data() + name.size()) return number;
  std::vector<char> buffer = Buffer(_SC_GETPW_R_SIZE_MAX);
  passwd entry{}, *found = nullptr;
  while (getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) == ERANGE)
    buffer.resize(buffer.size() * 2);
  if (!found) return std::nullopt;
  return found->pw_uid;
}

std::optional<std::pair<uint32_t, uint32_t>> PasswdIdsOf(const std::string& name) {
  std::vector<char> buffer = Buffer(_SC_GETPW_R_SIZE_MAX);
  passwd entry{}, *found = nullptr;
  while (getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) == ERANGE)
    buffer.resize(buffer.size() * 2);
  if (!found) return std::nullopt;
  return std::make_pair(uint32_t(found->pw_uid), uint32_t(found->pw_gid));
}

std::string GroupName(gid_t gid) {
  std::vector<char> buffer = Buffer(_SC_GETGR_R_SIZE_MAX);
  group entry{}, *found = nullptr;
  while (getgrgid_r(gid, &entry, buffer.data(), buffer.size(), &found) == ERANGE)
    buffer.resize(buffer.size() * 2);
  return found && found->gr_name ? found->gr_name : std::to_string(gid);
}

// The user's groups as the group database lists them, with `primary` among them.
std::vector<uint32_t> GroupList(const std::string& user, gid_t primary) {
  std::vector<gid_t> groups(64);
  int count = static_cast<int>(groups.size());
  while (getgrouplist(user.c_str(), primary, groups.data(), &count) < 0) {
    groups.resize(std::max<size_t>(static_cast<size_t>(count), groups.size() * 2));
    count = static_cast<int>(groups.size());
  }
  return std::vector<uint32_t>(groups.begin(), groups.begin() + count);
}

Callers::Callers(const ClusterSettings& settings, Clock clock)
    : clock_(std::move(clock)),
      ttl_(settings.group_update_time_seconds),
      slurm_user_uid_(UidOfName(settings.slurm_user)) {}

bool Callers::IsOperator(uint32_t uid) const {
  // Operators and administrators: root and SlurmUser. AdminLevel from accounting (sacctmgr's
  // Operator and Administrator) will be consulted here once accounting keeps users.
  return uid == 0 || (slurm_user_uid_ && uid == *slurm_user_uid_);
}

Callers::Entry Callers::LookUp(uint32_t uid) {
  Entry entry;
  std::vector<char> buffer = Buffer(_SC_GETPW_R_SIZE_MAX);
  passwd record{}, *found = nullptr;
  while (getpwuid_r(uid, &record, buffer.data(), buffer.size(), &found) == ERANGE)
    buffer.resize(buffer.size() * 2);
  if (!found || !found->pw_name) {
    entry.user = std::to_string(uid);
    return entry;
  }
  entry.user = found->pw_name;
  entry.groups = GroupList(entry.user, found->pw_gid);
  for (uint32_t gid : entry.groups) entry.group_names.push_back(GroupName(gid));
  return entry;
}

Caller Callers::Of(uint32_t uid, uint32_t gid) {
  auto now = clock_();
  std::optional<Entry> entry;
  {
    MutexLock lock(mutex_);
    if (auto it = cache_.find(uid); it != cache_.end() && it->second.expires > now)
      entry = it->second;
  }
  if (!entry) {
    ++lookups_;
    entry = LookUp(uid);  // outside the lock: NSS may be slow, other callers need not wait
    entry->expires = now + ttl_;
    MutexLock lock(mutex_);
    if (cache_.size() >= kMaxCached)
      std::erase_if(cache_, [&](const auto& item) { return item.second.expires <= now; });
    if (cache_.size() >= kMaxCached) cache_.clear();
    cache_[uid] = *entry;
  }
  Caller caller{uid,
                gid,
                IsOperator(uid),
                std::move(entry->user),
                std::move(entry->groups),
                std::move(entry->group_names)};
  // The credential's gid is the process's group (newgrp, sg), a member group or not.
  if (std::find(caller.groups.begin(), caller.groups.end(), gid) == caller.groups.end()) {
    caller.groups.push_back(gid);
    caller.group_names.push_back(GroupName(gid));
  }
  return caller;
}

}  // namespace drover::ctld
