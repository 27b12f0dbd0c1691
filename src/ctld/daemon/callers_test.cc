// Callers: the operator role and the names and groups NSS gives an authenticated uid.
#include "ctld/daemon/callers.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>

namespace drover::ctld {
namespace {

// A uid no test machine gives a name.
constexpr uint32_t kNobodyKnows = 3999999991u;

std::string MyName() {
  passwd* entry = getpwuid(getuid());
  return entry && entry->pw_name ? entry->pw_name : std::to_string(getuid());
}

TEST(CallersTest, RootIsAnOperatorAndHasItsName) {
  ClusterSettings settings;
  settings.slurm_user = "root";
  Callers callers(settings);
  Caller root = callers.Of(0, 0);
  EXPECT_TRUE(root.operator_);
  EXPECT_EQ(root.user, "root");
  EXPECT_TRUE(root.InGroup(0));
  EXPECT_FALSE(callers.Of(kNobodyKnows, 100).operator_);
}

TEST(CallersTest, SlurmUsersUidIsAnOperator) {
  ClusterSettings settings;
  settings.slurm_user = MyName();
  Callers callers(settings);
  ASSERT_TRUE(callers.slurm_user_uid());
  EXPECT_EQ(*callers.slurm_user_uid(), getuid());
  EXPECT_TRUE(callers.Of(getuid(), getgid()).operator_);
  settings.slurm_user = "4000000";  // SlurmUser by number
  EXPECT_TRUE(Callers(settings).Of(4000000, 4000000).operator_);
  settings.slurm_user = "no-such-user-on-this-host";
  Callers unknown(settings);
  EXPECT_FALSE(unknown.slurm_user_uid());
  EXPECT_FALSE(unknown.Of(4000000, 4000000).operator_);
}

TEST(CallersTest, AnUnknownUidIsNamedByItsNumberAndHasOnlyItsGid) {
  Callers callers{ClusterSettings{}};
  Caller stranger = callers.Of(kNobodyKnows, 4242);
  EXPECT_FALSE(stranger.operator_);
  EXPECT_EQ(stranger.user, std::to_string(kNobodyKnows));
  EXPECT_EQ(stranger.groups, (std::vector<uint32_t>{4242}));
  EXPECT_EQ(stranger.group_names.size(), 1u);
}

TEST(CallersTest, TheUsersGroupsComeFromTheGroupDatabase) {
  Callers callers{ClusterSettings{}};
  Caller me = callers.Of(getuid(), getgid());
  EXPECT_EQ(me.user, MyName());
  std::vector<gid_t> mine(getgroups(0, nullptr));
  getgroups(static_cast<int>(mine.size()), mine.data());
  EXPECT_TRUE(me.InGroup(getgid()));
  EXPECT_EQ(me.groups.size(), me.group_names.size());
}

TEST(CallersTest, NamesAreCachedForGroupUpdateTimeThenLookedUpAgain) {
  ClusterSettings settings;
  settings.group_update_time_seconds = 600;
  auto now = std::chrono::steady_clock::time_point{};
  Callers callers(settings, [&] { return now; });
  Caller first = callers.Of(0, 0);
  EXPECT_EQ(callers.lookups(), 1u);
  now += std::chrono::seconds(599);
  EXPECT_EQ(callers.Of(0, 0).user, first.user);
  EXPECT_EQ(callers.lookups(), 1u);
  now += std::chrono::seconds(2);
  EXPECT_EQ(callers.Of(0, 0).user, first.user);
  EXPECT_EQ(callers.lookups(), 2u);
  // A different gid in the credential (newgrp) joins that caller's groups, not the cache's.
  EXPECT_TRUE(callers.Of(0, 4242).InGroup(4242));
  EXPECT_EQ(callers.Of(0, 0).InGroup(4242), first.InGroup(4242));
  EXPECT_EQ(callers.lookups(), 2u);
}

}  // namespace
}  // namespace drover::ctld
