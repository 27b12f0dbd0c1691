// The environment a batch script starts with: what the user submitted, then the SLURM_* (and GPU)
// variables Slurm 22.05 sets for a batch job, so tools written for Slurm find what they read.
// Pure: computes NAME=value strings from the spec and what the agent knows; never reads the host.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/count_list.h"  // FormatCountList, for the variables below
#include "common/job_spec.h"
#include "common/result.h"

namespace drover::agent {

// The passwd entry of the job's user.
struct UserAccount {
  std::string name, home, shell;
};

// The array the task belongs to, as SLURM_ARRAY_TASK_COUNT/MIN/MAX/STEP report it.
struct ArrayShape {
  uint32_t count = 0, min = 0, max = 0;
  uint32_t step = 0;  // 0: SLURM_ARRAY_TASK_STEP is not set
};

// The variables a job sharing a GPU gets, as Slurm's gres/shard and gres/mps set them:
// SLURM_SHARDS_ON_NODE, or CUDA_MPS_ACTIVE_THREAD_PERCENTAGE (its share of the GPU's MPS
// units, in percent, at least 1). Empty when it shares none.
std::vector<std::pair<std::string, std::string>> GpuShareVariables(std::string_view sharing,
                                                                   uint32_t shares,
                                                                   uint32_t gpu_shares);

// What the agent knows when it launches the batch script, beyond the job's spec.
struct LaunchContext {
  std::string node_name;                // this node: SLURMD_NODENAME, HOSTNAME
  uint32_t node_index = 0;              // its position in node_list: SLURM_NODEID
  std::string node_list;                // the job's nodes, a hostlist expression
  std::vector<uint32_t> cpus_per_node;  // CPUs allocated on each node, in node_list order
  std::vector<uint32_t> gpu_indexes;    // the job's GPUs on this node (device index)
  // The job's cgroup hides the other GPUs, so CUDA numbers the job's own from 0 (Slurm with
  // ConstrainDevices=yes); otherwise CUDA_VISIBLE_DEVICES holds the device indexes.
  bool devices_constrained = false;
  // MIG devices among the node's GPUs, by index: CUDA_VISIBLE_DEVICES names them by UUID.
  std::map<uint32_t, std::string> mig_uuids;
  // A job that shares its GPU: "shard" or "mps", its shares of it and all the GPU's shares.
  std::string gpu_sharing;
  uint32_t shares = 0, gpu_shares = 0;
  std::string partition;
  std::string cluster_name;
  uint32_t restart_count = 0;  // times the job was requeued; SLURM_RESTART_COUNT once non-zero
  std::string submit_host;
  std::string submit_dir;  // empty: the job's working directory
  std::string slurm_conf;  // SLURM_CONF; empty: not set
  UserAccount user;
  std::string default_path = "/usr/local/bin:/usr/bin:/bin";  // PATH when none was submitted
  std::string topology_address, topology_pattern;  // SLURM_TOPOLOGY_ADDR(_PATTERN); empty: none
  std::optional<ArrayShape> array;
  // The memory default (DefMemPerCPU, DefMemPerNode, DefMemPerGPU) that applied when the spec
  // asked for none; at most one is non-zero.
  uint64_t default_mem_per_cpu_mb = 0, default_mem_per_node_mb = 0, default_mem_per_gpu_mb = 0;
};

// The batch script's environment, one NAME=value per name: spec.environment in its order (a
// later duplicate replaces an earlier one), HOME USER LOGNAME SHELL PATH from the passwd entry
// where the submission lacks them, then Slurm's variables, which replace submitted ones.
// SLURM_TASK_PID is left to the supervisor (SetVariable after fork).
// Errors: a malformed node list, CPU counts that do not match it, a node index or name not in
// it, a submitted entry that is not NAME=value.
Result<std::vector<std::string>> BuildBatchEnvironment(const JobSpec& spec,
                                                       const LaunchContext& ctx);

// Sets NAME=value, replacing an entry of the same name in place or appending one.
void SetVariable(std::vector<std::string>& environment, std::string_view name,
                 std::string_view value);
// A task prolog's stdout applied as Slurm's slurmstepd applies it (srun(1), --task-prolog):
// "export NAME=value" sets NAME in `environment`, "unset NAME" removes it, "print TEXT" adds
// "TEXT\n" to what is returned (for the task's stdout); other lines are ignored. An export
// without '=' ends the reading, as Slurm's does.
std::string ApplyTaskPrologOutput(std::string_view output, std::vector<std::string>& environment);

// The value of NAME, if set.
std::optional<std::string> FindVariable(std::span<const std::string> environment,
                                        std::string_view name);

// How Slurm lays `ntasks` out over nodes with the given CPUs (block distribution): one task per
// node first, then each node filled up to its CPUs / cpus_per_task in order, then any remainder
// dealt round-robin.
std::vector<uint32_t> TasksPerNode(std::span<const uint32_t> cpus_per_node, uint32_t ntasks,
                                   uint32_t cpus_per_task);

}  // namespace drover::agent
