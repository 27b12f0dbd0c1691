// The closed set of events the engine consumes and effects it produces. Transports (gRPC, the
// simulator, tests) turn requests into events and carry effects out; the engine does neither.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/accounting_change.h"
#include "common/cluster_config.h"
#include "common/gpu_health.h"
#include "common/job_spec.h"
#include "common/job_update.h"
#include "common/task_layout.h"
#include "ctld/engine/job.h"
#include "ctld/engine/reservation.h"
#include "sched/model.h"

namespace drover::ctld {

// Who asks: the authenticated uid and gid, and what the controller's NSS says of them
// (daemon/callers.h builds it off the engine thread; the engine never looks names up).
struct Caller {
  uint32_t uid = 0;
  uint32_t gid = 0;
  // Operators and administrators (root, SlurmUser; later AdminLevel from accounting) act on
  // every job and may change the cluster. The only test of that role: IsOperator().
  bool operator_ = false;
  // The user's name; a submitted job's user is this. Empty only for in-process callers (the
  // simulator, tests), whose job specs name their users themselves.
  std::string user{};
  std::vector<uint32_t> groups{};          // primary and supplementary group IDs
  std::vector<std::string> group_names{};  // the same groups by name (AllowGroups)
  // Proven by a JWT (AuthAltTypes=auth/jwt, the REST API's calls) rather than by AuthType's
  // credential: such a caller is never a daemon and may not make tokens.
  bool by_token = false;

  bool InGroup(uint32_t group) const;
  bool InGroupNamed(const std::string& name) const;
};

inline bool IsOperator(const Caller& caller) {
  return caller.operator_;
}

// --- client events (each carries a reply token the transport matches to its reply) ---
struct SubmitJob {
  uint64_t token = 0;
  Caller caller;
  JobSpec spec;
  std::string array;   // --array expression; empty for a plain job
  std::string script;  // the batch script (stored, not kept in memory after launch)
};

// sbatch --test-only: when and where the job would start if it were submitted now. Nothing
// changes and no job ID is used; the engine fills `result` before it replies.
struct WillRun {
  int64_t start_time = 0;
  int partition = -1;
  sched::Allocation allocation;
  uint64_t next_job_id = 0;  // the ID a submission would get now
};

struct WillRunJob {
  uint64_t token = 0;
  Caller caller;
  JobSpec spec;
  std::shared_ptr<WillRun> result;
};

// Which jobs a cancel, signal, hold, release or requeue acts on.
struct JobFilter {
  std::vector<uint64_t> job_ids;  // a job, or every task of an array job by its ID
  std::vector<std::pair<uint64_t, uint32_t>> array_tasks;  // N_i
  std::string user, name, partition;
  std::optional<JobState> state;
  // Only this owner's jobs. Set by the controller (PrivateData), never taken from a request.
  std::optional<uint32_t> uid{};
  std::string account{}, qos{}, reservation{};  // scancel -A, -q, -R
  std::vector<std::string> nodes{};             // scancel -w: jobs on any of these nodes
  std::optional<std::string> wckey{};           // scancel --wckey: no job has one, none match
  bool empty() const;
};

// scancel N.S: a step of a job or of an array task (task_id kNoArrayTask: not an array's).
struct StepTarget {
  uint64_t job_id = 0;
  uint32_t task_id = kNoArrayTask;
  uint32_t step_id = 0;
};

struct CancelJobs {
  uint64_t token = 0;
  Caller caller;
  JobFilter filter;
  int signal = 0;  // 0: cancel (SIGTERM, SIGKILL after KillWait); else only signal
  SignalScope scope = SignalScope::kSteps;  // scancel -b: kBatch, -f: kFull
  std::vector<StepTarget> steps{};          // these steps only; the filter is not used
};

struct HoldJobs {
  uint64_t token = 0;
  Caller caller;
  JobFilter filter;
  bool release = false;
};

struct RequeueJobs {
  uint64_t token = 0;
  Caller caller;
  JobFilter filter;
  bool hold = false;  // scontrol requeuehold
};

// scontrol update job: only the fields set change. Users may shorten a time limit, raise nice,
// rename, and move pending jobs; lengthening a limit or lowering nice takes an operator.
struct UpdateJob {
  uint64_t token = 0;
  Caller caller;
  JobFilter filter;
  std::optional<int64_t> time_limit_seconds;
  std::optional<int32_t> nice;
  std::optional<std::string> partition, name, qos;
  JobUpdate update;  // the other keys (common/job_update.h)
};

// scontrol update NodeName=...: a state (kNone: none given) and the keys given (unset: kept).
struct UpdateNode {
  uint64_t token = 0;
  Caller caller;
  std::string nodes;  // hostlist
  // kFail: drained, FAIL/FAILING; kNoResp: flagged not responding until the agent is heard.
  enum class Action {
    kNone,
    kDrain,
    kResume,
    kDown,
    kUndrain,
    kFail,
    kNoResp,
    kCancelReboot
  } action = Action::kDrain;
  std::string reason;
  std::optional<uint32_t> weight{};
  std::optional<std::string> features{}, active_features{};
  std::optional<std::string> comment{}, extra{};
};

// scontrol reboot [ASAP] [nextstate=] [reason=] NODES|ALL, and cancel_reboot NODES (operators).
struct RebootNodes {
  uint64_t token = 0;
  Caller caller;
  std::string nodes;  // hostlist, or ALL
  bool asap = false;
  std::string next_state;  // "RESUME" (default) or "DOWN"
  std::string reason;
  bool cancel = false;
};

// scontrol create|update PartitionName=P Key=Value..., delete PartitionName=P (operators):
// slurm.conf's partition keys, kept over slurm.conf's partitions until a reconfigure.
struct ChangePartition {
  uint64_t token = 0;
  Caller caller;
  std::string name;
  enum class Kind { kUpdate, kCreate, kDelete } kind = Kind::kUpdate;
  std::vector<std::string> settings;  // "Key=Value"
};

// scontrol suspend/resume (operators): SIGSTOP/SIGCONT to the job; suspended time does not count
// against its time limit; its resources stay allocated.
struct SuspendJobs {
  uint64_t token = 0;
  Caller caller;
  JobFilter filter;
  bool resume = false;
};

// scontrol create|update|delete reservation (operators).
struct CreateReservation {
  uint64_t token = 0;
  Caller caller;
  std::string name;  // empty: one is made from the first user or account
  ReservationFields fields;
};

struct UpdateReservation {
  uint64_t token = 0;
  Caller caller;
  std::string name;
  ReservationFields fields;
};

struct DeleteReservation {
  uint64_t token = 0;
  Caller caller;
  std::string name;
};

// scontrol top: the listed pending jobs move ahead of the caller's other pending jobs of the
// same partition, account and QOS, in the order listed, by adjusting nice (the group's
// priorities are shared out again, so its total stays the same). Operators, or the owner
// where SchedulerParameters has enable_user_top.
struct TopJobs {
  uint64_t token = 0;
  Caller caller;
  std::vector<std::pair<uint64_t, uint32_t>> jobs;  // (job or array ID, task or kNoArrayTask)
};

// scontrol reconfigure (operators): the configuration as droverctld read it again. What can
// change live takes effect (partitions, scheduling and priority settings, topology, node
// features and weights); a change to the nodes themselves is refused.
struct Reconfigure {
  uint64_t token = 0;
  Caller caller;
  std::shared_ptr<const ClusterConfig> cluster;
};

// sacctmgr add|modify|delete (operators and users with an AdminLevel). `dry_run`: say what would
// change and change nothing (sacctmgr's question before it commits).
struct ChangeAccounting {
  uint64_t token = 0;
  Caller caller;
  acct::ChangeRequest request;
  bool dry_run = false;
};

// srun: a step in a running job. Inside the allocation srun inherits the job's shape: 0 nodes
// means all of them, 0 tasks the job's --ntasks (or --ntasks-per-node on each node, or one per
// node).
struct CreateStep {
  uint64_t token = 0;
  Caller caller;
  uint64_t job_id = 0;
  std::string name;
  uint32_t nodes = 0, ntasks = 0, ntasks_per_node = 0, cpus_per_task = 0;
  std::vector<std::string> nodelist;  // -w: nodes of the allocation to use
  // The step's share (srun --mem, --mem-per-cpu, --gpus*, --exact, --overlap): see StepShare.
  uint64_t mem_per_node_mb = 0, mem_per_cpu_mb = 0;
  uint32_t gpus = 0, gpus_per_node = 0, gpus_per_task = 0;
  bool gpus_given = false, exact = false, overlap = false;
  // The layout (srun -m, --ntasks-per-core, --ntasks-per-socket; 0: no limit); with -m
  // arbitrary, the node of each task (SLURM_HOSTFILE).
  Distribution distribution{};
  uint32_t ntasks_per_core = 0, ntasks_per_socket = 0;
  std::vector<std::string> arbitrary_nodes{};
};

struct StepEnded {
  uint64_t token = 0;
  Caller caller;
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  int32_t exit_code = 0, exit_signal = 0;
  bool cancelled = false;
  double cpu_seconds = 0;
  uint64_t max_rss_mib = 0;
  uint32_t restart_count = 0;  // the run the step belonged to: a requeued job numbers anew
  TaskUsage usage{};           // what its tasks used, as srun relays the nodes' measurements
};

// salloc, or srun outside an allocation, is done with its interactive job: it ends with the
// command's status once the nodes have stopped what ran there.
struct ReleaseJob {
  uint64_t token = 0;
  Caller caller;
  uint64_t job_id = 0;
  int32_t exit_code = 0, exit_signal = 0;
};

// --- agent events ---
// What an agent found on its node; 0 where it did not say.
struct NodeResources {
  uint32_t cpus = 0;
  uint64_t memory_mb = 0;
  uint32_t gpus = 0;
};

struct NodeRegistered {
  std::string node;
  std::vector<uint64_t> running_jobs;  // jobs the agent still runs (re-adoption)
  std::optional<NodeResources> resources{};
  // The node's GPUs as its agent found them (NVML: types, UUIDs, affinity, NVLinks); empty
  // when it did not say.
  std::vector<GpuDevice> gpus{};
  // Jobs that ended on the node and whose ends its agent reports next: not lost.
  std::vector<uint64_t> ended_jobs{};
};

struct Heartbeat {
  std::string node;
  bool healthy = true;
  std::string health_output;  // the health check's output when it failed
  // The node stays drained when healthy again, until an operator resumes it.
  bool health_latched = false;
  std::vector<GpuHealth> gpus{};  // the built-in GPU probes' readings
};

struct JobEnded {
  uint64_t job_id = 0;
  std::string node;
  int32_t exit_code = 0;
  int32_t signal = 0;
  bool out_of_memory = false;
  bool prolog_failed = false;
  bool epilog_failed = false;
  uint32_t restart_count = 0;  // the run that ended
  std::string reason{};
  double cpu_seconds = 0;
  uint64_t max_rss_mib = 0;
  TaskUsage batch_usage{};  // the batch script's own processes
};

// Time passed: enforce limits, notice silent nodes, run a scheduling cycle when due.
struct Tick {};

using Event =
    std::variant<SubmitJob, CancelJobs, HoldJobs, RequeueJobs, UpdateJob, UpdateNode, RebootNodes,
                 ChangePartition, SuspendJobs, CreateReservation, UpdateReservation,
                 DeleteReservation, TopJobs, Reconfigure, ChangeAccounting, CreateStep, StepEnded,
                 ReleaseJob, WillRunJob, NodeRegistered, Heartbeat, JobEnded, Tick>;

// --- effects ---
struct Reply {
  uint64_t token = 0;
  bool ok = true;
  std::string error;              // Slurm's words, e.g. "Invalid job id specified"
  std::vector<uint64_t> job_ids;  // submitted IDs, or the jobs acted on
  std::string name;               // a created or updated reservation's name
  // CreateStep: the step's ID, its nodes and the global ranks of the tasks on each; the job as
  // it runs.
  uint32_t step_id = 0;
  std::vector<int> step_nodes{};
  std::vector<std::vector<uint32_t>> step_ranks{};
  JobPtr job{};
  std::string message{};  // said to the user on success (what a reconfigure left for a restart)
  bool busy = false;      // refused before it was queued: the engine's queue was full
  bool changed = false;   // ChangeAccounting: something was new or matched
  std::vector<std::string> warnings{};  // ChangeAccounting: settings stored but not enforced
};

struct Launch {
  uint64_t job_id = 0;
  JobPtr job;  // spec and allocation at launch
  // The job's account for the agents' /metrics labels: the account when accounting knows it,
  // else "other" (a job's own account name never becomes a label).
  std::string metrics_account{};
};

struct SignalJob {
  uint64_t job_id = 0;
  std::vector<int> nodes;
  int signal = 0;
  SignalScope scope = SignalScope::kSteps;
  std::vector<uint32_t> step_ids{};  // only these steps (scope kSteps); empty: every step
};

// SIGCONT and SIGTERM, then SIGKILL after `grace_seconds`, to every process of the job on these
// nodes (SIGCONT first, so that a suspended job can act on the SIGTERM).
struct TerminateJob {
  uint64_t job_id = 0;
  std::vector<int> nodes;
  int64_t grace_seconds = 0;
};

// --mail-type: MailProg runs as `MailProg -s SUBJECT USER` with this environment (Slurm's
// SLURM_JOB_* variables); ctld/engine/mail.h builds it.
struct MailJob {
  uint64_t job_id = 0;
  std::string user;                      // --mail-user, or the job's user (@MailDomain)
  std::string subject;                   // "Slurm Job_id=12 Name=x Began, Queued time 00:00:01"
  std::vector<std::string> environment;  // NAME=value
};

// Run slurm.conf's RebootProgram on the node (its agent registers again when it is back).
struct RebootNode {
  int node = 0;
  std::string program;
};

using Effect = std::variant<Reply, Launch, SignalJob, TerminateJob, MailJob, RebootNode>;

// What one batch of events produced: effects to carry out after the changed records are
// committed (replies must not leave before the commit).
struct EngineOutput {
  std::vector<Effect> effects;
  std::vector<uint64_t> changed_jobs;      // records to persist (or delete when purged)
  std::vector<uint64_t> republished_jobs;  // new records, persisted or not (wire encoding)
  std::vector<uint64_t> purged_jobs;       // finished past MinJobAge: out of the live queue
  std::vector<JobPtr> purged_records;      // their last records, for the job history (sacct)
  std::vector<int> changed_nodes;
  std::vector<std::string> changed_reservations;  // records to persist
  std::vector<std::string> deleted_reservations;
  std::vector<std::string> changed_partitions;  // scontrol's changes: persist (or delete)
  // A submission's batch script and environment, stored under its (array) job ID.
  struct Script {
    uint64_t job_id = 0;
    std::string script;
    std::vector<std::string> environment;
  };
  std::vector<Script> new_scripts;
  // No live job needs them any more, and AccountingStoreFlags does not keep them.
  std::vector<uint64_t> dropped_scripts, dropped_environments;
  bool changed_usage = false;
  bool changed_accounting = false;  // sacctmgr changed the accounting database: persist it
  bool scheduled = false;           // a scheduling cycle ran
  bool reconfigured = false;        // the configuration was replaced (Engine::shared_cluster)
};

}  // namespace drover::ctld
