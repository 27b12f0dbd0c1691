// auth.h's settings: AuthType, AuthInfo and SlurmUser read as Slurm reads them, with Drover's
// defaults; auth/none believes what it is told.
#include <gtest/gtest.h>
#include <unistd.h>

#include "auth/auth.h"

namespace drover::auth {
namespace {

ClusterConfig Cluster(AuthType type, std::string info, std::string conf_path) {
  ClusterConfig cluster;
  cluster.conf_path = std::move(conf_path);
  cluster.settings.auth = type;
  cluster.settings.auth_info = std::move(info);
  cluster.settings.slurm_user = "slurm";
  return cluster;
}

TEST(AuthSettings, DefaultsFollowSlurmConfsFolder) {
  auto slurm = SettingsOf(Cluster(AuthType::kHmac, "", "/opt/site/slurm.conf"));
  ASSERT_TRUE(slurm.ok()) << slurm.error();
  EXPECT_EQ(slurm->scheme, Scheme::kSlurm);
  EXPECT_EQ(slurm->key_path, "/opt/site/slurm.key");
  EXPECT_EQ(slurm->socket, "/run/drover/auth.socket");
  EXPECT_EQ(slurm->ttl_seconds, 0);
  EXPECT_EQ(slurm->slurm_user, "slurm");
  EXPECT_EQ(SettingsOf(Cluster(AuthType::kHmac, "", ""))->key_path, "/etc/slurm/slurm.key");
  auto munge = SettingsOf(Cluster(AuthType::kMunge, "", "/etc/slurm/slurm.conf"));
  EXPECT_EQ(munge->scheme, Scheme::kMunge);
  EXPECT_EQ(munge->socket, "");  // libmunge's own default
  EXPECT_EQ(SettingsOf(Cluster(AuthType::kNone, "", ""))->scheme, Scheme::kNone);
}

TEST(AuthSettings, AuthInfoOptions) {
  auto set = SettingsOf(Cluster(AuthType::kHmac, "socket=/run/a.sock, key=/k/key,ttl=30", ""));
  ASSERT_TRUE(set.ok()) << set.error();
  EXPECT_EQ(set->socket, "/run/a.sock");
  EXPECT_EQ(set->key_path, "/k/key");
  EXPECT_EQ(set->ttl_seconds, 30);

  auto unknown = SettingsOf(Cluster(AuthType::kMunge, "ttl=5,cred_expire=30,bogus", ""));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error(),
            "AuthInfo: unknown options 'cred_expire', 'bogus' (Drover reads "
            "socket=, key= and ttl=)");
  for (const char* bad : {"ttl=0", "ttl=x", "ttl=", "ttl=86401"})
    EXPECT_NE(SettingsOf(Cluster(AuthType::kMunge, bad, "")).error().find("AuthInfo: invalid ttl"),
              std::string::npos)
        << bad;
  EXPECT_EQ(SettingsOf(Cluster(AuthType::kHmac, "key=relative.key", "")).error(),
            "AuthInfo: key= needs an absolute path, not 'relative.key'");
}

TEST(AuthSettings, DaemonIdentitiesAreRootAndSlurmUser) {
  Settings settings;
  settings.slurm_user = "65534";  // a number stands for itself when no user has that name
  EXPECT_TRUE(IsDaemonIdentity({0, 0}, settings));
  EXPECT_TRUE(IsDaemonIdentity({65534, 1}, settings));
  EXPECT_FALSE(IsDaemonIdentity({1000, 0}, settings));
  settings.slurm_user = "root";
  EXPECT_FALSE(IsDaemonIdentity({65534, 1}, settings));
}

TEST(AuthNone, BelievesTheCredentialAsWritten) {
  Settings settings;
  settings.scheme = Scheme::kNone;
  auto auth = Create(settings, Role::kDaemon);
  ASSERT_TRUE(auth.ok()) << auth.error();
  auto mine = (*auth)->Verify(*(*auth)->Credential());
  ASSERT_TRUE(mine.ok()) << mine.error();
  EXPECT_EQ(*mine, (Identity{geteuid(), getegid()}));
  EXPECT_EQ(*(*auth)->Verify("none:0:0"), (Identity{0, 0}));  // insecure by design
  EXPECT_FALSE((*auth)->Verify("none:0").ok());
  EXPECT_FALSE((*auth)->Verify("none:-1:0").ok());
  auto opened = (*auth)->Open(*(*auth)->Seal("a:b", 60));
  ASSERT_TRUE(opened.ok()) << opened.error();
  EXPECT_EQ(opened->payload, "a:b");
}

}  // namespace
}  // namespace drover::auth
