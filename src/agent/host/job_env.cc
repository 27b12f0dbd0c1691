// Builds the batch script's environment. Which variables appear, and when, follows what Slurm
// 22.05 sets for a batch job (job_env_test.cc holds the lists captured from it); the submitted
// environment goes in first so that Slurm's values win, as they do in slurmd.
#include "agent/host/job_env.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/dependency.h"
#include "common/hostlist.h"
#include "common/text.h"

namespace drover::agent {
namespace {

// NAME=value entries with each name once, kept in the order names first appear.
class Environment {
 public:
  void Set(std::string_view name, std::string_view value) {
    std::string entry = fmt::format("{}={}", name, value);
    auto [it, inserted] = index_.try_emplace(std::string(name), entries_.size());
    if (inserted) {
      entries_.push_back(std::move(entry));
    } else {
      entries_[it->second] = std::move(entry);
    }
  }
  void SetIfAbsent(std::string_view name, std::string_view value) {
    if (!value.empty() && !Has(name)) Set(name, value);
  }
  void SetIfNotEmpty(std::string_view name, std::string_view value) {
    if (!value.empty()) Set(name, value);
  }
  bool Has(std::string_view name) const { return index_.count(std::string(name)) != 0; }
  std::vector<std::string> Take() && { return std::move(entries_); }

 private:
  std::vector<std::string> entries_;
  std::unordered_map<std::string, size_t> index_;
};

// The job's nodes as the agent was told them, checked against each other.
struct NodeLayout {
  std::vector<std::string> names;
  std::string compressed;  // Slurm's ranged form of names
};

Result<NodeLayout> ResolveNodes(const JobSpec& spec, const LaunchContext& ctx) {
  Result<std::vector<std::string>> names = ExpandHostlist(ctx.node_list);
  if (!names.ok()) {
    return MakeError(fmt::format("job {}: node list: {}", spec.job_id, names.error()));
  }
  if (ctx.cpus_per_node.size() != names->size()) {
    return MakeError(fmt::format("job {}: {} CPU counts for {} nodes in '{}'", spec.job_id,
                                 ctx.cpus_per_node.size(), names->size(), ctx.node_list));
  }
  if (ctx.node_index >= names->size()) {
    return MakeError(fmt::format("job {}: node index {} is outside '{}' ({} nodes)", spec.job_id,
                                 ctx.node_index, ctx.node_list, names->size()));
  }
  if ((*names)[ctx.node_index] != ctx.node_name) {
    return MakeError(fmt::format("job {}: node {} of '{}' is {}, not this node {}", spec.job_id,
                                 ctx.node_index, ctx.node_list, (*names)[ctx.node_index],
                                 ctx.node_name));
  }
  NodeLayout layout;
  layout.compressed = CompressHostlist(names.value());
  layout.names = std::move(names).value();
  return layout;
}

Status AddSubmitted(const JobSpec& spec, Environment& env) {
  for (const std::string& entry : spec.environment) {
    size_t equals = entry.find('=');
    if (equals == std::string::npos || equals == 0) {
      return MakeError(fmt::format("job {}: submitted environment entry '{}' is not NAME=value",
                                   spec.job_id, entry));
    }
    env.Set(std::string_view(entry).substr(0, equals), std::string_view(entry).substr(equals + 1));
  }
  return OkStatus();
}

void AddUserDefaults(const JobSpec& spec, const LaunchContext& ctx, Environment& env) {
  const std::string& user = ctx.user.name.empty() ? spec.user : ctx.user.name;
  env.SetIfAbsent("HOME", ctx.user.home);
  env.SetIfAbsent("USER", user);
  env.SetIfAbsent("LOGNAME", user);
  env.SetIfAbsent("SHELL", ctx.user.shell);
  env.SetIfAbsent("PATH", ctx.default_path);
}

void AddJobIdentity(const JobSpec& spec, const LaunchContext& ctx, Environment& env) {
  env.Set("ENVIRONMENT", "BATCH");
  env.Set("SLURM_JOB_ID", std::to_string(spec.job_id));
  env.Set("SLURM_JOBID", std::to_string(spec.job_id));
  env.Set("SLURM_JOB_NAME", spec.name);
  env.SetIfNotEmpty("SLURM_JOB_USER", spec.user.empty() ? ctx.user.name : spec.user);
  env.Set("SLURM_JOB_UID", std::to_string(spec.uid));
  env.Set("SLURM_JOB_GID", std::to_string(spec.gid));
  env.SetIfNotEmpty("SLURM_JOB_ACCOUNT", spec.account);
  env.SetIfNotEmpty("SLURM_JOB_QOS", spec.qos);
  env.SetIfNotEmpty("SLURM_JOB_PARTITION", ctx.partition);
  env.SetIfNotEmpty("SLURM_CLUSTER_NAME", ctx.cluster_name);
  env.SetIfNotEmpty("SLURM_CONF", ctx.slurm_conf);
  env.Set("SLURM_SUBMIT_DIR", ctx.submit_dir.empty() ? spec.work_dir : ctx.submit_dir);
  env.SetIfNotEmpty("SLURM_SUBMIT_HOST", ctx.submit_host);
  // The submitting process's scheduling priority: sbatch exports it with the job's environment;
  // when the submission lacks it, the unniced value.
  env.SetIfAbsent("SLURM_PRIO_PROCESS", "0");
  if (ctx.restart_count > 0) env.Set("SLURM_RESTART_COUNT", std::to_string(ctx.restart_count));
  if (spec.array_task_id != kNoArrayTask) {
    env.Set("SLURM_ARRAY_JOB_ID", std::to_string(spec.array_job_id));
    env.Set("SLURM_ARRAY_TASK_ID", std::to_string(spec.array_task_id));
    if (ctx.array) {
      env.Set("SLURM_ARRAY_TASK_COUNT", std::to_string(ctx.array->count));
      env.Set("SLURM_ARRAY_TASK_MIN", std::to_string(ctx.array->min));
      env.Set("SLURM_ARRAY_TASK_MAX", std::to_string(ctx.array->max));
      if (ctx.array->step > 0) env.Set("SLURM_ARRAY_TASK_STEP", std::to_string(ctx.array->step));
    }
  }
}

// Slurm exports the task count only when the user gave one (-n, or --ntasks-per-node, from which
// sbatch derives it); otherwise the layout assumes one task per cpus_per_task CPUs. (A spec from
// before ntasks_given: more than one task counts as given.)
struct TaskShape {
  bool ntasks_given = false;
  uint32_t ntasks = 1;
};

TaskShape ResolveTasks(const JobSpec& spec, const LaunchContext& ctx, size_t node_count) {
  uint32_t cpus_per_task = std::max<uint32_t>(spec.cpus_per_task, 1);
  TaskShape shape;
  shape.ntasks_given = spec.ntasks_given || spec.ntasks > 1 || spec.ntasks_per_node > 0;
  if (shape.ntasks_given) {
    shape.ntasks =
        std::max<uint32_t>(spec.ntasks, spec.ntasks_per_node * static_cast<uint32_t>(node_count));
  } else {
    uint64_t cpus = 0;
    for (uint32_t count : ctx.cpus_per_node) cpus += count;
    shape.ntasks = static_cast<uint32_t>(std::max<uint64_t>(cpus / cpus_per_task, 1));
  }
  return shape;
}

void AddNodesAndTasks(const JobSpec& spec, const LaunchContext& ctx, const NodeLayout& layout,
                      Environment& env) {
  const std::string node_count = std::to_string(layout.names.size());
  env.Set("SLURM_JOB_NODELIST", layout.compressed);
  env.Set("SLURM_NODELIST", layout.compressed);
  env.Set("SLURM_JOB_NUM_NODES", node_count);
  env.Set("SLURM_NNODES", node_count);
  // Slurm 22.05 prints its null string when no node has a dynamic address; kept for fidelity.
  env.Set("SLURM_NODE_ALIASES", "(null)");
  env.Set("SLURM_JOB_CPUS_PER_NODE", FormatCountList(ctx.cpus_per_node));
  env.Set("SLURM_CPUS_ON_NODE", std::to_string(ctx.cpus_per_node[ctx.node_index]));

  TaskShape tasks = ResolveTasks(spec, ctx, layout.names.size());
  if (tasks.ntasks_given) {
    env.Set("SLURM_NTASKS", std::to_string(tasks.ntasks));
    env.Set("SLURM_NPROCS", std::to_string(tasks.ntasks));
  }
  if (spec.ntasks_per_node > 0) {
    env.Set("SLURM_NTASKS_PER_NODE", std::to_string(spec.ntasks_per_node));
  }
  // Whenever -c was given, as Slurm does (sbatch -c 1 too).
  if (spec.cpus_per_task_given || spec.cpus_per_task > 1)
    env.Set("SLURM_CPUS_PER_TASK", std::to_string(spec.cpus_per_task));
  uint32_t cpus_per_task = std::max<uint32_t>(spec.cpus_per_task, 1);
  env.Set("SLURM_TASKS_PER_NODE",
          FormatCountList(TasksPerNode(ctx.cpus_per_node, tasks.ntasks, cpus_per_task)));

  // The batch script is task 0 of node `node_index`.
  env.Set("SLURM_NODEID", std::to_string(ctx.node_index));
  env.Set("SLURM_PROCID", "0");
  env.Set("SLURM_LOCALID", "0");
  env.Set("SLURM_GTIDS", "0");
  env.Set("SLURMD_NODENAME", ctx.node_name);
  env.Set("HOSTNAME", ctx.node_name);
  env.SetIfNotEmpty("SLURM_TOPOLOGY_ADDR", ctx.topology_address);
  env.SetIfNotEmpty("SLURM_TOPOLOGY_ADDR_PATTERN", ctx.topology_pattern);
}

void AddMemory(const JobSpec& spec, const LaunchContext& ctx, Environment& env) {
  bool requested = spec.mem_per_node_mb || spec.mem_per_cpu_mb || spec.mem_per_gpu_mb;
  uint64_t per_node = requested ? spec.mem_per_node_mb : ctx.default_mem_per_node_mb;
  uint64_t per_cpu = requested ? spec.mem_per_cpu_mb : ctx.default_mem_per_cpu_mb;
  uint64_t per_gpu = requested ? spec.mem_per_gpu_mb : ctx.default_mem_per_gpu_mb;
  if (per_node) env.Set("SLURM_MEM_PER_NODE", std::to_string(per_node));
  if (per_cpu) env.Set("SLURM_MEM_PER_CPU", std::to_string(per_cpu));
  if (per_gpu) env.Set("SLURM_MEM_PER_GPU", std::to_string(per_gpu));
}

}  // namespace

std::vector<std::pair<std::string, std::string>> GpuShareVariables(std::string_view sharing,
                                                                   uint32_t shares,
                                                                   uint32_t gpu_shares) {
  if (shares == 0) return {};
  if (sharing == "shard") return {{"SLURM_SHARDS_ON_NODE", std::to_string(shares)}};
  if (sharing == "mps" && gpu_shares > 0) {
    uint64_t percent = std::max<uint64_t>(uint64_t{shares} * 100 / gpu_shares, 1);
    return {
        {"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", std::to_string(std::min<uint64_t>(percent, 100))}};
  }
  return {};
}

namespace {

std::string JoinIndexes(std::span<const uint32_t> indexes) {
  return fmt::format("{}", fmt::join(indexes, ","));
}

void AddGpus(const LaunchContext& ctx, Environment& env) {
  if (ctx.gpu_indexes.empty()) return;
  for (const auto& [name, value] : GpuShareVariables(ctx.gpu_sharing, ctx.shares, ctx.gpu_shares))
    env.Set(name, value);
  std::vector<uint32_t> indexes = ctx.gpu_indexes;
  std::sort(indexes.begin(), indexes.end());
  std::vector<uint32_t> visible = indexes;
  if (ctx.devices_constrained) {
    for (size_t i = 0; i < visible.size(); ++i) visible[i] = static_cast<uint32_t>(i);
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < indexes.size(); ++i) {
    auto mig = ctx.mig_uuids.find(indexes[i]);
    names.push_back(mig != ctx.mig_uuids.end() ? mig->second : std::to_string(visible[i]));
  }
  const std::string visible_list = Join(names, ",");
  env.Set("SLURM_GPUS_ON_NODE", std::to_string(indexes.size()));
  env.Set("SLURM_JOB_GPUS", JoinIndexes(indexes));
  // NVIDIA, AMD (two names) and Intel each read their own variable; Slurm sets all four.
  for (std::string_view name :
       {"CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK"}) {
    env.Set(name, visible_list);
  }
}

// What sbatch exports from its options when they were given (sbatch(1), OUTPUT ENVIRONMENT
// VARIABLES). --gres=gpu:N is not --gpus-per-node (JobSpec holds both alike), so
// SLURM_GPUS_PER_NODE is left out.
void AddRequested(const JobSpec& spec, Environment& env) {
  if (spec.gpus)
    env.Set("SLURM_GPUS", spec.gpu_type.empty() ? std::to_string(spec.gpus)
                                                : fmt::format("{}:{}", spec.gpu_type, spec.gpus));
  if (spec.gpus_per_task)
    env.Set("SLURM_GPUS_PER_TASK", spec.gpu_type.empty()
                                       ? std::to_string(spec.gpus_per_task)
                                       : fmt::format("{}:{}", spec.gpu_type, spec.gpus_per_task));
  if (spec.cpus_per_gpu) env.Set("SLURM_CPUS_PER_GPU", std::to_string(spec.cpus_per_gpu));
  if (!spec.dependency.empty()) env.Set("SLURM_JOB_DEPENDENCY", FormatDependency(spec.dependency));
  env.SetIfNotEmpty("SLURM_JOB_RESERVATION", spec.reservation);
}

}  // namespace

Result<std::vector<std::string>> BuildBatchEnvironment(const JobSpec& spec,
                                                       const LaunchContext& ctx) {
  Result<NodeLayout> layout = ResolveNodes(spec, ctx);
  if (!layout.ok()) return std::move(layout).take_error();
  Environment env;
  Status submitted = AddSubmitted(spec, env);
  if (!submitted.ok()) return std::move(submitted).take_error();
  AddUserDefaults(spec, ctx, env);
  AddJobIdentity(spec, ctx, env);
  AddNodesAndTasks(spec, ctx, layout.value(), env);
  AddMemory(spec, ctx, env);
  AddGpus(ctx, env);
  AddRequested(spec, env);
  return std::move(env).Take();
}

void SetVariable(std::vector<std::string>& environment, std::string_view name,
                 std::string_view value) {
  std::string entry = fmt::format("{}={}", name, value);
  for (std::string& existing : environment) {
    if (existing.size() > name.size() && existing.compare(0, name.size(), name) == 0 &&
        existing[name.size()] == '=') {
      existing = std::move(entry);
      return;
    }
  }
  environment.push_back(std::move(entry));
}

std::string ApplyTaskPrologOutput(std::string_view output, std::vector<std::string>& environment) {
  std::string printed;
  for (const std::string& line : Split(output, '\n')) {
    std::string_view text = line;
    if (text.starts_with("print ")) {
      printed += fmt::format("{}\n", text.substr(6));
    } else if (text.starts_with("export ")) {
      std::string_view assignment = text.substr(7);
      size_t equals = assignment.find('=');
      if (equals == std::string_view::npos) break;
      SetVariable(environment, assignment.substr(0, equals), assignment.substr(equals + 1));
    } else if (text.starts_with("unset ")) {
      std::string name(Trim(text.substr(6)));
      std::erase_if(environment, [&](const std::string& entry) {
        return entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=';
      });
    }
  }
  return printed;
}

std::optional<std::string> FindVariable(std::span<const std::string> environment,
                                        std::string_view name) {
  for (const std::string& entry : environment) {
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
        entry[name.size()] == '=') {
      return entry.substr(name.size() + 1);
    }
  }
  return std::nullopt;
}

std::vector<uint32_t> TasksPerNode(std::span<const uint32_t> cpus_per_node, uint32_t ntasks,
                                   uint32_t cpus_per_task) {
  const size_t nodes = cpus_per_node.size();
  std::vector<uint32_t> tasks(nodes, 0);
  if (nodes == 0) return tasks;
  std::vector<uint32_t> slots(nodes);
  for (size_t i = 0; i < nodes; ++i)
    slots[i] = cpus_per_node[i] / std::max<uint32_t>(cpus_per_task, 1);
  uint32_t placed = 0;
  for (size_t i = 0; i < nodes && placed < ntasks; ++i) {
    if (tasks[i] < slots[i]) ++tasks[i], ++placed;
  }
  for (size_t i = 0; i < nodes && placed < ntasks; ++i) {
    uint32_t add = std::min(slots[i] - tasks[i], ntasks - placed);
    tasks[i] += add;
    placed += add;
  }
  for (size_t i = 0; placed < ntasks; i = (i + 1) % nodes) ++tasks[i], ++placed;
  return tasks;
}

}  // namespace drover::agent
