// cgroup v2 device control. v2 has no devices.deny: the kernel asks the eBPF programs of type
// BPF_PROG_TYPE_CGROUP_DEVICE attached to a process's cgroup and its ancestors, and an access
// goes through only if every one allows it (BPF_F_ALLOW_MULTI). DenyDevices builds a small
// program that refuses the listed character devices (any access: open for read or write,
// mknod) and allows everything else, loads it with libbpf and attaches it to one cgroup. The
// attachment lives as long as the cgroup: nothing is kept open, and removing the cgroup
// detaches it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/result.h"

namespace drover::agent {

struct DeviceNumber {
  uint32_t major = 0, minor = 0;
  bool operator==(const DeviceNumber&) const = default;
  auto operator<=>(const DeviceNumber&) const = default;
};

// "195:3".
std::string DeviceText(const DeviceNumber& device);
// "195:3" -> {195, 3}; an error naming the text otherwise.
Result<DeviceNumber> ParseDeviceNumber(std::string_view text);

// The character device at `path` (stat's st_rdev); an error when it is missing or is not a
// character device.
Result<DeviceNumber> CharDeviceAt(const std::filesystem::path& path);

// Attaches to the cgroup v2 directory `cgroup` a program that denies `denied`. Errors say what
// failed and why ("load the device program: Operation not permitted (needs CAP_BPF or root)").
Status DenyDevices(const std::filesystem::path& cgroup, const std::vector<DeviceNumber>& denied);

}  // namespace drover::agent
