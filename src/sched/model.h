// The scheduler's view of the world for one pass: the cluster (from ClusterConfig), what runs
// where, what waits, the association tree with its usage, QOS, and a way to look up other jobs'
// outcomes for dependencies. Everything is handed in; src/sched reads no clock, file or socket.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/cluster_config.h"
#include "common/job_spec.h"
#include "common/tres.h"

namespace drover::sched {

// Lookups by name that a pass makes for every job, hashed rather than ordered: an association by
// (account, user), and the limits' counts by (user or account, QOS index).
using AssociationKey = std::pair<std::string_view, std::string_view>;
struct AssociationKeyHash {
  size_t operator()(const AssociationKey& key) const {
    std::hash<std::string_view> hash;
    return hash(key.first) * 31 + hash(key.second);
  }
};
struct NameQosHash {
  size_t operator()(const std::pair<std::string, int>& key) const {
    return std::hash<std::string_view>()(key.first) * 31 + static_cast<size_t>(key.second);
  }
};

// What one job holds on one node.
struct NodeAllocation {
  int node = -1;           // index into ClusterConfig::nodes
  std::vector<int> cores;  // core indexes on the node (socket-major: socket s, core c is
                           // s * cores_per_socket + c), each with all its threads
  uint64_t memory_mb = 0;
  std::vector<int> gpus;  // GPU device indexes (GpuDevice::index)
  // gres/shard or gres/mps: the shares of gpus' one GPU the job holds; 0: the GPUs are its own.
  uint32_t shares = 0;
  std::vector<int> nvme;  // NVMe drives (NvmeDevice::index), each the job's alone
  bool operator==(const NodeAllocation&) const = default;
};

struct Allocation {
  std::vector<NodeAllocation> nodes;  // in node index order
  bool exclusive = false;             // the whole of each node is the job's
  bool operator==(const Allocation&) const = default;
};

struct RunningJob {
  uint64_t job_id = 0;
  std::string name, user, account, qos;
  int partition = -1;
  Allocation allocation;
  // The caller's own record of the allocation, used instead of `allocation` when set: the
  // controller hands in thousands of running jobs every cycle and need not copy them.
  const Allocation* shared_allocation = nullptr;
  const Allocation& held() const { return shared_allocation ? *shared_allocation : allocation; }
  // Changes whenever the caller's record of the job does (RunningPool); 0: unknown.
  uint64_t revision = 0;
  int64_t start_time = 0;
  int64_t end_time = 0;  // start + time limit: when the job will be gone at the latest
  uint64_t array_job_id = 0;
  // Preempted and in its grace time (end_time is when it is killed): never chosen again.
  bool preempted{false};
  int64_t priority{0};  // its priority when it started, for choosing between victims
  // Its -L request as submitted ("fluent:2,ansys"); points into the caller's record, as
  // shared_allocation does.
  std::string_view licenses{};
  bool oversubscribe{false};  // -s: its cores may be shared where its partition allows (YES)
};

// An advance reservation (scontrol create reservation) as the scheduler honours it: during
// [start_time, end_time) its nodes take only jobs that ask for it by name and may use it.
struct AdvanceReservation {
  std::string name;
  int64_t start_time = 0, end_time = 0;
  std::vector<int> nodes;  // ascending
  std::vector<std::string> users, accounts;
  bool maint = false;          // MAINT: the nodes are under maintenance
  bool flex = false;           // FLEX: its jobs may start early and use other nodes
  int64_t repeat_seconds = 0;  // DAILY, WEEKLY, HOURLY: the next windows too
  std::string partition;       // empty: any
};

// Overrides of the configuration's scheduling policy (drover sim --policy).
enum class PolicyKind { kFifo, kEasy, kConservative };

enum class NodeState { kUp, kDrain, kDown };  // scheduling only cares whether a node takes work

inline constexpr int64_t kNoLimit = -1;  // a count or time limit that is not set

// Usage in TRES-seconds (GrpTRESMins counts it in minutes), decayed as fair-share usage is.
struct TresSeconds {
  double cpu = 0, mem = 0, node = 0, gpu = 0, billing = 0;
  double wall = 0;  // seconds of running jobs, for GrpWall
  // "cpu", "mem", "node", "billing", "gres/gpu[:type]"; 0 for any other.
  double Of(std::string_view tres) const;
  void Add(const TresSeconds& other);
  void Scale(double factor);
};

// The limits associations and QOS share (sacctmgr's names). TRES lists hold only the TRES that
// are limited (a limit of 0 is a limit); counts and times are kNoLimit when not set.
struct Limits {
  TresList grp_tres, grp_tres_mins, grp_tres_run_mins;  // over all the jobs it covers
  int64_t grp_jobs = kNoLimit;                          // running at once
  int64_t grp_wall_seconds = kNoLimit;                  // decayed wall time of its jobs
  TresList max_tres_per_job, max_tres_per_node, max_tres_mins_per_job;
  int64_t max_jobs = kNoLimit;  // association: MaxJobs; QOS: MaxJobsPerUser
  int64_t max_wall_seconds = kNoLimit;
};

struct Qos {
  std::string name;
  uint32_t priority = 0;
  Limits limits{};
  TresList max_tres_per_user{};  // MaxTRESPerUser
  TresList max_tres_per_account{}, min_tres_per_job{};
  int64_t max_jobs_per_account = kNoLimit;
  uint32_t flags = 0;           // acct::QosFlag bits
  double usage_factor = 1.0;    // UsageFactor: what its jobs' usage is charged at
  double usage_threshold = -1;  // with EnforceUsageThreshold: the least fair-share factor
  TresSeconds used{};           // what its jobs have used (not decayed with NoDecay)
  // preempt/qos: the QOS whose jobs this one's may preempt, and how its own jobs go.
  std::vector<std::string> preempt{};
  std::optional<PreemptMode> preempt_mode{};  // unset: the cluster's PreemptMode
  int64_t grace_time_seconds{0};
  int64_t preempt_exempt_seconds{-1};  // -1: the cluster's PreemptExemptTime
};

// An account (user empty) or a user under an account, with raw shares and decayed usage.
struct Association {
  std::string account;
  std::string user;     // empty for an account
  int parent = -1;      // index of the parent account; -1 for root
  uint32_t shares = 1;  // raw shares (Fairshare=)
  double usage = 0;     // decayed billing-seconds, the association's own jobs'
  // Its Grp* limits (over its subtree) and its Max* limits, inherited from the nearest
  // ancestor that sets them (per user for MaxJobs).
  Limits limits{};
  int64_t priority = kNoLimit;  // Priority= (the association factor); kNoLimit: not set
  TresSeconds used{};           // its own jobs' usage by TRES (its subtree's is the sum)
};

// Outcomes of other jobs, for dependencies.
struct JobOutcome {
  enum class State {
    kUnknown,
    kPending,
    kRunning,
    kCompleted,
    kFailed,
    kCancelled
  } state = State::kUnknown;
  int64_t start_time = 0, end_time = 0;
};

class JobOutcomes {
 public:
  virtual ~JobOutcomes() = default;
  virtual JobOutcome Find(uint64_t job_id) const = 0;
  // The task of array `array_job_id` with `task_id` (for aftercorr).
  virtual JobOutcome FindArrayTask(uint64_t array_job_id, uint32_t task_id) const = 0;
};

struct NodeMaxima;
struct ClusterTotals;
class RunningPool;

struct SchedulerInput {
  const ClusterConfig* cluster = nullptr;
  // MaximaOfPartitions(*cluster), kept by the caller between passes; null: the pass computes it.
  const std::vector<NodeMaxima>* maxima = nullptr;
  const ClusterTotals* totals = nullptr;  // TotalsOf(*cluster), kept likewise
  // The pool of node_states with every job of `running` taken, kept by the caller between
  // passes (RunningPool, fed `running` in order); null, or for another configuration or other
  // jobs: the pass builds it.
  const RunningPool* running_pool = nullptr;
  std::vector<NodeState> node_states;  // per node; empty: all up
  std::vector<RunningJob> running;
  std::vector<const JobSpec*> pending;
  std::vector<Association> associations;  // index 0 is root when not empty
  std::vector<Qos> qos;
  std::vector<AdvanceReservation> reservations;
  const JobOutcomes* outcomes = nullptr;  // null: every other job is unknown
  int64_t now = 0;
  std::optional<PolicyKind> policy;  // unset: SchedulerType and SchedulerParameters decide
  bool safe_limits = false;          // AccountingStorageEnforce=safe (see limits.h)
};

}  // namespace drover::sched
