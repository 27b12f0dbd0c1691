// auth.h's entry points: the settings slurm.conf gives (AuthType, AuthInfo, SlurmUser), the
// scheme they choose, and who counts as a daemon.
#include <pwd.h>

#include <charconv>
#include <filesystem>
#include <map>
#include <optional>
#include <utility>

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

// One "name=value" (or "name") of a comma-separated list, both trimmed.
std::pair<std::string_view, std::string_view> OptionOf(std::string_view item) {
  std::string_view option = Trim(item);
  size_t equals = option.find('=');
  std::string_view name = Trim(option.substr(0, equals));
  std::string_view value =
      equals == std::string_view::npos ? std::string_view() : Trim(option.substr(equals + 1));
  return {name, value};
}

Status ApplyAuthInfo(std::string_view info, Settings& settings) {
  std::vector<std::string> unknown;
  for (const std::string& item : Split(info, ',')) {
    auto [name, value] = OptionOf(item);
    if (name.empty()) continue;
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

// AuthAltParameters, Slurm's words: jwt_key=PATH, disable_token_creation, max_token_lifespan=N.
// jwks= (keys of an outside identity provider, RS256) is refused: only HS256 is served.
Status ApplyAuthAltParameters(std::string_view parameters, Settings& settings) {
  for (const std::string& item : Split(parameters, ',')) {
    auto [name, value] = OptionOf(item);
    if (name.empty()) continue;
    if (EqualsIgnoreCase(name, "jwt_key")) {
      if (value.empty() || value.front() != '/')
        return MakeError(
            fmt::format("AuthAltParameters: jwt_key= needs an absolute path, not '{}'", value));
      settings.jwt_key_path = std::string(value);
    } else if (EqualsIgnoreCase(name, "disable_token_creation")) {
      settings.token_creation = false;
    } else if (EqualsIgnoreCase(name, "max_token_lifespan")) {
      int64_t seconds = 0;
      auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
      if (value.empty() || error != std::errc() || end != value.data() + value.size() ||
          seconds < 1)
        return MakeError(fmt::format(
            "AuthAltParameters: invalid max_token_lifespan '{}' (expected seconds, 1 or more)",
            value));
      settings.max_token_lifespan_seconds = seconds;
    } else if (EqualsIgnoreCase(name, "jwks")) {
      return MakeError(
          "AuthAltParameters: jwks= is not supported: Drover verifies HS256 tokens under "
          "jwt_key= only");
    } else {
      return MakeError(
          fmt::format("AuthAltParameters: unknown option '{}' (Drover reads jwt_key=, "
                      "disable_token_creation and max_token_lifespan=)",
                      name));
    }
  }
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
  settings.jwt = !cluster.settings.auth_alt_types.empty();
  if (!settings.jwt && !cluster.settings.auth_alt_parameters.empty())
    return MakeError("AuthAltParameters is set but AuthAltTypes is not: add AuthAltTypes=auth/jwt");
  if (Status applied = ApplyAuthAltParameters(cluster.settings.auth_alt_parameters, settings);
      !applied)
    return std::move(applied).take_error();
  if (settings.jwt && settings.jwt_key_path.empty())
    settings.jwt_key_path =
        (std::filesystem::path(cluster.settings.state_save_location) / "jwt_hs256.key").string();
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
