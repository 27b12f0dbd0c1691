// One job's cgroup: memory and CPU limits, GPU device isolation, its processes (add, list,
// freeze, kill), and what it used (OOM kills, peak memory, CPU time), on cgroup v1 or v2.
// Where cgroups are unusable (unprivileged CI, read-only /sys/fs/cgroup) the same interface
// tracks the job by its session instead and says why; it never touches cgroups it did not make.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "agent/host/device_filter.h"
#include "common/result.h"

namespace drover::agent {

enum class CgroupMode { kV1, kV2, kNone };
const char* CgroupModeName(CgroupMode mode);  // "v1", "v2", "none"

struct CgroupHierarchy {
  CgroupMode mode = CgroupMode::kNone;
  std::filesystem::path root;  // "/sys/fs/cgroup"
  // v1: the mount of each controller found (memory, cpuset, freezer, devices, cpuacct).
  std::map<std::string, std::filesystem::path> controllers;
  // kNone: why cgroups are off. Otherwise what is not enforced, if anything ("v1 devices
  // controller not mounted: GPUs are not isolated").
  std::string reason;
  std::filesystem::path proc = "/proc";  // where the session mode scans processes
};

// Finds the hierarchy under `root`: v2 when <root>/cgroup.controllers exists; v1 when the
// memory, cpuset and freezer controllers are mounted as <root>/<controller>; else kNone. Also
// kNone when the hierarchy is not writable (not root, a read-only mount). Never fails.
CgroupHierarchy DetectCgroups(const std::filesystem::path& root = "/sys/fs/cgroup",
                              const std::filesystem::path& proc = "/proc");

// Where job cgroups live in `hierarchy`: v2's root, or each v1 controller's mount; none in kNone.
std::vector<std::filesystem::path> CgroupMounts(const CgroupHierarchy& hierarchy);

// Whether the job's GPUs are confined to it, and why not when they are not.
struct DeviceIsolation {
  bool enforced = false;
  std::string reason;
};

class JobCgroup {
 public:
  // Makes (or, after an agent restart, adopts) <root>[/<controller>]/drover/<node>/job_<id>;
  // the node name keeps several agents on one host apart. v1: the intermediate cpusets get
  // their parent's CPUs and memory nodes, and so does the job's until SetCpus. v2: the
  // cpuset, cpu, memory and pids controllers are enabled down to the job. With a kNone
  // hierarchy this is Untracked with the hierarchy's reason.
  static Result<JobCgroup> Create(const CgroupHierarchy& hierarchy, std::string_view node_name,
                                  uint64_t job_id);
  // The job's cgroup as it is, made by nothing: an error when the job has none here (kNone, or
  // no job_<id> directory). For reading what a running job uses (the agent's /metrics).
  static Result<JobCgroup> Open(const CgroupHierarchy& hierarchy, std::string_view node_name,
                                uint64_t job_id);
  // Tracks the job by session instead: for a kNone hierarchy, or when Create failed.
  static JobCgroup Untracked(const CgroupHierarchy& hierarchy, std::string_view node_name,
                             uint64_t job_id, std::string reason);

  CgroupMode mode() const { return mode_; }
  // Why cgroups are off for this job (kNone), empty otherwise.
  const std::string& untracked_reason() const { return reason_; }
  // The job's directory: v2's, v1's memory one; empty for kNone.
  std::filesystem::path path() const;

  // Limits. Without cgroups these succeed and do nothing (untracked_reason() says why).
  // 0 bytes removes the limit; swap is never allowed beyond it (memsw / swap.max = 0).
  Status SetMemoryLimit(uint64_t bytes);  // RAM and RAM+swap both at `bytes` (0: none)
  // RAM at `ram_bytes`, RAM+swap at `ram_and_swap_bytes`; 0: that one not limited.
  Status SetMemoryLimits(uint64_t ram_bytes, uint64_t ram_and_swap_bytes);
  Status SetCpus(const std::vector<int>& cpus);  // OS CPU ids (CpusOfCores)
  // Denies the job the character devices `denied` (the node's GPUs it was not given): v1
  // through devices.deny, v2 through an eBPF device program attached to the job's cgroup
  // (device_filter.h). Without a devices controller (v1) isolation is not enforced, and says
  // why; an error when the rule or the program could not be set.
  Result<DeviceIsolation> RestrictDevices(const std::vector<DeviceNumber>& denied);
  // A step that was given some of the job's GPUs: a cgroup of its own inside the job's (v1: in
  // the devices controller only; v2: a child without controllers, so the job's limits hold)
  // that also denies `denied`, named `name` (unique per step launch). Its directory, which
  // AddProcessTo puts the step's tasks in; empty with the reason when devices are not
  // isolated here (kNone, no v1 devices controller).
  Result<std::filesystem::path> MakeStepDevices(std::string_view name,
                                                const std::vector<DeviceNumber>& denied);
  // The job's cgroup (AddProcess), then the step's `dir` from MakeStepDevices.
  Status AddProcessTo(pid_t pid, const std::filesystem::path& dir);

  // Processes. kNone: AddProcess records the process's session (the job's leader must have
  // called setsid(); the agent's own session is refused), and the rest acts on every live
  // process of that session.
  Status AddProcess(pid_t pid);
  Result<std::vector<pid_t>> Pids() const;  // sorted, nested cgroups included, no zombies
  Status Freeze();
  Status Thaw();
  // SIGKILLs every process, again and again, until none is left or `bound` has passed. A
  // removed cgroup has none.
  Status KillAll(std::chrono::milliseconds bound = std::chrono::seconds(10));

  // What the job used. v1 reads memory.oom_control's oom_kill (kernels before 4.13: a hit
  // memory limit, memory.failcnt > 0 with the peak at the limit); v2 memory.events. kNone
  // cannot tell: no OOM kill, and peak memory and CPU time are errors.
  Result<bool> OomKilled() const;
  Result<uint64_t> PeakMemoryBytes() const;
  Result<uint64_t> CpuTimeNanoseconds() const;
  Result<uint64_t> MemoryBytes() const;  // now: v1 memory.usage_in_bytes, v2 memory.current

  // Removes the job's cgroup and any nested in it; its processes must be gone (KillAll).
  // Removing a cgroup that is already gone succeeds.
  Status Remove();

 private:
  JobCgroup() = default;
  std::filesystem::path Dir(std::string_view controller) const;  // empty when absent
  Result<bool> IsFrozen() const;
  std::filesystem::path TrackingDir() const;  // where the processes are listed
  Result<std::vector<pid_t>> SessionPids() const;
  Status SignalSession(int signal) const;
  void KillOnce(const std::vector<pid_t>& pids);

  CgroupMode mode_ = CgroupMode::kNone;
  std::string reason_;
  std::string name_;  // "job 42 on node n1", for messages
  std::vector<std::pair<std::string, std::filesystem::path>> dirs_;  // v2: one, named ""
  std::filesystem::path proc_;
  std::vector<pid_t> sessions_;
};

}  // namespace drover::agent
