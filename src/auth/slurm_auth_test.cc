// auth/slurm: credentials round-trip once and only once, within their ttl and under the same
// key; sealed claims open as often as asked until they expire; neither passes for the other.
#include "auth/slurm_auth.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "auth/base64url.h"
#include "auth/replay_cache.h"

namespace drover::auth {
namespace {

class SlurmAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/drover-auth-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    settings_.scheme = Scheme::kSlurm;
    settings_.key_path = dir_ + "/slurm.key";
    settings_.socket = dir_ + "/auth.socket";
    ASSERT_TRUE(WriteKey(settings_.key_path, false).ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<SlurmAuthenticator> Make(const Settings& settings) {
    auto made = SlurmAuthenticator::Load(settings, Role::kDaemon, [this] { return now_.load(); });
    EXPECT_TRUE(made.ok()) << made.error();
    return made ? std::move(*made) : nullptr;
  }

  std::string dir_;
  Settings settings_;
  std::atomic<int64_t> now_{1'700'000'000};
};

// RFC 4231's test cases 1, 2 and 6 (a key longer than SHA-256's block is hashed first).
TEST(HmacSha256Test, MatchesRfc4231) {
  auto hex = [](const std::string& bytes) {
    std::string out;
    for (unsigned char byte : bytes) out += fmt::format("{:02x}", byte);
    return out;
  };
  EXPECT_EQ(hex(HmacSha256(std::string(20, '\x0b'), "Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(hex(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(hex(HmacSha256(std::string(131, '\xaa'),
                           "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST_F(SlurmAuthTest, CredentialVerifiesToThisProcessOnce) {
  auto auth = Make(settings_);
  auto credential = auth->Credential();
  ASSERT_TRUE(credential.ok()) << credential.error();
  EXPECT_TRUE(credential->starts_with("drv1.c."));
  auto who = auth->Verify(*credential);
  ASSERT_TRUE(who.ok()) << who.error();
  EXPECT_EQ(*who, (Identity{geteuid(), getegid()}));
  auto again = auth->Verify(*credential);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().find("replayed credential"), std::string::npos) << again.error();
}

TEST_F(SlurmAuthTest, MintForNamesTheGivenIdentity) {
  auto auth = Make(settings_);
  auto who = auth->Verify(*auth->MintFor({1234, 5678}));
  ASSERT_TRUE(who.ok()) << who.error();
  EXPECT_EQ(*who, (Identity{1234, 5678}));
}

TEST_F(SlurmAuthTest, TamperedPayloadIsRefused) {
  auto auth = Make(settings_);
  std::string credential = *auth->MintFor({1000, 1000});
  // Swap the payload for one naming root, keeping the MAC.
  size_t mac = credential.rfind('.');
  std::string forged_payload = Base64UrlEncode(
      fmt::format("0:0:{}:{}:{}", now_.load(), now_.load() + 60, std::string(32, 'a')));
  std::string forged = "drv1.c." + forged_payload + credential.substr(mac);
  auto result = auth->Verify(forged);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().find("signed with another key, or altered"), std::string::npos)
      << result.error();
  // One flipped character anywhere is refused too.
  std::string flipped = credential;
  flipped[10] = flipped[10] == 'A' ? 'B' : 'A';
  EXPECT_FALSE(auth->Verify(flipped).ok());
  EXPECT_TRUE(auth->Verify(credential).ok());  // the original is still good
}

TEST_F(SlurmAuthTest, WrongKeyIsRefused) {
  auto auth = Make(settings_);
  Settings other = settings_;
  other.key_path = dir_ + "/other.key";
  ASSERT_TRUE(WriteKey(other.key_path, false).ok());
  auto stranger = Make(other);
  auto result = auth->Verify(*stranger->Credential());
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().find("every host needs the same slurm.key"), std::string::npos)
      << result.error();
}

TEST_F(SlurmAuthTest, ExpiredAndFutureCredentialsAreRefused) {
  settings_.ttl_seconds = 30;
  auto auth = Make(settings_);
  std::string credential = *auth->Credential();
  now_ += 30;
  auto expired = auth->Verify(credential);
  ASSERT_FALSE(expired.ok());
  EXPECT_NE(expired.error().find("expired credential (0 s ago; it was good for 30 s)"),
            std::string::npos)
      << expired.error();

  std::string ahead = *auth->Credential();  // issued at now
  now_ -= kClockSkewSeconds;                // within the skew: fine
  EXPECT_TRUE(auth->Verify(ahead).ok());
  std::string further = *auth->Credential();
  now_ -= kClockSkewSeconds + 1;
  auto future = auth->Verify(further);
  ASSERT_FALSE(future.ok());
  EXPECT_NE(future.error().find("issued 6 s in the future"), std::string::npos) << future.error();
}

TEST_F(SlurmAuthTest, MalformedAndOversizeCredentialsAreRefused) {
  auto auth = Make(settings_);
  auto oversize = auth->Verify("drv1.c." + std::string(5000, 'A') + ".AAAA");
  ASSERT_FALSE(oversize.ok());
  EXPECT_NE(oversize.error().find("credential too long (5012 bytes; at most 4096)"),
            std::string::npos)
      << oversize.error();
  for (std::string bad : {"", "garbage", "drv1.c.", "drv1.c.abc", "drv1.c.a.b.c", "drv1.c.!!.AA",
                          "MUNGE:AwQ...:", "none:0:0"})
    EXPECT_FALSE(auth->Verify(bad).ok()) << bad;
  EXPECT_NE(auth->Verify("none:0:0").error().find("same AuthType"), std::string::npos);
}

TEST_F(SlurmAuthTest, SealedClaimsOpenRepeatedlyUntilTheyExpire) {
  auto auth = Make(settings_);
  std::string payload = std::string("job 42\nnodes n[1-4]\n") + '\0' + "binary";
  auto sealed = auth->Seal(payload, 120);
  ASSERT_TRUE(sealed.ok()) << sealed.error();
  for (int i = 0; i < 3; ++i) {
    auto opened = auth->Open(*sealed);
    ASSERT_TRUE(opened.ok()) << opened.error();
    EXPECT_EQ(opened->payload, payload);
    EXPECT_EQ(opened->sealer, (Identity{geteuid(), getegid()}));
  }
  now_ += 120;
  auto expired = auth->Open(*sealed);
  ASSERT_FALSE(expired.ok());
  EXPECT_NE(expired.error().find("expired sealed claim"), std::string::npos) << expired.error();
  EXPECT_FALSE(auth->Seal("x", 0).ok());
}

TEST_F(SlurmAuthTest, CredentialsAndSealedClaimsDoNotPassForEachOther) {
  auto auth = Make(settings_);
  auto as_claim = auth->Open(*auth->Credential());
  ASSERT_FALSE(as_claim.ok());
  EXPECT_EQ(as_claim.error(), "a credential is not a sealed job claim");
  auto as_credential = auth->Verify(*auth->Seal("claim", 60));
  ASSERT_FALSE(as_credential.ok());
  EXPECT_EQ(as_credential.error(), "a sealed job claim is not a credential");
  // Relabelling the domain breaks the MAC, which covers it.
  std::string sealed = *auth->Seal("claim", 60);
  sealed[5] = 'c';
  auto relabelled = auth->Verify(sealed);
  ASSERT_FALSE(relabelled.ok());
  EXPECT_NE(relabelled.error().find("altered"), std::string::npos) << relabelled.error();
}

TEST_F(SlurmAuthTest, DaemonNeedsTheKeyAndClientExplainsBothWays) {
  Settings missing = settings_;
  missing.key_path = dir_ + "/absent.key";
  auto daemon = SlurmAuthenticator::Load(missing, Role::kDaemon);
  ASSERT_FALSE(daemon.ok());
  EXPECT_NE(daemon.error().find("cannot read " + missing.key_path + " (No such file or directory)"),
            std::string::npos)
      << daemon.error();

  auto client = SlurmAuthenticator::Load(missing, Role::kClient);
  ASSERT_TRUE(client.ok()) << client.error();
  auto credential = (*client)->Credential();
  ASSERT_FALSE(credential.ok());
  EXPECT_EQ(credential.error(), "cannot read " + missing.key_path +
                                    " (No such file or directory) and no broker "
                                    "answers on " +
                                    missing.socket +
                                    " (No such file or directory): start droverd or "
                                    "`drover authd` on this host");
  EXPECT_FALSE((*client)->Verify("drv1.c.a.b").ok());
}

TEST_F(SlurmAuthTest, KeysAreRandomPrivateAndNotOverwritten) {
  struct stat st {};
  ASSERT_EQ(stat(settings_.key_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_size, 64);
  auto again = WriteKey(settings_.key_path, false);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().find("exists already"), std::string::npos) << again.error();
  auto before = ReadKey(settings_.key_path);
  ASSERT_TRUE(WriteKey(settings_.key_path, true).ok());
  auto after = ReadKey(settings_.key_path);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_NE(*before, *after);

  chmod(settings_.key_path.c_str(), 0644);
  auto open_key = ReadKey(settings_.key_path);
  ASSERT_FALSE(open_key.ok());
  EXPECT_NE(open_key.error().find("readable by every user (mode 0644)"), std::string::npos);
  std::ofstream(dir_ + "/short.key") << "too short";
  chmod((dir_ + "/short.key").c_str(), 0600);
  EXPECT_NE(ReadKey(dir_ + "/short.key").error().find("holds 9 bytes"), std::string::npos);
}

TEST(ReplayCache, RefusesWhenFullOfUnexpiredNoncesAndPrunesExpiredOnes) {
  ReplayCache cache(2);
  EXPECT_TRUE(cache.Insert("a", 110, 100).ok());
  EXPECT_TRUE(cache.Insert("b", 120, 100).ok());
  auto full = cache.Insert("c", 130, 100);
  ASSERT_FALSE(full.ok());
  EXPECT_NE(full.error().find("too many credentials in use"), std::string::npos);
  EXPECT_TRUE(cache.Insert("c", 130, 110).ok());  // "a" expired at 110 and went
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_FALSE(cache.Insert("b", 120, 111).ok());
}

TEST(Base64Url, RoundTripsAndIsStrict) {
  for (std::string text : {"", "f", "fo", "foo", "foob", "fooba", "foobar", "\xff\xfe\x00"})
    EXPECT_EQ(Base64UrlDecode(Base64UrlEncode(text)), text);
  EXPECT_EQ(Base64UrlEncode("\xfb\xff"), "-_8");
  EXPECT_FALSE(Base64UrlDecode("Zm9v=").has_value());
  EXPECT_FALSE(Base64UrlDecode("Z").has_value());
  EXPECT_FALSE(Base64UrlDecode("Zh").has_value());  // stray low bits
  EXPECT_FALSE(Base64UrlDecode("Zm+v").has_value());
}

}  // namespace
}  // namespace drover::auth
