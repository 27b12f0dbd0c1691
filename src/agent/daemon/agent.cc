// See agent.h.
#include "agent/daemon/agent.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <sstream>

#include "agent/host/cgroup.h"
#include "agent/host/job_env.h"
#include "agent/host/mps_control.h"
#include "agent/host/output_path.h"
#include "agent/host/process_usage.h"
#include "agent/host/spawn.h"
#include "agent/stepd/detach.h"
#include "agent/stepd/supervisor.h"
#include "agent/stepd/user_environment.h"
#include "common/cgroup_conf.h"
#include "common/fd_io.h"
#include "common/gres_conf.h"
#include "common/log.h"
#include "common/resource_limits.h"
#include "common/text.h"
#include "wire/job_spec_codec.h"

namespace drover::agent {
namespace fs = std::filesystem;

namespace {

constexpr const char* kRunFile = "run";  // the restart count of the run the directory holds
// The account label of /metrics, as the controller gave it (an accounting account, or "other").
constexpr const char* kMetricsAccountFile = "metrics_account";
constexpr size_t kMostAccountBytes = 128;
constexpr size_t kDoneKept = 2000;  // finished job directories kept for inspection

std::optional<uint32_t> ReadRun(const fs::path& dir) {
  std::ifstream in(dir / kRunFile);
  uint32_t run = 0;
  if (in >> run) return run;
  return std::nullopt;
}

Status WriteRun(const fs::path& dir, uint32_t run) {
  std::ofstream out(dir / kRunFile);
  out << run << "\n";
  out.close();
  if (!out) return MakeError(fmt::format("cannot write {}", (dir / kRunFile).string()));
  return OkStatus();
}

// The node's GPU indexes the job was given here (its SLURM_JOB_GPUS); none when it has none.
std::vector<int> JobGpusIn(const fs::path& dir) {
  if (auto env = ReadEnvironment(dir))
    for (const std::string& entry : *env)
      if (entry.starts_with("SLURM_JOB_GPUS="))
        if (auto indexes = ParseIndexList(std::string_view(entry).substr(15))) return *indexes;
  return {};
}

std::optional<uint64_t> JobIdOf(const fs::path& dir) {
  std::string name = dir.filename().string();
  if (!name.starts_with("job_")) return std::nullopt;
  return ParseUint64(std::string_view(name).substr(4));
}

UserAccount AccountOf(const JobSpec& spec) {
  // Never the name the client sent: the node's own database names the uid, or the number does.
  UserAccount account{"", "/", "/bin/sh"};
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(spec.uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found) {
    account.name = found->pw_name;
    account.home = found->pw_dir;
    account.shell = found->pw_shell && *found->pw_shell ? found->pw_shell : "/bin/sh";
  }
  if (account.name.empty()) account.name = std::to_string(spec.uid);
  return account;
}

// A launch that failed before its supervisor started ends here, as the job's status.
Status WriteLaunchFailure(const fs::path& dir, const std::string& reason) {
  BatchStatus status;
  status.launch_failed = true;
  status.exit_code = 1;
  status.reason = reason;
  status.end_time = std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
  return WriteStatus(dir, status);
}

// Holds the job's allocation on a node that runs no batch script.
constexpr const char* kHolderScript =
    "#!/bin/sh\n"
    "# Holds the job's allocation here; only its end (SIGTERM, SIGKILL) stops it.\n"
    "trap '' HUP INT QUIT USR1 USR2 ALRM PIPE TSTP TTIN TTOU\n"
    "exec /bin/sleep 100000000\n";

std::string HostName() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

}  // namespace

Agent::Agent(const ClusterConfig& cluster, int node, HostInfo host, GpuDiscovery gpus,
             AgentOptions options)
    : cluster_(cluster),
      node_(node),
      node_name_(cluster.nodes[node].name),
      host_(std::move(host)),
      gpus_(std::move(gpus)),
      options_(std::move(options)) {
  if (!options_.launcher) options_.launcher = std::make_shared<SupervisorLauncher>(options_.stepd);
  std::error_code ignored;
  fs::create_directories(options_.spool / "done", ignored);
  WipeNvme(0);  // what jobs that ended while the agent was down left on the drives
  // MPS jobs get a control daemon per GPU where NVIDIA's control program is installed.
  if (cluster.nodes[node].gpu_sharing == "mps") {
    const char* path = std::getenv("PATH");
    std::string program = MpsControl::Find(path ? path : "/usr/local/bin:/usr/bin:/bin");
    if (!program.empty())
      mps_ = std::make_unique<MpsControl>(std::move(program), options_.spool / "mps");
    else
      log::Info(
          "node {} shares its GPUs as MPS; no nvidia-cuda-mps-control is installed, so "
          "MPS jobs get CUDA_MPS_ACTIVE_THREAD_PERCENTAGE and no control daemon",
          node_name_);
  }
}

Agent::~Agent() {
  // A job here may still be starting (its supervisor making its cgroup under the level): leave
  // the level then, as while one runs.
  if (options_.cgroup_mode == "none" || !Jobs().running.empty()) return;
  for (const fs::path& mount : CgroupMounts(DetectCgroups(options_.cgroup_root)))
    ::rmdir((mount / "drover" / CgroupParent()).c_str());  // fails, as it should, while in use
}

// Emulated nodes of several clusters (or tests) share one host under the same names: each
// agent's jobs get a cgroup parent of their own, named after its spool directory.
std::string Agent::CgroupParent() const {
  if (!options_.emulated) return node_name_;
  return fmt::format("{}-{:08x}", node_name_,
                     static_cast<uint32_t>(std::hash<std::string>()(
                         fs::absolute(options_.spool).lexically_normal().string())));
}

fs::path Agent::JobDir(uint64_t job_id) const {
  return JobDirectory(options_.spool, job_id);
}

fs::path Agent::DoneMarker(uint64_t job_id, uint32_t restart_count) const {
  return options_.spool / "done" / fmt::format("job_{}.{}", job_id, restart_count);
}

// The switches from the top of the tree down to this node, as SLURM_TOPOLOGY_ADDR has them.
std::string Agent::TopologyAddress() const {
  const TopologyConfig& topology = cluster_.topology;
  if (topology.kind != TopologyKind::kTree ||
      static_cast<size_t>(node_) >= topology.node_leaf.size() || topology.node_leaf[node_] < 0)
    return "";
  std::vector<std::string> path{node_name_};
  for (int s = topology.node_leaf[node_]; s >= 0; s = topology.switches[s].parent)
    path.push_back(topology.switches[s].name);
  std::reverse(path.begin(), path.end());
  return Join(path, ".");
}

// What the batch environment needs beyond the spec; `mine` is this node's part of the job.
Result<LaunchContext> Agent::ContextFor(const v1::Job& job, const JobSpec& spec,
                                        const v1::NodeAllocation*& mine) {
  LaunchContext context;
  context.node_name = node_name_;
  context.node_list = job.node_list();
  mine = nullptr;
  for (int i = 0; i < job.allocation_size(); ++i) {
    const v1::NodeAllocation& part = job.allocation(i);
    int threads = part.node() >= 0 && static_cast<size_t>(part.node()) < cluster_.nodes.size()
                      ? std::max(cluster_.nodes[part.node()].threads_per_core, 1)
                      : 1;
    context.cpus_per_node.push_back(static_cast<uint32_t>(part.cores_size() * threads));
    if (part.node() == node_) {
      mine = &part;
      context.node_index = static_cast<uint32_t>(i);
    }
  }
  if (!mine)
    return MakeError(fmt::format("job {} has no allocation on node {}", spec.job_id, node_name_));
  for (int gpu : mine->gpus()) context.gpu_indexes.push_back(static_cast<uint32_t>(gpu));
  for (const Gpu& gpu : gpus_.gpus)  // MIG devices are named by UUID, as Slurm names them
    if (gpu.mig) context.mig_uuids[static_cast<uint32_t>(gpu.index)] = gpu.uuid;
  if (mine->shares() && node_ >= 0) {
    const NodeConfig& config = cluster_.nodes[static_cast<size_t>(node_)];
    context.gpu_sharing = config.gpu_sharing;
    context.shares = mine->shares();
    context.gpu_shares = mine->gpus_size() ? config.gpu_shares(mine->gpus(0)) : 0;
  }
  // Devices are hidden (and CUDA_VISIBLE_DEVICES renumbered from 0, as Slurm does) only with
  // ConstrainDevices, and only GPUs with device files can be.
  context.devices_constrained = DevicesConstrained();
  context.partition = job.partition_name();
  context.cluster_name = cluster_.settings.cluster_name;
  context.restart_count = job.restart_count();
  context.submit_host = HostName();
  // sbatch records where it ran; the working directory differs after --chdir.
  context.submit_dir = spec.work_dir;
  for (const std::string& entry : spec.environment) {
    if (entry.starts_with("SLURM_SUBMIT_HOST=")) context.submit_host = entry.substr(18);
    if (entry.starts_with("SLURM_SUBMIT_DIR=")) context.submit_dir = entry.substr(17);
  }
  context.slurm_conf = options_.conf_path;
  context.user = AccountOf(spec);
  context.topology_address = TopologyAddress();
  if (!context.topology_address.empty()) {
    size_t levels = static_cast<size_t>(
        std::count(context.topology_address.begin(), context.topology_address.end(), '.'));
    std::vector<std::string> pattern(levels, "switch");
    pattern.push_back("node");
    context.topology_pattern = Join(pattern, ".");
  }
  return context;
}

// Only what the configuration asks for, as Slurm's plugins do: a cgroup when ProctrackType or
// TaskPlugin=task/cgroup wants one; its RAM (and swap) limit with ConstrainRAMSpace
// (ConstrainSwapSpace); its CPUs with ConstrainCores; its GPUs with ConstrainDevices; a watch on
// the job's RSS with JobAcctGatherParams=OverMemoryKill.
bool Agent::DevicesConstrained() const {
  return EnforcementOf(cluster_.settings).constrain_devices &&
         std::any_of(gpus_.gpus.begin(), gpus_.gpus.end(),
                     [](const Gpu& gpu) { return gpu.device; });
}

std::optional<JobContainer> Agent::ContainerFor(uint64_t job_id) const {
  const JobContainerConf& conf = cluster_.settings.job_container;
  if (!conf.tmpfs || ::geteuid() != 0) return std::nullopt;  // main.cc says so at start
  const std::string& base = conf.BasePathFor(node_name_);
  if (base.empty()) return std::nullopt;
  JobContainer container;
  container.base = base;
  container.dirs = conf.dirs;
  container.auto_base = conf.auto_base_path;
  container.job_dir = options_.emulated ? fmt::format("{}/{}/{}", base, node_name_, job_id)
                                        : fmt::format("{}/{}", base, job_id);
  return container;
}

void Agent::Enforce(const v1::NodeAllocation& mine, BatchLaunch& launch) const {
  const ClusterSettings& settings = cluster_.settings;
  Enforcement enforcement = EnforcementOf(settings);
  if (!enforcement.track_by_cgroup) launch.cgroup_mode = "none";
  uint64_t real_memory = node_ >= 0 ? cluster_.nodes[static_cast<size_t>(node_)].real_memory_mb : 0;
  MemoryLimits limits = MemoryLimitsOf(settings, mine.memory_mb(), real_memory);
  launch.memory_limit_mib = limits.ram_mb;
  launch.memory_and_swap_limit_mib = limits.ram_and_swap_mb;
  if (enforcement.over_memory_kill) {
    launch.over_memory_kill_mib = mine.memory_mb();
    launch.memory_poll_seconds = static_cast<uint64_t>(enforcement.poll_seconds);
  }
  // An emulated node shares the host's cores with the others; its GPUs have device files only
  // where gres.conf names real ones (tests), and those are isolated as on a real node.
  if (!options_.emulated) {
    std::vector<int> cores(mine.cores().begin(), mine.cores().end());
    auto cpus = CpusOfCores(host_, cores);
    if (cpus && enforcement.constrain_cores) launch.cpus = std::move(*cpus);
  }
  if (!enforcement.constrain_devices) return;
  launch.devices_denied = DevicesDenied(gpus_.gpus, [&](int index) {
    return std::find(mine.gpus().begin(), mine.gpus().end(), index) != mine.gpus().end();
  });
}

Result<BatchLaunch> Agent::Prepare(const v1::Job& job, const JobSpec& spec,
                                   std::vector<std::string>& env) {
  const v1::NodeAllocation* mine = nullptr;
  auto context = ContextFor(job, spec, mine);
  if (!context) return std::move(context).take_error();
  auto environment = BuildBatchEnvironment(spec, *context);
  if (!environment) return std::move(environment).take_error();
  env = std::move(*environment);
  if (mine->nvme_size() > 0) {
    std::vector<std::string> dirs = NvmeDirs(spec.job_id, mine->nvme());
    if (Status made = MakeNvmeDirs(spec.job_id, dirs, spec.uid, spec.gid); !made)
      return std::move(made).take_error();
    env.push_back("DROVER_NVME_DIRS=" + Join(dirs, ":"));
  }
  if (mps_ && mine->shares() && mine->gpus_size() > 0) {
    int gpu = mine->gpus(0);
    std::string visible = std::to_string(gpu);
    for (const Gpu& found : gpus_.gpus)
      if (found.index == gpu && !found.uuid.empty()) visible = found.uuid;
    auto variables = mps_->Acquire(spec.job_id, gpu, visible);
    if (!variables) return std::move(variables).take_error();
    env.insert(env.end(), variables->begin(), variables->end());
  }

  BatchLaunch launch;
  launch.job_id = spec.job_id;
  launch.uid = spec.uid;
  launch.gid = spec.gid;
  launch.user = context->user.name;
  launch.node_name = node_name_;
  launch.work_dir = spec.work_dir.empty() ? context->user.home : spec.work_dir;
  auto paths = ResolveBatchIoPaths(spec, BatchPatternContext(spec, node_name_));
  if (!paths) return std::move(paths).take_error();
  launch.stdout_path = paths->stdout_path;
  launch.stderr_path = paths->stderr_path;
  launch.stdin_path = paths->stdin_path;
  launch.arguments = spec.script_args;  // the script's $1, $2, ...
  for (const std::string& entry : spec.rlimits)
    if (auto limit = ParsePropagatedLimit(entry); !limit) return std::move(limit).take_error();
  launch.rlimits = spec.rlimits;
  if (auto request = ParseUserEnvironmentRequest(spec.get_user_env); !request)
    return std::move(request).take_error();
  launch.get_user_env = spec.get_user_env;
  // --open-mode=append: sbatch passes it on as SLURM_OPEN_MODE ("a" or "t"), as Slurm's does.
  for (const std::string& entry : spec.environment)
    if (entry == "SLURM_OPEN_MODE=a") launch.open_mode = OpenMode::kAppend;
  launch.cgroup_mode = options_.cgroup_mode;
  launch.cgroup_root = options_.cgroup_root;
  launch.cgroup_parent = CgroupParent();
  Enforce(*mine, launch);
  if (auto container = ContainerFor(spec.job_id)) {
    launch.container_base = container->base;
    launch.container_dir = container->job_dir;
    launch.container_dirs = container->dirs;
    launch.container_auto_base = container->auto_base;
  }
  launch.prolog = cluster_.settings.prolog;
  launch.epilog = cluster_.settings.epilog;
  launch.kill_wait_seconds = static_cast<uint32_t>(cluster_.settings.kill_wait_seconds);
  launch.prolog_epilog_timeout_seconds =
      static_cast<uint32_t>(cluster_.settings.prolog_epilog_timeout_seconds);
  return launch;
}

Status Agent::Launch(const v1::LaunchRequest& request) {
  const uint64_t id = request.job().spec().job_id();
  {
    MutexLock lock(mutex_);
    if (std::optional<Status> settled = SettleEarlierRun(id, request.job().restart_count()))
      return std::move(*settled);
    // The rest, the slow part (files, the supervisor's start), runs beside other jobs' launches.
    launching_.insert(id);
    quiet_ = false;
  }
  {
    MutexLock lock(steps_mutex_);
    terminated_.erase(id);  // a new run here: its steps may come
  }
  struct Done {
    Agent* agent;
    uint64_t id;
    ~Done() {
      MutexLock relock(agent->mutex_);
      agent->launching_.erase(id);
    }
  } done{this, id};
  return StartJob(request, JobDir(id));
}

// What a launch finds of an earlier one in the job's directory: OK when this launch repeats
// one already under way, started or reported (it runs nothing); an error while an earlier run
// of a requeued job is still ending; none when the launch goes ahead (the directory is clear).
std::optional<Status> Agent::SettleEarlierRun(uint64_t id, uint32_t run) {
  // A launch of this job already under way here: this one is its repeat.
  if (launching_.count(id)) return OkStatus();
  if (fs::exists(DoneMarker(id, run))) return OkStatus();  // ran here and was reported
  fs::path dir = JobDir(id);
  if (!fs::exists(dir)) return std::nullopt;
  std::optional<uint32_t> existing = ReadRun(dir);
  bool started = fs::exists(dir / "supervisor.pid") || ReadStatus(dir) || ReadHeld(dir);
  // The same launch again; or one that an earlier agent process began and did not finish
  // (no supervisor yet: launches here are one at a time), which starts over.
  if (existing && *existing == run && started) return OkStatus();
  if (existing && *existing == run) existing.reset();
  // An earlier run of a requeued job: the controller no longer wants it.
  if (existing && !ReadStatus(dir) && ReadHeld(dir)) {
    SignalSteps(id, SIGKILL, false);
    (void)EndHeldCgroup(id, dir, nullptr);  // what remains is the launch's to report
  }
  if (existing && SupervisorAlive(dir)) {
    if (auto supervisor = ReadProcessFile(dir / "supervisor.pid"); supervisor)
      ::kill(supervisor->pid, SIGTERM);
    return MakeError(
        fmt::format("job {}: an earlier run is still ending on {}; retry", id, node_name_));
  }
  std::error_code ignored;
  if (status_watch_) status_watch_->Unwatch(dir);  // the watch would follow it into done/
  if (existing) fs::rename(dir, DoneMarker(id, *existing), ignored);
  if (!existing || ignored) fs::remove_all(dir, ignored);
  return std::nullopt;
}

// The job's directory, its files and its supervisor. A failure after the directory exists is
// the job's status (the controller learns it as the job's end), not this call's error.
Status Agent::StartJob(const v1::LaunchRequest& request, const fs::path& dir) {
  const v1::Job& job = request.job();
  auto spec = wire::FromProto(job.spec());
  if (!spec) return MakeError(fmt::format("job {}: {}", job.spec().job_id(), spec.error()));
  // The propagated limits came with the stored environment: back into the spec, out of the
  // job's environment.
  std::erase_if(spec->environment, [&](const std::string& entry) {
    if (!entry.starts_with(kStoredLimitPrefix)) return false;
    spec->rlimits.push_back(entry.substr(kStoredLimitPrefix.size()));
    return true;
  });
  std::error_code error;
  fs::create_directories(dir, error);
  if (error)
    return MakeError(fmt::format("cannot create {}: {}; check the spool directory's permissions",
                                 dir.string(), error.message()));
  ::chmod(dir.c_str(), 0711);
  {
    MutexLock lock(mutex_);
    WatchDirectory(dir, job.spec().job_id());
  }
  if (Status written = WriteRun(dir, job.restart_count()); !written) return written;
  {
    // Bounded and printable whatever comes: it becomes a label value.
    std::string account = request.metrics_account().substr(0, kMostAccountBytes);
    for (char& c : account)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    std::ofstream(dir / kMetricsAccountFile) << (account.empty() ? "other" : account) << "\n";
  }
  if (geteuid() != 0 && spec->uid != geteuid())
    return WriteLaunchFailure(
        dir, fmt::format("droverd on {} runs as uid {} and can run only that user's jobs, not "
                         "uid {}'s; run droverd as root to run every user's jobs",
                         node_name_, geteuid(), spec->uid));
  std::vector<std::string> env;
  auto launch = Prepare(job, *spec, env);
  if (!launch) return WriteLaunchFailure(dir, launch.error());
  // The batch script runs on the job's batch host (--batch), else its first node. The other
  // nodes, and every node of an interactive allocation (salloc, srun outside a job), run no
  // script: a process holds the job's cgroup while srun's steps come and go, as Slurm's extern
  // step does.
  const bool holder = spec->interactive || job.allocation_size() == 0 ||
                      (job.batch_host().empty() ? job.allocation(0).node() != node_
                                                : job.batch_host() != node_name_);
  if (holder) launch->stdout_path = launch->stderr_path = launch->stdin_path = "/dev/null";
  launch->extern_step = holder;
  if (holder && NothingToHold(job, *launch)) {
    // Nothing to hold here: no process, only the files srun's steps read and the marker.
    if (Status s = WriteEnvironment(dir, env); !s) return WriteLaunchFailure(dir, s.error());
    if (Status s = WriteLaunch(dir, *launch); !s) return WriteLaunchFailure(dir, s.error());
    // The job's cgroup is kernel state: made here, it outlives this call as a holder's would.
    (void)SetUpJobCgroup(*launch, [&](const std::string& line) {
      log::Debug("job {} on {}: {}", job.spec().job_id(), node_name_, line);
    });
    if (Status s = WriteHeld(dir, std::time(nullptr)); !s)
      return WriteLaunchFailure(dir, s.error());
    return OkStatus();
  }
  const std::string& script = holder ? std::string(kHolderScript) : request.script();
  if (Status s = WriteScript(dir, script, launch->uid, launch->gid); !s)
    return WriteLaunchFailure(dir, s.error());
  if (Status s = WriteEnvironment(dir, env); !s) return WriteLaunchFailure(dir, s.error());
  if (Status s = WriteLaunch(dir, *launch); !s) return WriteLaunchFailure(dir, s.error());
  auto supervisor = options_.launcher->Start(dir);
  if (!supervisor)
    return WriteLaunchFailure(dir, "the step supervisor did not start: " + supervisor.error());
  MutexLock lock(mutex_);
  if (supervisor->child)
    supervisors_.push_back(supervisor->pid);  // this agent's child until it ends: reaped here
  WatchSupervisor(supervisor->pid, job.spec().job_id());
  return OkStatus();
}

bool Agent::NothingToHold(const v1::Job& job, const BatchLaunch& launch) const {
  if (!launch.prolog.empty() || !launch.epilog.empty() || !launch.container_base.empty() ||
      launch.over_memory_kill_mib)
    return false;
  for (const v1::NodeAllocation& mine : job.allocation())
    if (mine.node() == node_ && (mine.nvme_size() > 0 || (mps_ && mine.shares()))) return false;
  return true;
}

Status Agent::EndHeldCgroup(uint64_t job_id, const fs::path& dir, BatchStatus* status) {
  auto launch = ReadLaunch(dir);
  if (!launch || launch->cgroup_mode == "none") return OkStatus();
  return EndCgroup(job_id, status);
}

Status Agent::EndCgroup(uint64_t job_id, BatchStatus* status) {
  CgroupHierarchy hierarchy = DetectCgroups(options_.cgroup_root);
  if (hierarchy.mode == CgroupMode::kNone) return OkStatus();
  auto cgroup = JobCgroup::Create(hierarchy, CgroupParent(), job_id);
  if (!cgroup) return OkStatus();
  (void)cgroup->KillAll();
  if (status) {
    status->cgroup_mode = CgroupModeName(cgroup->mode());
    if (auto cpu = cgroup->CpuTimeNanoseconds())
      status->cpu_seconds = static_cast<double>(*cpu) / 1e9;
  }
  return cgroup->Remove();
}

bool Agent::HasStepTasks(uint64_t job_id) {
  MutexLock lock(steps_mutex_);
  for (auto [it, end] = step_groups_.equal_range(job_id); it != end; ++it)
    if (::kill(-it->second.group, 0) == 0) return true;
  return false;
}

void Agent::EndHold(uint64_t job_id) {
  const int64_t kill_wait = std::max<int64_t>(cluster_.settings.kill_wait_seconds, 0);
  ending_holds_.try_emplace(job_id,
                            std::chrono::steady_clock::now() + std::chrono::seconds(kill_wait));
}

void Agent::EndHolds() {
  if (ending_holds_.empty()) return;  // the common case, once per node every look
  const auto now = std::chrono::steady_clock::now();
  for (auto it = ending_holds_.begin(); it != ending_holds_.end();) {
    const uint64_t id = it->first;
    const bool tasks = HasStepTasks(id);
    if (tasks && now < it->second) {
      ++it;
      continue;
    }
    if (tasks) SignalSteps(id, SIGKILL, false);
    const fs::path dir = JobDir(id);
    if (auto since = ReadHeld(dir); since && !ReadStatus(dir)) {
      BatchStatus status;  // as a holder process ends: its SIGTERM
      status.signal = SIGTERM;
      status.cancelled = true;
      status.start_time = *since;
      // Killed tasks leave the cgroup as they exit: its removal is tried again on the next
      // look, for up to 5 s.
      if (Status removed = EndHeldCgroup(id, dir, &status); !removed) {
        if (now < it->second + std::chrono::seconds(5)) {
          ++it;
          continue;
        }
        log::Warning("job {} on {}: {}", id, node_name_, removed.error());
      }
      status.end_time = std::time(nullptr);
      if (Status written = WriteStatus(dir, status); !written)
        log::Warning("job {} on {}: {}", id, node_name_, written.error());
    }
    it = ending_holds_.erase(it);
  }
}

// Suspend and resume act on the job itself: its cgroup's freezer, or SIGSTOP/SIGCONT to its
// session where there is no cgroup. (A SIGSTOP sent to the supervisor would stop the
// supervisor, not the job.)
Status Agent::Pause(uint64_t job_id, bool stop) {
  fs::path dir = JobDir(job_id);
  CgroupHierarchy hierarchy = DetectCgroups(options_.cgroup_root);
  // Only a cgroup the supervisor made (it may have fallen back to tracking the session).
  fs::path base = hierarchy.mode == CgroupMode::kV1 && hierarchy.controllers.count("freezer")
                      ? hierarchy.controllers.at("freezer")
                      : hierarchy.root;
  bool made = fs::exists(base / "drover" / CgroupParent() / fmt::format("job_{}", job_id));
  if (made && hierarchy.mode != CgroupMode::kNone) {
    if (auto cgroup = JobCgroup::Create(hierarchy, CgroupParent(), job_id); cgroup) {
      Status changed = stop ? cgroup->Freeze() : cgroup->Thaw();
      if (changed) return changed;
    }
  }
  auto shell = ReadProcessFile(dir / "job.pid");  // the batch shell leads the job's session
  if (!shell || !ProcessAlive(*shell)) return OkStatus();
  if (::kill(-shell->pid, stop ? SIGSTOP : SIGCONT) != 0 &&
      ::kill(shell->pid, stop ? SIGSTOP : SIGCONT) != 0)
    return MakeError(fmt::format("cannot {} job {}: {}", stop ? "suspend" : "resume", job_id,
                                 std::strerror(errno)));
  return OkStatus();
}

Status Agent::Signal(uint64_t job_id, int signal, SignalScope scope,
                     const std::vector<uint32_t>& steps) {
  if (scope != SignalScope::kBatch) SignalSteps(job_id, signal, false, steps);
  fs::path dir = JobDir(job_id);
  if (scope == SignalScope::kSteps || !fs::exists(dir) || ReadStatus(dir)) return OkStatus();
  // SIGSTOP/SIGCONT to all of the job: its cgroup's freezer where it has one, so that the
  // supervisor is not the one stopped.
  if (scope == SignalScope::kFull && (signal == SIGSTOP || signal == SIGCONT))
    return Pause(job_id, signal == SIGSTOP);
  auto shell = ReadProcessFile(dir / "job.pid");
  if (!shell || !ProcessAlive(*shell)) return OkStatus();
  // -f: the shell's process group, which holds the children a batch script starts (srun's
  // tasks are in groups of their own, signalled above); -b: the shell alone.
  pid_t target = scope == SignalScope::kFull ? -shell->pid : shell->pid;
  if (::kill(target, signal) != 0 && (target > 0 || ::kill(shell->pid, signal) != 0))
    return MakeError(fmt::format("cannot signal job {}: {}", job_id, std::strerror(errno)));
  return OkStatus();
}

// scontrol notify: slurmstepd's error() line in the batch job's stderr, written through the batch
// shell's own descriptor 2 (/proc/PID/fd/2 reopens that very file) by a child that has become the
// shell's user first, so it lands only where the job itself could write.
Status Agent::Notify(uint64_t job_id, const std::string& message) {
  fs::path dir = JobDir(job_id);
  if (!fs::exists(dir) || ReadStatus(dir))
    return MakeError(fmt::format("job {} has no batch shell running on this node", job_id));
  auto shell = ReadProcessFile(dir / "job.pid");
  if (!shell || !ProcessAlive(*shell))
    return MakeError(fmt::format("job {} has no batch shell running on this node", job_id));
  // The job's account from its launch record, not from /proc (a shell that has exec'd a setuid
  // program is root's there).
  auto launch = ReadLaunch(dir);
  if (!launch) return MakeError(fmt::format("job {}: {}", job_id, launch.error()));
  std::optional<ProcessUser> as;
  if (::geteuid() == 0 && launch->uid != 0)
    as = ProcessUser{launch->user, launch->uid, launch->gid, GroupsOf(launch->user, launch->gid)};
  std::string text = message;
  for (char& c : text)  // printable text only, on one line
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  int error = AppendFileAsUser(as, fmt::format("/proc/{}/fd/2", shell->pid),
                               fmt::format("slurmstepd: error: {}\n", text));
  if (error != 0)
    return MakeError(
        fmt::format("cannot write to job {}'s stderr: {}", job_id, std::strerror(error)));
  return OkStatus();
}

// The supervisor's own signals: SIGTERM cancels the job (SIGKILL after KillWait).
Status Agent::SignalSupervisor(const fs::path& dir, uint64_t job_id, int signal) {
  auto process = ReadProcessFile(dir / "supervisor.pid");
  if (!process || !ProcessAlive(*process)) return OkStatus();
  if (::kill(process->pid, signal) != 0)
    return MakeError(fmt::format("cannot signal job {}: {}", job_id, std::strerror(errno)));
  return OkStatus();
}

bool Agent::Launching(uint64_t job_id) {
  MutexLock lock(mutex_);
  return launching_.count(job_id) != 0;
}

void Agent::SignalSteps(uint64_t job_id, int signal, bool outside_cgroup_only,
                        const std::vector<uint32_t>& steps) {
  MutexLock lock(steps_mutex_);
  for (auto [it, end] = step_groups_.equal_range(job_id); it != end; ++it) {
    const StepGroup& task = it->second;
    if (outside_cgroup_only && task.in_cgroup) continue;
    if (!steps.empty() && std::find(steps.begin(), steps.end(), task.step_id) == steps.end())
      continue;
    ::kill(-task.group, signal);
  }
}

bool Agent::AddStepGroup(uint64_t job_id, uint32_t step_id, pid_t group, bool in_cgroup,
                         uint32_t local_task, uint32_t global_task) {
  MutexLock lock(steps_mutex_);
  if (terminated_.count(job_id)) return false;
  step_groups_.emplace(job_id, StepGroup{step_id, group, in_cgroup, local_task, global_task});
  return true;
}

void Agent::MarkTerminated(uint64_t job_id) {
  MutexLock lock(steps_mutex_);
  const auto now = std::chrono::steady_clock::now();
  std::erase_if(terminated_,
                [&](const auto& entry) { return now - entry.second > std::chrono::minutes(10); });
  terminated_[job_id] = now;
}

void Agent::ForgetStepGroup(uint64_t job_id, pid_t group) {
  MutexLock lock(steps_mutex_);
  for (auto [it, last] = step_groups_.equal_range(job_id); it != last; ++it)
    if (it->second.group == group) {
      step_groups_.erase(it);
      break;
    }
}

// The batch shell (or holder) of each running job here, and each srun task, that the request
// names and the caller may see. A job whose owner cannot be read is root's.
std::vector<TrackedLeader> Agent::Leaders(const v1::ListPidsRequest& request,
                                          const std::function<bool(uint32_t)>& may_see) {
  std::vector<TrackedLeader> leaders;
  std::map<uint64_t, bool> visible;
  for (uint64_t id : RunningJobs()) {
    if (request.job_id() && id != request.job_id()) continue;
    fs::path dir = JobDir(id);
    auto launch = ReadLaunch(dir);
    visible[id] = may_see(launch ? launch->uid : 0);
    if (!visible[id]) continue;
    std::ifstream in(dir / "script");
    std::ostringstream read;
    read << in.rdbuf();
    const std::string script = read.str();
    uint32_t step = script == kHolderScript ? kExternStepId : kBatchStepId;
    auto shell = ReadProcessFile(dir / "job.pid");
    if (shell && ProcessAlive(*shell) && (!request.has_step_id() || request.step_id() == step))
      leaders.push_back({id, step, shell->pid, true, 0, 0});
  }
  MutexLock lock(steps_mutex_);
  for (const auto& [id, task] : step_groups_) {
    if ((request.job_id() && id != request.job_id()) || !visible.count(id) || !visible[id])
      continue;
    if (request.has_step_id() && request.step_id() != task.step_id) continue;
    leaders.push_back({id, task.step_id, task.group, false, static_cast<int32_t>(task.local_task),
                       static_cast<int32_t>(task.global_task)});
  }
  return leaders;
}

v1::ListPidsReply Agent::ListPids(const v1::ListPidsRequest& request,
                                  const std::function<bool(uint32_t)>& may_see) {
  v1::ListPidsReply reply;
  std::vector<TrackedLeader> leaders = Leaders(request, may_see);
  if (leaders.empty()) return reply;
  for (const ListedPid& entry : AssignProcesses(ReadProcessTable(), leaders)) {
    v1::ListPidsReply::Pid* pid = reply.add_pids();
    pid->set_job_id(entry.job_id);
    pid->set_step_id(entry.step_id);
    pid->set_pid(entry.pid);
    pid->set_local_task(entry.local_task);
    pid->set_global_task(entry.global_task);
  }
  return reply;
}

v1::StepUsageReply Agent::StepUsage(const v1::StepUsageRequest& request,
                                    const std::function<bool(uint32_t)>& may_see) {
  v1::ListPidsRequest listed;
  listed.set_job_id(request.job_id());
  if (request.has_step_id()) listed.set_step_id(request.step_id());
  std::vector<TrackedLeader> leaders = Leaders(listed, may_see);
  std::map<std::pair<uint64_t, uint32_t>, v1::StepUsageReply::Step> steps;
  for (const TrackedLeader& leader : leaders) {
    v1::StepUsageReply::Step& step = steps[{leader.job_id, leader.step_id}];
    step.set_job_id(leader.job_id);
    step.set_step_id(leader.step_id);
    const int32_t task = leader.leads_session ? 0 : leader.global_task;
    if (step.tasks() == 0 || task < step.first_task()) step.set_first_task(task);
    step.set_tasks(step.tasks() + 1);
  }
  if (leaders.empty()) return {};
  for (const ListedPid& entry : AssignProcesses(ReadProcessTable(), leaders)) {
    auto it = steps.find({entry.job_id, entry.step_id});
    std::optional<ProcessUsage> usage = ReadProcessUsage(entry.pid);
    if (it == steps.end() || !usage) continue;  // gone meanwhile
    v1::StepUsageReply::Step& step = it->second;
    step.set_rss_kib(step.rss_kib() + usage->rss_kib);
    step.set_max_rss_kib(step.max_rss_kib() + usage->max_rss_kib);
    step.set_vsize_kib(step.vsize_kib() + usage->vsize_kib);
    step.set_max_vsize_kib(step.max_vsize_kib() + usage->max_vsize_kib);
    step.set_pages(step.pages() + usage->major_faults);
    step.set_cpu_seconds(step.cpu_seconds() + usage->cpu_seconds);
    step.set_processes(step.processes() + 1);
  }
  // The GPUs of each job here, as NVML reads them now: every step of the job is given them.
  if (GpuMetricsReader* reader = gpu_reader()) {
    std::map<int, GpuSample> samples;
    for (GpuSample& sample : reader->Read()) samples[sample.index] = std::move(sample);
    std::map<uint64_t, std::vector<int>> job_gpus;
    for (const auto& [key, step] : steps) {
      if (job_gpus.count(key.first)) continue;
      job_gpus[key.first] = JobGpusIn(JobDir(key.first));
    }
    for (auto& [key, step] : steps)
      for (int gpu : job_gpus[key.first]) {
        auto found = samples.find(gpu);
        if (found == samples.end() || !found->second.utilization) continue;
        step.set_gpus_read(step.gpus_read() + 1);
        step.set_gpu_utilization_percent(step.gpu_utilization_percent() +
                                         *found->second.utilization * 100);
        step.set_gpu_memory_kib(step.gpu_memory_kib() +
                                found->second.memory_used_bytes.value_or(0) / 1024);
      }
  }
  v1::StepUsageReply reply;
  for (auto& [key, step] : steps) *reply.add_steps() = std::move(step);
  return reply;
}

v1::AgentStatusReply Agent::DaemonStatus() {
  v1::AgentStatusReply reply;
  std::set<std::pair<uint64_t, uint32_t>> steps;
  for (const TrackedLeader& leader : Leaders({}, [](uint32_t) { return true; }))
    steps.emplace(leader.job_id, leader.step_id);
  for (const auto& [job, step] : steps)
    reply.add_active_steps(step == kBatchStepId    ? fmt::format("{}.batch", job)
                           : step == kExternStepId ? fmt::format("{}.extern", job)
                                                   : fmt::format("{}.{}", job, step));
  reply.set_cpus(static_cast<uint32_t>(host_.cpus));
  reply.set_boards(1);
  reply.set_sockets(static_cast<uint32_t>(host_.sockets));
  reply.set_cores_per_socket(static_cast<uint32_t>(host_.cores_per_socket));
  reply.set_threads_per_core(static_cast<uint32_t>(host_.threads_per_core));
  reply.set_real_memory_mb(host_.memory_mb);
  struct statvfs tmp {};
  const std::string& tmp_fs = cluster_.settings.tmp_fs;
  if (::statvfs(tmp_fs.empty() ? "/tmp" : tmp_fs.c_str(), &tmp) == 0)
    reply.set_tmp_disk_mb(static_cast<uint64_t>(tmp.f_blocks) * tmp.f_frsize / (1024 * 1024));
  reply.set_boot_time(started_);
  char hostname[256] = {};
  if (::gethostname(hostname, sizeof hostname - 1) == 0) reply.set_hostname(hostname);
  reply.set_last_controller_message(last_controller_.load(std::memory_order_relaxed));
  reply.set_pid(static_cast<int32_t>(::getpid()));
  auto level = log::ParseLevel(cluster_.settings.agent_debug);
  reply.set_debug_level(static_cast<uint32_t>(level ? *level : log::Level::kInfo));
  // Where this agent's messages go: the file its stderr is (drover up's logs/NODE.log).
  std::error_code error;
  fs::path log_file = fs::read_symlink("/proc/self/fd/2", error);
  reply.set_log_file(!error && log_file.is_absolute() ? log_file.string() : "(null)");
  reply.set_version("22.05.8 (drover " DROVER_VERSION ")");  // as the commands' --version
  reply.set_node_name(node_name_);
  return reply;
}

Status Agent::Terminate(uint64_t job_id) {
  MarkTerminated(job_id);  // before the signals: a task joining later is refused
  fs::path dir = JobDir(job_id);
  const bool held = ReadHeld(dir) && !ReadStatus(dir);
  // A supervisor signals the tasks in the job's cgroup itself; a processless hold has none.
  if (held) SignalSteps(job_id, SIGCONT, false);
  SignalSteps(job_id, SIGTERM, !held);
  if (!fs::exists(dir) || ReadStatus(dir)) return OkStatus();  // not here, or already ended
  if (held) {
    // A processless hold: it ends once its steps' tasks are gone (SIGKILL after KillWait). The
    // marker lets an agent that restarts meanwhile finish it.
    if (Status marked = WriteHoldEnding(dir); !marked)
      log::Warning("job {} on {}: {}", job_id, node_name_, marked.error());
    MutexLock lock(mutex_);
    EndHold(job_id);
    quiet_ = false;
    EndHolds();
    return OkStatus();
  }
  (void)Pause(job_id, false);  // a suspended job too
  return SignalSupervisor(dir, job_id, SIGTERM);
}

std::vector<uint64_t> Agent::RunningJobs() {
  return Jobs().running;
}

std::vector<Agent::JobUsage> Agent::JobUsages() {
  std::vector<JobUsage> usages;
  CgroupHierarchy hierarchy;
  {
    MutexLock lock(health_mutex_);
    if (!usage_cgroups_) usage_cgroups_ = DetectCgroups(options_.cgroup_root);
    hierarchy = *usage_cgroups_;
  }
  std::vector<uint64_t> running = RunningJobs();
  std::sort(running.begin(), running.end());
  for (uint64_t id : running) {
    const fs::path dir = JobDir(id);
    auto launch = ReadLaunch(dir);
    if (!launch) continue;  // a launch under way: not running yet
    JobUsage& usage = usages.emplace_back();
    usage.job_id = id;
    usage.user = launch->user;
    {
      std::ifstream in(dir / kMetricsAccountFile);
      if (!std::getline(in, usage.account) || usage.account.empty()) usage.account = "other";
      if (usage.account.size() > kMostAccountBytes) usage.account.resize(kMostAccountBytes);
    }
    usage.gpus = JobGpusIn(dir);
    if (launch->cgroup_mode == "none") continue;
    auto cgroup = JobCgroup::Open(hierarchy, CgroupParent(), id);
    if (!cgroup) continue;
    if (auto nanoseconds = cgroup->CpuTimeNanoseconds())
      usage.cpu_seconds = static_cast<double>(*nanoseconds) / 1e9;
    if (auto bytes = cgroup->MemoryBytes()) usage.memory_bytes = *bytes;
    if (auto bytes = cgroup->PeakMemoryBytes()) usage.peak_memory_bytes = *bytes;
  }
  return usages;
}

void Agent::SetGpuHealth(std::vector<GpuHealth> readings) {
  MutexLock lock(health_mutex_);
  gpu_health_ = std::move(readings);
}

std::vector<GpuHealth> Agent::GpuHealthNow() const {
  MutexLock lock(health_mutex_);
  return gpu_health_;
}

JobsHere Agent::Jobs() {
  JobsHere jobs;
  {
    // A launch under way may not have made its directory yet: it is running here.
    MutexLock lock(mutex_);
    jobs.running.assign(launching_.begin(), launching_.end());
  }
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(options_.spool, error)) {
    auto id = JobIdOf(entry.path());
    if (id && entry.is_directory())
      (ReadStatus(entry.path()) ? jobs.ended : jobs.running).push_back(*id);
  }
  std::sort(jobs.running.begin(), jobs.running.end());
  jobs.running.erase(std::unique(jobs.running.begin(), jobs.running.end()), jobs.running.end());
  std::sort(jobs.ended.begin(), jobs.ended.end());
  return jobs;
}

void Agent::ReapSupervisors() {
  std::erase_if(supervisors_, [](pid_t pid) { return ::waitpid(pid, nullptr, WNOHANG) != 0; });
}

std::vector<EndedJob> Agent::EndedJobs(bool full) {
  std::vector<EndedJob> ended;
  MutexLock lock(mutex_);
  ReapSupervisors();  // before the look: a reaped supervisor is no longer alive to it
  EndHolds();
  unreported_ = false;
  if (quiet_) return ended;
  bool any = !launching_.empty();
  // A supervisor gone without a status (killed) is looked for when a watched process ended
  // (every supervisor here watched), else once a second: a status is read at every look, the
  // supervisors' process records (a file and /proc each) only then.
  auto now = std::chrono::steady_clock::now();
  bool supervisor_ended = false;
  for (auto it = watched_supervisors_.begin(); it != watched_supervisors_.end();) {
    if (!status_watch_->Ended(it->first)) {
      ++it;
      continue;
    }
    supervisor_ended = true;
    it = watched_supervisors_.erase(it);
  }
  const bool all_watched = watching_ && unwatched_jobs_.empty();
  const bool liveness = full || look_again_ || supervisor_ended ||
                        (!all_watched && now - last_liveness_ >= std::chrono::seconds(1));
  look_again_ = false;
  if (liveness) last_liveness_ = now;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(options_.spool, error)) {
    auto id = JobIdOf(entry.path());
    if (!id || !entry.is_directory()) continue;
    any = true;
    if (launching_.count(*id)) {
      look_again_ = true;  // its supervisor may end before the launch is done: look once more
      continue;
    }
    const fs::path& dir = entry.path();
    if (!liveness && ::access((dir / "status").c_str(), F_OK) != 0) continue;  // still running
    auto status = ReadStatus(dir);
    if (!status && ReadHeld(dir)) {  // a processless hold: running until Terminate
      if (!ending_holds_.count(*id) && HoldEnding(dir)) EndHold(*id);  // ended before a restart
      continue;
    }
    // A supervisor that wrote its status and exited between the two looks: read it again.
    if (!status && !SupervisorAlive(dir)) status = ReadStatus(dir);
    if (!status && !SupervisorAlive(dir)) {
      // Started but its supervisor is gone without a word (killed), or a launch this agent
      // did not finish before it stopped: kill what is left and report it failed.
      bool started = fs::exists(dir / "supervisor.pid");
      auto age = fs::file_time_type::clock::now() - fs::last_write_time(dir, error);
      if (!started && age < std::chrono::seconds(10)) {
        look_again_ = true;  // no process to watch: looked at again until it is 10 s old
        continue;
      }
      (void)EndCgroup(*id, nullptr);
      BatchStatus lost;
      lost.signal = started ? SIGKILL : 0;
      lost.launch_failed = !started;
      lost.exit_code = started ? 0 : 1;
      lost.reason = started ? "the job's supervisor died; what was left of the job was killed"
                            : "droverd stopped while launching the job";
      (void)WriteStatus(dir, lost);
      status = ReadStatus(dir);
    }
    if (status) ended.push_back({*id, ReadRun(dir).value_or(0), *status});
  }
  quiet_ = !any && !error;
  unreported_ = !ended.empty();
  return ended;
}

bool Agent::NeedsTimedLook() {
  MutexLock lock(mutex_);
  return !watching_ || !unwatched_jobs_.empty() || look_again_ || unreported_ ||
         !ending_holds_.empty();
}

std::string Agent::NvmeBase(int drive) const {
  const std::vector<NvmeDevice>& drives = cluster_.nodes[static_cast<size_t>(node_)].nvme;
  std::string mount = drive >= 0 && static_cast<size_t>(drive) < drives.size()
                          ? drives[static_cast<size_t>(drive)].mount
                          : std::string();
  if (mount.empty()) return (options_.spool / "nvme" / std::to_string(drive)).string();
  return options_.emulated ? mount + "/" + node_name_ : mount;
}

std::vector<std::string> Agent::NvmeDirs(
    uint64_t job_id, const google::protobuf::RepeatedField<int32_t>& drives) const {
  std::vector<std::string> dirs;
  for (int drive : drives) dirs.push_back(fmt::format("{}/job_{}", NvmeBase(drive), job_id));
  return dirs;
}

Status Agent::MakeNvmeDirs(uint64_t job_id, const std::vector<std::string>& dirs, uid_t uid,
                           gid_t gid) {
  const bool root = ::geteuid() == 0;
  for (const std::string& dir : dirs) {
    fs::path base = fs::path(dir).parent_path();
    // A real drive's mount point must be there (not made on / when the drive is not mounted);
    // the folders under the agent's spool and an emulated node's own are the agent's to make.
    const std::vector<NvmeDevice>& drives = cluster_.nodes[static_cast<size_t>(node_)].nvme;
    bool made_here = std::none_of(drives.begin(), drives.end(), [&](const NvmeDevice& drive) {
      return !drive.mount.empty() && base == fs::path(drive.mount);
    });
    std::error_code error;
    if (made_here) {
      fs::create_directories(base, error);
    } else if (!fs::is_directory(base, error)) {
      return MakeError(
          fmt::format("job {}: the NVMe mount point {} is not there (is the drive "
                      "mounted?)",
                      job_id, base.string()));
    }
    if (error)
      return MakeError(fmt::format("job {}: cannot create the NVMe folder {}: {}", job_id,
                                   base.string(), error.message()));
    // Made as root in a folder no user can write: no one can swap the job's folder for a link.
    if (root)
      if (Status safe = CheckRootFolder(base.string(), "the NVMe folder"); !safe)
        return MakeError(fmt::format("job {}: {}", job_id, safe.error()));
    fs::remove_all(dir, error);  // a run before this one (requeued) starts afresh
    if (::mkdir(dir.c_str(), 0700) != 0)
      return MakeError(fmt::format("job {}: cannot create the NVMe scratch folder {}: {}", job_id,
                                   dir, std::strerror(errno)));
    if (root && ::lchown(dir.c_str(), uid, gid) != 0)
      return MakeError(fmt::format("job {}: cannot give the NVMe scratch folder {} to uid {}: {}",
                                   job_id, dir, uid, std::strerror(errno)));
  }
  return OkStatus();
}

void Agent::WipeNvme(uint64_t job_id) {
  std::vector<uint64_t> running;
  if (job_id == 0) running = RunningJobs();
  const std::vector<NvmeDevice>& drives = cluster_.nodes[static_cast<size_t>(node_)].nvme;
  for (size_t d = 0; d < drives.size(); ++d) {
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(NvmeBase(static_cast<int>(d)), error)) {
      std::string name = entry.path().filename().string();
      auto id = name.starts_with("job_") ? ParseUint64(name.substr(4)) : std::nullopt;
      if (!id ||
          (job_id != 0 ? *id != job_id : std::binary_search(running.begin(), running.end(), *id)))
        continue;
      std::error_code removed;
      fs::remove_all(entry.path(), removed);
      if (removed)
        log::Warning("cannot wipe the NVMe scratch folder {}: {}", entry.path().string(),
                     removed.message());
    }
  }
}

void Agent::Reported(uint64_t job_id, uint32_t restart_count) {
  {
    MutexLock lock(mutex_);
    // The directory may hold a newer run by now (requeued and launched here again): keep it,
    // and its MPS daemon and NVMe scratch.
    fs::path dir = JobDir(job_id);
    if (launching_.count(job_id) || ReadRun(dir) != restart_count) return;
    MoveToDone(job_id, restart_count);
  }
  // Slow (a daemon told to quit, a large scratch folder removed): not under the lock.
  if (mps_) mps_->Release(job_id);
  WipeNvme(job_id);
}

void Agent::WatchStatuses(std::shared_ptr<FileWatch> watch) {
  MutexLock lock(mutex_);
  status_watch_ = std::move(watch);
  watched_supervisors_.clear();
  unwatched_jobs_.clear();
  look_again_ = true;
  watching_ = false;
  if (!status_watch_) return;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(options_.spool, error)) {
    std::optional<uint64_t> id = JobIdOf(entry.path());
    if (!id || !entry.is_directory()) continue;
    WatchDirectory(entry.path(), *id);
    // The running jobs' supervisors, re-adopted: the record names the process and its start.
    auto supervisor = ReadProcessFile(entry.path() / "supervisor.pid");
    if (supervisor && ProcessAlive(*supervisor)) WatchSupervisor(supervisor->pid, *id);
  }
  watching_ = !error;  // a spool it could not read: looked at on the timer
}

void Agent::WatchDirectory(const fs::path& dir, uint64_t job_id) {
  if (!status_watch_) return;
  if (Status watched = status_watch_->Watch(dir); !watched) {
    log::Warning("{}: {}; its end is looked for on a timer", node_name_, watched.error());
    unwatched_jobs_.insert(job_id);
  }
}

void Agent::WatchSupervisor(pid_t supervisor, uint64_t job_id) {
  if (!status_watch_) return;
  std::string why;
  switch (status_watch_->WatchProcess(supervisor, &why)) {
    case FileWatch::ProcessWatch::kWatched:
      watched_supervisors_[supervisor] = job_id;
      return;
    case FileWatch::ProcessWatch::kGone:
      look_again_ = true;  // ended already: the next look checks it
      return;
    case FileWatch::ProcessWatch::kUnwatched:
      if (unwatched_jobs_.empty())
        log::Info(
            "{}: the supervisor of job {} cannot be watched ({}); a dead one is looked for "
            "once a second until it is reported",
            node_name_, job_id, why);
      unwatched_jobs_.insert(job_id);
      return;
  }
}

std::shared_ptr<FileWatch> Agent::StatusWatch() {
  MutexLock lock(mutex_);
  return status_watch_;
}

void Agent::MoveToDone(uint64_t job_id, uint32_t restart_count) {
  fs::path dir = JobDir(job_id);
  if (status_watch_) status_watch_->Unwatch(dir);
  unwatched_jobs_.erase(job_id);
  FileWatch* watch = status_watch_.get();
  std::erase_if(watched_supervisors_, [&](const auto& entry) {
    if (entry.second != job_id) return false;
    if (watch) watch->UnwatchProcess(entry.first);
    return true;
  });
  uint32_t run = restart_count;
  std::error_code error;
  fs::remove_all(DoneMarker(job_id, run), error);
  fs::rename(dir, DoneMarker(job_id, run), error);
  if (error) fs::remove_all(dir, error);
  PruneDone();
}

void Agent::PruneDone() {
  if (++reports_since_prune_ < 200) return;
  reports_since_prune_ = 0;
  std::vector<std::pair<fs::file_time_type, fs::path>> done;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(options_.spool / "done", error))
    done.emplace_back(entry.last_write_time(error), entry.path());
  if (done.size() <= kDoneKept) return;
  std::sort(done.begin(), done.end());
  for (size_t i = 0; i + kDoneKept < done.size(); ++i) fs::remove_all(done[i].second, error);
}

}  // namespace drover::agent
