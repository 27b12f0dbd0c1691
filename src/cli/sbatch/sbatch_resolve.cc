// From Settings to the JobSpec; see sbatch_resolve.h.
#include "cli/sbatch/sbatch_resolve.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>

#include "cli/sbatch/sbatch_job_environment.h"
#include "common/text.h"

namespace drover::cli::sbatch {
namespace {

// Two options that exclude each other: the one from the later source wins; from the same source
// they are an error, as in Slurm.
template <typename A, typename B>
bool Conflict(const std::optional<A>& a, const std::optional<B>& b) {
  return a && b && a->source == b->source;
}

Status ResolveMemory(const Settings& s, JobSpec& spec) {
  const std::optional<Sourced<uint64_t>>* all[] = {&s.mem, &s.mem_per_cpu, &s.mem_per_gpu};
  std::optional<Source> latest;
  for (auto* option : all)
    if (*option && (!latest || (*option)->source > *latest)) latest = (*option)->source;
  int at_latest = 0;
  for (auto* option : all)
    if (*option && (*option)->source == *latest) ++at_latest;
  if (at_latest > 1)
    return MakeError(
        *latest == Source::kEnvironment
            ? "sbatch: fatal: SBATCH_MEM_PER_CPU, SBATCH_MEM_PER_GPU, and SBATCH_MEM_PER_NODE are "
              "mutually exclusive."
            : "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.");
  auto value = [&](const std::optional<Sourced<uint64_t>>& option) -> uint64_t {
    return option && option->source == *latest ? option->value : 0;
  };
  if (latest) {
    spec.mem_per_node_mb = value(s.mem);
    spec.mem_per_cpu_mb = value(s.mem_per_cpu);
    spec.mem_per_gpu_mb = value(s.mem_per_gpu);
  }
  return OkStatus();
}

Status ResolveCpus(const Settings& s, JobSpec& spec) {
  if (Conflict(s.cpus_per_task, s.cpus_per_gpu))
    return MakeError(
        "sbatch: fatal: --cpus-per-task, --tres-per-task=cpu:#, and --cpus-per-gpu are mutually "
        "exclusive");
  bool task_wins =
      s.cpus_per_task && (!s.cpus_per_gpu || s.cpus_per_task->source > s.cpus_per_gpu->source);
  if (task_wins) {
    spec.cpus_per_task = s.cpus_per_task->value;
    spec.cpus_per_task_given = true;
  } else if (s.cpus_per_gpu)
    spec.cpus_per_gpu = s.cpus_per_gpu->value;
  return OkStatus();
}

// --exclusive and --oversubscribe set one thing in Slurm (the job's sharing): the later source
// wins, and both from the same source are an error.
Status ResolveSharing(const Settings& s, JobSpec& spec) {
  spec.exclusive = s.exclusive && s.exclusive->value &&
                   (!s.oversubscribe || *s.oversubscribe <= s.exclusive->source);
  if (spec.exclusive && s.oversubscribe == s.exclusive->source)
    return MakeError(
        "sbatch: fatal: --exclusive and --oversubscribe options are mutually exclusive");
  spec.oversubscribe = s.oversubscribe && !spec.exclusive;
  return OkStatus();
}

Status ResolveGpus(const Settings& s, JobSpec& spec) {
  std::optional<GpuCount> per_node = s.gpus_per_node;
  bool gres_gpu = false;
  for (const GresSpec& gres : s.gres.value_or(std::vector<GresSpec>{})) {
    if (gres.name != "gpu") {
      spec.other_gres.push_back(gres);
      continue;
    }
    if (gres_gpu) return Fail("--gres names gpu more than once; Drover gives a job one GPU type");
    gres_gpu = true;
    GpuCount from_gres{gres.type, static_cast<uint32_t>(std::min<uint64_t>(gres.count, INT_MAX))};
    if (per_node && (per_node->count != from_gres.count || per_node->type != from_gres.type))
      return Fail("--gres=gpu and --gpus-per-node disagree on the GPUs per node; give one");
    per_node = from_gres;
  }
  std::string type;
  const std::optional<GpuCount>* requests[] = {&s.gpus, &per_node, &s.gpus_per_task};
  for (const std::optional<GpuCount>* gpu : requests) {
    if (!*gpu || (*gpu)->type.empty()) continue;
    if (!type.empty() && type != (*gpu)->type)
      return Fail(fmt::format("conflicting GPU types '{}' and '{}'; Drover gives a job one type",
                              type, (*gpu)->type));
    type = (*gpu)->type;
  }
  spec.gpu_type = type;
  if (s.gpus) spec.gpus = s.gpus->count;
  if (per_node) spec.gpus_per_node = per_node->count;
  if (s.gpus_per_task) spec.gpus_per_task = s.gpus_per_task->count;
  return OkStatus();
}

// Slurm's _opt_verify: a node list raises the minimum node count, --ntasks-per-node gives the
// task count when -n does not, and a task count below the node count lowers it.
Status ResolveShape(Settings& s, JobSpec& spec) {
  NodeRange nodes = s.nodes.value_or(NodeRange{});
  bool nodes_set = s.nodes.has_value();
  if (s.nodelist) {
    uint32_t count = static_cast<uint32_t>(s.nodelist->size());
    nodes.min = nodes_set ? std::max(nodes.min, count) : count;
    nodes_set = true;
  }
  bool ntasks_set = s.ntasks.has_value();
  uint32_t ntasks = s.ntasks.value_or(1);
  uint32_t per_node = s.ntasks_per_node.value_or(0);
  if (per_node > 0 && !ntasks_set && (nodes.max == 0 || nodes.min == nodes.max)) {
    ntasks = static_cast<uint32_t>(std::min<uint64_t>(uint64_t{nodes.min} * per_node, INT_MAX));
    ntasks_set = true;
  }
  if (nodes_set && ntasks_set) {
    if (ntasks < nodes.max) nodes.max = ntasks;
    if (ntasks < nodes.min) {
      s.Notice(
          fmt::format("sbatch: Warning: can't run {} processes on {} nodes, setting nnodes to {}",
                      ntasks, nodes.min, ntasks));
      nodes.min = nodes.max = ntasks;
    }
  }
  if (nodes.max != 0 && nodes.min > nodes.max)
    return Fail(fmt::format("invalid number of nodes (-N {}-{})", nodes.min, nodes.max));
  spec.min_nodes = nodes.min;
  spec.max_nodes = nodes.max;
  spec.ntasks = ntasks;
  spec.ntasks_given = ntasks_set;
  spec.ntasks_per_node = per_node;
  return OkStatus();
}

void CopyScalars(const Settings& s, JobSpec& spec) {
  spec.account = s.account.value_or("");
  spec.qos = s.qos.value_or("");
  spec.partitions = s.partitions.value_or(std::vector<std::string>{});
  spec.constraint = s.constraint.value_or("");
  spec.nodelist = s.nodelist.value_or(std::vector<std::string>{});
  spec.exclude = s.exclude.value_or(std::vector<std::string>{});
  spec.min_cpus_per_node = s.mincpus.value_or(0);
  spec.min_tmp_disk_mb = s.tmp_mb.value_or(0);
  spec.min_sockets = s.sockets_per_node.value_or(0);
  spec.min_cores_per_socket = s.cores_per_socket.value_or(0);
  spec.min_threads_per_core = s.threads_per_core.value_or(0);
  spec.time_limit_seconds = s.time_limit.value_or(0);
  spec.time_min_seconds = s.time_min.value_or(0);
  spec.begin_time = s.begin.value_or(0);
  spec.dependency = s.dependency.value_or(DependencySpec{});
  spec.hold = s.hold ? HoldKind::kUser : HoldKind::kNone;
  spec.nice = s.nice.value_or(0);
  spec.switches = s.switches.value_or(0);
  if (s.switch_wait) spec.switch_wait_seconds = *s.switch_wait;
  spec.segment = s.segment.value_or(0);
  spec.reservation = s.reservation.value_or("");
  if (s.signal) {
    spec.signal_number = s.signal->number;
    spec.signal_seconds = s.signal->seconds;
    spec.signal_batch_only = s.signal->batch_only;
  }
  if (s.requeue) spec.requeue = *s.requeue;
  spec.overcommit = s.overcommit;
  spec.contiguous = s.contiguous;
  if (s.priority && *s.priority == 0)
    spec.hold = HoldKind::kAdmin;  // Slurm's priority 0 is a held job
  else if (s.priority)
    spec.priority = *s.priority;
  spec.stdout_path = s.stdout_path.value_or("");
  spec.stderr_path = s.stderr_path.value_or("");
  spec.stdin_path = s.stdin_path.value_or("");
  spec.comment = s.comment.value_or("");
  spec.prefer = s.prefer.value_or("");
  spec.batch_features = s.batch_features.value_or("");
  spec.licenses = s.licenses.value_or("");
  spec.gres_flags = s.gres_flags.value_or("");
  spec.spread_job = s.spread_job;
  spec.deadline = s.deadline.value_or(0);
  spec.kill_on_invalid_dep = s.kill_on_invalid_dep.value_or(0);
  spec.no_kill = s.no_kill;
  spec.mail_type = s.mail_type.value_or("");
  spec.mail_user = s.mail_user.value_or("");
}

// --ntasks-per-gpu gives the task count when -n does not; --gpus-per-socket is per node once
// the sockets per node are known.
Status ResolveTaskLayout(const Settings& s, JobSpec& spec) {
  if (s.gpus_per_socket) {
    if (!s.sockets_per_node)
      return Fail("--gpus-per-socket option requires --sockets-per-node specification");
    if (spec.gpus_per_node == 0) spec.gpus_per_node = *s.gpus_per_socket * *s.sockets_per_node;
  }
  if (s.ntasks_per_gpu && !s.ntasks) {
    uint64_t gpus = spec.gpus ? spec.gpus : uint64_t{spec.gpus_per_node} * spec.min_nodes;
    if (gpus == 0) return Fail("--ntasks-per-gpu needs GPUs (--gpus or --gpus-per-node)");
    spec.ntasks = static_cast<uint32_t>(std::min<uint64_t>(gpus * *s.ntasks_per_gpu, INT_MAX));
  }
  return OkStatus();
}

}  // namespace

Status Finish(Settings& s, const Inputs& in, SbatchRequest& request) {
  if (s.quiet && s.verbose) return Fail("don't specify both --verbose (-v) and --quiet (-Q)");
  if (s.begin && s.deadline && *s.deadline < *s.begin)
    return Fail("Incompatible begin and deadline time specification");
  JobSpec& spec = request.spec;
  if (Status ok = ResolveShape(s, spec); !ok) return ok;
  if (Status ok = ResolveMemory(s, spec); !ok) return ok;
  if (Status ok = ResolveCpus(s, spec); !ok) return ok;
  if (Status ok = ResolveSharing(s, spec); !ok) return ok;
  if (Status ok = ResolveGpus(s, spec); !ok) return ok;
  if (Status ok = ResolveTaskLayout(s, spec); !ok) return ok;
  // No MCS plugin: as Slurm's mcs/none, the label is accepted and the job keeps none
  // (s.mcs_label is read and kept nowhere).
  CopyScalars(s, spec);
  spec.work_dir = s.work_dir.value_or(in.cwd);
  // --get-user-env, unless --export=NONE (sbatch(1): it is then ignored); the job's variables
  // say so, as Slurm's do.
  if (s.get_user_env && !EqualsIgnoreCase(s.export_env.value_or("ALL"), "NONE")) {
    spec.get_user_env = *s.get_user_env;
    s.variables["SLURM_GET_USER_ENV"] = "1";
  }
  Result<std::vector<std::string>> environment = BuildEnvironment(s, in);
  if (!environment) return std::move(environment).take_error();
  spec.environment = std::move(*environment);
  request.array = s.array.value_or("");
  request.parsable = s.parsable;
  request.test_only = s.test_only;
  request.wait = s.wait;
  request.quiet = s.quiet;
  request.hold = s.hold;
  request.clusters = s.clusters;
  request.propagate = s.propagate;
  request.notices = std::move(s.notices);
  return OkStatus();
}

}  // namespace drover::cli::sbatch
