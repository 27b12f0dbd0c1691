// cgroup.conf (cgroup.conf(5)) and what a job's processes are held to: the parts of TaskPlugin,
// ProctrackType, cgroup.conf and JobAcctGatherParams/Frequency that decide enforcement.
#pragma once

#include <cstdint>
#include <vector>

#include "common/cluster_config.h"
#include "common/conf_reader.h"
#include "common/slurm_conf.h"

namespace drover {

// Reads cgroup.conf's lines into config.settings.cgroup. Keys Slurm documents that change
// nothing in Drover (CgroupPlugin, CgroupMountpoint, ...) are accepted and reported once.
void ApplyCgroupConf(const std::vector<ConfLine>& lines, ClusterConfig& config,
                     Diagnostics& diagnostics, KeyReporter& reporter);

// What Slurm would enforce on a node with this configuration.
struct Enforcement {
  bool track_by_cgroup = false;    // ProctrackType=proctrack/cgroup, or a task/cgroup constraint
  bool constrain_ram = false;      // task/cgroup and ConstrainRAMSpace=yes
  bool constrain_swap = false;     // task/cgroup and ConstrainSwapSpace=yes
  bool constrain_cores = false;    // task/cgroup and ConstrainCores=yes
  bool constrain_devices = false;  // task/cgroup and ConstrainDevices=yes
  // JobAcctGatherParams=OverMemoryKill with a jobacct_gather plugin: the job is killed once
  // its processes' RSS passes its memory request, seen every `poll_seconds`.
  bool over_memory_kill = false;
  int64_t poll_seconds = 30;  // JobAcctGatherFrequency's task= (or bare) interval
};
Enforcement EnforcementOf(const ClusterSettings& settings);

// The job's cgroup limits for `allocated_mb` of memory on a node of `real_memory_mb`
// (cgroup.conf(5): AllowedRAMSpace/MaxRAMPercent/MinRAMSpace, AllowedSwapSpace/MaxSwapPercent).
// 0: no limit.
struct MemoryLimits {
  uint64_t ram_mb = 0;
  uint64_t ram_and_swap_mb = 0;
};
MemoryLimits MemoryLimitsOf(const ClusterSettings& settings, uint64_t allocated_mb,
                            uint64_t real_memory_mb);

}  // namespace drover
