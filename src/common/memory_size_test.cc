// Table tests for memory sizes: every suffix, kilobyte rounding, overflow, malformed sizes with
// their exact messages, and the TRES print form with round trips.
#include "common/memory_size.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace drover {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

std::string Invalid(std::string_view text) {
  return "invalid memory size '" + std::string(text) +
         "' (expected a number of megabytes, or a number with K, M, G or T, e.g. 16G)";
}

std::string TooLarge(std::string_view text) {
  return "invalid memory size '" + std::string(text) + "' (too large)";
}

struct ParseCase {
  std::string_view input;
  uint64_t megabytes;  // expected when error is empty
  std::string error;   // exact message, empty for success
};

TEST(MemorySizeTest, Parse) {
  const ParseCase cases[] = {
      {"0", 0, ""},
      {"512", 512, ""},
      {"512M", 512, ""},
      {"512m", 512, ""},
      {"512MB", 512, ""},
      {"512mb", 512, ""},
      {"16G", 16384, ""},
      {"16g", 16384, ""},
      {"16GB", 16384, ""},
      {"16Gb", 16384, ""},
      {"1T", 1048576, ""},
      {"1tb", 1048576, ""},
      {"1P", 1073741824, ""},
      {"1024K", 1, ""},
      {"2048KB", 2, ""},
      {"1K", 1, ""},  // rounded up to a whole megabyte
      {"1025k", 2, ""},
      {"0K", 0, ""},
      {" 4G ", 4096, ""},
      {"18446744073709551615", kMax, ""},
      {"18446744073709551615K", 18014398509481984, ""},
      {"18014398509481983G", 18446744073709550592u, ""},
      {"17179869184T", 18014398509481984, ""},
      {"", 0, Invalid("")},
      {"G", 0, Invalid("G")},
      {"GB", 0, Invalid("GB")},
      {"16X", 0, Invalid("16X")},
      {"16B", 0, Invalid("16B")},
      {"16GBB", 0, Invalid("16GBB")},
      {"16GiB", 0, Invalid("16GiB")},
      {"16BG", 0, Invalid("16BG")},
      {"1.5G", 0, Invalid("1.5G")},
      {"0.5", 0, Invalid("0.5")},
      {"-1", 0, Invalid("-1")},
      {"+1", 0, Invalid("+1")},
      {"16 G", 0, Invalid("16 G")},
      {"0x10", 0, Invalid("0x10")},
      {"99999999999999999999", 0, TooLarge("99999999999999999999")},
      {"99999999999999999999G", 0, TooLarge("99999999999999999999G")},
      {"18014398509481984G", 0, TooLarge("18014398509481984G")},
      {"17592186044416P", 0, TooLarge("17592186044416P")},
  };
  for (const ParseCase& c : cases) {
    SCOPED_TRACE(c.input);
    Result<uint64_t> got = ParseMemoryMB(c.input);
    if (c.error.empty()) {
      ASSERT_TRUE(got.ok()) << got.error();
      EXPECT_EQ(*got, c.megabytes);
    } else {
      ASSERT_FALSE(got.ok()) << *got;
      EXPECT_EQ(got.error(), c.error);
    }
  }
}

struct FormatCase {
  uint64_t megabytes;
  std::string_view text;
};

TEST(MemorySizeTest, FormatAndRoundTrip) {
  const FormatCase cases[] = {
      {0, "0"},
      {1, "1M"},
      {1023, "1023M"},
      {1536, "1536M"},
      {4000, "4000M"},
      {1024, "1G"},
      {16384, "16G"},
      {524288, "512G"},
      {1048576, "1T"},
      {1572864, "1536G"},
      {1073741824, "1P"},
      {1099511627776, "1024P"},
      {kMax, "18446744073709551615M"},
  };
  for (const FormatCase& c : cases) {
    SCOPED_TRACE(c.megabytes);
    EXPECT_EQ(FormatMemoryMB(c.megabytes), c.text);
    Result<uint64_t> back = ParseMemoryMB(c.text);
    ASSERT_TRUE(back.ok()) << back.error();
    EXPECT_EQ(*back, c.megabytes);
  }
}

TEST(MemorySizeTest, NormalisesSpellings) {
  const std::string_view spellings[] = {"16GB", "16384", "16384M", "16777216K", "16g", "16gb"};
  for (std::string_view text : spellings) {
    SCOPED_TRACE(text);
    Result<uint64_t> parsed = ParseMemoryMB(text);
    ASSERT_TRUE(parsed.ok()) << parsed.error();
    EXPECT_EQ(FormatMemoryMB(*parsed), "16G");
  }
}

}  // namespace
}  // namespace drover
