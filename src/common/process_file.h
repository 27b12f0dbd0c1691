// A process recorded in a file ("pid=N", "started=T": field 22 of /proc/N/stat), so that a
// reused pid is never taken for the process: the agent's supervisor.pid and job.pid, and the
// daemons `drover up` starts. Reads /proc and writes only the file it is given.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>

#include "common/result.h"

namespace drover {

struct ProcessRecord {
  pid_t pid = 0;
  uint64_t started = 0;  // clock ticks after boot, /proc/<pid>/stat field 22
};

// Records `pid` with its start time, atomically (temporary file, rename), mode 0644.
Status WriteProcessFile(const std::filesystem::path& file, pid_t pid);
// SlurmctldPidFile / SlurmdPidFile: this process's pid and a newline, as Slurm's daemons write
// them (atomically, mode 0644).
Status WritePidFile(const std::filesystem::path& file);
// Both keys required, no other; the error says what is wrong with the file.
Result<ProcessRecord> ReadProcessFile(const std::filesystem::path& file);
// Whether the process `record` names still runs: same pid, same start time, not a zombie.
bool ProcessAlive(const ProcessRecord& record, const std::filesystem::path& proc = "/proc");
// The start time (field 22) in /proc/<pid>/stat, if the process exists.
std::optional<uint64_t> ProcessStartTime(pid_t pid, const std::filesystem::path& proc = "/proc");

}  // namespace drover
