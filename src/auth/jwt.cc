// HS256 JSON Web Tokens: see jwt.h.
#include "auth/jwt.h"

#include <openssl/crypto.h>
#include <sys/stat.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "auth/base64url.h"
#include "auth/slurm_auth.h"

namespace drover::auth {
namespace {

// A token issued this far ahead of our clock is still taken (hosts' clocks drift a little).
constexpr int64_t kJwtClockSkewSeconds = 60;

Result<nlohmann::json> DecodePart(std::string_view part, std::string_view what) {
  std::optional<std::string> bytes = Base64UrlDecode(part);
  if (!bytes) return MakeError(fmt::format("the token's {} is not base64url", what));
  nlohmann::json parsed = nlohmann::json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object())
    return MakeError(fmt::format("the token's {} is not a JSON object", what));
  return parsed;
}

// A whole number of seconds (JSON integers; RFC 7519's NumericDate may carry a fraction, which
// is cut).
std::optional<int64_t> SecondsOf(const nlohmann::json& claims, const char* name) {
  auto it = claims.find(name);
  if (it == claims.end()) return std::nullopt;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_number_float()) {
    double value = it->get<double>();
    if (value > -1e15 && value < 1e15) return static_cast<int64_t>(value);
  }
  return std::nullopt;
}

// A token's three parts, each still base64url, and what the signature covers.
struct Parts {
  std::string_view header, claims, signature, signed_part;
};
std::optional<Parts> Split(std::string_view token) {
  size_t first = token.find('.');
  size_t second = first == std::string_view::npos ? first : token.find('.', first + 1);
  if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos)
    return std::nullopt;
  return Parts{token.substr(0, first), token.substr(first + 1, second - first - 1),
               token.substr(second + 1), token.substr(0, second)};
}

}  // namespace

Result<std::string> ReadJwtKey(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) == 0 && (info.st_mode & S_IRWXO) != 0)
    return MakeError(
        fmt::format("AuthAltParameters: the JWT key {} is accessible by other users "
                    "(mode {:04o}), so any of them could sign tokens as anyone; chmod "
                    "0400 {}",
                    path, info.st_mode & 07777, path));
  // The same bytes as the auth/slurm key: a regular file of 32 bytes or more.
  Result<std::string> key = ReadKey(path);
  if (!key) return MakeError("AuthAltParameters: JWT key: " + key.error());
  return key;
}

std::string SignJwt(std::string_view key, std::string_view user, int64_t issued_at,
                    int64_t expires_at) {
  nlohmann::ordered_json header = {{"alg", "HS256"}, {"typ", "JWT"}};
  nlohmann::ordered_json claims = {{"exp", expires_at}, {"iat", issued_at}, {"sun", user}};
  std::string signed_part = Base64UrlEncode(header.dump()) + "." + Base64UrlEncode(claims.dump());
  return signed_part + "." + Base64UrlEncode(HmacSha256(key, signed_part));
}

Result<JwtClaims> VerifyJwt(std::string_view key, std::string_view token, int64_t now) {
  if (token.size() > kMaxJwtBytes)
    return MakeError(
        fmt::format("the token has {} bytes, more than {}", token.size(), kMaxJwtBytes));
  std::optional<Parts> parts = Split(token);
  if (!parts) return MakeError("the token is not a JWT (three base64url parts joined by dots)");
  std::optional<std::string> signature = Base64UrlDecode(parts->signature);
  if (!signature) return MakeError("the token's signature is not base64url");
  Result<nlohmann::json> header = DecodePart(parts->header, "header");
  if (!header) return std::move(header).take_error();
  auto alg = header->find("alg");
  if (alg == header->end() || !alg->is_string() || alg->get<std::string>() != "HS256")
    return MakeError(fmt::format("the token's algorithm is {}; only HS256 is accepted",
                                 alg == header->end() ? std::string("missing") : alg->dump()));
  std::string expected = HmacSha256(key, parts->signed_part);
  if (signature->size() != expected.size() ||
      CRYPTO_memcmp(expected.data(), signature->data(), expected.size()) != 0)
    return MakeError("the token's signature does not match this cluster's JWT key");
  Result<nlohmann::json> claims = DecodePart(parts->claims, "claims");
  if (!claims) return std::move(claims).take_error();
  JwtClaims out;
  auto sun = claims->find("sun");
  if (sun == claims->end() || !sun->is_string() || sun->get<std::string>().empty())
    return MakeError("the token names no user (its \"sun\" claim)");
  out.user = sun->get<std::string>();
  std::optional<int64_t> exp = SecondsOf(*claims, "exp");
  if (!exp) return MakeError("the token has no expiry (its \"exp\" claim)");
  out.expires_at = *exp;
  out.issued_at = SecondsOf(*claims, "iat").value_or(0);
  if (out.issued_at > now + kJwtClockSkewSeconds)
    return MakeError(fmt::format("the token was issued {} s in the future: check the clocks",
                                 out.issued_at - now));
  if (now >= out.expires_at)
    return MakeError(fmt::format("the token expired {} s ago; get a new one with `scontrol token`",
                                 now - out.expires_at));
  return out;
}

std::optional<std::string> UnverifiedJwtUser(std::string_view token) {
  if (token.size() > kMaxJwtBytes) return std::nullopt;
  std::optional<Parts> parts = Split(token);
  if (!parts) return std::nullopt;
  Result<nlohmann::json> claims = DecodePart(parts->claims, "claims");
  if (!claims) return std::nullopt;
  auto sun = claims->find("sun");
  if (sun == claims->end() || !sun->is_string()) return std::nullopt;
  return sun->get<std::string>();
}

}  // namespace drover::auth
