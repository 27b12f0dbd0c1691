#include "auth/jwt.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "auth/base64url.h"
#include "auth/slurm_auth.h"

namespace drover::auth {
namespace {

const std::string kKey(32, 'k');
constexpr int64_t kNow = 1'700'000'000;

TEST(Jwt, ASignedTokenVerifiesWithItsClaims) {
  std::string token = SignJwt(kKey, "alice", kNow, kNow + 60);
  Result<JwtClaims> claims = VerifyJwt(kKey, token, kNow + 1);
  ASSERT_TRUE(claims) << claims.error();
  EXPECT_EQ(claims->user, "alice");
  EXPECT_EQ(claims->issued_at, kNow);
  EXPECT_EQ(claims->expires_at, kNow + 60);
  // Slurm's claims and header, as other JWT libraries read them.
  size_t dot = token.find('.');
  EXPECT_EQ(*Base64UrlDecode(token.substr(0, dot)), R"({"alg":"HS256","typ":"JWT"})");
  EXPECT_EQ(*Base64UrlDecode(token.substr(dot + 1, token.rfind('.') - dot - 1)),
            R"({"exp":1700000060,"iat":1700000000,"sun":"alice"})");
}

TEST(Jwt, ExpiredFutureAndForeignTokensAreRefused) {
  std::string token = SignJwt(kKey, "alice", kNow, kNow + 60);
  EXPECT_NE(VerifyJwt(kKey, token, kNow + 60).error().find("expired 0 s ago"), std::string::npos);
  EXPECT_NE(VerifyJwt(kKey, token, kNow - 3600).error().find("in the future"), std::string::npos);
  EXPECT_NE(VerifyJwt(std::string(32, 'x'), token, kNow).error().find("signature does not match"),
            std::string::npos);
}

TEST(Jwt, ATamperedClaimOrAnotherAlgorithmIsRefused) {
  std::string token = SignJwt(kKey, "alice", kNow, kNow + 60);
  size_t first = token.find('.'), last = token.rfind('.');
  // The claims swapped for root's, the signature kept.
  std::string claims = Base64UrlEncode(R"({"exp":1700000060,"iat":1700000000,"sun":"root"})");
  std::string forged = token.substr(0, first + 1) + claims + token.substr(last);
  EXPECT_NE(VerifyJwt(kKey, forged, kNow).error().find("signature does not match"),
            std::string::npos);
  // alg "none" with no signature: the classic forgery.
  std::string none = Base64UrlEncode(R"({"alg":"none","typ":"JWT"})") + "." + claims + ".";
  EXPECT_NE(VerifyJwt(kKey, none, kNow).error().find("only HS256"), std::string::npos);
  EXPECT_NE(VerifyJwt(kKey, "abc", kNow).error().find("not a JWT"), std::string::npos);
  EXPECT_NE(VerifyJwt(kKey, token + ".x", kNow).error().find("not a JWT"), std::string::npos);
  EXPECT_NE(VerifyJwt(kKey, std::string(kMaxJwtBytes + 1, 'a'), kNow).error().find("bytes"),
            std::string::npos);
}

TEST(Jwt, ClaimsWithoutAUserOrAnExpiryAreRefused) {
  auto sign = [](const std::string& claims) {
    std::string part = Base64UrlEncode(R"({"alg":"HS256"})") + "." + Base64UrlEncode(claims);
    return part + "." + Base64UrlEncode(HmacSha256(kKey, part));
  };
  EXPECT_NE(VerifyJwt(kKey, sign(R"({"exp":1700000060})"), kNow).error().find("names no user"),
            std::string::npos);
  EXPECT_NE(VerifyJwt(kKey, sign(R"({"sun":"alice"})"), kNow).error().find("no expiry"),
            std::string::npos);
  EXPECT_NE(VerifyJwt(kKey, sign(R"([1,2])"), kNow).error().find("not a JSON object"),
            std::string::npos);
  EXPECT_TRUE(VerifyJwt(kKey, sign(R"({"sun":"alice","exp":1700000060.5})"), kNow));
}

TEST(Jwt, AKeyOthersCanReachOrTooShortIsRefused) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("jwt_test." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "jwt_hs256.key").string();
  std::ofstream(path) << std::string(32, 'k');
  ::chmod(path.c_str(), 0604);
  EXPECT_NE(ReadJwtKey(path).error().find("accessible by other users"), std::string::npos);
  ::chmod(path.c_str(), 0400);
  Result<std::string> key = ReadJwtKey(path);
  ASSERT_TRUE(key) << key.error();
  EXPECT_EQ(*key, std::string(32, 'k'));
  std::filesystem::remove(path);
  std::ofstream(path) << "short";
  ::chmod(path.c_str(), 0400);
  EXPECT_FALSE(ReadJwtKey(path));
  EXPECT_NE(ReadJwtKey((dir / "missing").string()).error().find("cannot read"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace drover::auth
