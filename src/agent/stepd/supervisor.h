// The step supervisor (droverstepd, Slurm's slurmstepd): runs one batch job from its job
// directory to its status file — prolog, cgroup, batch shell, cancel and signals, cleanup,
// epilog — in a process that outlives the agent. No process of a job it ran survives it.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "agent/host/cgroup.h"
#include "agent/stepd/spool.h"

namespace drover::agent {

// Signals the agent sends the supervisor (kill(2) on the pid in supervisor.pid):
//   SIGTERM  cancel: SIGCONT then SIGTERM to every process of the job, SIGKILL to whatever is
//            left kill_wait seconds later; status says cancelled=1. Before the script has
//            started (during the prolog) it means the script is never started.
//   SIGCHLD, SIGPIPE and the fault signals (SIGSEGV SIGBUS SIGFPE SIGILL SIGABRT SIGTRAP SIGSYS)
//            are the supervisor's own; SIGKILL and SIGSTOP cannot be caught: SIGKILL kills the
//            supervisor alone, and the agent, finding no live supervisor and no status, kills
//            what is left of the job itself.
//   any other signal is delivered to every process of the job as it is (`scancel --signal=USR1
//            --full`; SIGCONT too). To signal the batch shell alone (`scancel --batch`) the
//            agent signals the pid in job.pid directly.
// Signals that arrive while no script runs (prolog, epilog) are logged and dropped.

// Runs the job in this process, which must already be detached (Daemonize, detach.h) and have no
// other children or threads: it blocks the signals above and becomes a child subreaper, so
// processes the job orphans are reaped, and killed, here. Writes <job_dir>/status and returns what
// it wrote.
BatchStatus SuperviseBatchJob(const std::filesystem::path& job_dir, const BatchLaunch& launch,
                              const std::vector<std::string>& environment);

// The job's cgroup as `launch` asks for it (cgroup_mode, memory, CPUs, devices), made by the
// supervisor or, for a node that holds the job with no process, by the agent. Never fails: where
// no cgroup can be made the job is untracked (tracked by its processes), and `log` says why, as
// it says which limit could not be set.
struct JobCgroupSetUp {
  CgroupHierarchy hierarchy;
  JobCgroup cgroup;
};
JobCgroupSetUp SetUpJobCgroup(const BatchLaunch& launch,
                              const std::function<void(const std::string&)>& log);

}  // namespace drover::agent
