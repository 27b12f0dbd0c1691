#include "agent/host/process_usage.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace drover::agent {
namespace {

TEST(ProcessUsage, ReadsTheStatusAndStatLinesSlurmReads) {
  std::filesystem::path proc =
      std::filesystem::temp_directory_path() / ("process_usage_test." + std::to_string(::getpid()));
  std::filesystem::create_directories(proc / "42");
  // A command with spaces and parentheses: fields count after the last ')'.
  std::ofstream(proc / "42" / "stat")
      << "42 (a (b) c) S 1 42 42 0 -1 4194560 100 0 7 0 250 50 0 0 20 0 1 0 1 2 3\n";
  std::ofstream(proc / "42" / "status") << "Name:\tx\nVmPeak:\t  20000 kB\nVmSize:\t  18000 kB\n"
                                           "VmHWM:\t   9000 kB\nVmRSS:\t   8000 kB\n";
  std::optional<ProcessUsage> usage = ReadProcessUsage(42, proc);
  ASSERT_TRUE(usage);
  EXPECT_EQ(usage->rss_kib, 8000u);
  EXPECT_EQ(usage->max_rss_kib, 9000u);
  EXPECT_EQ(usage->vsize_kib, 18000u);
  EXPECT_EQ(usage->max_vsize_kib, 20000u);
  EXPECT_EQ(usage->major_faults, 7u);
  EXPECT_DOUBLE_EQ(usage->cpu_seconds, 300.0 / static_cast<double>(sysconf(_SC_CLK_TCK)));
  EXPECT_FALSE(ReadProcessUsage(43, proc));  // gone
  std::filesystem::remove_all(proc);
}

TEST(ProcessUsage, ThisProcessUsesMemoryAndTime) {
  std::optional<ProcessUsage> usage = ReadProcessUsage(::getpid());
  ASSERT_TRUE(usage);
  EXPECT_GT(usage->rss_kib, 0u);
  EXPECT_GE(usage->max_rss_kib, usage->rss_kib);
  EXPECT_GT(usage->vsize_kib, 0u);
}

}  // namespace
}  // namespace drover::agent
