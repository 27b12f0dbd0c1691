// Table tests for Slurm time limits: every accepted form, every rejected form with its exact
// message, the squeue and scontrol print forms, and round trips between them.
#include "common/duration.h"

#include <gtest/gtest.h>

#include <string>

namespace drover {
namespace {

std::string Invalid(std::string_view text) {
  return "invalid time '" + std::string(text) +
         "' (expected minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS, or UNLIMITED)";
}

std::string TooLarge(std::string_view text) {
  return "invalid time '" + std::string(text) + "' (too large)";
}

struct ParseCase {
  std::string_view input;
  int64_t seconds;    // expected when error is empty
  std::string error;  // exact message, empty for success
};

TEST(DurationTest, Parse) {
  const ParseCase cases[] = {
      {"0", 0, ""},
      {"1", 60, ""},
      {"90", 5400, ""},
      {"1:30", 90, ""},
      {"0:05", 5, ""},
      {"1:5", 65, ""},
      {"1:90", 150, ""},  // Slurm does not range-check fields after the first
      {"1:00:00", 3600, ""},
      {"1:2:3", 3723, ""},
      {"01:02:03", 3723, ""},
      {"0:0:0", 0, ""},
      {"2-0", 172800, ""},
      {"2-00", 172800, ""},
      {"2-12", 216000, ""},
      {"2-12:30", 217800, ""},
      {"2-12:30:15", 217815, ""},
      {"0-0:0:1", 1, ""},
      {" 5 ", 300, ""},
      {"UNLIMITED", kUnlimitedSeconds, ""},
      {"unlimited", kUnlimitedSeconds, ""},
      {"INFINITE", kUnlimitedSeconds, ""},
      {"Infinite", kUnlimitedSeconds, ""},
      {"153722867280912930", 9223372036854775800, ""},
      {"106751991167300-0", 9223372036854720000, ""},
      {"", 0, Invalid("")},
      {"-1", 0, Invalid("-1")},
      {"-5:00", 0, Invalid("-5:00")},
      {"+5", 0, Invalid("+5")},
      {"1:-2", 0, Invalid("1:-2")},
      {"1:2:3:4", 0, Invalid("1:2:3:4")},
      {"1-2:3:4:5", 0, Invalid("1-2:3:4:5")},
      {"1::2", 0, Invalid("1::2")},
      {":30", 0, Invalid(":30")},
      {"30:", 0, Invalid("30:")},
      {"1-", 0, Invalid("1-")},
      {"-1-2", 0, Invalid("-1-2")},
      {"1-2-3", 0, Invalid("1-2-3")},
      {"1-2:", 0, Invalid("1-2:")},
      {"abc", 0, Invalid("abc")},
      {"1.5", 0, Invalid("1.5")},
      {"1h", 0, Invalid("1h")},
      {"5 min", 0, Invalid("5 min")},
      {"1 :30", 0, Invalid("1 :30")},
      {"UNLIMITEDX", 0, Invalid("UNLIMITEDX")},
      {"99999999999999999999", 0, TooLarge("99999999999999999999")},
      {"153722867280912931", 0, TooLarge("153722867280912931")},
      {"106751991167301-0", 0, TooLarge("106751991167301-0")},
      {"106751991167300-0:0:99999999", 0, TooLarge("106751991167300-0:0:99999999")},
      {"1:99999999999999999999", 0, TooLarge("1:99999999999999999999")},
  };
  for (const ParseCase& c : cases) {
    SCOPED_TRACE(c.input);
    Result<int64_t> got = ParseDuration(c.input);
    if (c.error.empty()) {
      ASSERT_TRUE(got.ok()) << got.error();
      EXPECT_EQ(*got, c.seconds);
    } else {
      ASSERT_FALSE(got.ok()) << *got;
      EXPECT_EQ(got.error(), c.error);
    }
  }
}

struct FormatCase {
  int64_t seconds;
  std::string_view squeue;    // FormatDuration
  std::string_view scontrol;  // FormatDurationPadded
};

TEST(DurationTest, Format) {
  const FormatCase cases[] = {
      {0, "0:00", "00:00:00"},
      {2, "0:02", "00:00:02"},
      {65, "1:05", "00:01:05"},
      {307, "5:07", "00:05:07"},
      {3599, "59:59", "00:59:59"},
      {3600, "1:00:00", "01:00:00"},
      {86399, "23:59:59", "23:59:59"},
      {86400, "1-00:00:00", "1-00:00:00"},
      {172800, "2-00:00:00", "2-00:00:00"},
      {217800, "2-12:30:00", "2-12:30:00"},
      {217815, "2-12:30:15", "2-12:30:15"},
      {-1, "0:00", "00:00:00"},
      {-86400, "0:00", "00:00:00"},
      {kUnlimitedSeconds, "UNLIMITED", "UNLIMITED"},
      {kUnlimitedSeconds - 1, "106751991167300-15:30:06", "106751991167300-15:30:06"},
  };
  for (const FormatCase& c : cases) {
    SCOPED_TRACE(c.seconds);
    EXPECT_EQ(FormatDuration(c.seconds), c.squeue);
    EXPECT_EQ(FormatDurationPadded(c.seconds), c.scontrol);
  }
}

TEST(DurationTest, RoundTripsText) {
  const std::string_view squeue_forms[] = {"0:00",       "1:05",       "59:59",    "1:00:00",
                                           "2-00:00:00", "2-12:30:15", "UNLIMITED"};
  for (std::string_view text : squeue_forms) {
    SCOPED_TRACE(text);
    Result<int64_t> seconds = ParseDuration(text);
    ASSERT_TRUE(seconds.ok()) << seconds.error();
    EXPECT_EQ(FormatDuration(*seconds), text);
  }
  const std::string_view scontrol_forms[] = {"00:00:02", "01:00:00", "23:59:59", "2-12:30:00",
                                             "UNLIMITED"};
  for (std::string_view text : scontrol_forms) {
    SCOPED_TRACE(text);
    Result<int64_t> seconds = ParseDuration(text);
    ASSERT_TRUE(seconds.ok()) << seconds.error();
    EXPECT_EQ(FormatDurationPadded(*seconds), text);
  }
}

TEST(DurationTest, RoundTripsSeconds) {
  const int64_t values[] = {0,
                            1,
                            59,
                            60,
                            61,
                            3599,
                            3600,
                            3661,
                            86399,
                            86400,
                            90061,
                            31536000,
                            999999,
                            4000000000,
                            kUnlimitedSeconds - 1,
                            kUnlimitedSeconds};
  for (int64_t seconds : values) {
    SCOPED_TRACE(seconds);
    Result<int64_t> from_short = ParseDuration(FormatDuration(seconds));
    ASSERT_TRUE(from_short.ok()) << from_short.error();
    EXPECT_EQ(*from_short, seconds);
    Result<int64_t> from_padded = ParseDuration(FormatDurationPadded(seconds));
    ASSERT_TRUE(from_padded.ok()) << from_padded.error();
    EXPECT_EQ(*from_padded, seconds);
  }
}

}  // namespace
}  // namespace drover
