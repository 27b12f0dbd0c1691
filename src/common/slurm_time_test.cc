// Slurm's date and time forms (parse_time), in UTC, relative to a fixed now.
#include "common/slurm_time.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>

namespace drover {
namespace {

// The expectations are in UTC; the process's own zone is put back after each test.
class SlurmTime : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* zone = std::getenv("TZ")) saved_ = zone;
    setenv("TZ", "UTC", 1);
    tzset();
  }
  void TearDown() override {
    if (saved_)
      setenv("TZ", saved_->c_str(), 1);
    else
      unsetenv("TZ");
    tzset();
  }

 private:
  std::optional<std::string> saved_;
};

constexpr int64_t kNow = 1700000000;  // 2023-11-14T22:13:20Z

TEST_F(SlurmTime, RelativeTimes) {
  EXPECT_EQ(ParseSlurmTime("now", kNow), kNow);
  EXPECT_EQ(ParseSlurmTime("now+60", kNow), kNow + 60);
  EXPECT_EQ(ParseSlurmTime("now + 5 minutes", kNow), kNow + 300);
  EXPECT_EQ(ParseSlurmTime("now+2days", kNow), kNow + 2 * 86400);
  EXPECT_EQ(ParseSlurmTime("now+1week", kNow), kNow + 7 * 86400);
  EXPECT_EQ(ParseSlurmTime("NOW-60", kNow), kNow - 60);
}

TEST_F(SlurmTime, ClockTimesAreTheNextSuchTime) {
  EXPECT_EQ(ParseSlurmTime("23:00", kNow), 1700002800);  // later today
  EXPECT_EQ(ParseSlurmTime("16:00", kNow), 1700064000);  // tomorrow
  EXPECT_EQ(ParseSlurmTime("4:00pm", kNow), 1700064000);
  EXPECT_EQ(ParseSlurmTime("16:00:00", kNow), 1700064000);
  EXPECT_EQ(ParseSlurmTime("midnight", kNow), 1700006400);
  EXPECT_EQ(ParseSlurmTime("noon tomorrow", kNow), 1700049600);
  EXPECT_EQ(ParseSlurmTime("tomorrow", kNow), 1700006400);
  EXPECT_EQ(ParseSlurmTime("teatime", kNow), 1700064000);
}

TEST_F(SlurmTime, Dates) {
  EXPECT_EQ(ParseSlurmTime("2030-01-20T12:34:00", kNow), 1895142840);
  EXPECT_EQ(ParseSlurmTime("2030-01-20T12:34", kNow), 1895142840);
  EXPECT_EQ(ParseSlurmTime("2030-01-20", kNow), 1895097600);
  EXPECT_EQ(ParseSlurmTime("12/25", kNow), 1703462400);  // this year
  EXPECT_EQ(ParseSlurmTime("01/02", kNow), 1704153600);  // next year
  EXPECT_EQ(ParseSlurmTime("12/25/24", kNow), 1735084800);
  EXPECT_EQ(ParseSlurmTime("122524", kNow), 1735084800);
  EXPECT_EQ(ParseSlurmTime("12.25.24", kNow), 1735084800);
  EXPECT_EQ(ParseSlurmTime("uts1700000500", kNow), 1700000500);
}

TEST_F(SlurmTime, Invalid) {
  for (const char* bad : {"", "soon", "25:00", "12:5", "now+", "now+3fortnights", "now 5", "13/01",
                          "2030-13-01", "uts12"})
    EXPECT_EQ(ParseSlurmTime(bad, kNow), std::nullopt) << bad;
}

}  // namespace
}  // namespace drover
