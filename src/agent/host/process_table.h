// The host's processes and which job step each belongs to, for `scontrol listpids` and
// `scontrol pidinfo`: a step's processes are those of its tasks' process groups, the batch
// shell's (or allocation holder's) session, and every descendant of either (a child that made
// a session of its own still descends from the task that started it).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <vector>

namespace drover::agent {

// Slurm's step ids for the batch script's step and the allocation's extern step.
constexpr uint32_t kBatchStepId = 4294967294u;
constexpr uint32_t kExternStepId = 4294967291u;

struct ProcessInfo {
  pid_t pid = 0;
  pid_t ppid = 0;
  pid_t group = 0;    // process group
  pid_t session = 0;  // session
};

// Every process in /proc/*/stat (`proc` for tests); a process gone while reading is skipped.
std::vector<ProcessInfo> ReadProcessTable(const std::filesystem::path& proc = "/proc");

// A process the agent started for a step: a srun task (its own process group), or the batch
// shell or holder (its own session).
struct TrackedLeader {
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  pid_t pid = 0;
  bool leads_session = false;  // batch shell or holder: its session; a task: its process group
  int32_t local_task = -1;
  int32_t global_task = -1;
};

struct ListedPid {
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  pid_t pid = 0;
  int32_t local_task = -1;  // -1: not a task leader
  int32_t global_task = -1;
};

// Each process of `table` that belongs to a leader's step, ordered by job, step, then task
// leaders by local id before the step's other processes by pid. A process in a task's process
// group belongs to that task's step even inside a batch shell's session.
std::vector<ListedPid> AssignProcesses(const std::vector<ProcessInfo>& table,
                                       const std::vector<TrackedLeader>& leaders);

}  // namespace drover::agent
