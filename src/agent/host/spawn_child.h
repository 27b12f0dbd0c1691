// The child's side of Spawn (spawn.h): what runs between fork and exec, and the words for its
// failures. Only system calls and fixed buffers here: the child of a multi-threaded process may
// neither allocate nor take a lock that another thread held at fork.
#pragma once

#include <string>
#include <vector>

#include "agent/host/spawn.h"

namespace drover::agent::spawn_child {

// Everything the child needs, made before fork.
struct Plan {
  const ProcessSpec* spec = nullptr;
  std::vector<std::string> environment;  // the spec's, with room for SLURM_TASK_PID's value
  std::vector<char*> argv, envp;         // null-terminated, into argv_storage and environment
  std::vector<std::string> argv_storage;
  char* task_pid_slot = nullptr;  // where the pid's digits go
  std::string note;               // room for the spec's stderr_note, allocated before the fork
  size_t note_size = 0;           // what the child read of it
  // The child's: the caller's root, kept open before it enters the job's mount namespace, so the
  // output files are the paths the user gave, not ones under the job's private /tmp (as Slurm's
  // slurmstepd opens them before the job's namespace).
  int host_root = -1;
};
Plan MakePlan(const ProcessSpec& spec);

// The ends of the pipes the child keeps: it writes one byte to `ready` once its session is made,
// reads one from `go` before it goes on, and writes a failure to `report`. The parent's ends,
// which it closes first, are `others`.
struct Pipes {
  int ready = -1, go = -1, report = -1;
  int others[3] = {-1, -1, -1};
};
[[noreturn]] void Run(Plan& plan, Pipes pipes);

// setgroups, setgid, setuid; false (errno set, `phase` the step that failed) when one fails.
bool SwitchUser(const ProcessUser& user, SpawnPhase& phase);

// What a report holds before its words.
struct ReportHeader {
  int phase = 0;
  int error = 0;
};

}  // namespace drover::agent::spawn_child
