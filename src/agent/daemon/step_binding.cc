// A step session's binding of its tasks (srun --cpu-bind, --mem-bind, --gpu-bind, --accel-bind),
// as Slurm's task/affinity and gres plugins bind them: CPUs and memory only under
// TaskPlugin=task/affinity, GPUs always. Slurm's abstract CPU ids are the host's own: an
// emulated node's CPU c is the host's (c mod N)-th usable CPU (the agent's own affinity mask),
// so on a real node whose slurm.conf matches the host it is CPU c itself. See step_session.h.
#include <fmt/format.h>
#include <linux/mempolicy.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "agent/daemon/step_session.h"
#include "common/text.h"

namespace drover::agent {
namespace {

// "0-3,8" (a sysfs list) as its ids.
std::vector<uint32_t> ParseIdList(const std::string& text) {
  std::vector<uint32_t> ids;
  for (const std::string& part : Split(Trim(text), ',')) {
    std::vector<std::string> range = Split(part, '-');
    auto low = range.empty() ? std::nullopt : ParseUint64(range[0]);
    auto high = range.size() == 2 ? ParseUint64(range[1]) : low;
    if (!low || !high || *high < *low || *high > 4096) continue;
    for (uint64_t id = *low; id <= *high; ++id) ids.push_back(static_cast<uint32_t>(id));
  }
  return ids;
}

std::string ReadSys(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<int> OwnCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof set, &set) == 0)
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

// The NUMA nodes of `cpus` on this host (node 0 where the host shows none).
std::vector<uint32_t> NodesOf(const std::vector<int>& cpus, uint32_t numa_nodes) {
  std::vector<uint32_t> nodes;
  for (uint32_t node = 0; node < numa_nodes; ++node) {
    std::vector<uint32_t> its =
        ParseIdList(ReadSys(fmt::format("/sys/devices/system/node/node{}/cpulist", node)));
    for (int cpu : cpus)
      if (std::count(its.begin(), its.end(), static_cast<uint32_t>(cpu))) {
        nodes.push_back(node);
        break;
      }
  }
  if (nodes.empty()) nodes.push_back(0);
  return nodes;
}

// Task/affinity's binding when srun asked for none: a step whose sockets, cores or threads
// on the node number its tasks times their CPUs is bound to them (srun(1), Auto Binding).
CpuBindType AutoBinding(const NodeShape& node, const std::vector<uint32_t>& step_cpus,
                        uint32_t tasks, uint32_t cpus_per_task) {
  std::vector<uint32_t> sockets, cores;
  for (uint32_t cpu : step_cpus) {
    sockets.push_back(cpu / std::max(node.cores_per_socket * node.threads_per_core, 1u));
    cores.push_back(cpu / std::max(node.threads_per_core, 1u));
  }
  for (auto* list : {&sockets, &cores}) {
    std::sort(list->begin(), list->end());
    list->erase(std::unique(list->begin(), list->end()), list->end());
  }
  uint32_t wanted = tasks * std::max(cpus_per_task, 1u);
  if (sockets.size() == wanted) return CpuBindType::kSockets;
  if (cores.size() == wanted) return CpuBindType::kCores;
  if (step_cpus.size() == wanted) return CpuBindType::kThreads;
  return CpuBindType::kNone;
}

}  // namespace

// The step's binding options and what they bind within: the node's shape, the step's CPUs here
// (its cores, else the job's) and the host's CPUs. An error names a bad option.
Status StepSession::ResolveBinding() {
  const NodeConfig& node = agent_.cluster().nodes[agent_.node_];
  node_shape_ = NodeShape{static_cast<uint32_t>(std::max(node.sockets * node.boards, 1)),
                          static_cast<uint32_t>(std::max(node.cores_per_socket, 1)),
                          static_cast<uint32_t>(std::max(node.threads_per_core, 1))};
  std::vector<int> cores;
  for (const v1::NodeAllocation& part : job().allocation())
    if (part.node() == agent_.node_) cores.assign(part.cores().begin(), part.cores().end());
  for (const v1::Step& step : job().steps())
    if (step.step_id() == launch_.step_id())
      for (const v1::NodeAllocation& part : step.usage())
        if (part.node() == agent_.node_ && part.cores_size() > 0)
          cores.assign(part.cores().begin(), part.cores().end());
  // --threads-per-core (--hint=nomultithread): the first threads of each core only.
  uint32_t threads = node_shape_.threads_per_core;
  if (launch_.threads_per_core() > 0) threads = std::min(threads, launch_.threads_per_core());
  for (int core : cores)
    for (uint32_t t = 0; t < threads; ++t)
      step_cpus_.push_back(static_cast<uint32_t>(core) * node_shape_.threads_per_core + t);
  std::sort(step_cpus_.begin(), step_cpus_.end());
  host_cpus_ = OwnCpus();
  affinity_ = false;
  for (const std::string& plugin : Split(agent_.cluster().settings.task_plugin, ','))
    affinity_ |= EqualsIgnoreCase(Trim(plugin), "task/affinity");
  std::vector<std::string> levels = Split(launch_.distribution(), ':');
  socket_distribution_ = levels.size() > 1 ? ToLower(levels[1]) : "";
  if (auto bind = ParseCpuBind(launch_.cpu_bind()); bind)
    cpu_bind_ = *bind;
  else
    return MakeError(bind.error());
  if (auto bind = ParseMemBind(launch_.mem_bind()); bind)
    mem_bind_ = *bind;
  else
    return MakeError(bind.error());
  std::string gpu = launch_.gpu_bind();
  // --accel-bind=g: each task to the GPUs closest to its CPUs, as --gpu-bind=closest.
  if (gpu.empty() && launch_.accel_bind().find('g') != std::string::npos) gpu = "closest";
  if (launch_.accel_bind().find('v') != std::string::npos)
    gpu += gpu.empty() ? "verbose" : ",verbose";
  gpu_bind_given_ = !gpu.empty();
  if (auto bind = ParseGpuBind(gpu.empty() ? "none" : gpu); bind)
    gpu_bind_ = *bind;
  else
    return MakeError(bind.error());
  if (cpu_bind_.type == CpuBindType::kDefault && affinity_)
    cpu_bind_.type =
        AutoBinding(node_shape_, step_cpus_, static_cast<uint32_t>(launch_.tasks_size()),
                    std::max(launch_.cpus_per_task(), 1u));
  std::string numa = ReadSys("/sys/devices/system/node/online");
  numa_nodes_ = numa.empty() ? 1 : static_cast<uint32_t>(ParseIdList(numa).size());
  SetBindingVariables();
  if (!launch_.cpu_freq().empty())
    std::fprintf(stderr, "droverd: %s: step %llu.%u: --cpu-freq=%s not applied: %s\n",
                 agent_.node_name_.c_str(), static_cast<unsigned long long>(job_id_),
                 launch_.step_id(), launch_.cpu_freq().c_str(),
                 ::access("/sys/devices/system/cpu/cpu0/cpufreq", F_OK) == 0
                     ? "Drover sets no CPU frequency"
                     : "no cpufreq support on this node");
  return OkStatus();
}

// SLURM_CPU_BIND* and SLURM_MEM_BIND* (only under task/affinity, as Slurm sets them), the
// distribution, and the frequencies srun asked for.
void StepSession::SetBindingVariables() {
  auto set = [&](std::string_view name, std::string_view value) {
    SetVariable(environment_, name, value);
  };
  if (affinity_ && !launch_.cpu_bind().empty())
    for (const auto& [name, value] : CpuBindVariables(cpu_bind_)) set(name, value);
  if (affinity_ && mem_bind_.type != MemBindType::kDefault)
    for (const auto& [name, value] : MemBindVariables(mem_bind_)) set(name, value);
  if (!launch_.cpu_freq().empty()) set("SLURM_CPU_FREQ_REQ", launch_.cpu_freq());
  if (!launch_.gpu_freq().empty()) set("SLURM_GPU_FREQ", launch_.gpu_freq());
}

// What task `local` (of this node's) is bound to; an error when its memory binding names a NUMA
// node the host lacks (the task does not start, as in Slurm).
Result<StepSession::TaskBinding> StepSession::BindingOf(uint32_t local) const {
  TaskBinding binding;
  TaskSlot slot{local, static_cast<uint32_t>(launch_.tasks_size()),
                std::max(launch_.cpus_per_task(), 1u)};
  if (affinity_ && !host_cpus_.empty()) {
    if (auto cpus = TaskCpus(cpu_bind_, node_shape_, step_cpus_, slot, socket_distribution_)) {
      std::vector<int> host;
      for (uint32_t cpu : *cpus) host.push_back(host_cpus_[cpu % host_cpus_.size()]);
      std::sort(host.begin(), host.end());
      host.erase(std::unique(host.begin(), host.end()), host.end());
      binding.cpus = std::move(host);
    }
    std::vector<int> task_cpus = binding.cpus.value_or(host_cpus_);
    auto nodes = TaskMemoryNodes(mem_bind_, slot, NodesOf(task_cpus, numa_nodes_), numa_nodes_);
    if (!nodes) return std::move(nodes).take_error();
    if (*nodes) {
      ProcessSpec::MemoryPolicy policy;
      policy.mode = mem_bind_.prefer ? MPOL_PREFERRED : MPOL_BIND;
      for (uint32_t node : **nodes)
        if (node < 64) policy.nodes |= 1UL << node;
      binding.memory = policy;
      binding.memory_nodes = **nodes;
    }
  }
  if (gpu_bind_given_) binding.gpus = TaskGpus(gpu_bind_, step_gpus_, slot);
  return binding;
}

// The task's own GPU variables when --gpu-bind gives it a share of the step's.
void StepSession::SetTaskGpus(const TaskBinding& binding, std::vector<std::string>& env) const {
  if (!binding.gpus || step_gpus_.empty()) return;
  std::vector<uint32_t> visible;
  for (uint32_t gpu : *binding.gpus)
    for (size_t i = 0; i < step_gpus_.size(); ++i)
      if (step_gpus_[i] == gpu) visible.push_back(visible_gpus_[i]);
  std::string list = fmt::format("{}", fmt::join(visible, ","));
  for (std::string_view name :
       {"CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK"})
    SetVariable(env, name, list);
}

// Between fork and the task's exec: its CPU affinity; returns the verbose lines Slurm's plugins
// print on the task's stderr before it runs (the child writes them there itself, as its user).
std::string StepSession::ApplyBinding(pid_t pid, uint32_t rank, uint32_t local,
                                      const TaskBinding& binding) {
  std::string said;
  if (binding.cpus) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu : *binding.cpus) CPU_SET(cpu, &set);
    bool failed = ::sched_setaffinity(pid, sizeof set, &set) != 0;
    if (cpu_bind_.verbose) {
      std::vector<uint32_t> ids(binding.cpus->begin(), binding.cpus->end());
      said +=
          fmt::format("{} - {}, task {:2} {:2} [{}]: mask 0x{} set{}\n", CpuBindLabel(cpu_bind_),
                      agent_.node_name_, rank, local, pid, MaskText(ids), failed ? " FAILED" : "");
    }
  } else if (cpu_bind_.verbose && affinity_) {
    std::vector<uint32_t> ids(host_cpus_.begin(), host_cpus_.end());
    said += fmt::format("cpu-bind=NONE - {}, task {:2} {:2} [{}]: mask 0x{}\n", agent_.node_name_,
                        rank, local, pid, MaskText(ids));
  }
  if (binding.memory && mem_bind_.verbose)
    said += fmt::format("{} - {}, task {:2} {:2} [{}]: mask 0x{} set\n", MemBindLabel(mem_bind_),
                        agent_.node_name_, rank, local, pid, MaskText(binding.memory_nodes));
  if (binding.gpus && gpu_bind_.verbose)
    said += fmt::format(
        "gpu-bind: usable_gres=0x{}; bit_alloc=0x{}; local_inx={}; global_list={}\n",
        MaskText(*binding.gpus), MaskText(step_gpus_), local, fmt::join(*binding.gpus, ","));
  return said;
}

}  // namespace drover::agent
