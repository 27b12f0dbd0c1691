// A busy call's credential admits its retries for a while, and only its own identity.
#include "ctld/daemon/busy_retries.h"

#include <gtest/gtest.h>

namespace drover::ctld {
namespace {

TEST(BusyRetries, AHeldCredentialAdmitsItsRetriesUntilItExpires) {
  BusyRetries retries;
  auto now = BusyRetries::Clock::now();
  EXPECT_FALSE(retries.Find("drv1.c.one", now));
  retries.Hold("drv1.c.one", {1000, 100}, now);
  auto found = retries.Find("drv1.c.one", now + std::chrono::seconds(1));
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, (auth::Identity{1000, 100}));
  EXPECT_TRUE(retries.Find("drv1.c.one", now + std::chrono::seconds(2))) << "every retry";
  EXPECT_FALSE(retries.Find("drv1.c.two", now)) << "another credential is not held";
  EXPECT_FALSE(retries.Find("drv1.c.one", now + BusyRetries::kHeldFor)) << "expired";
  EXPECT_FALSE(retries.Find("", now));
}

}  // namespace
}  // namespace drover::ctld
