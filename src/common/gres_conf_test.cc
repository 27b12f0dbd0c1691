// gres.conf: device files with ranges, types, core affinity and NVLink peers, emulated GPUs,
// and the cross-checks against slurm.conf's Gres= counts.
#include "common/gres_conf.h"

#include <gtest/gtest.h>

#include <tuple>

namespace drover {
namespace {

ConfigLoad Load(const std::string& nodes, const std::string& gres) {
  return LoadClusterConfigText(
      "ClusterName=t\nGresTypes=gpu\n" + nodes + "PartitionName=p Nodes=ALL Default=YES\n", gres);
}

std::string Messages(const std::vector<Diagnostic>& list) {
  std::string out;
  for (const Diagnostic& d : list) out += d.ToString() + "\n";
  return out;
}

TEST(GresConf, DeviceFilesCoresAndLinks) {
  ConfigLoad load =
      Load("NodeName=g[1-2] Sockets=2 CoresPerSocket=4 Gres=gpu:h100:4\n",
           "AutoDetect=off\n"
           "NodeName=g[1-2] Name=gpu Type=h100 File=/dev/nvidia0 Cores=0-3 Links=-1,2,0,0\n"
           "NodeName=g[1-2] Name=gpu Type=h100 File=/dev/nvidia1 Cores=0-3 Links=2,-1,0,0\n"
           "NodeName=g[1-2] Name=gpu Type=h100 File=/dev/nvidia[2-3] Cores=4-7\n");
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  const NodeConfig& node = load.config.nodes[1];
  ASSERT_EQ(node.gpus.size(), 4u);
  EXPECT_EQ(node.gpus[0].file, "/dev/nvidia0");
  EXPECT_EQ(node.gpus[0].links, (std::vector<int>{-1, 2, 0, 0}));
  EXPECT_EQ(node.gpus[1].cores, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(node.gpus[3].index, 3);
  EXPECT_EQ(node.gpus[3].cores, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(node.gpus[3].type, "h100");
  EXPECT_FALSE(node.gpus_autodetect);
}

TEST(GresConf, NodesDeclaredAlikeShareOneGpuListUntilOneIsWritten) {
  ConfigLoad load = Load(
      "NodeName=a[1-3] Gres=gpu:h100:8\nNodeName=b1 Gres=gpu:h100:8\n"
      "NodeName=c1 Gres=gpu:l40s:2\nNodeName=c2 Gres=gpu:l40s:2\n",
      "");
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  std::vector<NodeConfig>& nodes = load.config.nodes;
  ASSERT_EQ(nodes.size(), 6u);
  // a[1-3] and b1 are declared alike, and so are c1 and c2 (lines one after another).
  EXPECT_TRUE(nodes[0].gpus.SharedWith(nodes[1].gpus));
  EXPECT_TRUE(nodes[0].gpus.SharedWith(nodes[3].gpus));
  EXPECT_TRUE(nodes[4].gpus.SharedWith(nodes[5].gpus));
  EXPECT_FALSE(nodes[0].gpus.SharedWith(nodes[4].gpus));
  EXPECT_EQ(nodes[5].gpus.size(), 2u);
  EXPECT_EQ(nodes[5].gpus[1].type, "l40s");
  EXPECT_EQ(nodes[5].gpus[1].index, 1);
  // A write to one node's GPUs is that node's alone.
  nodes[1].gpus.Mutable()[3].uuid = "GPU-3";
  EXPECT_FALSE(nodes[1].gpus.SharedWith(nodes[0].gpus));
  EXPECT_TRUE(nodes[0].gpus.SharedWith(nodes[2].gpus));
  EXPECT_EQ(nodes[1].gpus[3].uuid, "GPU-3");
  EXPECT_EQ(nodes[0].gpus[3].uuid, "");
  EXPECT_EQ(nodes[2].gpus[3].uuid, "");
  EXPECT_FALSE(nodes[1].gpus == nodes[0].gpus);
  // A copy of a node shares its list; equal lists compare equal whether shared or not.
  NodeConfig copy = nodes[4];
  EXPECT_TRUE(copy.gpus.SharedWith(nodes[4].gpus));
  GpuList rebuilt(nodes[4].gpus.all());
  EXPECT_FALSE(rebuilt.SharedWith(nodes[4].gpus));
  EXPECT_TRUE(rebuilt == nodes[4].gpus);
  // No GPUs: an empty list, whose first write makes it the node's own.
  GpuList none;
  EXPECT_TRUE(none.empty());
  EXPECT_TRUE(none == GpuList(std::vector<GpuDevice>{}));
  none.Mutable().push_back(GpuDevice{});
  EXPECT_EQ(none.size(), 1u);
}

TEST(GresConf, EmulatedGpusHaveNoFiles) {
  ConfigLoad load = Load("NodeName=e1 CPUs=16 Gres=gpu:8\n",
                         "Name=gpu Count=4 Cores=0-7\nName=gpu Count=4 Cores=8-15\n");
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  const NodeConfig& node = load.config.nodes[0];
  ASSERT_EQ(node.gpus.size(), 8u);
  EXPECT_EQ(node.gpus[5].index, 5);
  EXPECT_EQ(node.gpus[5].file, "");
  EXPECT_EQ(node.gpus[5].cores.front(), 8);
}

TEST(GresConf, WithoutGresConfTheDeclaredGpusAreEmulated) {
  ConfigLoad load =
      LoadClusterConfigText("ClusterName=t\nGresTypes=gpu\nNodeName=e1 Gres=gpu:a100:2,gpu:t4:1\n");
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  const auto& gpus = load.config.nodes[0].gpus;
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[1].type, "a100");
  EXPECT_EQ(gpus[2].type, "t4");
  EXPECT_EQ(gpus[2].index, 2);
}

TEST(GresConf, AutoDetectMarksNodes) {
  ConfigLoad load = Load("NodeName=g1 Gres=gpu:8\n", "AutoDetect=nvml\n");
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  EXPECT_TRUE(load.config.nodes[0].gpus_autodetect);
  EXPECT_EQ(load.config.nodes[0].gpus.size(), 8u);

  ConfigLoad mixed =
      Load("NodeName=g[1-2] Gres=gpu:8\n", "AutoDetect=nvml\nNodeName=g2 AutoDetect=off\n");
  ASSERT_TRUE(mixed.ok()) << Messages(mixed.diagnostics.errors());
  EXPECT_TRUE(mixed.config.nodes[0].gpus_autodetect);
  EXPECT_FALSE(mixed.config.nodes[1].gpus_autodetect);
}

TEST(GresConf, Errors) {
  struct Case {
    std::string nodes, gres, errors;
  } cases[] = {
      {"NodeName=g1 Gres=gpu:8\n", "NodeName=g1 Name=gpu File=/dev/nvidia[0-3]\n",
       "slurm.conf:3: node g1: slurm.conf declares Gres=gpu:8 but gres.conf describes 4 GPUs; "
       "make them agree\n"},
      {"NodeName=g1\n", "NodeName=g1 Name=gpu File=/dev/nvidia0\n",
       "slurm.conf:3: node g1: slurm.conf declares no Gres=gpu but gres.conf describes 1 GPU; "
       "make them agree\n"},
      {"NodeName=g1 Gres=gpu:h100:2\n", "NodeName=g1 Name=gpu Type=a100 File=/dev/nvidia[0-1]\n",
       "slurm.conf:3: node g1: slurm.conf declares 2 h100 GPUs but gres.conf describes 0 of "
       "Type=h100; make them agree\n"},
      {"NodeName=g1 Gres=gpu:1\n", "NodeName=g9 Name=gpu File=/dev/nvidia0\n",
       "gres.conf:1: NodeName: node 'g9' is not defined by any NodeName line\n"},
      {"NodeName=g1 CPUs=4 Gres=gpu:1\n", "NodeName=g1 Name=gpu File=/dev/nvidia0 Cores=0-7\n",
       "gres.conf:1: node g1: Cores= names core 4 but the node has 4 cores (0-3)\n"},
      {"NodeName=g1 Gres=gpu:2\n", "NodeName=g1 Name=gpu File=/dev/nvidia[0-1] Links=-1,4\n",
       "gres.conf:1: Links= describes one GPU; write one line per GPU (File=/dev/nvidiaN)\n"},
      {"NodeName=g1 Gres=gpu:2\n",
       "NodeName=g1 Name=gpu File=/dev/nvidia0 Links=-1\nNodeName=g1 Name=gpu File=/dev/nvidia1\n",
       "slurm.conf:3: node g1: GPU 0 has Links= for 1 GPUs but the node has 2\n"},
      {"NodeName=g1 Gres=gpu:2\n", "NodeName=g1 Name=gpu File=/dev/nvidia[0-1] Count=3\n",
       "gres.conf:1: Count=3 but File= names 2 devices; drop Count or make them agree\n"},
      {"NodeName=g1 Gres=gpu:2\n",
       "NodeName=g1 Name=gpu File=/dev/nvidia0\n"
       "NodeName=g1 Name=gpu File=/dev/nvidia0\n",
       "gres.conf:2: node g1: GPU 0 is declared twice\n"
       "slurm.conf:3: node g1: slurm.conf declares Gres=gpu:2 but gres.conf describes 1 GPU; "
       "make them agree\n"},
      {"NodeName=g1 Gres=gpu:1\n", "NodeName=g1 File=/dev/nvidia0\n",
       "gres.conf:1: a GRES line needs Name= (e.g. Name=gpu)\n"},
      {"NodeName=g1 Gres=gpu:1\n", "AutoDetect=magic\n",
       "gres.conf:1: AutoDetect: invalid value 'magic' (expected off or nvml)\n"},
  };
  for (const Case& c : cases) {
    ConfigLoad load = Load(c.nodes, c.gres);
    EXPECT_EQ(Messages(load.diagnostics.errors()), c.errors) << c.gres;
  }
}

TEST(GresConf, IndexLists) {
  EXPECT_EQ(*ParseIndexList("0-3,8"), (std::vector<int>{0, 1, 2, 3, 8}));
  EXPECT_EQ(ParseIndexList("3-1").error(),
            "invalid index list '3-1' (expected e.g. 0-7 or 0-3,8-11)");
  EXPECT_EQ(ParseIndexList("").error(), "invalid index list '' (expected e.g. 0-7 or 0-3,8-11)");
}

}  // namespace
}  // namespace drover

namespace drover {
namespace {

ConfigLoad LoadSharing(const std::string& nodes, const std::optional<std::string>& gres) {
  return LoadClusterConfigText("ClusterName=t\nGresTypes=gpu,shard,mps\n" + nodes +
                                   "PartitionName=p Nodes=ALL Default=YES\n",
                               gres);
}

std::vector<uint32_t> Shares(const NodeConfig& node) {
  std::vector<uint32_t> shares;
  for (const GpuDevice& gpu : node.gpus) shares.push_back(gpu.shares);
  return shares;
}

TEST(GresConfSharing, DeclaredSharesAreSplitEvenlyOverTheGpus) {
  ConfigLoad load = LoadSharing("NodeName=s1 Gres=gpu:3,shard:10\n", std::nullopt);
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  EXPECT_EQ(load.config.nodes[0].gpu_sharing, "shard");
  EXPECT_EQ(Shares(load.config.nodes[0]), (std::vector<uint32_t>{4, 3, 3}));
  EXPECT_EQ(load.config.nodes[0].gpu_shares(2), 3u);
}

TEST(GresConfSharing, GresConfLinesPlaceSharesOnTheGpusTheyName) {
  ConfigLoad load = LoadSharing("NodeName=m1 Gres=gpu:2,mps:300\n",
                                "Name=gpu File=/dev/nvidia[0-1]\n"
                                "Name=mps Count=200 File=/dev/nvidia0\n"
                                "Name=mps Count=100 File=/dev/nvidia1\n");
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  EXPECT_EQ(load.config.nodes[0].gpu_sharing, "mps");
  EXPECT_EQ(Shares(load.config.nodes[0]), (std::vector<uint32_t>{200, 100}));
}

TEST(GresConfSharing, InconsistentSharingIsAnError) {
  struct Case {
    std::string nodes;
    std::optional<std::string> gres;
    std::string error;
  };
  const Case cases[] = {
      {"NodeName=a Gres=gpu:2,shard:8,mps:100\n", std::nullopt, "both shard and mps"},
      {"NodeName=a Gres=shard:8\n", std::nullopt, "the node has none"},
      {"NodeName=a Gres=gpu:2,shard:8\n", "Name=shard Count=6\n",
       "declares Gres=shard:8 but gres.conf describes 6"},
      {"NodeName=a Gres=gpu:2\n", "Name=shard Count=6\n", "add shard:N to the node's Gres="},
      {"NodeName=a Gres=gpu:2,shard:4\n", "Name=shard Count=4 File=/dev/nvidia7\n",
       "names a GPU the node does not have"},
      {"NodeName=a Gres=gpu:2,shard:a100:4\n", std::nullopt, "takes no type"},
      {"NodeName=a Gres=gpu:2,shard:4\n", "Name=shard File=/dev/nvidia0\n", "needs Count="},
  };
  for (const Case& c : cases) {
    ConfigLoad load = LoadSharing(c.nodes, c.gres);
    EXPECT_FALSE(load.ok()) << c.nodes;
    EXPECT_NE(Messages(load.diagnostics.errors()).find(c.error), std::string::npos)
        << c.nodes << Messages(load.diagnostics.errors());
  }
}

}  // namespace
}  // namespace drover

namespace drover {
namespace {

TEST(GresConfNvme, DrivesAreMountPointsOrEmulated) {
  ConfigLoad load = LoadClusterConfigText(
      "ClusterName=t\nGresTypes=gpu,nvme\nNodeName=a Gres=nvme:2\nNodeName=b Gres=nvme:3\n"
      "PartitionName=p Nodes=ALL Default=YES\n",
      std::string("NodeName=a Name=nvme File=/local/nvme[0-1]\n"));
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  const std::vector<NvmeDevice>& a = load.config.nodes[0].nvme;
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[1].mount, "/local/nvme1");
  EXPECT_EQ(a[1].index, 1);
  ASSERT_EQ(load.config.nodes[1].nvme.size(), 3u);  // no gres.conf line: emulated
  EXPECT_EQ(load.config.nodes[1].nvme[2].mount, "");

  for (const auto& [nodes, gres, error] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"NodeName=a Gres=nvme:3\n", "Name=nvme File=/local/nvme[0-1]\n",
            "declares Gres=nvme:3 but gres.conf describes 2 NVMe drives"},
           {"NodeName=a Gres=nvme:1\n", "Name=nvme File=nvme0\n", "an absolute path"},
           {"NodeName=a Gres=nvme:2\n", "Name=nvme Count=3 File=/l/n[0-1]\n", "Count=3 but File="},
       }) {
    ConfigLoad bad = LoadClusterConfigText(
        "ClusterName=t\nGresTypes=gpu,nvme\n" + nodes + "PartitionName=p Nodes=ALL Default=YES\n",
        gres);
    EXPECT_FALSE(bad.ok()) << nodes << gres;
    EXPECT_NE(Messages(bad.diagnostics.errors()).find(error), std::string::npos)
        << Messages(bad.diagnostics.errors());
  }
}

}  // namespace
}  // namespace drover
