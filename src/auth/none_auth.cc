// auth/none: NO authentication. The "credential" is the text "none:UID:GID" and is believed as
// written, so any process that can reach a port can be anyone, root included; a sealed claim is
// "none.s:UID:GID:EXPIRY:" and the claim, and anyone can write one. It exists only for a site
// that opts in explicitly (AuthType=auth/none); every daemon warns about it when it starts.
#include <unistd.h>

#include <charconv>
#include <chrono>

#include <fmt/format.h>

#include "auth/schemes.h"
#include "common/text.h"

namespace drover::auth {
namespace {

constexpr std::string_view kCredentialHead = "none:";
constexpr std::string_view kSealedHead = "none.s:";

bool ParseNumber(std::string_view text, uint64_t max, uint64_t& out) {
  if (text.empty() || text.size() > 20) return false;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size() && out <= max;
}

bool ParseIdentity(std::string_view uid, std::string_view gid, Identity& who) {
  uint64_t u = 0, g = 0;
  if (!ParseNumber(uid, UINT32_MAX, u) || !ParseNumber(gid, UINT32_MAX, g)) return false;
  who = {uint32_t(u), uint32_t(g)};
  return true;
}

int64_t Now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class NoneAuthenticator final : public Authenticator {
 public:
  Result<std::string> Credential() override {
    return fmt::format("{}{}:{}", kCredentialHead, geteuid(), getegid());
  }

  Result<Identity> Verify(std::string_view credential) override {
    if (credential.size() > kMaxCredentialBytes || !credential.starts_with(kCredentialHead))
      return MakeError(
          "malformed credential (auth/none expects none:UID:GID: is every host on "
          "the same AuthType?)");
    std::vector<std::string> fields = Split(credential.substr(kCredentialHead.size()), ':');
    Identity who;
    if (fields.size() != 2 || !ParseIdentity(fields[0], fields[1], who))
      return MakeError("malformed credential (auth/none expects none:UID:GID)");
    return who;
  }

  Result<std::string> Seal(std::string_view payload, int64_t ttl_seconds) override {
    if (ttl_seconds <= 0)
      return MakeError(fmt::format("cannot seal a claim for {} s", ttl_seconds));
    return fmt::format("{}{}:{}:{}:{}", kSealedHead, geteuid(), getegid(), Now() + ttl_seconds,
                       payload);
  }

  Result<Sealed> Open(std::string_view sealed) override {
    if (sealed.size() > kMaxSealedBytes || !sealed.starts_with(kSealedHead))
      return MakeError("malformed sealed claim (auth/none expects none.s:UID:GID:EXPIRY:CLAIM)");
    std::string_view rest = sealed.substr(kSealedHead.size());
    size_t first = rest.find(':'), second = rest.find(':', first + 1);
    size_t third = second == std::string_view::npos ? second : rest.find(':', second + 1);
    Identity who;
    uint64_t expiry = 0;
    if (third == std::string_view::npos ||
        !ParseIdentity(rest.substr(0, first), rest.substr(first + 1, second - first - 1), who) ||
        !ParseNumber(rest.substr(second + 1, third - second - 1), INT64_MAX, expiry))
      return MakeError("malformed sealed claim (auth/none expects none.s:UID:GID:EXPIRY:CLAIM)");
    if (int64_t(expiry) <= Now()) return MakeError("expired sealed claim");
    return Sealed{who, std::string(rest.substr(third + 1))};
  }

  Scheme scheme() const override { return Scheme::kNone; }
};

}  // namespace

Result<std::unique_ptr<Authenticator>> CreateNone() {
  return std::unique_ptr<Authenticator>(std::make_unique<NoneAuthenticator>());
}

}  // namespace drover::auth
