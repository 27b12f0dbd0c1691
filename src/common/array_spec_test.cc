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
       "invalid array specification '0-x' (expected indexes such as 0-99, 1,3,5 or "
       "0-15:4, optionally with %N)",
       0},
      {"5-3", "",
       "invalid array specification '5-3' (expected indexes such as 0-99, 1,3,5 or "
       "0-15:4, optionally with %N)",
       0},
      {"0-9%0", "",
       "invalid array specification '0-9%0' (expected indexes such as 0-99, 1,3,5 "
       "or 0-15:4, optionally with %N)",
       0},
      {"0-5000", "", "array index 5000 is at or above MaxArraySize=1001", 0},
      {"", "",
       "invalid array specification '' (expected indexes such as 0-99, 1,3,5 or 0-15:4, "
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

}  // namespace
}  // namespace drover
