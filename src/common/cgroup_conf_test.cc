#include "common/cgroup_conf.h"

#include <gtest/gtest.h>

namespace drover {
namespace {

constexpr const char* kNodes =
    "ClusterName=c\nNodeName=n1 RealMemory=10000\nPartitionName=p Nodes=n1 Default=YES\n";

ConfigLoad Load(const std::string& slurm, const std::string& cgroup = "") {
  return LoadClusterConfigText(kNodes + slurm, std::nullopt, std::nullopt,
                               cgroup.empty() ? std::nullopt : std::optional<std::string>(cgroup));
}

TEST(CgroupConf, NothingIsEnforcedUnlessAsked) {
  ConfigLoad load = Load("");
  ASSERT_TRUE(load.ok());
  Enforcement e = EnforcementOf(load.config.settings);
  EXPECT_TRUE(e.track_by_cgroup);  // ProctrackType's default is proctrack/cgroup
  EXPECT_FALSE(e.constrain_ram || e.constrain_swap || e.constrain_cores || e.constrain_devices ||
               e.over_memory_kill);
  EXPECT_EQ(MemoryLimitsOf(load.config.settings, 2000, 10000).ram_mb, 0u);
}

TEST(CgroupConf, ConstrainKeysActOnlyWithTaskCgroup) {
  const std::string cgroup =
      "ConstrainRAMSpace=yes\nConstrainCores=yes\nConstrainDevices=yes\nCgroupPlugin=autodetect\n";
  ConfigLoad without = Load("ProctrackType=proctrack/linuxproc\n", cgroup);
  ASSERT_TRUE(without.ok());
  Enforcement e = EnforcementOf(without.config.settings);
  EXPECT_FALSE(e.constrain_ram || e.constrain_cores || e.constrain_devices || e.track_by_cgroup);
  ConfigLoad with = Load("TaskPlugin=task/affinity,task/cgroup\n", cgroup);
  ASSERT_TRUE(with.ok());
  e = EnforcementOf(with.config.settings);
  EXPECT_TRUE(e.constrain_ram && e.constrain_cores && e.constrain_devices && e.track_by_cgroup);
  EXPECT_FALSE(e.constrain_swap);
  MemoryLimits limits = MemoryLimitsOf(with.config.settings, 2000, 10000);
  EXPECT_EQ(limits.ram_mb, 2000u);
  EXPECT_EQ(limits.ram_and_swap_mb, 0u);  // swap not limited
}

TEST(CgroupConf, AllowedSpacesCeilingsAndFloor) {
  ConfigLoad load = Load("TaskPlugin=task/cgroup\n",
                         "ConstrainRAMSpace=yes\nAllowedRAMSpace=101.5\nConstrainSwapSpace=yes\n"
                         "AllowedSwapSpace=50\nMaxSwapPercent=25\n");
  ASSERT_TRUE(load.ok());
  MemoryLimits limits = MemoryLimitsOf(load.config.settings, 2000, 10000);
  EXPECT_EQ(limits.ram_mb, 2030u);
  EXPECT_EQ(limits.ram_and_swap_mb, 2500u);  // 2030 + 1000, at most 25% of 10000
  EXPECT_EQ(MemoryLimitsOf(load.config.settings, 10, 10000).ram_mb, 30u);  // MinRAMSpace
  // ConstrainSwapSpace alone: RAM and RAM+swap both at 100% + AllowedSwapSpace.
  ConfigLoad swap_only =
      Load("TaskPlugin=task/cgroup\n", "ConstrainSwapSpace=yes\nAllowedSwapSpace=10\n");
  limits = MemoryLimitsOf(swap_only.config.settings, 2000, 10000);
  EXPECT_EQ(limits.ram_mb, 2200u);
  EXPECT_EQ(limits.ram_and_swap_mb, 2200u);
}

TEST(CgroupConf, OverMemoryKillNeedsAGatherPlugin) {
  ConfigLoad none = Load("JobAcctGatherParams=OverMemoryKill\n");
  EXPECT_FALSE(EnforcementOf(none.config.settings).over_memory_kill);
  ConfigLoad linux_gather = Load(
      "JobAcctGatherType=jobacct_gather/linux\nJobAcctGatherParams=NoShared,OverMemoryKill\n"
      "JobAcctGatherFrequency=task=5,energy=30\n");
  Enforcement e = EnforcementOf(linux_gather.config.settings);
  EXPECT_TRUE(e.over_memory_kill);
  EXPECT_EQ(e.poll_seconds, 5);
}

TEST(CgroupConf, BadValuesAndUnknownKeys) {
  ConfigLoad load = Load("", "AllowedRAMSpace=lots\nConstrainRAMSpac=yes\n");
  ASSERT_EQ(load.diagnostics.errors().size(), 1u);
  EXPECT_NE(load.diagnostics.errors()[0].message.find("AllowedRAMSpace"), std::string::npos);
  ASSERT_EQ(load.diagnostics.warnings().size(), 1u);
  EXPECT_NE(load.diagnostics.warnings()[0].message.find("ConstrainRAMSpace"), std::string::npos);
}

}  // namespace
}  // namespace drover
