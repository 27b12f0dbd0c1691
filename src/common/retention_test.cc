#include "common/retention.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

namespace drover {
namespace {

TEST(RetentionTest, ParsesSlurmdbdsForms) {
  using U = Retention::Unit;
  EXPECT_EQ(*ParseRetention("12"), (Retention{12, U::kMonths}));
  EXPECT_EQ(*ParseRetention("12m"), (Retention{12, U::kMonths}));
  EXPECT_EQ(*ParseRetention("12MONTHS"), (Retention{12, U::kMonths}));
  EXPECT_EQ(*ParseRetention("30d"), (Retention{30, U::kDays}));
  EXPECT_EQ(*ParseRetention("30days"), (Retention{30, U::kDays}));
  EXPECT_EQ(*ParseRetention("24hours"), (Retention{24, U::kHours}));
  EXPECT_EQ(*ParseRetention("0h"), (Retention{0, U::kHours}));
  EXPECT_EQ(*ParseRetention("65535"), (Retention{65535, U::kMonths}));
  EXPECT_EQ(*ParseRetention("000012d"), (Retention{12, U::kDays}));
  for (const char* bad :
       {"", "h", "12 months", "12min", "12weeks", "65536", "-1", "1.5d", "999999999999999999999"}) {
    auto parsed = ParseRetention(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.error().find("expected a count of hours, days or months"), std::string::npos);
  }
}

TEST(RetentionTest, CutoffIsTheStartOfTheUnitLessTheCount) {
  const char* saved = std::getenv("TZ");
  std::string previous = saved ? saved : "";
  setenv("TZ", "UTC", 1);
  tzset();
  const int64_t now = 1795965052;  // 2026-11-29 15:10:52 UTC
  EXPECT_EQ(RetentionCutoff({2, Retention::Unit::kHours}, now), 1795957200 - 1);    // 13:00
  EXPECT_EQ(RetentionCutoff({0, Retention::Unit::kHours}, now), 1795964400 - 1);    // 15:00
  EXPECT_EQ(RetentionCutoff({30, Retention::Unit::kDays}, now), 1793318400 - 1);    // 10-30
  EXPECT_EQ(RetentionCutoff({12, Retention::Unit::kMonths}, now), 1761955200 - 1);  // 2025-11-01
  EXPECT_EQ(RetentionCutoff({11, Retention::Unit::kMonths}, now), 1764547200 - 1);  // 2025-12-01
  if (saved)
    setenv("TZ", previous.c_str(), 1);
  else
    unsetenv("TZ");
  tzset();
}

}  // namespace
}  // namespace drover
