// The per-user token bucket: a full bucket to start, refills by period, root and SlurmUser
// exempt, users beyond the table let through, and the limit off by default.
#include "ctld/daemon/rate_limit.h"

#include <gtest/gtest.h>

#include <atomic>

namespace drover::ctld {
namespace {

RateLimitSettings Enabled(uint32_t bucket, uint32_t rate, uint32_t period, uint32_t table = 8) {
  RateLimitSettings settings;
  settings.enabled = true;
  settings.bucket_size = bucket;
  settings.refill_rate = rate;
  settings.refill_period_seconds = period;
  settings.table_size = table;
  return settings;
}

int Admitted(RateLimiter& limiter, uint32_t uid, int tries) {
  int admitted = 0;
  for (int i = 0; i < tries; ++i) admitted += limiter.Admit(uid);
  return admitted;
}

TEST(RateLimiter, BucketEmptiesThenRefillsByPeriod) {
  std::atomic<int64_t> now{1000};
  RateLimiter limiter(Enabled(30, 2, 1), {}, [&] { return now.load(); });
  EXPECT_EQ(Admitted(limiter, 1000, 40), 30);  // Slurm's defaults: 30 at once
  EXPECT_EQ(limiter.refused(), 10u);
  now += 1;
  EXPECT_EQ(Admitted(limiter, 1000, 5), 2);  // 2 tokens a second
  now += 100;
  EXPECT_EQ(Admitted(limiter, 1000, 40), 30);  // never more than the bucket holds
}

TEST(RateLimiter, RefillPeriodCountsWholePeriods) {
  std::atomic<int64_t> now{999};
  RateLimiter limiter(Enabled(4, 3, 10), {}, [&] { return now.load(); });
  EXPECT_EQ(Admitted(limiter, 7, 10), 4);
  now = 1000;  // a new 10-second period starts at 1000
  EXPECT_EQ(Admitted(limiter, 7, 10), 3);
  now = 1009;  // same period: nothing added
  EXPECT_EQ(Admitted(limiter, 7, 10), 0);
}

TEST(RateLimiter, UsersHaveTheirOwnBuckets) {
  std::atomic<int64_t> now{0};
  RateLimiter limiter(Enabled(2, 1, 1), {}, [&] { return now.load(); });
  EXPECT_EQ(Admitted(limiter, 1001, 5), 2);
  EXPECT_EQ(Admitted(limiter, 1009, 5), 2);  // 1001 and 1009 share a home slot (table of 8)
  EXPECT_EQ(Admitted(limiter, 1001, 1), 0);
}

TEST(RateLimiter, RootSlurmUserAndOverflowAreNotLimited) {
  std::atomic<int64_t> now{0};
  RateLimiter limiter(Enabled(1, 1, 1, /*table=*/2), {450}, [&] { return now.load(); });
  EXPECT_EQ(Admitted(limiter, 0, 100), 100);
  EXPECT_EQ(Admitted(limiter, 450, 100), 100);
  EXPECT_EQ(Admitted(limiter, 1, 3), 1);
  EXPECT_EQ(Admitted(limiter, 2, 3), 1);
  EXPECT_EQ(Admitted(limiter, 3, 3), 3);  // the table is full: let through, as Slurm does
}

TEST(RateLimiter, OffByDefault) {
  RateLimiter limiter(RateLimitSettings{});
  EXPECT_FALSE(limiter.enabled());
  EXPECT_EQ(Admitted(limiter, 1000, 1000), 1000);
  ClusterSettings settings;
  settings.slurm_user = "4242";
  settings.controller_params.rate_limit = Enabled(1, 1, 1);
  std::unique_ptr<RateLimiter> made = MakeRateLimiter(settings);
  EXPECT_EQ(Admitted(*made, 4242, 10), 10);
  EXPECT_EQ(Admitted(*made, 4243, 10), 1);
  EXPECT_EQ(RateLimitMessage(4243),
            "Rate limit exceeded, please retry momentarily (too many requests from user 4243; "
            "SlurmctldParameters=rl_*)");
}

}  // namespace
}  // namespace drover::ctld
