// A step session's first phases: the job, its user and cgroup, the tasks' shared environment and
// their output files; and Run, which takes every phase in order. See step_session.h.
#include "agent/daemon/step_session.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "common/log.h"
#include "common/step_launch.h"
#include "common/text.h"
#include "wire/job_spec_codec.h"

namespace drover::agent {
namespace fs = std::filesystem;

Status Agent::RunStep(const v1::StepLaunch& launch, const StepWrite& write, const StepRead& read,
                      const std::function<void()>& cancel) {
  return StepSession(*this, launch, write, read, cancel).Run();
}

StepSession::StepSession(Agent& agent, const v1::StepLaunch& launch, const Agent::StepWrite& write,
                         const Agent::StepRead& read, const std::function<void()>& cancel)
    : agent_(agent), launch_(launch), write_(write), read_(read), cancel_(cancel) {}

StepSession::~StepSession() {
  if (mount_namespace_ >= 0) ::close(mount_namespace_);
}

Status StepSession::Run() {
  if (Status resolved = ResolveJob(); !resolved) return resolved;
  ResolveUser();
  FindCgroup();
  if (Status found = FindContainer(); !found) return found;
  BuildEnvironment();
  if (Status bound = ResolveBinding(); !bound) return bound;
  ChooseWorkDir();
  if (Status written = WriteBcastFiles(); !written) return written;
  if (Status pmi = StartPmi(); !pmi) {
    StopPmi();
    return pmi;
  }
  if (Status started = StartTasks(); !started) {
    StopPmi();
    return started;
  }
  if (stdin_fd_ >= 0 && task0_here_) {
    stdin_live_ = true;
    stdin_writer_ = std::thread([this] { PumpStdin(); });
  }
  OpenToAttach();
  input_ = std::thread([this] { PumpInput(); });
  PumpOutput();
  CloseToAttach();
  FinishInput();
  StopStdin();
  StopPmi();
  return OkStatus();
}

Status StepSession::ResolveJob() {
  job_id_ = job().spec().job_id();
  auto spec = wire::FromProto(job().spec());
  if (!spec) return MakeError(fmt::format("job {}: {}", job_id_, spec.error()));
  spec_ = std::move(*spec);
  if (Status launched = WaitForLaunch(); !launched) return launched;
  // The step runs as the user the controller launched the job for here, whatever srun says.
  const std::string& node = agent_.node_name_;
  auto launched = ReadLaunch(agent_.JobDir(job_id_));
  if (!launched) return MakeError(fmt::format("job {}: {}", job_id_, launched.error()));
  if (launched->uid != spec_.uid || launched->gid != spec_.gid)
    return MakeError(fmt::format("job {} runs as uid {} on {}, not uid {}", job_id_, launched->uid,
                                 node, spec_.uid));
  if (geteuid() != 0 && spec_.uid != geteuid())
    return MakeError(fmt::format("droverd on {} runs as uid {} and cannot start uid {}'s tasks",
                                 node, geteuid(), spec_.uid));
  for (const std::string& entry : launch_.rlimits()) {
    auto limit = ParsePropagatedLimit(entry);
    if (!limit) return MakeError(fmt::format("job {}: {}", job_id_, limit.error()));
    limits_.push_back(std::move(*limit));
  }
  if (launch_.tasks().empty()) return MakeError("no tasks to start on " + node);
  if (launch_.argv().empty() && launch_.task_commands().empty())
    return MakeError("no command to run: give srun a program");
  return OkStatus();
}

// The controller's launch of the job here may still be on its way (srun can be quicker).
Status StepSession::WaitForLaunch() {
  const fs::path dir = agent_.JobDir(job_id_);
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);;) {
    std::vector<uint64_t> running = agent_.RunningJobs();
    if (!agent_.Launching(job_id_) && std::binary_search(running.begin(), running.end(), job_id_) &&
        (fs::exists(dir / "job.pid") || ReadHeld(dir) || ReadStatus(dir)))
      return OkStatus();
    if (std::chrono::steady_clock::now() > deadline)
      return MakeError(fmt::format("job {} is not running on {}", job_id_, agent_.node_name_));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The user's name, home and groups from the passwd database; the job's uid and gid whatever it
// says. Only root switches users (ResolveJob refused anyone else's job).
void StepSession::ResolveUser() {
  account_ = UserAccount{spec_.user, "/", "/bin/sh"};
  std::vector<gid_t> groups{spec_.gid};
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(spec_.uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found) {
    account_.name = found->pw_name;
    account_.home = found->pw_dir;
    groups = GroupsOf(found->pw_name, spec_.gid);
  }
  if (::getuid() == 0) user_ = ProcessUser{account_.name, spec_.uid, spec_.gid, groups};
}

// The cgroup the job's supervisor made, if it made one (it may track the job by session).
void StepSession::FindCgroup() {
  const AgentOptions& options = agent_.options_;
  CgroupHierarchy hierarchy = DetectCgroups(options.cgroup_root);
  fs::path base = hierarchy.mode == CgroupMode::kV1 && hierarchy.controllers.count("memory")
                      ? hierarchy.controllers.at("memory")
                      : hierarchy.root;
  const std::string parent = agent_.CgroupParent();
  if (hierarchy.mode != CgroupMode::kNone &&
      fs::exists(base / "drover" / parent / fmt::format("job_{}", job_id_)))
    if (auto made = JobCgroup::Create(hierarchy, parent, job_id_); made) cgroup_ = std::move(*made);
}

// job_container/tmpfs: the tasks enter the job's namespace (its private /tmp), which the job's
// supervisor makes after the prolog: a step that comes first waits for it, up to 30 s past
// PrologEpilogTimeout (5 minutes without one).
Status StepSession::FindContainer() {
  std::optional<JobContainer> container = agent_.ContainerFor(job_id_);
  if (!container || ::getuid() != 0) return OkStatus();
  int64_t prolog = agent_.cluster_.settings.prolog_epilog_timeout_seconds;
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(prolog ? prolog + 30 : 300);
  while (!IsJobNamespace(*container)) {
    if (std::chrono::steady_clock::now() > deadline)
      return Fail(fmt::format("job {}: its private /tmp (job_container/tmpfs) is not ready at {}",
                              job_id_, container->NamespaceFile()));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto opened = OpenJobNamespace(*container);
  if (!opened) return Fail(fmt::format("job {}: {}", job_id_, opened.error()));
  mount_namespace_ = *opened;
  return OkStatus();
}

// srun's environment with Slurm's step variables over it; SLURM_PROCID, SLURM_LOCALID and
// SLURM_TASK_PID are each task's own.
void StepSession::BuildEnvironment() {
  // srun -E marks its environment (kPreserveEnvMarker, not passed on): SLURM_NNODES,
  // SLURM_NTASKS and SLURM_NPROCS keep srun's values where it has them.
  // --task-prolog and --task-epilog arrive the same way.
  bool preserve = false;
  for (const std::string& entry : launch_.environment()) {
    std::string_view name = std::string_view(entry).substr(0, entry.find('='));
    if (entry == kPreserveEnvMarker)
      preserve = true;
    else if (name == kTaskPrologVariable)
      task_prolog_ = entry.substr(name.size() + 1);
    else if (name == kTaskEpilogVariable)
      task_epilog_ = entry.substr(name.size() + 1);
    else
      environment_.push_back(entry);
  }
  std::vector<uint32_t> per_node(launch_.tasks_per_node().begin(), launch_.tasks_per_node().end());
  std::string step = std::to_string(launch_.step_id());
  std::string counts = FormatCountList(per_node);
  std::string gtids;
  for (uint32_t rank : launch_.tasks()) gtids += (gtids.empty() ? "" : ",") + std::to_string(rank);
  auto set = [&](std::string_view name, std::string_view value) {
    SetVariable(environment_, name, value);
  };
  set("SLURM_STEP_ID", step);
  set("SLURM_STEPID", step);
  set("SLURM_STEP_NODELIST", launch_.node_list());
  set("SLURM_NODELIST", launch_.node_list());
  auto set_unless_preserved = [&](std::string_view name, uint32_t value) {
    if (!preserve || !FindVariable(environment_, name)) set(name, std::to_string(value));
  };
  set("SLURM_STEP_NUM_NODES", std::to_string(launch_.nnodes()));
  set_unless_preserved("SLURM_NNODES", launch_.nnodes());
  set("SLURM_STEP_NUM_TASKS", std::to_string(launch_.ntasks()));
  set_unless_preserved("SLURM_NTASKS", launch_.ntasks());
  set_unless_preserved("SLURM_NPROCS", launch_.ntasks());
  set("SLURM_STEP_TASKS_PER_NODE", counts);
  set("SLURM_TASKS_PER_NODE", counts);
  set("SLURM_NODEID", std::to_string(launch_.node_index()));
  set("SLURMD_NODENAME", agent_.node_name_);
  set("SLURM_GTIDS", gtids);
  SetDistribution();
  if (launch_.cpus_per_task() > 0)
    set("SLURM_CPUS_PER_TASK", std::to_string(launch_.cpus_per_task()));
  if (std::string topology = agent_.TopologyAddress(); !topology.empty()) {
    set("SLURM_TOPOLOGY_ADDR", topology);
    size_t levels = static_cast<size_t>(std::count(topology.begin(), topology.end(), '.'));
    std::vector<std::string> pattern(levels, "switch");
    pattern.push_back("node");
    set("SLURM_TOPOLOGY_ADDR_PATTERN", Join(pattern, "."));
  }
  SetGpuVariables();
}

// SLURM_DISTRIBUTION as srun asked (plane=N as "plane" and SLURM_DIST_PLANESIZE); without -m,
// Slurm's default: cyclic when the step has no more tasks than nodes, else block.
void StepSession::SetDistribution() {
  std::string distribution = launch_.distribution();
  if (distribution.empty())
    distribution = launch_.ntasks() <= launch_.nnodes() ? "cyclic" : "block";
  if (ToLower(distribution).starts_with("plane=")) {
    SetVariable(environment_, "SLURM_DIST_PLANESIZE",
                distribution.substr(6, distribution.find_first_of(":,") - 6));
    distribution = "plane";
  }
  SetVariable(environment_, "SLURM_DISTRIBUTION", distribution);
}

// The step's GPUs on this node (the job's, unless it asked for its own); numbered as the job's
// cgroup shows them where it hides the others (NVML devices).
void StepSession::SetGpuVariables() {
  std::vector<uint32_t> job_gpus, gpus;
  uint32_t shares = 0;
  for (const v1::NodeAllocation& part : job().allocation())
    if (part.node() == agent_.node_) {
      for (int gpu : part.gpus()) job_gpus.push_back(static_cast<uint32_t>(gpu));
      shares = part.shares();
    }
  gpus = job_gpus;
  // Its NVMe scratch folders here (the batch shell's, from srun's environment, are another
  // node's).
  for (const v1::NodeAllocation& part : job().allocation())
    if (part.node() == agent_.node_ && part.nvme_size() > 0)
      SetVariable(environment_, "DROVER_NVME_DIRS",
                  Join(agent_.NvmeDirs(job_id_, part.nvme()), ":"));
  // A job sharing a GPU: its steps share it too, with the job's shares (and this node's MPS
  // daemon, where the agent runs one).
  if (shares && !job_gpus.empty() && agent_.mps_)
    for (const std::string& entry : agent_.mps_->Variables(static_cast<int>(job_gpus.front()))) {
      size_t equals = entry.find('=');
      SetVariable(environment_, entry.substr(0, equals), entry.substr(equals + 1));
    }
  if (shares && !job_gpus.empty() && agent_.node_ >= 0) {
    const NodeConfig& config = agent_.cluster_.nodes[static_cast<size_t>(agent_.node_)];
    for (const auto& [name, value] : GpuShareVariables(
             config.gpu_sharing, shares, config.gpu_shares(static_cast<int>(job_gpus.front()))))
      SetVariable(environment_, name, value);
  }
  // A step that asked for GPUs sees its own (the controller's sealed record says which), not
  // every GPU of the job.
  for (const v1::Step& step : job().steps())
    if (step.step_id() == launch_.step_id() && step.gpus_given()) {
      gpus.clear();
      for (const v1::NodeAllocation& part : step.usage())
        if (part.node() == agent_.node_)
          for (int gpu : part.gpus())
            if (std::count(job_gpus.begin(), job_gpus.end(), static_cast<uint32_t>(gpu)))
              gpus.push_back(static_cast<uint32_t>(gpu));
    }
  if (gpus.empty()) {
    if (job_gpus.empty()) return;
    // None of the job's GPUs is the step's: the job's variables srun passed on do not hold.
    for (std::string_view name : {"SLURM_STEP_GPUS", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
                                  "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK"})
      std::erase_if(environment_, [&](const std::string& entry) {
        return entry.starts_with(name) && entry.size() > name.size() && entry[name.size()] == '=';
      });
    SetVariable(environment_, "SLURM_GPUS_ON_NODE", "0");
    return;
  }
  std::sort(gpus.begin(), gpus.end());
  std::sort(job_gpus.begin(), job_gpus.end());
  std::vector<uint32_t> visible = gpus;
  // With ConstrainDevices the step's cgroup shows only its GPUs (ConfineStepDevices), the
  // job's its own: numbered from 0 in index order, as CUDA enumerates what it can open.
  if (agent_.DevicesConstrained()) {
    const std::vector<uint32_t>& seen = ConfineStepDevices(job_gpus, gpus) ? gpus : job_gpus;
    for (uint32_t& gpu : visible)
      gpu = static_cast<uint32_t>(std::lower_bound(seen.begin(), seen.end(), gpu) - seen.begin());
  }
  step_gpus_ = gpus;
  visible_gpus_ = visible;
  std::vector<std::string> names;  // MIG devices by UUID, as Slurm names them
  for (size_t i = 0; i < gpus.size(); ++i) {
    std::string name = std::to_string(visible[i]);
    for (const Gpu& gpu : agent_.gpus_.gpus)
      if (gpu.mig && gpu.index == static_cast<int>(gpus[i])) name = gpu.uuid;
    names.push_back(std::move(name));
  }
  std::string list = Join(names, ",");
  SetVariable(environment_, "SLURM_STEP_GPUS", fmt::format("{}", fmt::join(gpus, ",")));
  SetVariable(environment_, "SLURM_GPUS_ON_NODE", std::to_string(gpus.size()));
  for (std::string_view name :
       {"CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK"})
    SetVariable(environment_, name, list);
}

// A step given only some of the job's GPUs on this node: a cgroup of its own in the job's that
// denies the others. True when its tasks will be confined so; false when they see every GPU
// of the job (the agent's log says why when that was not meant).
bool StepSession::ConfineStepDevices(const std::vector<uint32_t>& job_gpus,
                                     const std::vector<uint32_t>& step_gpus) {
  if (!cgroup_ || step_gpus.size() == job_gpus.size()) return false;
  std::vector<Gpu> jobs;  // the job's GPUs: the others are denied to the job already
  for (const Gpu& gpu : agent_.gpus_.gpus)
    if (std::count(job_gpus.begin(), job_gpus.end(), static_cast<uint32_t>(gpu.index)))
      jobs.push_back(gpu);
  std::vector<DeviceNumber> denied = DevicesDenied(jobs, [&](int index) {
    return std::count(step_gpus.begin(), step_gpus.end(), static_cast<uint32_t>(index)) > 0;
  });
  if (denied.empty()) return false;
  static std::atomic<uint64_t> launches{0};
  std::string name = fmt::format("step_{}.{}", launch_.step_id(), ++launches);
  auto dir = cgroup_->MakeStepDevices(name, denied);
  if (!dir || dir->empty()) {
    log::Warning("job {} step {}: its GPUs are not confined to it: {}", job_id_, launch_.step_id(),
                 dir ? "no devices controller" : dir.error());
    return false;
  }
  step_cgroup_ = *dir;
  return true;
}

// srun's --chdir, else the user's home; /tmp where the agent cannot enter it. The output
// patterns (%j %u %x %t ...) are expanded against it.
void StepSession::ChooseWorkDir() {
  work_dir_ = launch_.work_dir().empty() ? account_.home : launch_.work_dir();
  if (::access(work_dir_.c_str(), X_OK) != 0) work_dir_ = "/tmp";
  pattern_.job_id = job_id_;
  pattern_.array_job_id = spec_.array_task_id != kNoArrayTask ? spec_.array_job_id : 0;
  pattern_.array_task_id = spec_.array_task_id;
  pattern_.step_id = launch_.step_id();
  pattern_.node_id = launch_.node_index();
  pattern_.node_name = agent_.node_name_;
  pattern_.user_name = account_.name;
  pattern_.job_name = spec_.name;
  pattern_.work_dir = work_dir_;
}

// The files srun named are made (and truncated once) as the user, before any task writes.
Status StepSession::PrepareOutputFile(const std::string& text, uint32_t rank,
                                      std::string& resolved) {
  PatternContext context = pattern_;
  context.task_id = rank;
  auto path = ExpandOutputPattern(text, context);
  if (!path) return MakeError(path.error());
  resolved = *path;
  if (prepared_.count(resolved) || resolved == "/dev/null") return OkStatus();
  prepared_[resolved] = true;
  int flags = O_WRONLY | O_CREAT | (launch_.open_append() ? O_APPEND : O_TRUNC);
  if (int error = CreateFileAsUser(user_, resolved, flags); error != 0)
    return MakeError(fmt::format("cannot open {}: {}", resolved, std::strerror(error)));
  return OkStatus();
}

}  // namespace drover::agent
