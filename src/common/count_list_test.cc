#include "common/count_list.h"

#include <gtest/gtest.h>

#include <vector>

namespace drover {
namespace {

TEST(FormatCountListTest, CompressesRuns) {
  using Counts = std::vector<uint32_t>;
  EXPECT_EQ(FormatCountList(Counts{}), "");
  EXPECT_EQ(FormatCountList(Counts{1}), "1");
  EXPECT_EQ(FormatCountList(Counts{2, 2, 2}), "2(x3)");
  EXPECT_EQ(FormatCountList(Counts{4, 4, 2}), "4(x2),2");
  EXPECT_EQ(FormatCountList(Counts{1, 2, 1}), "1,2,1");
  EXPECT_EQ(FormatCountList(Counts{8, 8, 4, 4, 8}), "8(x2),4(x2),8");
}

}  // namespace
}  // namespace drover
