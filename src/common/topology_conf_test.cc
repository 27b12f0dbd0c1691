// topology.conf: trees with levels and subtrees, blocks with BlockSizes, and the structural
// errors an administrator can write.
#include "common/topology_conf.h"

#include <gtest/gtest.h>

#include "common/hostlist.h"

namespace drover {
namespace {

ConfigLoad Load(const std::string& plugin, const std::string& topology,
                const std::string& nodes = "NodeName=n[1-8]\n") {
  return LoadClusterConfigText("ClusterName=t\nTopologyPlugin=" + plugin + "\n" + nodes +
                                   "PartitionName=p Nodes=ALL Default=YES\n",
                               std::nullopt, topology);
}

std::string Messages(const std::vector<Diagnostic>& list) {
  std::string out;
  for (const Diagnostic& d : list) out += d.ToString() + "\n";
  return out;
}

std::string Subtree(const ClusterConfig& config, const SwitchConfig& node) {
  std::vector<std::string> names;
  for (int n : node.subtree_nodes) names.push_back(config.nodes[n].name);
  return CompressHostlist(names);
}

TEST(TopologyConf, TreeLevelsAndSubtrees) {
  ConfigLoad load = Load("topology/tree",
                         "SwitchName=core Switches=spine[1-2]\n"
                         "SwitchName=spine1 Switches=leaf[1-2]\n"
                         "SwitchName=spine2 Switches=leaf3 LinkSpeed=200\n"
                         "SwitchName=leaf1 Nodes=n[1-3]\n"
                         "SwitchName=leaf2 Nodes=n[4-6]\n"
                         "SwitchName=leaf3 Nodes=n[7-8]\n");
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  EXPECT_TRUE(load.diagnostics.warnings().empty()) << Messages(load.diagnostics.warnings());
  const TopologyConfig& t = load.config.topology;
  ASSERT_EQ(t.switches.size(), 6u);
  EXPECT_EQ(t.switches[t.root].name, "core");
  EXPECT_EQ(t.switches[0].level, 2);
  EXPECT_EQ(t.switches[1].level, 1);
  EXPECT_EQ(t.switches[3].level, 0);
  EXPECT_EQ(t.switches[2].link_speed, 200);
  EXPECT_EQ(Subtree(load.config, t.switches[1]), "n[1-6]");
  EXPECT_EQ(Subtree(load.config, t.switches[0]), "n[1-8]");
  EXPECT_EQ(t.switches[t.node_leaf[4]].name, "leaf2");
}

TEST(TopologyConf, TreeErrors) {
  struct Case {
    std::string topology, errors;
  } cases[] = {
      {"SwitchName=l1 Nodes=n[1-9]\n",
       "topology.conf:1: switch l1: node 'n9' is not defined by any NodeName line\n"},
      {"SwitchName=l1 Nodes=n[1-8],x[1-3],x7\n",
       "topology.conf:1: switch l1: nodes x[1-3,7] are not defined by any NodeName line\n"},
      {"SwitchName=l1 Nodes=n[1-5]\nSwitchName=l2 Nodes=n[5-8]\nSwitchName=s Switches=l[1-2]\n",
       "topology.conf:2: node n5 is under both switch l1 and switch l2; a node sits under one "
       "leaf\n"},
      {"SwitchName=a Switches=b\nSwitchName=b Switches=a\n",
       "topology.conf:1: switch a is part of a loop of switches\n"},
      {"SwitchName=l1 Nodes=n[1-8]\nSwitchName=s Switches=l1,lx\n",
       "topology.conf:2: switch s: switch 'lx' is not defined by any SwitchName line\n"},
      {"SwitchName=l1 Nodes=n[1-8]\nSwitchName=s1 Switches=l1\nSwitchName=s2 Switches=l1\n",
       "topology.conf:3: switch l1 is under both s1 and s2; a switch has one parent\n"},
      {"SwitchName=l1 Nodes=n[1-8] Switches=l2\nSwitchName=l2\n",
       "topology.conf:1: switch l1 has both Switches= and Nodes=; a switch connects either "
       "switches or nodes\n"},
  };
  for (const Case& c : cases) {
    ConfigLoad load = Load("topology/tree", c.topology);
    EXPECT_EQ(Messages(load.diagnostics.errors()), c.errors) << c.topology;
  }
  ConfigLoad missing = LoadClusterConfigText(
      "ClusterName=t\nTopologyPlugin=topology/tree\n"
      "NodeName=n1\n");
  EXPECT_EQ(Messages(missing.diagnostics.errors()),
            "slurm.conf: TopologyPlugin=topology/tree needs a topology.conf beside slurm.conf\n");
}

TEST(TopologyConf, TreeWarnings) {
  ConfigLoad load = Load("topology/tree",
                         "SwitchName=l1 Nodes=n[1-3]\nSwitchName=l2 Nodes=n[4-6]\n"
                         "SwitchName=empty\n");
  EXPECT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  EXPECT_EQ(Messages(load.diagnostics.warnings()),
            "topology.conf:3: switch empty connects nothing\n"
            "topology.conf: switches l1, l2, empty have no common parent; a job cannot span "
            "them\n"
            "topology.conf: 2 nodes are under no switch (n[7-8]): they can run only single-node "
            "jobs\n");
}

TEST(TopologyConf, Blocks) {
  ConfigLoad load =
      Load("topology/block", "BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-8]\n");
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  const TopologyConfig& t = load.config.topology;
  ASSERT_EQ(t.blocks.size(), 2u);
  EXPECT_EQ(t.block_sizes, (std::vector<int>{4, 8}));
  EXPECT_EQ(t.node_block[5], 1);

  ConfigLoad sized = Load("topology/block",
                          "BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-8]\nBlockSizes=2,4\n");
  ASSERT_TRUE(sized.ok()) << Messages(sized.diagnostics.errors());
  EXPECT_EQ(sized.config.topology.block_sizes, (std::vector<int>{2, 4}));
}

TEST(TopologyConf, BlockErrors) {
  struct Case {
    std::string topology, errors;
  } cases[] = {
      {"BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[4-8]\n",
       "topology.conf:2: node n4 is in both block b1 and block b2\n"},
      {"BlockName=b1 Nodes=n[1-4]\nBlockSizes=4,12\n",
       "topology.conf:2: BlockSizes: 12 must be the base block size 4 times a power of two, "
       "larger than 4\n"},
      {"BlockName=b1 Nodes=n[1-4]\nBlockSizes=4,x\n",
       "topology.conf:2: BlockSizes: invalid size 'x' (expected node counts such as 18,36,72)\n"},
  };
  for (const Case& c : cases) {
    ConfigLoad load = Load("topology/block", c.topology);
    EXPECT_EQ(Messages(load.diagnostics.errors()), c.errors) << c.topology;
  }
}

}  // namespace
}  // namespace drover
