#include "cli/clusters.h"

#include <gtest/gtest.h>

namespace drover::cli {
namespace {

TEST(ClustersTest, LocalNameAndAllAreAccepted) {
  EXPECT_FALSE(ClustersError("linux", "linux"));
  EXPECT_FALSE(ClustersError("LINUX,all", "linux"));
  EXPECT_FALSE(ClustersError("ALL", "linux"));
}

TEST(ClustersTest, AnotherClusterIsRefusedByName) {
  auto error = ClustersError("linux,other", "linux");
  ASSERT_TRUE(error);
  EXPECT_EQ(*error,
            "'other' can't be reached now, or it is an invalid entry for --cluster.  Use "
            "'sacctmgr list clusters' to see available clusters.");
}

TEST(ClustersTest, OptionOverridesEnvironment) {
  std::map<std::string, std::string> environment{{"SLURM_CLUSTERS", "other"}};
  EXPECT_EQ(ClustersRequested(std::string("linux"), environment), "linux");
  EXPECT_EQ(ClustersRequested(std::nullopt, environment), "other");
  EXPECT_EQ(ClustersRequested(std::nullopt, {}), std::nullopt);
}

}  // namespace
}  // namespace drover::cli
