// Steps (srun inside a running job) and interactive allocations (salloc, srun outside one).
// A step is recorded in its job's record when srun creates it and again when srun reports its
// end, so sacct shows N.0, N.1, ... beside N.batch; the engine lays its tasks out over the
// job's nodes as srun's -m asks (common/task_layout.h) and tells srun where they go.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "ctld/engine/engine.h"

namespace drover::ctld {
namespace {

constexpr double kLargest = 1e15;  // far above any real CPU seconds or KiB

bool Sane(double value) {
  return std::isfinite(value) && value >= 0 && value <= kLargest;
}

bool PlausibleStat(const UsageStat& stat, const std::vector<std::string>& names) {
  for (double value : {stat.total, stat.max, stat.min})
    if (!Sane(value)) return false;
  auto named = [&](const std::string& node) {
    return std::find(names.begin(), names.end(), node) != names.end();
  };
  return stat.min <= stat.max && stat.max <= stat.total * (1 + 1e-9) + 1e-9 &&
         named(stat.max_node) && named(stat.min_node);
}

}  // namespace

bool PlausibleUsage(const TaskUsage& usage, uint32_t ntasks,
                    const std::vector<std::string>& names) {
  if (!usage.measured() || usage.tasks > ntasks) return false;
  if (!Sane(usage.user_cpu_seconds) || !Sane(usage.system_cpu_seconds)) return false;
  double cpu = usage.user_cpu_seconds + usage.system_cpu_seconds;
  if (std::abs(cpu - usage.cpu.total) > 1e-6 * cpu + 1e-3) return false;
  auto task_ok = [&](uint32_t task) { return task < ntasks; };
  return PlausibleStat(usage.cpu, names) && PlausibleStat(usage.rss, names) &&
         task_ok(usage.cpu.max_task) && task_ok(usage.cpu.min_task) &&
         task_ok(usage.rss.max_task) && task_ok(usage.rss.min_task);
}

namespace {

Reply Refuse(uint64_t token, std::string message) {
  return Reply{token, false, std::move(message), {}, {}};
}

// Why a step cannot start in the job now, in Slurm's words; "" when it can.
std::string StepRefusal(const Job& job) {
  if (job.state == JobState::kPending)
    return "Job is pending execution: its allocation has not started yet";
  if (job.state == JobState::kSuspended) return "Job is suspended";
  if (job.state != JobState::kRunning || job.cancel_requested_at != 0 || job.released)
    return "Job/step already completing or completed";
  return "";
}

// The allocation's nodes (their places in it), narrowed by -w; every -w node must be one.
Result<std::vector<size_t>> UsableNodes(const CreateStep& event, const Job& job,
                                        const ClusterConfig& cluster) {
  auto name_of = [&](size_t i) -> const std::string& {
    return cluster.nodes[job.allocation.nodes[i].node].name;
  };
  std::vector<size_t> usable;
  for (size_t i = 0; i < job.allocation.nodes.size(); ++i)
    if (event.nodelist.empty() ||
        std::find(event.nodelist.begin(), event.nodelist.end(), name_of(i)) != event.nodelist.end())
      usable.push_back(i);
  for (const std::string& name : event.nodelist) {
    bool listed = false;
    for (size_t i : usable) listed |= name_of(i) == name;
    if (!listed)
      return MakeError(fmt::format(
          "Requested node configuration is not available: {} is not in job {}'s allocation ({})",
          name, event.job_id, job.allocation.nodes.size()));
  }
  return usable;
}

// How many nodes and tasks the step asks for, filled in as Slurm's srun does.
struct StepShape {
  uint32_t nodes = 0, ntasks = 0, per_node = 0, cpus_per_task = 1;
};

Result<StepShape> ShapeOf(const CreateStep& event, const JobSpec& spec, size_t usable) {
  StepShape shape{event.nodes, event.ntasks, event.ntasks_per_node,
                  std::max<uint32_t>(event.cpus_per_task, 1)};
  if (shape.nodes == 0 && shape.ntasks == 0 && shape.per_node == 0) {
    // The job's nodes, with its --ntasks-per-node or one task each (srun passes the job's
    // --ntasks on from SLURM_NTASKS, as Slurm's srun does).
    shape.nodes = static_cast<uint32_t>(usable);
    shape.per_node = spec.ntasks_per_node;
  }
  if (shape.nodes == 0)
    shape.nodes = shape.ntasks != 0 && shape.per_node == 0
                      ? std::min<uint32_t>(shape.ntasks, usable)
                      : static_cast<uint32_t>(usable);
  if (shape.nodes > usable)
    return MakeError(fmt::format("Only allocated {} nodes asked for {}", usable, shape.nodes));
  if (shape.ntasks != 0 && shape.ntasks < shape.nodes)
    shape.nodes = shape.ntasks;  // srun: "setting nnodes to N"
  if (shape.ntasks == 0)
    shape.ntasks = shape.per_node != 0 ? shape.per_node * shape.nodes : shape.nodes;
  return shape;
}

// Tasks on each node: --ntasks-per-node dealt round-robin, else as the distribution fills them.
Result<std::vector<uint32_t>> TasksPerNode(const CreateStep& event, const StepShape& shape,
                                           const std::vector<uint32_t>& room,
                                           const std::vector<uint32_t>& limit) {
  if (shape.per_node == 0) return CountTasks(event.distribution, room, limit, shape.ntasks);
  std::vector<uint32_t> tasks(shape.nodes, 0);
  uint32_t left = shape.ntasks;
  for (uint32_t round = 0; round < shape.per_node && left > 0; ++round)
    for (uint32_t i = 0; i < shape.nodes && left > 0; ++i, --left) ++tasks[i];
  if (left > 0)
    return MakeError(fmt::format("{} tasks do not fit {} nodes at {} tasks per node", shape.ntasks,
                                 shape.nodes, shape.per_node));
  return tasks;
}

// The most tasks the job's share of node `part` may run: --ntasks-per-core per core and
// --ntasks-per-socket per socket the job holds there.
uint32_t TaskLimit(const CreateStep& event, const sched::NodeAllocation& part,
                   const NodeConfig& node) {
  uint64_t limit = kNoTaskLimit;
  if (event.ntasks_per_core != 0)
    limit = std::min<uint64_t>(limit, uint64_t{event.ntasks_per_core} * part.cores.size());
  if (event.ntasks_per_socket != 0) {
    std::vector<int> sockets;
    for (int core : part.cores) sockets.push_back(core / std::max(node.cores_per_socket, 1));
    std::sort(sockets.begin(), sockets.end());
    sockets.erase(std::unique(sockets.begin(), sockets.end()), sockets.end());
    limit = std::min<uint64_t>(limit, uint64_t{event.ntasks_per_socket} * sockets.size());
  }
  return static_cast<uint32_t>(limit);
}

// Where the step's tasks go: the allocation's places of its nodes and the ranks on each.
struct StepLayout {
  std::vector<size_t> places;
  std::vector<std::vector<uint32_t>> ranks;
};

// -m arbitrary: the nodes SLURM_HOSTFILE names (the first ntasks lines), in the allocation's
// order, each with the tasks whose lines name it.
Result<StepLayout> ArbitraryLayout(const CreateStep& event, const Job& job,
                                   const ClusterConfig& cluster, const std::vector<size_t>& usable,
                                   uint32_t ntasks) {
  std::vector<std::string> hosts = event.arbitrary_nodes;
  if (ntasks != 0 && ntasks > hosts.size())
    return MakeError(fmt::format(
        "Requested node configuration is not available: {} tasks asked for, SLURM_HOSTFILE names "
        "{}",
        ntasks, hosts.size()));
  if (ntasks != 0) hosts.resize(ntasks);
  StepLayout layout;
  std::vector<std::string> names;
  for (size_t place : usable) {
    const std::string& name = cluster.nodes[job.allocation.nodes[place].node].name;
    if (std::find(hosts.begin(), hosts.end(), name) == hosts.end()) continue;
    layout.places.push_back(place);
    names.push_back(name);
  }
  auto ranks = ArbitraryRanks(names, hosts);
  if (!ranks) return std::move(ranks).take_error();
  layout.ranks = std::move(*ranks);
  return layout;
}

// Tasks over the step's nodes as its distribution lays them; nodes left without a task (plane
// with few tasks) are not the step's.
Result<StepLayout> LayOutStep(const CreateStep& event, const Job& job, const ClusterConfig& cluster,
                              const std::vector<size_t>& usable, const StepShape& shape) {
  if (event.distribution.nodes == NodeDistribution::kArbitrary)
    return ArbitraryLayout(event, job, cluster, usable, event.ntasks);
  std::vector<uint32_t> room, limit;
  for (uint32_t i = 0; i < shape.nodes; ++i) {
    const sched::NodeAllocation& part = job.allocation.nodes[usable[i]];
    const NodeConfig& node = cluster.nodes[part.node];
    uint32_t threads = std::max<uint32_t>(node.threads_per_core, 1);
    room.push_back(static_cast<uint32_t>(part.cores.size()) * threads / shape.cpus_per_task);
    limit.push_back(TaskLimit(event, part, node));
  }
  Result<std::vector<uint32_t>> counts = TasksPerNode(event, shape, room, limit);
  if (!counts) return std::move(counts).take_error();
  std::vector<std::vector<uint32_t>> ranks = AssignRanks(event.distribution, *counts);
  StepLayout layout;
  for (uint32_t i = 0; i < shape.nodes; ++i)
    if (!ranks[i].empty()) {
      layout.places.push_back(usable[i]);
      layout.ranks.push_back(std::move(ranks[i]));
    }
  return layout;
}

// What the running steps that do not overlap hold on the job's node `node`.
struct Held {
  std::vector<int> cores, gpus;
  uint64_t memory_mb = 0;
};

Held HeldOn(const Job& job, int node) {
  Held held;
  for (const Step& step : job.steps)
    if (step.end_time == 0 && !step.overlap)
      for (const sched::NodeAllocation& part : step.usage)
        if (part.node == node) {
          held.cores.insert(held.cores.end(), part.cores.begin(), part.cores.end());
          held.gpus.insert(held.gpus.end(), part.gpus.begin(), part.gpus.end());
          held.memory_mb += part.memory_mb;
        }
  return held;
}

// The first `count` of `from` that `held` lacks (all of them, held or not, for an --overlap
// step); nullopt when there are not that many.
std::optional<std::vector<int>> Take(const std::vector<int>& from, const std::vector<int>& held,
                                     uint32_t count, bool overlap) {
  std::vector<int> taken;
  for (int one : from) {
    if (taken.size() == count) break;
    if (overlap || std::find(held.begin(), held.end(), one) == held.end()) taken.push_back(one);
  }
  if (taken.size() < count) return std::nullopt;
  return taken;
}

// GPUs the step asks for on each of its nodes: --gpus-per-node, --gpus-per-task times the
// node's tasks, or --gpus dealt over the nodes as evenly as they go.
std::vector<uint32_t> GpusPerNode(const CreateStep& event, const std::vector<uint32_t>& tasks) {
  std::vector<uint32_t> gpus(tasks.size(), 0);
  uint32_t left = event.gpus;
  for (size_t i = 0; i < tasks.size(); ++i) {
    gpus[i] = std::max(event.gpus_per_node, event.gpus_per_task * tasks[i]);
    uint32_t share = (left + static_cast<uint32_t>(tasks.size() - i) - 1) /
                     static_cast<uint32_t>(tasks.size() - i);
    gpus[i] = std::max(gpus[i], share);
    left -= std::min(left, share);
  }
  return gpus;
}

// What the step takes of the job's resources on each of its nodes, as Slurm's step allocation
// does: the job's every CPU on the node (or with --exact only its tasks' CPUs), the memory it
// asked for and the GPUs it asked for, none held by a running step unless it overlaps. A
// refusal in Slurm's words: "Requested nodes are busy" when it fits once other steps end (srun
// then retries).
Result<std::vector<sched::NodeAllocation>> StepShare(const CreateStep& event, const Job& job,
                                                     const ClusterConfig& cluster,
                                                     const std::vector<size_t>& places,
                                                     const std::vector<uint32_t>& tasks,
                                                     uint32_t cpus_per_task) {
  std::vector<uint32_t> gpus = GpusPerNode(event, tasks);
  std::vector<sched::NodeAllocation> share;
  for (size_t i = 0; i < places.size(); ++i) {
    const sched::NodeAllocation& part = job.allocation.nodes[places[i]];
    uint32_t threads = std::max<uint32_t>(cluster.nodes[part.node].threads_per_core, 1);
    uint32_t cpus = tasks[i] * cpus_per_task;
    uint32_t cores = event.exact ? std::max<uint32_t>((cpus + threads - 1) / threads, 1)
                                 : static_cast<uint32_t>(part.cores.size());
    uint64_t memory =
        event.mem_per_node_mb != 0 ? event.mem_per_node_mb : event.mem_per_cpu_mb * cpus;
    if (cores > part.cores.size())
      return MakeError("Requested node configuration is not available");
    if (part.memory_mb != 0 && memory > part.memory_mb)
      return MakeError("Memory required by task is not available");
    if (gpus[i] > part.gpus.size())
      return MakeError("Invalid generic resource (gres) specification");
    Held held = HeldOn(job, part.node);
    sched::NodeAllocation mine;
    mine.node = part.node;
    mine.memory_mb = memory;
    auto taken_cores = Take(part.cores, held.cores, cores, event.overlap);
    auto taken_gpus = Take(part.gpus, held.gpus, gpus[i], event.overlap);
    bool memory_free =
        event.overlap || part.memory_mb == 0 || held.memory_mb + memory <= part.memory_mb;
    if (!taken_cores || !taken_gpus || !memory_free) return MakeError("Requested nodes are busy");
    mine.cores = std::move(*taken_cores);
    mine.gpus = std::move(*taken_gpus);
    share.push_back(std::move(mine));
  }
  return share;
}

}  // namespace

const Job* Engine::OwnJob(uint64_t token, const Caller& caller, uint64_t job_id,
                          EngineOutput& out) const {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) {
    out.effects.push_back(Refuse(token, "Invalid job id specified"));
    return nullptr;
  }
  if (!MayAct(caller, *it->second)) {
    out.effects.push_back(Refuse(token, "Access/permission denied"));
    return nullptr;
  }
  return it->second.get();
}

void Engine::On(const CreateStep& event, EngineOutput& out) {
  if (!OwnJob(event.token, event.caller, event.job_id, out)) return;
  JobPtr held = jobs_.at(event.job_id);  // keeps `current` alive once Mutable replaces it
  const Job& current = *held;
  if (std::string refusal = StepRefusal(current); !refusal.empty())
    return out.effects.push_back(Refuse(event.token, std::move(refusal)));
  // Slurm counts step IDs, not live steps: a job's step list (kept for sacct) stays bounded.
  if (current.next_step_id >= cluster().settings.max_step_count)
    return out.effects.push_back(
        Refuse(event.token, fmt::format("Step limit reached for this job (MaxStepCount={})",
                                        cluster().settings.max_step_count)));
  Result<std::vector<size_t>> usable = UsableNodes(event, current, cluster());
  if (!usable) return out.effects.push_back(Refuse(event.token, usable.error()));
  Result<StepShape> shape = ShapeOf(event, current.spec, usable->size());
  if (!shape) return out.effects.push_back(Refuse(event.token, shape.error()));

  Result<StepLayout> layout = LayOutStep(event, current, cluster(), *usable, *shape);
  if (!layout) return out.effects.push_back(Refuse(event.token, layout.error()));
  std::vector<uint32_t> tasks, cpus;
  std::vector<int> nodes;
  for (size_t i = 0; i < layout->places.size(); ++i) {
    const sched::NodeAllocation& part = current.allocation.nodes[layout->places[i]];
    uint32_t threads = std::max<uint32_t>(cluster().nodes[part.node].threads_per_core, 1);
    cpus.push_back(static_cast<uint32_t>(part.cores.size()) * threads);
    nodes.push_back(part.node);
    tasks.push_back(static_cast<uint32_t>(layout->ranks[i].size()));
  }
  Result<std::vector<sched::NodeAllocation>> share =
      StepShare(event, current, cluster(), layout->places, tasks, shape->cpus_per_task);
  if (!share) return out.effects.push_back(Refuse(event.token, share.error()));

  Job& job = Mutable(event.job_id, out);
  Step step;
  step.step_id = job.next_step_id++;
  step.name = event.name.empty() ? current.spec.name : event.name;
  step.start_time = clock_.Now();
  step.ntasks = 0;
  for (uint32_t count : tasks) step.ntasks += count;
  step.nodes = nodes;
  for (size_t i = 0; i < nodes.size(); ++i)
    step.cpus += std::min(cpus[i], tasks[i] * shape->cpus_per_task);
  step.usage = std::move(*share);
  step.overlap = event.overlap;
  step.gpus_given = event.gpus_given;
  job.steps.push_back(step);
  Reply reply{event.token, true, "", {event.job_id}, {}};
  reply.step_id = step.step_id;
  reply.step_nodes = std::move(nodes);
  reply.step_ranks = std::move(layout->ranks);
  reply.job = jobs_.at(event.job_id);
  out.effects.push_back(std::move(reply));
}

void Engine::On(const StepEnded& event, EngineOutput& out) {
  const Job* found = OwnJob(event.token, event.caller, event.job_id, out);
  if (!found) return;
  // A step of an earlier run (the job was requeued meanwhile) is gone with that run.
  if (found->restart_count != event.restart_count)
    return out.effects.push_back(Reply{event.token, true, "", {event.job_id}, {}});
  const std::vector<Step>& steps = found->steps;
  auto step_it = std::find_if(steps.begin(), steps.end(),
                              [&](const Step& s) { return s.step_id == event.step_id; });
  if (step_it == steps.end())
    return out.effects.push_back(Refuse(event.token, "Invalid job id specified"));
  // Already closed (the job ended first, or a repeated report): nothing changes.
  if (step_it->end_time != 0)
    return out.effects.push_back(Reply{event.token, true, "", {event.job_id}, {}});
  size_t index = static_cast<size_t>(step_it - steps.begin());
  Job& job = Mutable(event.job_id, out);
  Step& step = job.steps[index];
  step.end_time = clock_.Now();
  step.exit_code = event.exit_code;
  step.exit_signal = event.exit_signal;
  step.cpu_seconds = event.cpu_seconds;
  step.max_rss_mib = event.max_rss_mib;
  // srun relays what the nodes measured; it is the user's own process, so what it says is
  // kept only when it could be true of this step (it bills nothing: sacct shows it).
  std::vector<std::string> names;
  for (int node : step.nodes) names.push_back(cluster().nodes[static_cast<size_t>(node)].name);
  if (PlausibleUsage(event.usage, step.ntasks, names)) step.task_usage = event.usage;
  step.state = event.cancelled                                  ? JobState::kCancelled
               : event.exit_code == 0 && event.exit_signal == 0 ? JobState::kCompleted
                                                                : JobState::kFailed;
  out.effects.push_back(Reply{event.token, true, "", {event.job_id}, {}});
}

void Engine::On(const ReleaseJob& event, EngineOutput& out) {
  const Job* found = OwnJob(event.token, event.caller, event.job_id, out);
  if (!found) return;
  JobPtr held = jobs_.at(event.job_id);  // keeps `current` alive once Mutable replaces it
  const Job& current = *held;
  if (!current.spec.interactive)
    return out.effects.push_back(Refuse(
        event.token, "Job is a batch job: it ends when its script does (scancel ends it now)"));
  if (IsFinal(current.state) || current.released)
    return out.effects.push_back(Reply{event.token, true, "", {event.job_id}, {}});
  Job& job = Mutable(event.job_id, out);
  if (job.state == JobState::kPending) {
    job.exit_code = event.exit_code;
    job.exit_signal = event.exit_signal;
    job.cancelled_by = event.caller.uid;
    Finish(job, JobState::kCancelled);
  } else {
    job.released = true;
    job.release_exit_code = event.exit_code;
    job.release_signal = event.exit_signal;
    std::vector<int> nodes = job.NodeIndexes();
    out.effects.push_back(TerminateJob{event.job_id, nodes, cluster().settings.kill_wait_seconds});
  }
  out.effects.push_back(Reply{event.token, true, "", {event.job_id}, {}});
}

}  // namespace drover::ctld
