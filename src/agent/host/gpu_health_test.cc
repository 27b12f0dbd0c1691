// The built-in GPU health probes against the fake libnvidia-ml (fake_nvml.c), described by a
// file the test writes and rewrites: XID events, ECC errors, retired and remapped memory,
// NVLinks down, hardware slowdowns, a GPU gone from the bus.
#include "agent/host/gpu_health.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "testing/temp_dir.h"

namespace drover::agent {
namespace {

TEST(GpuHealth, FatalXidsAreTheGpusNotTheJobs) {
  EXPECT_TRUE(IsFatalXid(79));
  EXPECT_TRUE(IsFatalXid(48));
  EXPECT_TRUE(IsFatalXid(74));
  EXPECT_FALSE(IsFatalXid(13));  // a graphics engine exception: the application's
  EXPECT_FALSE(IsFatalXid(43));
}

TEST(GpuHealth, TheVerdictNamesEachGpu) {
  GpuReading healthy, bad, worse;
  healthy.index = 0;
  bad.index = 3;
  bad.uuid = "GPU-8e6a1b2c-3d4e-5f60-7182-93a4b5c6d7e8";
  bad.problem = "XID 79";
  bad.event = true;
  worse.index = 5;
  worse.uuid = "GPU-short";
  worse.problem = "2 NVLinks down";
  bool event = false;
  EXPECT_EQ(GpuHealthVerdict({healthy}, event), "");
  EXPECT_FALSE(event);
  EXPECT_EQ(GpuHealthVerdict({healthy, bad, worse}, event),
            "gpu 3 (GPU-8e6a1b2c...): XID 79; gpu 5 (GPU-short): 2 NVLinks down");
  EXPECT_TRUE(event);
}

#ifdef DROVER_FAKE_NVML
class GpuHealthProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = dir_.path() / "nvml.conf";
    setenv("FAKE_NVML_CONFIG", config_.c_str(), 1);
  }
  void TearDown() override { unsetenv("FAKE_NVML_CONFIG"); }

  // Two GPUs linked by 4 NVLinks; `first` and `second` add to their lines.
  void Describe(const std::string& first, const std::string& second = "") {
    // A later write must look changed to the library even within one clock tick: the size
    // differs by a comment of growing length.
    std::ofstream out(config_, std::ios::trunc);
    out << "#" << std::string(++writes_, '.') << "\n"
        << "gpu name=\"NVIDIA H100 80GB HBM3\" uuid=GPU-aaaa minor=0 bus=0x18 cpus=0-1 links=1:4 "
        << first << "\n"
        << "gpu name=\"NVIDIA H100 80GB HBM3\" uuid=GPU-bbbb minor=1 bus=0x2a cpus=2-3 links=0:4 "
        << second << "\n";
  }

  std::vector<Gpu> Discover() {
    GpuDiscoveryOptions options;
    options.nvml_library = DROVER_FAKE_NVML;
    auto gpus = DiscoverNvmlGpus(options);
    EXPECT_TRUE(gpus.ok()) << gpus.error();
    return gpus.ok() ? *gpus : std::vector<Gpu>{};
  }

  std::unique_ptr<GpuHealthProbe> Open() {
    auto probe = GpuHealthProbe::Open(DROVER_FAKE_NVML, Discover());
    EXPECT_TRUE(probe.ok()) << probe.error();
    return probe.ok() ? std::move(*probe) : nullptr;
  }

  testing::TempDir dir_{"gpu_health_test"};
  std::filesystem::path config_;
  int writes_ = 0;
};

TEST_F(GpuHealthProbeTest, AHealthyNodeReadsHealthy) {
  Describe("temp=41", "temp=52");
  auto probe = Open();
  ASSERT_TRUE(probe);
  std::vector<GpuReading> readings = probe->Probe();
  ASSERT_EQ(readings.size(), 2u);
  EXPECT_EQ(readings[0].uuid, "GPU-aaaa");
  EXPECT_EQ(readings[1].temperature_c, 52);
  EXPECT_EQ(readings[0].problem, "");
  EXPECT_EQ(readings[1].problem, "");
  bool event = true;
  EXPECT_EQ(GpuHealthVerdict(readings, event), "");
  EXPECT_FALSE(event);
}

TEST_F(GpuHealthProbeTest, AnXidIsAnEventSeenOnce) {
  Describe("", "");
  auto probe = Open();
  ASSERT_TRUE(probe);
  EXPECT_EQ(probe->Probe()[1].problem, "");
  Describe("", "xid=13,79");
  std::vector<GpuReading> readings = probe->Probe();
  EXPECT_EQ(readings[1].new_xids, (std::vector<uint32_t>{13, 79}));
  EXPECT_EQ(readings[1].problem, "XID 79");  // 13 is the application's
  EXPECT_TRUE(readings[1].event);
  EXPECT_EQ(readings[1].xid_errors, 2u);
  EXPECT_EQ(readings[1].last_xid, 79u);
  bool event = false;
  EXPECT_EQ(GpuHealthVerdict(readings, event), "gpu 1 (GPU-bbbb): XID 79");
  EXPECT_TRUE(event);
  readings = probe->Probe();  // no new event: healthy, the counts kept
  EXPECT_EQ(readings[1].problem, "");
  EXPECT_EQ(readings[1].xid_errors, 2u);
}

TEST_F(GpuHealthProbeTest, ConditionsAreReadEachProbe) {
  Describe("", "");
  auto probe = Open();
  ASSERT_TRUE(probe);
  Describe("ecc_dbe_volatile=2 ecc_dbe_aggregate=5 retired_dbe=3 retired_pending=1",
           "remap_failure=1 remap_pending=1 throttle=0x61 links_down=2");
  std::vector<GpuReading> readings = probe->Probe();
  // A hardware slowdown drains only once seen in kThrottledProbes probes in a row.
  EXPECT_EQ(readings[1].problem,
            "row remapping failed, row remapping pending (reset the GPU), 2 NVLinks down");
  for (int i = 1; i < kThrottledProbes; ++i) readings = probe->Probe();
  EXPECT_EQ(readings[0].ecc_dbe_volatile, 2u);
  EXPECT_EQ(readings[0].ecc_dbe_aggregate, 5u);
  EXPECT_EQ(readings[0].retired_pages_dbe, 3u);
  EXPECT_EQ(readings[0].problem,
            "2 uncorrectable ECC errors since the driver loaded, page retirement pending (reset "
            "the GPU)");
  EXPECT_FALSE(readings[0].event);
  EXPECT_EQ(readings[1].nvlinks_down, 2u);
  EXPECT_EQ(readings[1].throttle_reasons, 0x60u);  // idle (0x1) left out
  EXPECT_EQ(readings[1].problem,
            "row remapping failed, row remapping pending (reset the GPU), 2 NVLinks down, "
            "throttled (thermal)");
  Describe("ecc_dbe_aggregate=5", "throttle=0x4");  // a power cap alone is no problem
  readings = probe->Probe();
  EXPECT_EQ(readings[0].problem, "");
  EXPECT_EQ(readings[1].problem, "");
  EXPECT_EQ(readings[1].throttle_reasons, 0x4u);
}

TEST_F(GpuHealthProbeTest, AGpuGoneFromTheBusIsLost) {
  Describe("", "");
  auto probe = Open();
  ASSERT_TRUE(probe);
  Describe("", "lost=1");
  std::vector<GpuReading> readings = probe->Probe();
  EXPECT_TRUE(readings[1].lost);
  EXPECT_EQ(readings[1].problem, "GPU gone from the bus (GPU is lost (15))");
  Describe("", "");
  EXPECT_EQ(probe->Probe()[1].problem, "");
  // Another GPU in its place is not the one that was there.
  std::ofstream(config_, std::ios::trunc)
      << "gpu uuid=GPU-aaaa minor=0\ngpu uuid=GPU-cccc minor=1 links=0:1\n";
  readings = probe->Probe();
  EXPECT_TRUE(readings[1].lost);
  EXPECT_EQ(readings[1].problem, "GPU replaced: NVML now reports GPU-cccc");
}
#endif

}  // namespace
}  // namespace drover::agent
