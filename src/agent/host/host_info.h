// What the agent reports about its host: CPUs, sockets, cores, threads, memory and boot id,
// read from /sys and /proc under a root that tests replace with a fake tree. It only reads;
// it never changes the host.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/result.h"

namespace drover::agent {

struct HostInfo {
  int cpus = 0;  // online logical CPUs
  int sockets = 0;
  int cores_per_socket = 0;  // the most cores of any socket
  int threads_per_core = 0;  // the most hardware threads of any core
  uint64_t memory_mb = 0;    // MemTotal, in MiB
  std::string boot_id;       // changes on every boot: tells a reboot from an agent restart
  // The OS CPU ids of each core, in Slurm's core order (socket by socket, cores by core id):
  // core_cpus[i] are the CPUs of gres.conf's and the scheduler's core i.
  std::vector<std::vector<int>> core_cpus;

  int cores() const { return static_cast<int>(core_cpus.size()); }
};

// Reads the host under `root`: <root>/sys/devices/system/cpu (online, cpuN/topology), else
// <root>/proc/cpuinfo; <root>/proc/meminfo; <root>/proc/sys/kernel/random/boot_id.
Result<HostInfo> ReadHostInfo(const std::filesystem::path& root = "/");

// The OS CPUs of the given core indexes, sorted; an error names a core the host does not have.
Result<std::vector<int>> CpusOfCores(const HostInfo& host, const std::vector<int>& cores);

// The core indexes that hold any of `cpus`, sorted (NVML reports CPUs, gres.conf cores).
std::vector<int> CoresOfCpus(const HostInfo& host, const std::vector<int>& cpus);

// "0-3,8,10-11", the cpuset and Slurm list format; "" for none.
std::string FormatIndexRanges(std::vector<int> indexes);

}  // namespace drover::agent
