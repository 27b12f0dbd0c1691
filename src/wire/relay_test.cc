// SplitSpans: the tree's spans, as Slurm's route plugin splits a hostlist by TreeWidth.
#include "wire/relay.h"

#include <gtest/gtest.h>

namespace drover::wire {
namespace {

using Spans = std::vector<std::pair<size_t, size_t>>;

TEST(SplitSpans, AtMostWidthSpansOfNearlyEqualSize) {
  EXPECT_EQ(SplitSpans(10, 3), (Spans{{0, 4}, {4, 7}, {7, 10}}));
  EXPECT_EQ(SplitSpans(4, 50), (Spans{{0, 1}, {1, 2}, {2, 3}, {3, 4}}));
  EXPECT_EQ(SplitSpans(5, 1), (Spans{{0, 5}}));
  EXPECT_TRUE(SplitSpans(0, 50).empty());
  EXPECT_EQ(SplitSpans(3, 0), (Spans{{0, 3}})) << "a width of 0 is one span";
  Spans spans = SplitSpans(10000, 50);
  ASSERT_EQ(spans.size(), 50u);
  for (size_t i = 0; i < spans.size(); ++i) {
    EXPECT_EQ(spans[i].second - spans[i].first, 200u);
    if (i > 0) {
      EXPECT_EQ(spans[i].first, spans[i - 1].second);
    }
  }
}

}  // namespace
}  // namespace drover::wire
