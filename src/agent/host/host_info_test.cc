// The host's CPUs, memory and boot id from fake /sys and /proc trees, and from this host.
#include "agent/host/host_info.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace drover::agent {
namespace {

namespace fs = std::filesystem;

class FakeHost : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("drover_host_info_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    Write("proc/meminfo", "MemTotal:       16777216 kB\nMemFree:         1024 kB\n");
    Write("proc/sys/kernel/random/boot_id", "0f6c2f8e-1111-2222-3333-444455556666\n");
  }
  void TearDown() override { fs::remove_all(root_); }

  void Write(const std::string& name, const std::string& text) {
    fs::create_directories((root_ / name).parent_path());
    std::ofstream(root_ / name) << text;
  }
  void Cpu(int id, int package, int core) {
    std::string dir = "sys/devices/system/cpu/cpu" + std::to_string(id) + "/topology/";
    Write(dir + "physical_package_id", std::to_string(package) + "\n");
    Write(dir + "core_id", std::to_string(core) + "\n");
  }
  fs::path root_;
};

TEST_F(FakeHost, TwoSocketsOfTwoCoresWithTwoThreadsFromSysfs) {
  // Linux numbers the first thread of every core before the second ones.
  for (int cpu = 0; cpu < 8; ++cpu) Cpu(cpu, (cpu % 4) / 2, cpu % 2);
  Write("sys/devices/system/cpu/online", "0-7\n");
  auto host = ReadHostInfo(root_);
  ASSERT_TRUE(host.ok()) << host.error();
  EXPECT_EQ(host->cpus, 8);
  EXPECT_EQ(host->sockets, 2);
  EXPECT_EQ(host->cores_per_socket, 2);
  EXPECT_EQ(host->threads_per_core, 2);
  EXPECT_EQ(host->memory_mb, 16384u);
  EXPECT_EQ(host->boot_id, "0f6c2f8e-1111-2222-3333-444455556666");
  std::vector<std::vector<int>> expected = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  EXPECT_EQ(host->core_cpus, expected);
}

TEST_F(FakeHost, OfflineCpusAreNotCounted) {
  for (int cpu = 0; cpu < 4; ++cpu) Cpu(cpu, 0, cpu);
  Write("sys/devices/system/cpu/online", "0,2-3\n");
  auto host = ReadHostInfo(root_);
  ASSERT_TRUE(host.ok()) << host.error();
  EXPECT_EQ(host->cpus, 3);
  EXPECT_EQ(host->cores_per_socket, 3);
  EXPECT_EQ(host->core_cpus, (std::vector<std::vector<int>>{{0}, {2}, {3}}));
}

TEST_F(FakeHost, FallsBackToCpuinfoWithoutSysfsTopology) {
  std::string cpuinfo;
  for (int cpu = 0; cpu < 4; ++cpu)
    cpuinfo += "processor\t: " + std::to_string(cpu) +
               "\nphysical id\t: " + std::to_string(cpu / 2) +
               "\ncore id\t\t: " + std::to_string(cpu % 2) + "\ncpu cores\t: 2\n\n";
  Write("proc/cpuinfo", cpuinfo);
  auto host = ReadHostInfo(root_);
  ASSERT_TRUE(host.ok()) << host.error();
  EXPECT_EQ(host->cpus, 4);
  EXPECT_EQ(host->sockets, 2);
  EXPECT_EQ(host->cores_per_socket, 2);
  EXPECT_EQ(host->threads_per_core, 1);
}

TEST_F(FakeHost, CpuinfoWithoutTopologyMakesEachProcessorACore) {
  Write("proc/cpuinfo", "processor : 0\nmodel name : vm\n\nprocessor : 1\nmodel name : vm\n");
  auto host = ReadHostInfo(root_);
  ASSERT_TRUE(host.ok()) << host.error();
  EXPECT_EQ(host->cpus, 2);
  EXPECT_EQ(host->sockets, 1);
  EXPECT_EQ(host->cores_per_socket, 2);
  EXPECT_EQ(host->threads_per_core, 1);
}

TEST_F(FakeHost, ErrorsNameTheFile) {
  struct Case {
    std::string file, text, error;
  } cases[] = {
      {"proc/meminfo", "MemFree: 1 kB\n", "proc/meminfo: no MemTotal line"},
      {"proc/meminfo", "MemTotal: lots kB\n", "proc/meminfo: invalid line 'MemTotal: lots kB'"},
      {"proc/sys/kernel/random/boot_id", "\n", "boot_id: empty"},
      {"sys/devices/system/cpu/cpu0/topology/core_id", "x\n",
       "cpu0/topology/core_id: expected a number, found 'x'"},
  };
  for (const Case& c : cases) {
    SetUp();
    Cpu(0, 0, 0);
    Write(c.file, c.text);
    auto host = ReadHostInfo(root_);
    ASSERT_FALSE(host.ok()) << c.file;
    EXPECT_NE(host.error().find(c.error), std::string::npos) << host.error();
  }
  SetUp();
  fs::remove(root_ / "proc/meminfo");
  Cpu(0, 0, 0);
  auto host = ReadHostInfo(root_);
  ASSERT_FALSE(host.ok());
  EXPECT_EQ(host.error(), (root_ / "proc/meminfo").string() + ": cannot read it");
}

TEST_F(FakeHost, NoCpusAnywhereIsAnError) {
  auto host = ReadHostInfo(root_);
  ASSERT_FALSE(host.ok());
  EXPECT_NE(host.error().find("proc/cpuinfo: cannot read it"), std::string::npos);
}

TEST(HostInfo, CoresAndCpusConvertBothWays) {
  HostInfo host;
  host.core_cpus = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  auto cpus = CpusOfCores(host, {3, 1});
  ASSERT_TRUE(cpus.ok());
  EXPECT_EQ(*cpus, (std::vector<int>{1, 3, 5, 7}));
  EXPECT_EQ(CoresOfCpus(host, {6, 7, 0}), (std::vector<int>{0, 2, 3}));
  auto missing = CpusOfCores(host, {4});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(), "core 4 does not exist: this host has 4 cores (0-3)");
}

TEST(HostInfo, FormatIndexRanges) {
  EXPECT_EQ(FormatIndexRanges({}), "");
  EXPECT_EQ(FormatIndexRanges({5}), "5");
  EXPECT_EQ(FormatIndexRanges({3, 0, 1, 2, 8, 10, 11, 11}), "0-3,8,10-11");
}

TEST(HostInfo, ThisHost) {
  auto host = ReadHostInfo();
  ASSERT_TRUE(host.ok()) << host.error();
  EXPECT_EQ(host->cpus, sysconf(_SC_NPROCESSORS_ONLN));
  size_t threads = 0;
  for (const auto& cpus : host->core_cpus) threads += cpus.size();
  EXPECT_EQ(threads, static_cast<size_t>(host->cpus));
  uint64_t pages = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES));
  EXPECT_EQ(host->memory_mb, pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) >> 20);
  EXPECT_EQ(host->boot_id.size(), 36u);
}

}  // namespace
}  // namespace drover::agent
