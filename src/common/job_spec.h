// JobSpec: what a user asked for, validated and normalised at the edge (command options, RPC),
// so the scheduler never re-parses strings. A job is its spec, its state and its allocation;
// this file holds only the spec and must never hold state that changes after submission.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/dependency.h"
#include "common/gres.h"

namespace drover {

inline constexpr uint32_t kNoArrayTask = UINT32_MAX;

enum class HoldKind { kNone, kUser, kAdmin };

// Which of a running job's processes a signal reaches, as Slurm's scancel and --signal decide:
// its steps only (the default for every signal but SIGKILL), its batch shell alone (scancel -b,
// --signal=B:), or the batch shell, its children and every step (scancel -f).
enum class SignalScope { kSteps, kBatch, kFull };

struct JobSpec {
  uint64_t job_id = 0;
  uint64_t array_job_id = 0;  // 0 when not an array task
  uint32_t array_task_id = kNoArrayTask;
  std::string name;
  std::string user, account, qos;
  uint32_t uid = 0, gid = 0;
  std::vector<std::string> partitions;  // -p a,b; empty: the default partition

  // Shape: ntasks >= 1 and min_nodes >= 1. max_nodes 0 means -N was not given: as many nodes
  // as the tasks (or --gpus with --gpus-per-node) need, as Slurm does.
  uint32_t min_nodes = 1, max_nodes = 0;
  uint32_t ntasks = 1;
  uint32_t ntasks_per_node = 0;  // 0: not given
  uint32_t cpus_per_task = 1;
  bool cpus_per_task_given = false;  // -c was given (SLURM_CPUS_PER_TASK is set, even to 1)
  bool ntasks_given = false;         // -n or --ntasks-per-node was given (SLURM_NTASKS is set)

  // Memory: at most one of these is non-zero; all zero means the partition's or cluster's
  // default (DefMemPerCPU, DefMemPerGPU, DefMemPerNode) applies.
  uint64_t mem_per_node_mb = 0, mem_per_cpu_mb = 0, mem_per_gpu_mb = 0;

  // GPUs, from --gpus, --gpus-per-node, --gpus-per-task, --gres=gpu[:type]:N (which is per node).
  std::string gpu_type;  // empty: any type
  uint32_t gpus = 0, gpus_per_node = 0, gpus_per_task = 0;
  uint32_t cpus_per_gpu = 0;
  std::vector<GresSpec> other_gres;  // non-GPU GRES per node

  std::string constraint;  // --constraint: features with & | and counts (feature*N)
  std::vector<std::string> nodelist, exclude;
  bool exclusive = false;
  // Node minimums (0: none): --mincpus (also the least CPUs the job takes on each node), --tmp
  // against the node's TmpDisk, and -B sockets:cores:threads against the node's shape.
  uint32_t min_cpus_per_node = 0;
  uint64_t min_tmp_disk_mb = 0;
  uint32_t min_sockets = 0, min_cores_per_socket = 0, min_threads_per_core = 0;
  // -O: CPUs as if one task ran per node (cpus_per_task per node, not per task).
  bool overcommit = false;
  bool contiguous = false;  // --contiguous: nodes with consecutive indexes in slurm.conf's order
  // --priority, set by an operator: the job's priority instead of the computed one; 0: none.
  uint32_t priority = 0;

  int64_t time_limit_seconds = 0;  // 0: the partition's DefaultTime (or MaxTime)
  int64_t time_min_seconds = 0;
  int64_t submit_time = 0;
  int64_t begin_time = 0;  // --begin; 0: none
  DependencySpec dependency;
  HoldKind hold = HoldKind::kNone;
  int32_t nice = 0;
  uint32_t switches = 0;             // --switches=N[@max-wait]; 0: none
  int64_t switch_wait_seconds = -1;  // -1: the cluster's max_switch_wait
  uint32_t segment = 0;              // --segment=N (block topology)
  std::string reservation;
  int signal_number = 0;           // --signal=[B:]SIG@secs; 0: none
  int64_t signal_seconds = 60;     // how long before the time limit
  bool signal_batch_only = false;  // the B: form: the batch shell only
  bool requeue = true;             // --requeue / --no-requeue, resolved against JobRequeue
  bool interactive = false;        // salloc / srun without an allocation: no batch script runs

  // What the agent needs to run it; the scheduler never looks at these.
  std::string work_dir;                              // --chdir, default the submit directory
  std::string stdout_path, stderr_path, stdin_path;  // with %j %A %a %u %x %N %n %t %% unexpanded
  std::vector<std::string> environment;              // NAME=value, as --export decided
  std::vector<std::string> script_args;              // sbatch SCRIPT ARGS...: $1, $2, ...
  std::string comment;
  uint32_t array_max_running = 0;  // the %N of --array; 0: no limit

  // Placement and shared resources.
  std::string prefer;          // --prefer: features tried first, dropped when they cannot be met
  bool spread_job = false;     // --spread-job: over as many nodes as it may have
  bool oversubscribe = false;  // -s/--oversubscribe: may share CPUs where the partition allows
  std::string licenses;        // -L/--licenses: "name[:count]" joined by ',' (all) or '|' (one)
  std::string batch_features;  // --batch: features the batch host must have
  std::optional<uint32_t> core_spec, thread_spec;  // --core-spec / --thread-spec
  std::string gres_flags;  // --gres-flags: "enforce-binding", "disable-binding" or ""

  // Lifecycle.
  int64_t deadline = 0;  // --deadline; 0: none
  int kill_on_invalid_dep =
      0;                  // --kill-on-invalid-dep: 0 DependencyParameters decides, 1 yes, 2 no
  bool no_kill = false;   // -k/--no-kill: a failed node does not end the job
  std::string mail_type;  // --mail-type as Slurm normalises it ("BEGIN,END,FAIL"); "": none
  std::string mail_user;  // --mail-user; "": the submitting user

  // What the agent applies to the job's processes.
  std::vector<std::string> rlimits;  // --propagate: "NAME=soft:hard" (CORE, NOFILE, ...)
  std::string get_user_env;          // --get-user-env[=timeout][S|L] as given; "": not asked

  // Set by operators only (scontrol update job AdminComment=, SiteFactor=).
  std::string admin_comment;
  int32_t site_factor = 0;  // added to a multifactor priority, as Slurm's site factor
};

// Where a job's own --signal goes: B: the batch shell alone, else its steps (never the shell).
inline SignalScope UserSignalScope(const JobSpec& spec) {
  return spec.signal_batch_only ? SignalScope::kBatch : SignalScope::kSteps;
}

}  // namespace drover
