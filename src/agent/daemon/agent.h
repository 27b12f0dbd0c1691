// The node agent's core: turns the controller's launches, signals and terminations into step
// supervisors (droverstepd) and their job directories, and finds the jobs that ended there.
// All state is in the spool, so an agent restarted with `kill -9` picks up where it was.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/host/cgroup.h"
#include "agent/host/file_watch.h"
#include "agent/host/gpu.h"
#include "agent/host/gpu_metrics.h"
#include "agent/host/host_info.h"
#include "agent/host/job_container.h"
#include "agent/host/job_env.h"
#include "agent/host/mps_control.h"
#include "agent/host/process_table.h"
#include "agent/stepd/launcher.h"
#include "agent/stepd/spool.h"
#include "common/cluster_config.h"
#include "common/gpu_health.h"
#include "common/job_spec.h"
#include "common/mutex.h"
#include "common/result.h"
#include "proto/drover.pb.h"

namespace drover::agent {

struct AgentOptions {
  std::filesystem::path spool;  // this node's own spool directory
  std::filesystem::path stepd;  // the droverstepd binary
  // The agent process's launcher of supervisors, shared by the nodes it serves (launcher.h);
  // null: the agent makes one of its own.
  std::shared_ptr<SupervisorLauncher> launcher;
  std::string conf_path;  // SLURM_CONF for jobs
  // Emulated node: resources from slurm.conf, GPUs without devices, no cpuset (the host's CPUs
  // are shared by every emulated node); memory limits still apply where cgroups allow.
  bool emulated = false;
  std::string cgroup_mode = "auto";
  std::string cgroup_root = "/sys/fs/cgroup";
};

// A job whose supervisor has written its status and that the controller has not yet taken.
struct EndedJob {
  uint64_t job_id = 0;
  uint32_t restart_count = 0;
  BatchStatus status;
};

struct JobsHere {
  std::vector<uint64_t> running, ended;
};

class Agent {
 public:
  Agent(const ClusterConfig& cluster, int node, HostInfo host, GpuDiscovery gpus,
        AgentOptions options);
  // Removes this node's level of the job cgroups (drover/<node> in each hierarchy) where it is
  // empty: no job runs under it. An emulated node's level is named after its spool, so levels
  // a stopped agent left would pile up with every cluster started on the host.
  ~Agent();

  // Runs the job unless this run (job ID and restart count) was launched here before: a
  // repeated launch is answered OK and runs nothing. OK means the supervisor is running, or
  // that the job already ended (its status is waiting to be reported).
  Status Launch(const v1::LaunchRequest& request);
  // `scope`: the job's srun steps only (scancel --signal, --signal without B:), the batch shell
  // alone (-b, B:), or the batch shell's process group and every step (-f).
  // `steps`: only these steps' tasks (scope kSteps); empty: every step.
  Status Signal(uint64_t job_id, int signal, SignalScope scope,
                const std::vector<uint32_t>& steps = {});
  // SIGCONT+SIGTERM to every process, SIGKILL after KillWait (the supervisor does it).
  Status Terminate(uint64_t job_id);
  // scontrol notify: "slurmstepd: error: MESSAGE" in the batch job's stderr, as slurmstepd logs
  // it there; an error when no batch shell of the job runs here.
  Status Notify(uint64_t job_id, const std::string& message);
  // scontrol listpids (job 0: every job; a step: that step only) and pidinfo: the processes of
  // the jobs here whose owner `may_see` allows (by uid), from the host's process table.
  v1::ListPidsReply ListPids(const v1::ListPidsRequest& request,
                             const std::function<bool(uint32_t)>& may_see);
  // sstat: each step of the jobs here that the request names and `may_see` allows, its
  // processes' use summed (from /proc).
  v1::StepUsageReply StepUsage(const v1::StepUsageRequest& request,
                               const std::function<bool(uint32_t)>& may_see);
  // sbcast: a piece of a file written as the job's user while the job runs here, for a caller
  // whose uid `may_act` allows. PERMISSION_DENIED-worthy refusals say "Access/permission denied".
  Status WriteJobFile(const v1::JobFileChunk& chunk, const std::function<bool(uint32_t)>& may_act);
  // scontrol show slurmd: this agent and its host, as slurmd answers REQUEST_DAEMON_STATUS (its
  // steps, the host's CPUs, memory and TmpFS space, its start, pid, log level and log file).
  v1::AgentStatusReply DaemonStatus() EXCLUDES(steps_mutex_);
  // The controller spoke with this agent now (a call of its, or the answer to a heartbeat).
  void NoteController() { last_controller_.store(std::time(nullptr), std::memory_order_relaxed); }

  // Runs an srun step's tasks that are on this node (a StepSession): output goes out through
  // `write`, srun's stdin and signals come in through `read`; returns once the tasks have
  // ended and srun has closed its side (or gone, which kills the tasks).
  using StepWrite = std::function<bool(const v1::StepOutput&)>;
  using StepRead = std::function<bool(v1::StepInput*)>;
  // `cancel` ends the stream when srun does not close its side once the tasks have ended.
  Status RunStep(const v1::StepLaunch& launch, const StepWrite& write, const StepRead& read,
                 const std::function<void()>& cancel);
  // sattach: a running step's listeners beyond srun, and its task 0's stdin. Each listener has
  // a queue its own thread writes from (AttachStep), so a slow one never holds up the step; one
  // that falls kListenerQueueMost behind is dropped. Its fields are the StepListeners' mutex's.
  struct StepListener {
    std::deque<v1::StepOutput> queue;
    size_t bytes = 0;
    bool dropped = false, done = false;
  };
  static constexpr size_t kListenerQueueMost = size_t{8} << 20;
  struct StepListeners {
    uint32_t uid = 0;
    v1::StepAttached layout;
    Mutex mutex;
    CondVar changed;
    bool ended GUARDED_BY(mutex) = false;
    uint64_t next GUARDED_BY(mutex) = 0;
    std::map<uint64_t, std::shared_ptr<StepListener>> listeners GUARDED_BY(mutex);
    std::function<void(const std::string&)> to_stdin GUARDED_BY(mutex);
  };
  void OpenStep(uint64_t job_id, uint32_t step_id, std::shared_ptr<StepListeners> listeners)
      EXCLUDES(steps_mutex_);
  void CloseStep(uint64_t job_id, uint32_t step_id) EXCLUDES(steps_mutex_);
  // Attaches `write` to the step until the step ends or `read` ends; what `read` brings is task
  // 0's stdin. Errors: the step is not running here ("not found"), or `may_act` refuses its
  // owner ("Access/permission denied").
  Status AttachStep(uint64_t job_id, uint32_t step_id, const std::function<bool(uint32_t)>& may_act,
                    const StepWrite& write, const std::function<bool(v1::StepAttachInput*)>& read,
                    const std::function<void()>& cancel) EXCLUDES(steps_mutex_);

  // Watches each job directory, those here now and those launches make, for its status file,
  // and each job's supervisor for its end (file_watch.h), whose callback tells the caller that a
  // job ended; null stops watching new ones. Without a watch, ended jobs are found by looking
  // (EndedJobs) on a timer.
  void WatchStatuses(std::shared_ptr<FileWatch> watch) EXCLUDES(mutex_);
  // Whether EndedJobs must be called on a timer as well as when the watch tells of an end: no
  // watch, a directory or supervisor it could not watch, a processless hold being ended, an end
  // not yet reported.
  bool NeedsTimedLook() EXCLUDES(mutex_);

  // Job directories without a status yet, and launches under way.
  std::vector<uint64_t> RunningJobs() EXCLUDES(mutex_);
  // What each job running here uses now (the agent's /metrics): its user, its GPUs here (the
  // node's device indexes), and its cgroup's CPU time and memory, unset without a cgroup.
  struct JobUsage {
    uint64_t job_id = 0;
    std::string user;
    std::string account;  // an accounting account, or "other" (the controller says which)
    std::vector<int> gpus;
    std::optional<double> cpu_seconds;
    std::optional<uint64_t> memory_bytes, peak_memory_bytes;
  };
  std::vector<JobUsage> JobUsages() EXCLUDES(mutex_, health_mutex_);
  // NVML's live readings of this node's GPUs (sstat's and /metrics' GPU use); null: none.
  // Set before serving; the reader outlives the agent's calls.
  void SetGpuReader(GpuMetricsReader* reader) { gpu_reader_.store(reader); }
  GpuMetricsReader* gpu_reader() const { return gpu_reader_.load(); }
  // The GPU health probes' latest readings (the controller link probes; /metrics reads).
  void SetGpuHealth(std::vector<GpuHealth> readings) EXCLUDES(health_mutex_);
  std::vector<GpuHealth> GpuHealthNow() const EXCLUDES(health_mutex_);
  // The jobs here, for a registration: running ones, and those that ended and are yet to be
  // reported (the controller hears of them next).
  JobsHere Jobs() EXCLUDES(mutex_);
  // Jobs that ended; a job directory whose supervisor died without a status is cleaned up
  // here (what is left of the job is killed) and reported as failed. `full`: every
  // supervisor's process is checked, whatever the watch told (the link's net for a lost event).
  std::vector<EndedJob> EndedJobs(bool full = false) EXCLUDES(mutex_);
  // The controller has committed this run's end: its directory moves to <spool>/done.
  void Reported(uint64_t job_id, uint32_t restart_count) EXCLUDES(mutex_);

  const std::string& node_name() const { return node_name_; }
  const ClusterConfig& cluster() const { return cluster_; }
  const HostInfo& host() const { return host_; }
  const GpuDiscovery& gpus() const { return gpus_; }
  // JobContainerType=job_container/tmpfs: where job `job_id`'s private directories live here
  // (BasePath/<job id>; an emulated node adds its name: BasePath/<node>/<job id>); none without.
  std::optional<JobContainer> ContainerFor(uint64_t job_id) const;
  const std::filesystem::path& spool() const { return options_.spool; }
  // gres/nvme: job `job_id`'s scratch directory on each NVMe drive `drives` names (by index):
  // <mount>/job_<id> (an emulated node adds its name: <mount>/<node>/job_<id>; a drive without
  // a mount point is <spool>/nvme/<index>).
  std::vector<std::string> NvmeDirs(uint64_t job_id,
                                    const google::protobuf::RepeatedField<int32_t>& drives) const;

 private:
  friend class StepSession;  // reads the node, the job directories and the step groups

  std::filesystem::path JobDir(uint64_t job_id) const;
  std::filesystem::path DoneMarker(uint64_t job_id, uint32_t restart_count) const;
  // Launch's parts.
  std::optional<Status> SettleEarlierRun(uint64_t job_id, uint32_t run) REQUIRES(mutex_);
  Status StartJob(const v1::LaunchRequest& request, const std::filesystem::path& dir);
  Result<BatchLaunch> Prepare(const v1::Job& job, const JobSpec& spec,
                              std::vector<std::string>& env);
  Result<LaunchContext> ContextFor(const v1::Job& job, const JobSpec& spec,
                                   const v1::NodeAllocation*& mine);
  // ConstrainDevices holds on this node: it is set, and some GPU has a device file to deny.
  bool DevicesConstrained() const;
  void Enforce(const v1::NodeAllocation& mine, BatchLaunch& launch) const;
  std::string TopologyAddress() const;
  std::string NvmeBase(int drive) const;  // where the jobs' directories on the drive go
  // Makes the job's scratch folders on its drives, the user's own (0700), in folders no user can
  // write (a real drive's mount point must exist); errors name them.
  Status MakeNvmeDirs(uint64_t job_id, const std::vector<std::string>& dirs, uid_t uid, gid_t gid);
  // Wipes what jobs left on the drives: the ended job's folders, or (job 0) those of every job
  // not running here (found on the drives, so nothing is lost with an agent restart).
  void WipeNvme(uint64_t job_id);
  std::string CgroupParent() const;
  Status Pause(uint64_t job_id, bool stop);
  Status SignalSupervisor(const std::filesystem::path& dir, uint64_t job_id, int signal);
  void PruneDone() REQUIRES(mutex_);
  void MoveToDone(uint64_t job_id, uint32_t restart_count) REQUIRES(mutex_);
  std::shared_ptr<FileWatch> StatusWatch() EXCLUDES(mutex_);
  // Watch a job directory for its status, and its supervisor for its end: what cannot be
  // watched is found by the timed look from then on.
  void WatchDirectory(const std::filesystem::path& dir, uint64_t job_id) REQUIRES(mutex_);
  void WatchSupervisor(pid_t supervisor, uint64_t job_id) REQUIRES(mutex_);
  bool Launching(uint64_t job_id) EXCLUDES(mutex_);
  // A node that runs no script for the job and where nothing needs holding runs no process for
  // it (the "held" marker): `launch` asks for no cgroup, prolog, epilog or job container, and
  // this node's share of the job has no NVMe drive or MPS share.
  bool NothingToHold(const v1::Job& job, const BatchLaunch& launch) const;
  // Ends processless holds whose steps are gone or whose KillWait has passed: their status.
  void EndHolds() REQUIRES(mutex_) EXCLUDES(steps_mutex_);
  void EndHold(uint64_t job_id) REQUIRES(mutex_);  // into ending_holds_, KillWait from now
  void ReapSupervisors() REQUIRES(mutex_);         // the ended ones of supervisors_
  bool HasStepTasks(uint64_t job_id) EXCLUDES(steps_mutex_);
  // The job's cgroup, where there is one: its processes killed, its CPU time into `status`
  // (when given), removed; an error while it still holds processes.
  Status EndCgroup(uint64_t job_id, BatchStatus* status);
  // EndCgroup for a processless hold, when its launch asked for a cgroup.
  Status EndHeldCgroup(uint64_t job_id, const std::filesystem::path& dir, BatchStatus* status);
  // The process group of every srun task of the job here; with `outside_cgroup_only`, only the
  // tasks the job's cgroup does not hold (the supervisor reaches the others).
  void SignalSteps(uint64_t job_id, int signal, bool outside_cgroup_only,
                   const std::vector<uint32_t>& steps = {}) EXCLUDES(steps_mutex_);
  // False when the job was ended here (Terminate) since its last launch: the task must not run.
  bool AddStepGroup(uint64_t job_id, uint32_t step_id, pid_t group, bool in_cgroup,
                    uint32_t local_task, uint32_t global_task) EXCLUDES(steps_mutex_);
  // The batch shells, holders and step tasks of the jobs `request` names that `uid` may see.
  std::vector<TrackedLeader> Leaders(const v1::ListPidsRequest& request,
                                     const std::function<bool(uint32_t)>& may_see)
      EXCLUDES(steps_mutex_);
  void ForgetStepGroup(uint64_t job_id, pid_t group) EXCLUDES(steps_mutex_);

  const ClusterConfig& cluster_;
  std::atomic<GpuMetricsReader*> gpu_reader_{nullptr};
  mutable Mutex health_mutex_;
  std::vector<GpuHealth> gpu_health_ GUARDED_BY(health_mutex_);
  // The cgroup hierarchy JobUsages reads, found at its first call (a scrape of an agent of
  // many nodes would otherwise look the mounts up again for each node).
  std::optional<CgroupHierarchy> usage_cgroups_ GUARDED_BY(health_mutex_);
  std::unique_ptr<MpsControl> mps_;  // only on a node sharing its GPUs as MPS, with NVIDIA's tool
  const int64_t started_ = std::time(nullptr);
  std::atomic<int64_t> last_controller_{0};
  int node_;
  std::string node_name_;
  HostInfo host_;
  GpuDiscovery gpus_;
  AgentOptions options_;
  Mutex mutex_;  // guards launching_ and the moves of job directories
  std::set<uint64_t> launching_ GUARDED_BY(mutex_);  // jobs whose launch is under way
  // The last look found no job directory and no launch began since: nothing can have ended
  // (an agent of many emulated nodes looks at the busy ones only).
  bool quiet_ GUARDED_BY(mutex_) = false;
  std::chrono::steady_clock::time_point last_liveness_ GUARDED_BY(mutex_);  // supervisors checked
  // Watched by status_watch_: the supervisors' processes (pid -> job), whose end makes the next
  // look check the supervisors' records; and the jobs something of which could not be watched
  // (a directory, a supervisor), which keep the timed look and the once-a-second check on until
  // they are reported.
  bool watching_ GUARDED_BY(mutex_) = false;  // a watch, and the spool's jobs were all seen
  std::map<pid_t, uint64_t> watched_supervisors_ GUARDED_BY(mutex_);
  std::set<uint64_t> unwatched_jobs_ GUARDED_BY(mutex_);
  bool look_again_ GUARDED_BY(mutex_) = true;  // the first look, a launch under way, a process gone
  bool unreported_ GUARDED_BY(mutex_) = false;  // the last look found ends
  int reports_since_prune_ GUARDED_BY(mutex_) = 0;
  // Processless holds being ended: job -> when their steps' tasks get SIGKILL (KillWait after
  // the SIGTERM); the status is written once no task is left or then.
  std::map<uint64_t, std::chrono::steady_clock::time_point> ending_holds_ GUARDED_BY(mutex_);
  // The step supervisors this agent process started (its children, one posix_spawn each, in
  // sessions of their own): reaped once they end. After a restart of the agent they are init's.
  std::vector<pid_t> supervisors_ GUARDED_BY(mutex_);
  std::shared_ptr<FileWatch> status_watch_ GUARDED_BY(mutex_);  // WatchStatuses
  Mutex steps_mutex_;
  struct StepGroup {
    uint32_t step_id = 0;
    pid_t group = 0;
    bool in_cgroup = false;    // the job's cgroup holds it
    uint32_t local_task = 0;   // SLURM_LOCALID
    uint32_t global_task = 0;  // SLURM_PROCID
  };
  // job -> process group of one of its srun tasks
  std::multimap<uint64_t, StepGroup> step_groups_ GUARDED_BY(steps_mutex_);
  // Jobs ended here (Terminate), and when: a step's task that comes after is refused, as the
  // signals went out before it joined. A new launch of the job clears its entry; entries older
  // than ten minutes go.
  std::map<uint64_t, std::chrono::steady_clock::time_point> terminated_ GUARDED_BY(steps_mutex_);
  void MarkTerminated(uint64_t job_id) EXCLUDES(steps_mutex_);
  // sattach: the steps running here that may be attached to, by job and step.
  std::map<std::pair<uint64_t, uint32_t>, std::shared_ptr<StepListeners>> open_steps_
      GUARDED_BY(steps_mutex_);
};

}  // namespace drover::agent
