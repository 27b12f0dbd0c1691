// auth/slurm's tokens. A credential is "drv1.c.<payload>.<mac>" with the payload
// "uid:gid:issued:expiry:nonce"; a sealed claim is "drv1.s.<payload>.<mac>" with the payload
// "uid:gid:issued:expiry\n<claim>" (payload and MAC in base64url). The MAC is HMAC-SHA256 under
// the cluster key over everything before its dot, so the domain ("c" or "s") is signed too and
// neither kind passes for the other.
#include "auth/slurm_auth.h"

#include <fcntl.h>
// SHA-256's low-level functions, deprecated in OpenSSL 3 but kept: through EVP, the first MAC a
// command made loaded OpenSSL's configuration and named every algorithm of its default provider,
// about 10% of a one-shot command's CPU, for one digest.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "auth/base64url.h"
#include "auth/broker.h"
#include "common/text.h"

namespace drover::auth {
namespace {

constexpr std::string_view kCredentialDomain = "drv1.c.";
constexpr std::string_view kSealedDomain = "drv1.s.";
constexpr size_t kMinKeyBytes = 32;
constexpr size_t kMaxKeyBytes = 64 * 1024;
constexpr size_t kNonceBytes = 16;
constexpr int64_t kMaxSealTtlSeconds = 366 * 86400;

int64_t SystemNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Hex(std::string_view bytes) {
  std::string out;
  for (unsigned char byte : bytes) out += fmt::format("{:02x}", byte);
  return out;
}

// From the kernel's generator (getrandom(2)), not OpenSSL's, whose start-up costs a one-shot
// command more than the rest of its credential.
Result<std::string> RandomBytes(size_t count) {
  std::string bytes(count, '\0');
  size_t filled = 0;
  while (filled < count) {
    ssize_t got = getrandom(bytes.data() + filled, count - filled, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      return MakeError(fmt::format("the system's random number generator failed (getrandom: {})",
                                   std::strerror(errno)));
    filled += static_cast<size_t>(got);
  }
  return bytes;
}

// A decimal field: digits only, no sign, at most `max`.
template <typename T>
bool ParseField(std::string_view text, T max, T& out) {
  if (text.empty() || text.size() > 20 || (text.size() > 1 && text[0] == '0')) return false;
  uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value > uint64_t(max))
    return false;
  out = static_cast<T>(value);
  return true;
}

struct Stamp {
  Identity who;
  int64_t issued = 0, expiry = 0;
};

// "uid:gid:issued:expiry" (the common head of both payloads).
bool ParseStamp(const std::vector<std::string>& fields, Stamp& stamp) {
  return fields.size() >= 4 && ParseField<uint32_t>(fields[0], UINT32_MAX, stamp.who.uid) &&
         ParseField<uint32_t>(fields[1], UINT32_MAX, stamp.who.gid) &&
         ParseField<int64_t>(fields[2], INT64_MAX / 2, stamp.issued) &&
         ParseField<int64_t>(fields[3], INT64_MAX / 2, stamp.expiry) && stamp.expiry > stamp.issued;
}

Status CheckTimes(const Stamp& stamp, int64_t now, std::string_view what) {
  if (stamp.issued > now + kClockSkewSeconds)
    return MakeError(fmt::format(
        "{} issued {} s in the future: this host's clock and the sender's disagree (keep them in "
        "step with chrony or ntpd)",
        what, stamp.issued - now));
  if (now >= stamp.expiry)
    return MakeError(fmt::format(
        "expired {} ({} s ago; it was good for {} s): check that the hosts' clocks agree", what,
        now - stamp.expiry, stamp.expiry - stamp.issued));
  return OkStatus();
}

std::string Errno(int error) {
  return std::strerror(error);
}

}  // namespace

// RFC 2104's construction: H((K' ^ opad) || H((K' ^ ipad) || text)), K' the key padded to the
// block (or its digest, when longer than a block).
std::string HmacSha256(std::string_view key, std::string_view text) {
  constexpr size_t kBlock = 64;
  unsigned char padded[kBlock] = {};
  SHA256_CTX context;
  if (key.size() > kBlock) {
    SHA256_Init(&context);
    SHA256_Update(&context, key.data(), key.size());
    SHA256_Final(padded, &context);
  } else {
    std::memcpy(padded, key.data(), key.size());
  }
  unsigned char inner_pad[kBlock], outer_pad[kBlock];
  for (size_t i = 0; i < kBlock; ++i) {
    inner_pad[i] = padded[i] ^ 0x36;
    outer_pad[i] = padded[i] ^ 0x5c;
  }
  unsigned char inner[SHA256_DIGEST_LENGTH], mac[SHA256_DIGEST_LENGTH];
  SHA256_Init(&context);
  SHA256_Update(&context, inner_pad, kBlock);
  SHA256_Update(&context, text.data(), text.size());
  SHA256_Final(inner, &context);
  SHA256_Init(&context);
  SHA256_Update(&context, outer_pad, kBlock);
  SHA256_Update(&context, inner, sizeof(inner));
  SHA256_Final(mac, &context);
  OPENSSL_cleanse(padded, sizeof(padded));
  OPENSSL_cleanse(inner_pad, sizeof(inner_pad));
  OPENSSL_cleanse(outer_pad, sizeof(outer_pad));
  OPENSSL_cleanse(&context, sizeof(context));
  return std::string(reinterpret_cast<const char*>(mac), sizeof(mac));
}

Result<std::string> ReadKey(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return MakeError(fmt::format("cannot read {} ({})", path, Errno(errno)));
  struct stat st {};
  std::string key;
  std::string error;
  if (fstat(fd, &st) != 0) {
    error = fmt::format("cannot read {} ({})", path, Errno(errno));
  } else if (!S_ISREG(st.st_mode)) {
    error = fmt::format("cannot use {} as the key: not a regular file", path);
  } else if (st.st_mode & S_IROTH) {
    error = fmt::format(
        "{} is readable by every user (mode {:04o}), so anyone could sign as root: chmod 600 {}",
        path, st.st_mode & 07777, path);
  } else if (size_t(st.st_size) < kMinKeyBytes || size_t(st.st_size) > kMaxKeyBytes) {
    error = fmt::format(
        "{} holds {} bytes; a key holds {} to {} random bytes (write one with "
        "drover keygen)",
        path, st.st_size, kMinKeyBytes, kMaxKeyBytes);
  } else {
    key.resize(size_t(st.st_size));
    ssize_t got = read(fd, key.data(), key.size());
    if (got != ssize_t(key.size()))
      error = fmt::format("cannot read {} ({})", path, got < 0 ? Errno(errno) : "short read");
  }
  close(fd);
  if (!error.empty()) {
    OPENSSL_cleanse(key.data(), key.size());
    return MakeError(error);
  }
  return key;
}

Status WriteKey(const std::string& path, bool replace) {
  auto key = RandomBytes(64);
  if (!key) return std::move(key).take_error();
  // A replacement is written beside the old key and renamed over it, so no reader sees half.
  std::string target = replace ? path + ".new" : path;
  if (replace) unlink(target.c_str());
  int fd = open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST)
      return MakeError(fmt::format(
          "{} exists already; keep it, or replace it with drover keygen --force (then copy the "
          "new key to every host and restart the daemons)",
          path));
    return MakeError(fmt::format("cannot create {} ({})", target, Errno(errno)));
  }
  bool ok = fchmod(fd, 0600) == 0 && write(fd, key->data(), key->size()) == ssize_t(key->size()) &&
            fsync(fd) == 0;
  int error = errno;
  close(fd);
  OPENSSL_cleanse(key->data(), key->size());
  if (ok && replace && rename(target.c_str(), path.c_str()) != 0) {
    ok = false;
    error = errno;
  }
  if (!ok) {
    unlink(target.c_str());
    return MakeError(fmt::format("cannot write {} ({})", path, Errno(error)));
  }
  std::string folder = std::filesystem::path(path).parent_path().string();
  int dir = open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    fsync(dir);  // the new name survives a crash too
    close(dir);
  }
  return OkStatus();
}

SlurmAuthenticator::SlurmAuthenticator(const Settings& settings, WallClock now)
    : settings_(settings), now_(now ? std::move(now) : WallClock(SystemNow)) {
  if (settings_.ttl_seconds <= 0) settings_.ttl_seconds = kDefaultSlurmTtlSeconds;
}

SlurmAuthenticator::~SlurmAuthenticator() {
  OPENSSL_cleanse(key_.data(), key_.size());
}

Result<std::unique_ptr<SlurmAuthenticator>> SlurmAuthenticator::Load(const Settings& settings,
                                                                     Role role, WallClock now) {
  std::unique_ptr<SlurmAuthenticator> self(new SlurmAuthenticator(settings, std::move(now)));
  auto key = ReadKey(settings.key_path);
  if (key) {
    self->key_ = std::move(*key);
  } else if (role == Role::kDaemon) {
    return MakeError(fmt::format(
        "auth/slurm: {}; the daemons need the cluster key (write one with drover keygen, copy "
        "it to every host, readable by SlurmUser only)",
        key.error()));
  } else {
    self->key_error_ = key.error();
  }
  if (role == Role::kDaemon) {  // a key that cannot verify its own credential is no key
    auto credential = self->Credential();
    if (!credential) return std::move(credential).take_error();
    auto checked = self->Verify(*credential);
    if (!checked) return MakeError("auth/slurm: the self-check failed: " + checked.error());
  }
  return self;
}

Status SlurmAuthenticator::NeedKey() const {
  if (has_key()) return OkStatus();
  return MakeError(fmt::format("auth/slurm: {}; only the daemons verify and seal", key_error_));
}

std::string SlurmAuthenticator::Mac(std::string_view text) const {
  return HmacSha256(key_, text);
}

Result<std::string> SlurmAuthenticator::Credential() {
  if (has_key()) return MintFor({geteuid(), getegid()});
  auto token = RequestToken(settings_.socket);
  if (token) return token;
  return MakeError(fmt::format("{} and {}: start droverd or `drover authd` on this host",
                               key_error_, token.error()));
}

Result<std::string> SlurmAuthenticator::MintFor(const Identity& who) {
  if (Status ok = NeedKey(); !ok) return std::move(ok).take_error();
  auto nonce = RandomBytes(kNonceBytes);
  if (!nonce) return std::move(nonce).take_error();
  int64_t now = now_();
  std::string payload = fmt::format("{}:{}:{}:{}:{}", who.uid, who.gid, now,
                                    now + settings_.ttl_seconds, Hex(*nonce));
  std::string signed_part = std::string(kCredentialDomain) + Base64UrlEncode(payload);
  return signed_part + "." + Base64UrlEncode(Mac(signed_part));
}

Result<std::string> SlurmAuthenticator::Unwrap(std::string_view token, std::string_view domain,
                                               std::string_view what) const {
  if (!token.starts_with(domain)) {
    if (token.starts_with(kSealedDomain))
      return MakeError("a sealed job claim is not a credential");
    if (token.starts_with(kCredentialDomain))
      return MakeError("a credential is not a sealed job claim");
    return MakeError(
        fmt::format("malformed {} (not an auth/slurm token: is every host on the "
                    "same AuthType?)",
                    what));
  }
  std::string_view rest = token.substr(domain.size());
  size_t dot = rest.find('.');
  if (dot == std::string_view::npos || rest.find('.', dot + 1) != std::string_view::npos)
    return MakeError(fmt::format("malformed {} (expected {}PAYLOAD.MAC)", what, domain));
  auto mac = Base64UrlDecode(rest.substr(dot + 1));
  auto payload = Base64UrlDecode(rest.substr(0, dot));
  if (!mac || !payload || mac->size() != 32)
    return MakeError(fmt::format("malformed {} (bad base64url)", what));
  std::string expected = Mac(token.substr(0, domain.size() + dot));
  if (CRYPTO_memcmp(expected.data(), mac->data(), expected.size()) != 0)
    return MakeError(
        fmt::format("{} signed with another key, or altered: every host needs the "
                    "same slurm.key",
                    what));
  return std::move(*payload);
}

Result<Identity> SlurmAuthenticator::Verify(std::string_view credential) {
  if (credential.size() > kMaxCredentialBytes)
    return MakeError(fmt::format("credential too long ({} bytes; at most {})", credential.size(),
                                 kMaxCredentialBytes));
  if (Status ok = NeedKey(); !ok) return std::move(ok).take_error();
  auto payload = Unwrap(credential, kCredentialDomain, "credential");
  if (!payload) return std::move(payload).take_error();
  std::vector<std::string> fields = Split(*payload, ':');
  Stamp stamp;
  if (fields.size() != 5 || !ParseStamp(fields, stamp) || fields[4].size() != 2 * kNonceBytes)
    return MakeError("malformed credential (its payload is not uid:gid:issued:expiry:nonce)");
  int64_t now = now_();
  if (Status ok = CheckTimes(stamp, now, "credential"); !ok) return std::move(ok).take_error();
  if (Status ok = replays_.Insert(fields[4], stamp.expiry, now); !ok)
    return std::move(ok).take_error();
  return stamp.who;
}

Result<std::string> SlurmAuthenticator::Seal(std::string_view payload, int64_t ttl_seconds) {
  if (Status ok = NeedKey(); !ok) return std::move(ok).take_error();
  if (ttl_seconds <= 0 || ttl_seconds > kMaxSealTtlSeconds)
    return MakeError(
        fmt::format("cannot seal a claim for {} s (1 s to {} s)", ttl_seconds, kMaxSealTtlSeconds));
  if (payload.size() > kMaxSealedBytes / 2)
    return MakeError(fmt::format("claim too long to seal ({} bytes; at most {})", payload.size(),
                                 kMaxSealedBytes / 2));
  int64_t now = now_();
  std::string body = fmt::format("{}:{}:{}:{}\n", geteuid(), getegid(), now, now + ttl_seconds);
  body.append(payload);
  std::string signed_part = std::string(kSealedDomain) + Base64UrlEncode(body);
  return signed_part + "." + Base64UrlEncode(Mac(signed_part));
}

Result<Sealed> SlurmAuthenticator::Open(std::string_view sealed) {
  if (sealed.size() > kMaxSealedBytes)
    return MakeError(fmt::format("sealed claim too long ({} bytes; at most {})", sealed.size(),
                                 kMaxSealedBytes));
  if (Status ok = NeedKey(); !ok) return std::move(ok).take_error();
  auto body = Unwrap(sealed, kSealedDomain, "sealed claim");
  if (!body) return std::move(body).take_error();
  size_t newline = body->find('\n');
  std::vector<std::string> head =
      Split(std::string_view(*body).substr(0, newline == std::string::npos ? 0 : newline), ':');
  Stamp stamp;
  if (newline == std::string::npos || head.size() != 4 || !ParseStamp(head, stamp))
    return MakeError("malformed sealed claim (its head is not uid:gid:issued:expiry)");
  if (Status ok = CheckTimes(stamp, now_(), "sealed claim"); !ok) return std::move(ok).take_error();
  return Sealed{stamp.who, body->substr(newline + 1)};
}

}  // namespace drover::auth
