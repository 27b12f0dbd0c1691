// --array expressions: every form, the %N limit, MaxArraySize, and the compact printing.
#include "common/array_spec.h"

#include <gtest/gtest.h>

namespace drover {
namespace {

TEST(ArraySpec, Forms) {
  struct Case {
    std::string text, indexes, error;
    uint32_t max_running;
  } cases[] = {
      {"0-3", "0-3", "", 0},
      {"0-999%50", "0-999", "", 50},
      {"1,3,5", "1,3,5", "", 0},
      {"0-15:4", "0,4,8,12", "", 0},
      {"1-5,10%2", "1-5,10", "", 2},
      {"7", "7", "", 0},
      {"3,1,3", "1,3", "", 0},
      {"0-x", "",
       "Invalid job array specification '0-x' (expected indexes such as 0-99, 1,3,5 or "
       "0-15:4, optionally with %N)",
       0},
      {"5-3", "",
       "Invalid job array specification '5-3' (expected indexes such as 0-99, 1,3,5 or "
       "0-15:4, optionally with %N)",
       0},
      {"0-9%0", "",
       "Invalid job array specification '0-9%0' (expected indexes such as 0-99, 1,3,5 "
       "or 0-15:4, optionally with %N)",
       0},
      {"0-5000", "", "Invalid job array specification: index 5000 is at or above MaxArraySize=1001",
       0},
      {"0-4000000000", "",
       "Invalid job array specification: index 4000000000 is at or above MaxArraySize=1001", 0},
      {"1-9999999:1", "",
       "Invalid job array specification: index 9999999 is at or above MaxArraySize=1001", 0},
      {"0-1000,0-1000", "",
       "Invalid job array specification: more than MaxArraySize=1001 tasks (split the array "
       "into several submissions)",
       0},
      {"1-5:18446744073709551615", "1", "", 0},
      {"0-1000:1000", "0,1000", "", 0},
      {"", "",
       "Invalid job array specification '' (expected indexes such as 0-99, 1,3,5 or 0-15:4, "
       "optionally with %N)",
       0},
  };
  for (const Case& c : cases) {
    auto spec = ParseArraySpec(c.text, 1001);
    if (!c.error.empty()) {
      ASSERT_FALSE(spec.ok()) << c.text;
      EXPECT_EQ(spec.error(), c.error);
      continue;
    }
    ASSERT_TRUE(spec.ok()) << c.text << ": " << spec.error();
    EXPECT_EQ(FormatArrayIndexes(spec->indexes), c.indexes) << c.text;
    EXPECT_EQ(spec->max_running, c.max_running) << c.text;
  }
  EXPECT_EQ(FormatArrayIndexes({0, 1, 2, 5}, 4), "0-2,5%4");
}

// A hostile list is refused by counting, before its tasks are stored: 100,000 items of one
// index each pass the index check but not the count.
TEST(ArraySpec, CountsBeforeExpanding) {
  std::string many;
  for (int i = 0; i < 100'000; ++i) many += (i ? ",0" : "0");
  auto refused = ParseArraySpec(many, 1001);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error(),
            "Invalid job array specification: 199999 characters, the limit is 65536 (use "
            "ranges such as 0-999 instead of listing every index)");
  std::string repeated;
  for (int i = 0; i < 1002; ++i) repeated += (i ? ",7" : "7");
  auto counted = ParseArraySpec(repeated, 1001);
  ASSERT_FALSE(counted.ok());
  EXPECT_NE(counted.error().find("more than MaxArraySize=1001 tasks"), std::string::npos);
  auto largest = ParseArraySpec("0-4000000", 4000001);
  ASSERT_TRUE(largest.ok()) << largest.error();
  EXPECT_EQ(largest->indexes.size(), 4000001u);
}

}  // namespace
}  // namespace drover
