#include "common/task_layout.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace drover {
namespace {

using Counts = std::vector<uint32_t>;
using Ranks = std::vector<std::vector<uint32_t>>;

Distribution Parsed(std::string_view text) {
  auto parsed = ParseDistribution(text);
  EXPECT_TRUE(parsed) << text;
  return parsed ? *parsed : Distribution{};
}

TEST(ParseDistributionTest, TakesSlurmsForms) {
  EXPECT_EQ(Parsed("block").nodes, NodeDistribution::kBlock);
  EXPECT_EQ(Parsed("Cyclic").nodes, NodeDistribution::kCyclic);
  EXPECT_EQ(Parsed("*").nodes, NodeDistribution::kBlock);
  EXPECT_EQ(Parsed("arbitrary").nodes, NodeDistribution::kArbitrary);
  Distribution plane = Parsed("plane=4");
  EXPECT_EQ(plane.nodes, NodeDistribution::kPlane);
  EXPECT_EQ(plane.plane_size, 4u);
  Distribution levels = Parsed("cyclic:fcyclic:block,NoPack");
  EXPECT_EQ(levels.socket, "fcyclic");
  EXPECT_EQ(levels.core, "block");
  EXPECT_EQ(levels.pack, false);
  EXPECT_EQ(Parsed("block:*,pack").socket, "");
  EXPECT_EQ(Parsed("block:*,pack").pack, true);
}

TEST(ParseDistributionTest, RefusesTheRest) {
  for (std::string_view bad : {"", "round", "plane", "plane=0", "plane=x", "block:plane",
                               "block:cyclic:cyclic:block", "block,tight", "block:fcyclicx"}) {
    auto parsed = ParseDistribution(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_EQ(parsed.error(), "Invalid --distribution specification");
  }
}

TEST(CountTasksTest, BlockAndCyclicFillOneTaskPerNodePerRound) {
  Counts none{kNoTaskLimit, kNoTaskLimit};
  EXPECT_EQ(*CountTasks(Parsed("block"), Counts{16, 16}, none, 4), (Counts{2, 2}));
  EXPECT_EQ(*CountTasks(Parsed("cyclic"), Counts{16, 16}, none, 3), (Counts{2, 1}));
  // The first node has room for one task: the second takes the rest.
  EXPECT_EQ(*CountTasks(Parsed("block"), Counts{1, 8}, none, 4), (Counts{1, 3}));
  // More tasks than room: the rest round-robin.
  EXPECT_EQ(*CountTasks(Parsed("block"), Counts{1, 1}, none, 5), (Counts{3, 2}));
}

TEST(CountTasksTest, PlaneDealsItsSizeToEachNodeInTurn) {
  Counts none{kNoTaskLimit, kNoTaskLimit, kNoTaskLimit};
  EXPECT_EQ(*CountTasks(Parsed("plane=2"), Counts{4, 4, 4}, none, 7), (Counts{3, 2, 2}));
  EXPECT_EQ(*CountTasks(Parsed("plane=4"), Counts{4, 4, 4}, none, 5), (Counts{4, 1, 0}));
}

TEST(CountTasksTest, LimitsCapEachNodeAndRefuseWhatDoesNotFit) {
  // --ntasks-per-core=1 with 2 cores on each node.
  EXPECT_EQ(*CountTasks(Parsed("block"), Counts{8, 8}, Counts{2, 2}, 4), (Counts{2, 2}));
  EXPECT_EQ(*CountTasks(Parsed("block"), Counts{8, 8}, Counts{1, 3}, 4), (Counts{1, 3}));
  auto over = CountTasks(Parsed("block"), Counts{8, 8}, Counts{2, 2}, 5);
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().find("Requested node configuration is not available"), std::string::npos);
}

TEST(AssignRanksTest, NumbersByDistribution) {
  EXPECT_EQ(AssignRanks(Parsed("block"), Counts{2, 2}), (Ranks{{0, 1}, {2, 3}}));
  EXPECT_EQ(AssignRanks(Parsed("cyclic"), Counts{2, 2}), (Ranks{{0, 2}, {1, 3}}));
  EXPECT_EQ(AssignRanks(Parsed("cyclic"), Counts{3, 1}), (Ranks{{0, 2, 3}, {1}}));
  EXPECT_EQ(AssignRanks(Parsed("plane=2"), Counts{3, 2, 2}), (Ranks{{0, 1, 6}, {2, 3}, {4, 5}}));
}

TEST(ArbitraryRanksTest, TaskTRunsOnLineT) {
  std::vector<std::string> nodes{"n1", "n2"};
  std::vector<std::string> hosts{"n2", "n1", "n2", "n2"};
  EXPECT_EQ(*ArbitraryRanks(nodes, hosts), (Ranks{{1}, {0, 2, 3}}));
  std::vector<std::string> stranger{"n1", "n9"};
  EXPECT_FALSE(ArbitraryRanks(nodes, stranger));
}

}  // namespace
}  // namespace drover
