// What one process uses now, from /proc/PID/status and /proc/PID/stat, as Slurm's
// jobacct_gather/linux reads it: for sstat (Agent::StepUsage).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>

namespace drover::agent {

struct ProcessUsage {
  uint64_t rss_kib = 0;        // VmRSS
  uint64_t max_rss_kib = 0;    // VmHWM
  uint64_t vsize_kib = 0;      // VmSize
  uint64_t max_vsize_kib = 0;  // VmPeak
  uint64_t major_faults = 0;   // majflt
  double cpu_seconds = 0;      // utime + stime
};

// nullopt when the process is gone (or `proc` has no such entry). A kernel thread has no Vm*
// lines: zeros.
std::optional<ProcessUsage> ReadProcessUsage(pid_t pid,
                                             const std::filesystem::path& proc = "/proc");

}  // namespace drover::agent
