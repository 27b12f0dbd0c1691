#include "ctld/daemon/rpc_stats.h"

#include <gtest/gtest.h>

namespace drover::ctld {
namespace {

TEST(RpcStats, CallsCountByMethodAndByTheirProvenUser) {
  RpcStats stats;
  int a = 0, b = 0, c = 0;  // three calls, told apart by address
  stats.Begin(&a);
  stats.NameCaller(&a, 1000);
  stats.End(&a, "/drover.v1.Controller/Submit");
  stats.Begin(&b);
  stats.NameCaller(&b, 1000);
  stats.End(&b, "/drover.v1.Controller/Submit");
  stats.Begin(&c);  // refused before admission: by method only
  stats.End(&c, "/drover.v1.Controller/ListJobs");
  std::vector<RpcStats::Entry> methods = stats.ByMethod();
  ASSERT_EQ(methods.size(), 2u);
  EXPECT_EQ(methods[0].name, "ListJobs");
  EXPECT_EQ(methods[0].count, 1u);
  EXPECT_EQ(methods[1].name, "Submit");
  EXPECT_EQ(methods[1].count, 2u);
  std::vector<RpcStats::Entry> users = stats.ByUser();
  ASSERT_EQ(users.size(), 1u);
  EXPECT_EQ(users[0].uid, 1000u);
  EXPECT_EQ(users[0].count, 2u);
  // A call that ends without a status (cancelled) counts nowhere, and is forgotten.
  stats.Begin(&a);
  stats.Forget(&a);
  stats.End(&a, "/drover.v1.Controller/Submit");
  EXPECT_EQ(stats.ByMethod()[1].count, 2u);
  stats.Reset();
  EXPECT_TRUE(stats.ByMethod().empty());
  EXPECT_TRUE(stats.ByUser().empty());
  EXPECT_GT(stats.since(), 0);
}

TEST(RpcStats, PathsNotServedCountAsOneUnknownMethod) {
  RpcStats stats({"/drover.v1.Controller/Submit", "/drover.v1.Accounting/Show"});
  std::vector<int> calls(50);
  for (size_t i = 0; i < calls.size(); ++i) {
    stats.Begin(&calls[i]);
    stats.End(&calls[i], "/made.up/Path" + std::to_string(i));
  }
  int known = 0;
  stats.Begin(&known);
  stats.End(&known, "/drover.v1.Accounting/Show");
  std::vector<RpcStats::Entry> methods = stats.ByMethod();
  ASSERT_EQ(methods.size(), 2u);
  EXPECT_EQ(methods[0].name, "Accounting/Show");
  EXPECT_EQ(methods[0].id, 1u);  // its place among the methods served
  EXPECT_EQ(methods[1].name, "UNKNOWN");
  EXPECT_EQ(methods[1].count, 50u);
}

TEST(RpcStats, UsersBeyondTheBoundCountTogether) {
  RpcStats stats;
  std::vector<int> calls(RpcStats::kMaxUsers + 3);
  for (size_t i = 0; i < calls.size(); ++i) {
    stats.Begin(&calls[i]);
    stats.NameCaller(&calls[i], static_cast<uint32_t>(i));
    stats.End(&calls[i], "/drover.v1.Controller/Ping");
  }
  std::vector<RpcStats::Entry> users = stats.ByUser();
  EXPECT_EQ(users.size(), RpcStats::kMaxUsers + 1);
  EXPECT_EQ(users.back().uid, 4294967295u);
  EXPECT_EQ(users.back().count, 3u);
}

}  // namespace
}  // namespace drover::ctld
