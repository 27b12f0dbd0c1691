// GPU discovery: NVML through a fake libnvidia-ml, the fallback to gres.conf when NVML is
// missing or fails, and emulated GPUs.
#include "agent/host/gpu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "testing/temp_dir.h"

namespace drover::agent {
namespace {

constexpr const char* kMissingNvml = "/nonexistent/libnvidia-ml.so.1";

NodeConfig LoadNode(const std::string& node_line, const std::string& gres_conf = "") {
  auto load = LoadClusterConfigText(
      "ClusterName=t\nGresTypes=gpu\n" + node_line + "\nPartitionName=p Nodes=ALL Default=YES\n",
      gres_conf.empty() ? std::nullopt : std::optional<std::string>(gres_conf));
  EXPECT_TRUE(load.ok()) << (load.diagnostics.errors().empty()
                                 ? ""
                                 : load.diagnostics.errors().front().ToString());
  return load.ok() ? load.config.nodes.at(0) : NodeConfig{};
}

GpuDiscoveryOptions WithoutNvml() {
  GpuDiscoveryOptions options;
  options.nvml_library = kMissingNvml;
  return options;
}

TEST(Gpu, MissingNvmlSaysWhy) {
  auto gpus = DiscoverNvmlGpus(WithoutNvml());
  ASSERT_FALSE(gpus.ok());
  EXPECT_TRUE(
      gpus.error().starts_with("NVML not available: dlopen /nonexistent/libnvidia-ml.so.1: "
                               "/nonexistent/libnvidia-ml.so.1: cannot open shared object file"))
      << gpus.error();
}

TEST(Gpu, WithoutNvmlGresConfDescribesTheGpus) {
  NodeConfig node = LoadNode("NodeName=n1 Sockets=2 CoresPerSocket=4 Gres=gpu:h100:4",
                             "NodeName=n1 Name=gpu Type=h100 File=/dev/nvidia[0-1] Cores=0-3\n"
                             "NodeName=n1 Name=gpu Type=h100 File=/dev/nvidia[2-3] Cores=4-7\n");
  GpuDiscovery found = DiscoverGpus(node, WithoutNvml());
  EXPECT_EQ(found.source, GpuSource::kGresConf);
  EXPECT_TRUE(found.note.starts_with("NVML not available: dlopen /nonexistent/")) << found.note;
  ASSERT_EQ(found.gpus.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    const Gpu& gpu = found.gpus[i];
    EXPECT_EQ(gpu.index, i);
    EXPECT_EQ(gpu.minor, i);
    EXPECT_EQ(gpu.device_path, "/dev/nvidia" + std::to_string(i));
    EXPECT_EQ(gpu.type, "h100");
    EXPECT_EQ(gpu.cores, i < 2 ? std::vector<int>({0, 1, 2, 3}) : std::vector<int>({4, 5, 6, 7}));
    EXPECT_EQ(gpu.uuid, "");
  }
}

TEST(Gpu, GresConfLinksAreKept) {
  NodeConfig node = LoadNode("NodeName=n1 Gres=gpu:2",
                             "NodeName=n1 Name=gpu File=/dev/nvidia0 Links=-1,2\n"
                             "NodeName=n1 Name=gpu File=/dev/nvidia1 Links=2,-1\n");
  GpuDiscovery found = DiscoverGpus(node, WithoutNvml());
  ASSERT_EQ(found.gpus.size(), 2u);
  EXPECT_EQ(found.gpus[0].links, (std::vector<int>{-1, 2}));
  EXPECT_EQ(found.gpus[1].links, (std::vector<int>{2, -1}));
}

TEST(Gpu, ConfiguredGpusWithoutFilesAreFlagged) {
  NodeConfig node = LoadNode("NodeName=n1 Gres=gpu:a100:2");
  GpuDiscovery found = DiscoverGpus(node, WithoutNvml());
  EXPECT_EQ(found.source, GpuSource::kGresConf);
  ASSERT_EQ(found.gpus.size(), 2u);
  EXPECT_EQ(found.gpus[1].minor, -1);
  EXPECT_NE(found.note.find("2 of the node's 2 configured GPUs have no File= in gres.conf"),
            std::string::npos)
      << found.note;
}

TEST(Gpu, EmulatedNodesNeverAskNvml) {
  NodeConfig node = LoadNode("NodeName=e1 Gres=gpu:a100:2,gpu:t4:1");
  GpuDiscoveryOptions options;
  options.emulated = true;
  options.nvml_library = kMissingNvml;
  GpuDiscovery found = DiscoverGpus(node, options);
  EXPECT_EQ(found.source, GpuSource::kEmulated);
  EXPECT_EQ(found.note, "");
  ASSERT_EQ(found.gpus.size(), 3u);
  EXPECT_EQ(found.gpus[0].type, "a100");
  EXPECT_EQ(found.gpus[2].type, "t4");
  EXPECT_EQ(found.gpus[2].index, 2);
  for (const Gpu& gpu : found.gpus) {
    EXPECT_EQ(gpu.minor, -1);
    EXPECT_EQ(gpu.device_path, "");
  }
}

TEST(Gpu, NodeWithoutGpus) {
  NodeConfig node = LoadNode("NodeName=n1 CPUs=4");
  GpuDiscovery found = DiscoverGpus(node, WithoutNvml());
  EXPECT_EQ(found.source, GpuSource::kNone);
  EXPECT_TRUE(found.gpus.empty());
  GpuDiscoveryOptions emulated;
  emulated.emulated = true;
  EXPECT_EQ(DiscoverGpus(node, emulated).source, GpuSource::kNone);
}

TEST(Gpu, TypeFromNvmlName) {
  EXPECT_EQ(GpuTypeFromName("NVIDIA H100 80GB HBM3"), "nvidia_h100_80gb_hbm3");
  EXPECT_EQ(GpuTypeFromName("NVIDIA A100-SXM4-40GB"), "nvidia_a100-sxm4-40gb");
  EXPECT_EQ(GpuTypeFromName("Tesla T4"), "tesla_t4");
  EXPECT_EQ(GpuSourceName(GpuSource::kGresConf), std::string("gres.conf"));
  EXPECT_EQ(GpuSourceName(GpuSource::kNvml), std::string("nvml"));
}

#ifdef DROVER_FAKE_NVML
class FakeNvml : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.nvml_library = DROVER_FAKE_NVML;
    options_.core_cpus = {{0, 1}, {2, 3}};
  }
  void TearDown() override { unsetenv("FAKE_NVML_INIT_ERROR"); }
  GpuDiscoveryOptions options_;
};

TEST_F(FakeNvml, ReadsEveryGpu) {
  auto gpus = DiscoverNvmlGpus(options_);
  ASSERT_TRUE(gpus.ok()) << gpus.error();
  ASSERT_EQ(gpus->size(), 3u);
  const Gpu& first = (*gpus)[0];
  EXPECT_EQ(first.index, 0);
  EXPECT_EQ(first.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(first.type, "nvidia_h100_80gb_hbm3");
  EXPECT_EQ(first.uuid, "GPU-fake-0");
  EXPECT_EQ(first.memory_mb, 81559u);
  EXPECT_EQ(first.minor, 0);
  EXPECT_EQ(first.device_path, "/dev/nvidia0");
  EXPECT_EQ(first.cores, (std::vector<int>{0}));
  const Gpu& second = (*gpus)[1];
  EXPECT_EQ(second.minor, 2);
  EXPECT_EQ(second.device_path, "/dev/nvidia2");
  EXPECT_EQ(second.cores, (std::vector<int>{1}));
  const Gpu& third = (*gpus)[2];
  EXPECT_EQ(third.type, "nvidia_l40s");
  EXPECT_EQ(third.memory_mb, 46068u);
  EXPECT_EQ(third.cores, (std::vector<int>{0, 1}));
  // 0-1: four direct NVLinks (plus none through the switch: GPU 1 has no switch link);
  // 0-2: one through the NVSwitch (GPU 0 has one switch link, GPU 2 two).
  EXPECT_EQ(first.links, (std::vector<int>{-1, 4, 1}));
  EXPECT_EQ(second.links, (std::vector<int>{4, -1, 0}));
  EXPECT_EQ(third.links, (std::vector<int>{1, 0, -1}));
}

TEST_F(FakeNvml, CpuAffinityWithoutTopologyIsCpus) {
  options_.core_cpus.clear();
  auto gpus = DiscoverNvmlGpus(options_);
  ASSERT_TRUE(gpus.ok()) << gpus.error();
  EXPECT_EQ((*gpus)[1].cores, (std::vector<int>{2, 3}));
}

TEST_F(FakeNvml, NvmlWinsAndGresConfNamesTheTypes) {
  NodeConfig node = LoadNode("NodeName=n1 Gres=gpu:h100:2,gpu:l40s:1",
                             "NodeName=n1 Name=gpu Type=h100 File=/dev/nvidia[0,2]\n"
                             "NodeName=n1 Name=gpu Type=l40s File=/dev/nvidia1\n");
  GpuDiscovery found = DiscoverGpus(node, options_);
  EXPECT_EQ(found.source, GpuSource::kNvml);
  EXPECT_EQ(found.note, "");
  ASSERT_EQ(found.gpus.size(), 3u);
  EXPECT_EQ(found.gpus[0].type, "h100");
  EXPECT_EQ(found.gpus[1].type, "h100");  // minor 2 is gres.conf's /dev/nvidia2
  EXPECT_EQ(found.gpus[2].type, "l40s");
  EXPECT_EQ(found.gpus[2].uuid, "GPU-fake-2");
}

TEST_F(FakeNvml, DisagreementWithTheConfigurationIsNoted) {
  NodeConfig node = LoadNode("NodeName=n1 Gres=gpu:2");
  GpuDiscovery found = DiscoverGpus(node, options_);
  EXPECT_EQ(found.source, GpuSource::kNvml);
  EXPECT_EQ(found.gpus.size(), 3u);
  EXPECT_EQ(found.note,
            "NVML found 3 GPUs but the configuration of node n1 declares 2; the node reports "
            "what NVML found");
}

TEST_F(FakeNvml, InitFailureFallsBackToGresConf) {
  setenv("FAKE_NVML_INIT_ERROR", "9", 1);
  NodeConfig node = LoadNode("NodeName=n1 Gres=gpu:1", "Name=gpu File=/dev/nvidia0\n");
  GpuDiscovery found = DiscoverGpus(node, options_);
  EXPECT_EQ(found.source, GpuSource::kGresConf);
  EXPECT_EQ(found.note,
            "NVML: nvmlInit_v2 failed: Driver Not Loaded (9) (is the NVIDIA driver loaded? try "
            "nvidia-smi)");
  ASSERT_EQ(found.gpus.size(), 1u);
  EXPECT_EQ(found.gpus[0].device_path, "/dev/nvidia0");
}
TEST_F(FakeNvml, MigDevicesAreGpusOfTheirOwn) {
  // GPU 0 in MIG mode with three 1g.10gb devices; GPU 1 whole. The driver lists the caps of
  // GPU 0's (minor 0) instances.
  drover::testing::TempDir temp("gpu_test");  // its own: removed at the end, never shared
  ASSERT_FALSE(temp.path().empty());
  std::string dir = temp.path().string();
  std::string config = dir + "/mig_nvml.conf", minors = dir + "/mig-minors",
              devices = dir + "/devices";
  auto write = [](const std::string& path, const char* text) {
    std::FILE* file = std::fopen(path.c_str(), "w");
    ASSERT_NE(file, nullptr) << path;
    std::fputs(text, file);
    std::fclose(file);
  };
  write(config,
        "gpu name=\"NVIDIA H100 80GB HBM3\" uuid=GPU-aa minor=0 cpus=0-1 mig=1:9856x3\n"
        "gpu name=\"NVIDIA H100 80GB HBM3\" uuid=GPU-bb minor=1 cpus=2-3 links=0:4\n");
  write(minors,
        "gpu0/gi1/access 12\ngpu0/gi1/ci0/access 13\ngpu0/gi2/access 21\n"
        "gpu0/gi2/ci0/access 22\ngpu0/gi3/access 30\ngpu0/gi3/ci0/access 31\n");
  write(devices, "Character devices:\n195 nvidia\n237 nvidia-caps\n");
  setenv("FAKE_NVML_CONFIG", config.c_str(), 1);
  options_.mig_minors_path = minors;
  options_.proc_devices_path = devices;
  auto gpus = DiscoverNvmlGpus(options_);
  unsetenv("FAKE_NVML_CONFIG");
  ASSERT_TRUE(gpus.ok()) << gpus.error();
  ASSERT_EQ(gpus->size(), 4u);
  const Gpu& mig = (*gpus)[1];
  EXPECT_TRUE(mig.mig);
  EXPECT_EQ(mig.index, 1);
  EXPECT_EQ(mig.uuid, "MIG-aa-1");
  EXPECT_EQ(mig.parent_uuid, "GPU-aa");
  EXPECT_EQ(mig.type, "nvidia_h100_80gb_hbm3_1g.10gb");
  EXPECT_EQ(mig.name, "NVIDIA H100 80GB HBM3 MIG 1g.10gb");
  EXPECT_EQ(mig.memory_mb, 9856u);
  EXPECT_EQ(mig.nvml_index, 0);
  EXPECT_EQ(mig.device_path, "/dev/nvidia0");
  EXPECT_EQ(mig.mig_caps, (std::vector<DeviceNumber>{{237, 21}, {237, 22}}));
  EXPECT_EQ(mig.cores, (std::vector<int>{0}));
  const Gpu& whole = (*gpus)[3];
  EXPECT_FALSE(whole.mig);
  EXPECT_EQ(whole.index, 3);
  EXPECT_EQ(whole.nvml_index, 1);
  EXPECT_TRUE(whole.links.empty());  // links join GPUs, not MIG devices

  // A job given MIG device 1 opens the GPU it is cut from and its own caps; the other MIG
  // devices' caps and the whole GPU are denied.
  auto denied = DevicesDenied(*gpus, [](int index) { return index == 1; });
  std::sort(denied.begin(), denied.end());
  EXPECT_EQ(denied,
            (std::vector<DeviceNumber>{{195, 1}, {237, 12}, {237, 13}, {237, 30}, {237, 31}}));

  // slurm.conf names the MIG profile: the type found is matched to it, as Slurm matches.
  NodeConfig node = LoadNode("NodeName=n1 Gres=gpu:1g.10gb:3,gpu:h100:1", "AutoDetect=nvml\n");
  setenv("FAKE_NVML_CONFIG", config.c_str(), 1);
  GpuDiscovery found = DiscoverGpus(node, options_);
  unsetenv("FAKE_NVML_CONFIG");
  ASSERT_EQ(found.gpus.size(), 4u);
  EXPECT_EQ(found.gpus[0].type, "1g.10gb");
  EXPECT_EQ(found.gpus[3].type, "h100");
}
#else
TEST(FakeNvml, NotBuilt) {
  GTEST_SKIP() << "the fake NVML library is not built: add "
                  "include(${CMAKE_CURRENT_SOURCE_DIR}/host/fake_nvml.cmake) to "
                  "src/agent/CMakeLists.txt";
}
#endif

}  // namespace
}  // namespace drover::agent
