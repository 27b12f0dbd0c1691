// The example clusters shipped in examples/ load without errors and describe what their
// READMEs say; the conf path comes from --conf, DROVER_CONF or SLURM_CONF in that order.
#include "common/cluster_config.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace drover {
namespace {

std::string Example(const std::string& name) {
  return std::string(DROVER_SOURCE_DIR) + "/examples/" + name + "/slurm.conf";
}

std::string Messages(const std::vector<Diagnostic>& list) {
  std::string out;
  for (const Diagnostic& d : list) out += d.ToString() + "\n";
  return out;
}

TEST(Examples, Demo) {
  ConfigLoad load = LoadClusterConfig(Example("demo"));
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  const ClusterConfig& c = load.config;
  EXPECT_EQ(c.nodes.size(), 4u);
  for (const NodeConfig& node : c.nodes) EXPECT_EQ(node.gpus.size(), 8u);
  EXPECT_EQ(c.partitions[c.DefaultPartition()].name, "gpu");
  int preempt = c.FindPartition("preempt");
  ASSERT_GE(preempt, 0);
  EXPECT_LT(c.partitions[preempt].priority_tier, c.partitions[c.DefaultPartition()].priority_tier);
  EXPECT_EQ(c.topology.kind, TopologyKind::kTree);
  EXPECT_EQ(c.topology.switches[c.topology.root].children.size(), 2u);
}

TEST(Examples, H100) {
  ConfigLoad load = LoadClusterConfig(Example("h100-128"));
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  const ClusterConfig& c = load.config;
  EXPECT_EQ(c.nodes.size(), 128u);
  int leaves = 0;
  for (const SwitchConfig& node : c.topology.switches) leaves += node.level == 0;
  EXPECT_EQ(leaves, 16);
  const NodeConfig& node = c.nodes[0];
  ASSERT_EQ(node.gpus.size(), 8u);
  EXPECT_EQ(node.gpus[0].type, "h100");
  EXPECT_EQ(node.gpus[0].links.size(), 8u);
  EXPECT_FALSE(node.gpus[0].cores.empty());
  EXPECT_EQ(c.settings.priority, PriorityType::kMultifactor);
  EXPECT_TRUE(c.settings.fair_tree());
  EXPECT_GE(c.FindPartition("debug"), 0);
}

TEST(Examples, Nvl72Blocks) {
  ConfigLoad load = LoadClusterConfig(Example("nvl72-blocks"));
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  EXPECT_EQ(load.config.topology.kind, TopologyKind::kBlock);
  EXPECT_EQ(load.config.topology.blocks.size(), 8u);
  for (const BlockConfig& block : load.config.topology.blocks) EXPECT_EQ(block.nodes.size(), 18u);
  EXPECT_EQ(load.config.nodes[0].gpus.size(), 4u);
}

TEST(ConfPath, ExplicitThenDroverConfThenSlurmConf) {
  ::setenv("SLURM_CONF", "/s/slurm.conf", 1);
  ::setenv("DROVER_CONF", "/d/slurm.conf", 1);
  EXPECT_EQ(ResolveConfPath("/x/slurm.conf"), "/x/slurm.conf");
  EXPECT_EQ(ResolveConfPath(""), "/d/slurm.conf");
  ::unsetenv("DROVER_CONF");
  EXPECT_EQ(ResolveConfPath(""), "/s/slurm.conf");
  ::unsetenv("SLURM_CONF");
  EXPECT_EQ(ResolveConfPath(""), "/etc/slurm/slurm.conf");
}

TEST(ConfPath, MissingFileIsOneClearError) {
  ConfigLoad load = LoadClusterConfig("/nonexistent/slurm.conf");
  EXPECT_EQ(Messages(load.diagnostics.errors()),
            "cannot read '/nonexistent/slurm.conf': No such file or directory\n");
}

}  // namespace
}  // namespace drover
