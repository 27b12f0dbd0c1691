// auth.h's entry points: the settings slurm.conf gives (AuthType, AuthInfo, SlurmUser), the
// scheme they choose, and who counts as a daemon.
#include <pwd.h>

#include <charconv>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "auth/auth.h"
#include "auth/broker.h"
#include "auth/schemes.h"
#include "auth/slurm_auth.h"
#include "common/mutex.h"
#include "common/text.h"

namespace drover::auth {
namespace {

constexpr int64_t kMaxTtlSeconds = 86400;

Scheme SchemeOf(AuthType type) {
  switch (type) {
    case AuthType::kMunge:
      return Scheme::kMunge;
    case AuthType::kHmac:
      return Scheme::kSlurm;
    case AuthType::kNone:
      return Scheme::kNone;
  }
  return Scheme::kMunge;
}

Status ApplyAuthInfo(std::string_view info, Settings& settings) {
  std::vector<std::string> unknown;
  for (const std::string& item : Split(info, ',')) {
    std::string_view option = Trim(item);
    if (option.empty()) continue;
    size_t equals = option.find('=');
    std::string_view name = Trim(option.substr(0, equals));
    std::string_view value =
        equals == std::string_view::npos ? std::string_view() : Trim(option.substr(equals + 1));
    if (EqualsIgnoreCase(name, "ttl")) {
      int64_t ttl = 0;
      auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), ttl);
      if (value.empty() || error != std::errc() || end != value.data() + value.size() || ttl < 1 ||
          ttl > kMaxTtlSeconds)
        return MakeError(fmt::format("AuthInfo: invalid ttl '{}' (expected seconds from 1 to {})",
                                     value, kMaxTtlSeconds));
      settings.ttl_seconds = ttl;
    } else if (EqualsIgnoreCase(name, "socket") || EqualsIgnoreCase(name, "key")) {
      if (value.empty() || value.front() != '/')
        return MakeError(
            fmt::format("AuthInfo: {}= needs an absolute path, not '{}'", name, value));
      (EqualsIgnoreCase(name, "socket") ? settings.socket : settings.key_path) = std::string(value);
    } else {
      unknown.emplace_back(name);
    }
  }
  if (!unknown.empty())
    return MakeError(
        fmt::format("AuthInfo: unknown option{} '{}' (Drover reads socket=, key= and "
                    "ttl=)",
                    unknown.size() == 1 ? "" : "s", Join(unknown, "', '")));
  return OkStatus();
}

// SlurmUser's uid: a name from NSS, or a number.
std::optional<uint32_t> UidOf(const std::string& user) {
  static Mutex mutex;
  static std::map<std::string, std::optional<uint32_t>> known;  // NSS is slow; users stay put
  MutexLock lock(mutex);
  auto it = known.find(user);
  if (it != known.end()) return it->second;
  std::optional<uint32_t> uid;
  passwd entry{}, *found = nullptr;
  std::vector<char> buffer(16384);
  if (getpwnam_r(user.c_str(), &entry, buffer.data(), buffer.size(), &found) == 0 && found) {
    uid = found->pw_uid;
  } else {
    uint32_t number = 0;
    auto [end, error] = std::from_chars(user.data(), user.data() + user.size(), number);
    if (!user.empty() && error == std::errc() && end == user.data() + user.size()) uid = number;
  }
  known.emplace(user, uid);
  return uid;
}

}  // namespace

Result<Settings> SettingsOf(const ClusterConfig& cluster) {
  Settings settings;
  settings.scheme = SchemeOf(cluster.settings.auth);
  settings.slurm_user = cluster.settings.slurm_user;
  if (Status applied = ApplyAuthInfo(cluster.settings.auth_info, settings); !applied)
    return std::move(applied).take_error();
  if (settings.key_path.empty()) {
    settings.key_path =
        cluster.conf_path.empty()
            ? std::string("/etc/slurm/slurm.key")
            : (std::filesystem::path(cluster.conf_path).parent_path() / "slurm.key").string();
  }
  if (settings.socket.empty() && settings.scheme == Scheme::kSlurm)
    settings.socket = kDefaultBrokerSocket;
  return settings;
}

bool IsDaemonIdentity(const Identity& identity, const Settings& settings) {
  if (identity.uid == 0) return true;
  std::optional<uint32_t> slurm_uid = UidOf(settings.slurm_user);
  return slurm_uid && *slurm_uid == identity.uid;
}

Result<std::unique_ptr<Authenticator>> Create(const Settings& settings, Role role) {
  switch (settings.scheme) {
    case Scheme::kMunge:
      return CreateMunge(settings, role);
    case Scheme::kNone:
      return CreateNone();
    case Scheme::kSlurm: {
      auto slurm = SlurmAuthenticator::Load(settings, role);
      if (!slurm) return std::move(slurm).take_error();
      return std::unique_ptr<Authenticator>(std::move(*slurm));
    }
  }
  return MakeError("unknown authentication scheme");
}

}  // namespace drover::auth
