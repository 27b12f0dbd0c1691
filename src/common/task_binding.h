// srun's binding options (--cpu-bind, --mem-bind, --gpu-bind) as Slurm 22.05 reads them, and what
// each task of a node is bound to: its CPUs (Slurm's abstract CPU ids, socket-major: (socket *
// cores_per_socket + core) * threads_per_core + thread), its NUMA nodes and its GPUs; with the
// SLURM_*_BIND* variables srun sets. Pure: the agent applies the results.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace drover {

using Variables = std::vector<std::pair<std::string, std::string>>;

enum class CpuBindType {
  kDefault,  // none given: TaskPlugin decides (auto binding)
  kNone,
  kRank,
  kMap,
  kMask,
  kRankLdom,
  kMapLdom,
  kMaskLdom,
  kSockets,
  kCores,
  kThreads,
  kLdoms,
};

// A map or mask list: one set of ids (CPUs or locality domains) per entry, entries repeated
// for the tasks beyond them.
using IdSets = std::vector<std::vector<uint32_t>>;

struct CpuBind {
  CpuBindType type = CpuBindType::kDefault;
  bool verbose = false;
  IdSets list;
  std::string list_text;  // as given: SLURM_CPU_BIND_LIST
};

// [{quiet|verbose},]{none|rank|map_cpu:L|mask_cpu:L|rank_ldom|map_ldom:L|mask_ldom:L|sockets|
// cores|threads|ldoms}; lists of decimal or 0x ids (masks: hex), "ID*COUNT" repeats.
// Errors: Slurm's words ("Invalid --cpu-bind argument: X").
Result<CpuBind> ParseCpuBind(std::string_view text);
// srun's --cpu-bind=help.
extern const char kCpuBindHelp[];

// SLURM_CPU_BIND_VERBOSE, _TYPE, _LIST and SLURM_CPU_BIND, as srun sets them for the tasks.
Variables CpuBindVariables(const CpuBind& bind);

// A node as slurm.conf describes it.
struct NodeShape {
  uint32_t sockets = 1, cores_per_socket = 1, threads_per_core = 1;
  uint32_t cpus() const { return sockets * cores_per_socket * threads_per_core; }
};

// One task on the node: its place among the node's tasks and what it needs.
struct TaskSlot {
  uint32_t local_id = 0, local_tasks = 1, cpus_per_task = 1;
};

// The abstract CPUs task `slot` is bound to, within `step_cpus` (the step's abstract CPUs on
// the node, sorted); nullopt: not bound. `socket_distribution` is -m's second level ("block",
// "cyclic", "fcyclic"; empty: cyclic). Explicit lists and rank bindings need the whole node, as
// Slurm's task/affinity: otherwise the task gets every CPU of the step ("entire node must be
// allocated").
std::optional<std::vector<uint32_t>> TaskCpus(const CpuBind& bind, const NodeShape& node,
                                              std::span<const uint32_t> step_cpus,
                                              const TaskSlot& slot,
                                              std::string_view socket_distribution);

// What "verbose" prints and the kind Slurm names in it: "MASK", "MAP ", "NONE", with the units
// ("-cores") of an auto-generated binding.
std::string CpuBindLabel(const CpuBind& bind);
// A set of CPU (or NUMA node) ids as Slurm prints a mask: hex, no leading zeros ("0" if empty).
std::string MaskText(std::span<const uint32_t> ids);

enum class MemBindType { kDefault, kNone, kLocal, kRank, kMap, kMask };

struct MemBind {
  MemBindType type = MemBindType::kDefault;
  bool verbose = false, prefer = false;
  IdSets list;
  std::string list_text;
};

// [{quiet|verbose},]{none|local|rank|map_mem:L|mask_mem:L}[,prefer][,sort|nosort].
Result<MemBind> ParseMemBind(std::string_view text);
Variables MemBindVariables(const MemBind& bind);
// The NUMA nodes of task `slot`; nullopt: no policy. `local_nodes`: the nodes of the task's
// CPUs (for "local"); `numa_nodes`: how many the host has. Errors: Slurm's ("NUMA node 3 does not
// exist; cannot bind local task 1 to it (--mem-bind=rank)").
Result<std::optional<std::vector<uint32_t>>> TaskMemoryNodes(const MemBind& bind,
                                                             const TaskSlot& slot,
                                                             std::span<const uint32_t> local_nodes,
                                                             uint32_t numa_nodes);
// "mem-bind=MAP - node1, task  0  0 [123]: mask 0x1 set" without the task part: "=MAP".
std::string MemBindLabel(const MemBind& bind);

enum class GpuBindType { kNone, kClosest, kMap, kMask, kSingle, kPerTask };

struct GpuBind {
  GpuBindType type = GpuBindType::kNone;
  bool verbose = false;
  IdSets list;
  uint32_t count = 0;  // single:N, per_task:N
};

// [verbose,]{closest|map_gpu:L|mask_gpu:L|none|per_task:N|single:N}.
Result<GpuBind> ParseGpuBind(std::string_view text);
// The GPUs (the node's indexes) task `slot` sees of `step_gpus` (sorted). Drover knows no GPU's
// socket, so every GPU is as close as any: closest is all of them. A map or mask naming none of
// the step's GPUs gives the first, as Slurm's gres plugin does.
std::vector<uint32_t> TaskGpus(const GpuBind& bind, std::span<const uint32_t> step_gpus,
                               const TaskSlot& slot);

}  // namespace drover
