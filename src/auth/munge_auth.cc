// auth/munge: credentials from the local munged through libmunge. munged proves the uid/gid of
// the process that asked and refuses a credential decoded twice; the payload tells Drover's two
// kinds apart ("drv1.c" for a call's credential, "drv1.s\n<claim>" for a sealed claim).
#include <munge.h>

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "auth/schemes.h"

namespace drover::auth {
namespace {

constexpr std::string_view kCredentialPayload = "drv1.c";
constexpr std::string_view kSealedHead = "drv1.s\n";

// One context per call: libmunge's contexts are not shared between threads.
class Context {
 public:
  Context(const Settings& settings, int64_t ttl_seconds) : ctx_(munge_ctx_create()) {
    if (!settings.socket.empty()) munge_ctx_set(ctx_, MUNGE_OPT_SOCKET, settings.socket.c_str());
    if (ttl_seconds > 0) munge_ctx_set(ctx_, MUNGE_OPT_TTL, int(ttl_seconds));
  }
  ~Context() { munge_ctx_destroy(ctx_); }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  munge_ctx_t get() const { return ctx_; }

  std::string Socket() const {
    char* socket = nullptr;
    if (munge_ctx_get(ctx_, MUNGE_OPT_SOCKET, &socket) != EMUNGE_SUCCESS || !socket)
      return "its default socket";
    return socket;
  }

  std::string Explain(munge_err_t error) const {
    const char* detail = munge_ctx_strerror(ctx_);
    std::string why = detail ? detail : munge_strerror(error);
    switch (error) {
      case EMUNGE_SOCKET:
        return fmt::format("cannot reach munged on {}: {} (start munged: systemctl start munge)",
                           Socket(), why);
      case EMUNGE_CRED_REPLAYED:
        return "replayed credential";
      case EMUNGE_CRED_EXPIRED:
        return "expired credential (check that the hosts' clocks agree)";
      case EMUNGE_CRED_REWOUND:
        return "credential from the future: check that the hosts' clocks agree";
      case EMUNGE_CRED_INVALID:
      case EMUNGE_CRED_UNAUTHORIZED:
        return fmt::format(
            "invalid credential: {} (every host's munged needs the same "
            "munge.key)",
            why);
      case EMUNGE_BAD_CRED:
        return "malformed credential (not a MUNGE credential)";
      default:
        return fmt::format("munge: {}", why);
    }
  }

 private:
  munge_ctx_t ctx_;
};

struct Decoded {
  munge_err_t error = EMUNGE_SUCCESS;
  std::string payload;
  Identity who;
  bool has_payload = false;  // libmunge fills it in even for a replayed or expired one
};

Decoded Decode(const Context& context, std::string_view credential) {
  std::string text(credential);
  void* buffer = nullptr;
  int length = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  Decoded decoded;
  decoded.error = munge_decode(text.c_str(), context.get(), &buffer, &length, &uid, &gid);
  if (buffer) {
    decoded.payload.assign(static_cast<const char*>(buffer), size_t(length));
    decoded.has_payload = true;
    std::free(buffer);
  }
  decoded.who = {uint32_t(uid), uint32_t(gid)};
  return decoded;
}

class MungeAuthenticator final : public Authenticator {
 public:
  explicit MungeAuthenticator(const Settings& settings) : settings_(settings) {}

  Result<std::string> Credential() override {
    return Encode(kCredentialPayload, settings_.ttl_seconds);
  }

  Result<Identity> Verify(std::string_view credential) override {
    if (credential.size() > kMaxCredentialBytes)
      return MakeError(fmt::format("credential too long ({} bytes; at most {})", credential.size(),
                                   kMaxCredentialBytes));
    Context context(settings_, 0);
    Decoded decoded = Decode(context, credential);
    if (decoded.error != EMUNGE_SUCCESS) return MakeError(context.Explain(decoded.error));
    if (decoded.payload == kCredentialPayload) return decoded.who;
    if (decoded.payload.starts_with(kSealedHead))
      return MakeError("a sealed job claim is not a credential");
    return MakeError("a MUNGE credential, but not one Drover made for a call");
  }

  Result<std::string> Seal(std::string_view payload, int64_t ttl_seconds) override {
    if (ttl_seconds <= 0)
      return MakeError(fmt::format("cannot seal a claim for {} s", ttl_seconds));
    if (payload.size() > kMaxSealedBytes / 2)
      return MakeError(fmt::format("claim too long to seal ({} bytes; at most {})", payload.size(),
                                   kMaxSealedBytes / 2));
    return Encode(std::string(kSealedHead) + std::string(payload), ttl_seconds);
  }

  // A job's claim is presented to several agents, and again on retries: munged's replay
  // refusal is expected here, and the payload it still returns is good.
  Result<Sealed> Open(std::string_view sealed) override {
    if (sealed.size() > kMaxSealedBytes * 2)
      return MakeError(fmt::format("sealed claim too long ({} bytes)", sealed.size()));
    Context context(settings_, 0);
    Decoded decoded = Decode(context, sealed);
    bool replayed = decoded.error == EMUNGE_CRED_REPLAYED && decoded.has_payload;
    if (decoded.error != EMUNGE_SUCCESS && !replayed)
      return MakeError(context.Explain(decoded.error));
    if (decoded.payload.starts_with(kSealedHead))
      return Sealed{decoded.who, decoded.payload.substr(kSealedHead.size())};
    if (decoded.payload == kCredentialPayload)
      return MakeError("a credential is not a sealed job claim");
    return MakeError("a MUNGE credential, but not a claim Drover sealed");
  }

  Scheme scheme() const override { return Scheme::kMunge; }

 private:
  Result<std::string> Encode(std::string_view payload, int64_t ttl_seconds) {
    Context context(settings_, ttl_seconds);
    char* credential = nullptr;
    munge_err_t error =
        munge_encode(&credential, context.get(), payload.data(), int(payload.size()));
    if (error != EMUNGE_SUCCESS) {
      if (credential) std::free(credential);
      return MakeError(context.Explain(error));
    }
    std::string text(credential);
    std::free(credential);
    return text;
  }

  Settings settings_;
};

}  // namespace

Result<std::unique_ptr<Authenticator>> CreateMunge(const Settings& settings, Role role) {
  auto authenticator = std::make_unique<MungeAuthenticator>(settings);
  if (role == Role::kDaemon) {
    auto credential = authenticator->Credential();
    if (!credential) return MakeError("auth/munge: " + credential.error());
    auto checked = authenticator->Verify(*credential);
    if (!checked) return MakeError("auth/munge: the self-check failed: " + checked.error());
  }
  return std::unique_ptr<Authenticator>(std::move(authenticator));
}

}  // namespace drover::auth
