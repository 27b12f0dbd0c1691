// The controller's engine: the single owner of the cluster's mutable state. It takes a batch of
// events and returns effects (replies, launches, signals) and the records the batch changed;
// the caller commits those records before carrying out the effects. It never sleeps, never
// reads the wall clock (a Clock is injected) and does no I/O, so the daemon, the simulator and
// tests drive the same code.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/accounting.h"
#include "common/cluster_config.h"
#include "ctld/engine/events.h"
#include "ctld/engine/job.h"
#include "ctld/engine/job_table.h"
#include "ctld/engine/mail.h"
#include "sched/request.h"
#include "sched/running_pool.h"
#include "sched/scheduler.h"

namespace drover::ctld {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t Now() const = 0;  // seconds since the epoch
};

class ManualClock : public Clock {
 public:
  explicit ManualClock(int64_t now = 1'700'000'000) : now_(now) {}
  int64_t Now() const override { return now_; }
  void Advance(int64_t seconds) { now_ += seconds; }
  void Set(int64_t now) { now_ = now; }

 private:
  int64_t now_;
};

// A node as the controller sees it; its Slurm state is derived (NodeStateName).
struct NodeStatus {
  bool registered = false;
  bool down = false;
  bool drain = false;
  bool drained_by_health = false;
  bool health_latched = false;  // that drain stays when the node is healthy again
  bool not_responding = false;
  std::string reason;
  int64_t reason_time = 0;
  uint32_t reason_uid = 0;
  int64_t last_heard = 0;
  // A batch launch too young to call lost when the node registered without it (under
  // BatchStartTimeout): the agent is asked to register again from this time (its heartbeat's
  // reply), so a launch lost on the way (a leader killed as it sent it) is found. 0: none.
  int64_t recheck_jobs_at = 0;
  std::set<uint64_t> jobs;  // running jobs with a share of this node
  bool fail = false;        // State=FAIL: drained, shown FAILING/FAIL
  // scontrol update node's Weight and Features over slurm.conf's (until a reconfigure), and
  // its Comment and Extra.
  std::optional<uint32_t> weight{};
  std::optional<std::vector<std::string>> features{};         // AvailableFeatures
  std::optional<std::vector<std::string>> active_features{};  // what jobs' constraints see
  std::string comment{}, extra{};
  // scontrol reboot: requested (the node reboots once idle; ASAP also drained it), then issued
  // to the agent (reason_time: when) until the agent registers again or ResumeTimeout passes.
  bool reboot_requested = false, reboot_issued = false;
  std::string next_state{};  // after the reboot: "RESUME" (back to service) or "DOWN"
  int64_t boot_time = 0;     // the agent's last registration after a boot
  // The GPUs the agent reported at registration (merged over the configuration's by
  // ApplyNodeOverrides), and the built-in probes' last readings.
  // Shared, not copied, with each snapshot (10,000 nodes × 8 GPUs at every batch's Publish).
  GpuList reported_gpus{};
  std::vector<GpuHealth> gpu_health{};
};

// What scontrol changed in a partition: its settings in the order given, applied over
// slurm.conf's partition (or a new one), or its deletion.
struct PartitionOverride {
  std::vector<std::string> settings;  // "Key=Value"
  bool created = false;               // not in slurm.conf
  bool deleted = false;
};

// "IDLE", "MIXED", "ALLOCATED", "DRAINING", "DRAINED", "DOWN", "UNKNOWN" — with "*" appended
// while not responding, as sinfo does.
std::string NodeStateName(const NodeStatus& node, bool fully_allocated);

// scontrol's Weight and Features of `status` over the node's slurm.conf values, and what its
// agent reported of its GPUs (MergeReportedGpus).
void ApplyNodeOverrides(const NodeStatus& status, NodeConfig& node);
// The agent's GPUs over the configuration's, when it found as many: their UUIDs, names, PCI
// addresses and memory; and their types, local cores and NVLinks where the configuration gives
// none (gres.conf's Cores= and Links= win, as Slurm merges them).
void MergeReportedGpus(const std::vector<GpuDevice>& reported, NodeConfig& node);

// How long the jobs started since the controller started waited (start - max(submit, begin)),
// as a Prometheus histogram: at or below each bound (seconds), cumulative.
struct JobWaits {
  static constexpr std::array<int64_t, 15> kBounds = {
      1, 5, 10, 30, 60, 300, 600, 1800, 3600, 7200, 14400, 43200, 86400, 259200, 604800};
  std::array<uint64_t, kBounds.size()> buckets{};
  uint64_t count = 0;
  int64_t sum_seconds = 0;

  void Observe(int64_t seconds) {
    seconds = std::max<int64_t>(seconds, 0);
    for (size_t i = 0; i < kBounds.size(); ++i)
      if (seconds <= kBounds[i]) ++buckets[i];
    ++count;
    sum_seconds += seconds;
  }
};

// What readers see: an immutable copy published after each batch.
struct Snapshot {
  int64_t time = 0;
  std::shared_ptr<const ClusterConfig> cluster;  // the configuration in force
  JobTable::View jobs;  // the live queue (pending, running, recently finished), by ID
  std::vector<NodeStatus> nodes;
  // From the last scheduling cycle; shared between snapshots until the next cycle.
  std::shared_ptr<const std::vector<sched::PriorityFactors>> priorities;
  std::shared_ptr<const sched::FairShare> fair_share;
  std::shared_ptr<const ReservationMap> reservations;  // shared until one changes
  // The last cycle's expected starts of waiting jobs, by job ID (squeue --start).
  std::shared_ptr<const std::vector<sched::PlannedStart>> plan;
  // The same cycle's waiting jobs by ID: their places in `priorities`.
  std::shared_ptr<const std::vector<uint32_t>> priority_by_id;
  std::vector<sched::Association> associations;
  std::shared_ptr<const acct::Database> accounting;  // sacctmgr's; shared until it changes
  uint64_t next_job_id = 0;
  uint64_t cycles = 0;
  size_t last_cycle_considered = 0;
  uint64_t submitted_total = 0;                 // jobs accepted since start
  std::map<JobState, uint64_t> finished_total;  // jobs ended since start, by final state
  uint64_t started_total = 0;                   // job starts since start (a requeued job's too)
  uint64_t backfilled_total = 0;                // those that backfill started
  uint64_t considered_total = 0;                // pending jobs the cycles considered, summed
  JobWaits waits;                               // those starts' waits
};

struct EngineOptions {
  // The shortest time between two event-triggered scheduling cycles; 0: SchedulerParameters
  // sched_min_interval (in microseconds, rounded down to whole seconds on this clock). A cycle
  // also runs every sched_interval seconds.
  int64_t min_cycle_interval_seconds = 0;
  // The scheduling policy instead of the configuration's (drover sim --policy).
  std::optional<sched::PolicyKind> policy;
  // Checks every cycle that the kept pool of running jobs equals one built afresh, and aborts
  // when it does not (tests).
  bool check_kept_pool = false;
};
int64_t MinCycleInterval(const EngineOptions& options, const ClusterConfig& cluster);

// Why `caller` may not run `spec` (its owner, account and QOS already set) in `partition`, in
// Slurm's words; "" when it may. Operators pass RootOnly and AllowGroups, not the rest.
std::string PartitionAccessRefusal(const PartitionConfig& partition,
                                   const ClusterSettings& settings, const Caller& caller,
                                   const JobSpec& spec);

// AccountingStorageEnforce as Slurm reads it: limits, qos and safe imply associations, safe
// implies limits.
struct EnforcedAccounting {
  bool associations = false, limits = false, qos = false, safe = false;
};
EnforcedAccounting EnforcedAccountingOf(const ClusterSettings& settings);

// The stored usage of an association or QOS: "<usage> <cpu> <mem> <node> <gpu> <billing>
// <wall>", the decayed billing-seconds of fair share, then the TRES-seconds the limits count.
// A value stored before TRES were counted holds the first number alone.
std::string FormatUsage(double usage, const sched::TresSeconds& used);
void ParseUsage(const std::string& text, double& usage, sched::TresSeconds& used);

// What srun says a step's tasks used could be true of a step of `ntasks` tasks on the nodes
// `names`: no more tasks, its own nodes and task ranks, finite non-negative numbers within
// bounds, CPU times that add up. srun is the user's process: anything else is dropped.
bool PlausibleUsage(const TaskUsage& usage, uint32_t ntasks, const std::vector<std::string>& names);

// Whether `job` meets `filter`'s conditions other than its job IDs and array tasks: user (and
// uid), name, partition, account, QOS, reservation, WCKey, nodes and state; as scancel's
// selection and the queries' (views::SelectJobs) read them.
bool JobMatches(const Job& job, const JobFilter& filter, const ClusterConfig& cluster);

class Engine : private sched::JobOutcomes {
 public:
  // The engine shares the configuration: `scontrol reconfigure` replaces it (Reconfigure).
  Engine(std::shared_ptr<const ClusterConfig> cluster, const Clock& clock,
         EngineOptions options = {});
  // A configuration the caller keeps alive for the engine's lifetime (tests, the simulator).
  Engine(const ClusterConfig& cluster, const Clock& clock, EngineOptions options = {});

  // `may_schedule` false defers any due scheduling cycle to a later batch: the daemon uses it
  // to keep cycles from taking more than half of the engine thread's time under load.
  EngineOutput Apply(std::vector<Event> events, bool may_schedule = true);
  std::shared_ptr<const Snapshot> Publish() const;

  // Start-up: jobs, node states and usage loaded from the store.
  void Restore(std::vector<Job> jobs, uint64_t next_job_id);
  void RestoreNode(int node, const NodeStatus& status);
  // `usage` is the stored value: the billing usage, then optionally the TRES usage
  // (FormatUsage); a QOS's is restored with RestoreQosUsage after the accounting.
  void RestoreUsage(const std::string& account, const std::string& user, const std::string& usage);
  void RestoreQosUsage(const std::string& qos, const std::string& usage);
  // When usage was last reset (PriorityUsageResetPeriod); 0 when never.
  void RestoreUsageReset(int64_t when) { last_usage_reset_ = when; }
  int64_t last_usage_reset() const { return last_usage_reset_; }
  // Whether usage was reset since the last call (the daemon then stores when).
  bool TakeUsageReset() { return std::exchange(usage_reset_changed_, false); }
  void RestoreReservation(Reservation reservation);
  // Before the usage: the accounting database as stored (a new engine starts with
  // acct::Database::Initial for its cluster).
  void RestoreAccounting(acct::Database database);
  // Before the jobs: scontrol's partition changes; those that no longer apply to slurm.conf
  // are dropped, and what went wrong with each is returned.
  std::vector<std::string> RestorePartitions(std::map<std::string, PartitionOverride> overrides);
  // nullptr when scontrol has not changed the partition.
  const PartitionOverride* FindPartitionOverride(const std::string& name) const;
  const Reservation* FindReservation(const std::string& name) const;

  const ClusterConfig& cluster() const { return *config_; }
  const std::shared_ptr<const ClusterConfig>& shared_cluster() const { return config_; }
  // Every partition's sched::MaximaOf for the configuration in force, computed once for it.
  // Engine thread only, as everything that changes the engine (their cache is not guarded).
  const std::vector<sched::NodeMaxima>& Maxima() const;
  const sched::ClusterTotals& Totals() const;  // sched::TotalsOf, likewise
  const Job* FindJob(uint64_t id) const;
  bool wants_cycle() const { return schedule_requested_; }  // a deferred cycle is waiting
  // When the minimum interval since the last cycle is over (a deferred cycle may run then).
  int64_t earliest_cycle() const { return last_cycle_ + min_cycle_interval_seconds_; }
  // The last cycle's pending jobs in priority order (their factors), without a snapshot.
  const std::shared_ptr<std::vector<sched::PriorityFactors>>& priorities() const {
    return priorities_;
  }
  const NodeStatus& node(int index) const { return nodes_[index]; }
  uint64_t next_job_id() const { return next_job_id_; }
  const std::vector<sched::Association>& associations() const { return associations_; }
  const acct::Database& accounting() const { return *accounting_; }
  const std::vector<sched::Qos>& qos() const { return qos_; }

 private:
  // event handlers (engine_jobs.cc, engine_nodes.cc)
  void On(const SubmitJob& event, EngineOutput& out);
  void On(const CancelJobs& event, EngineOutput& out);
  void On(const HoldJobs& event, EngineOutput& out);
  void On(const RequeueJobs& event, EngineOutput& out);
  void On(const UpdateJob& event, EngineOutput& out);
  std::string UpdateOne(const UpdateJob& event, Job& job);
  void NameMailUser(JobSpec& spec) const;  // --mail-type alone: the job's user (@MailDomain)
  // A pending job's priority as the next cycle would compute it now (engine_top.cc).
  int64_t PriorityNow(const Job& job) const;
  void On(const UpdateNode& event, EngineOutput& out);
  std::string UpdateNodeRefusal(const UpdateNode& event) const;
  void SetNodeState(const UpdateNode& event, int index, EngineOutput& out);
  // Its jobs requeued or ended NODE_FAIL; a -k/--no-kill job of several nodes loses the node.
  void DownNode(int index, EngineOutput& out);
  void PurgeMissingJobs(int index, const NodeRegistered& event, EngineOutput& out);
  // A node lost the job: requeued (a NODE_FAIL run) when it may be, else ended NODE_FAIL.
  void LoseJob(Job& job, EngineOutput& out);
  void On(const RebootNodes& event, EngineOutput& out);  // engine_reboot.cc
  void RequestReboot(const RebootNodes& event, int index);
  std::string CancelReboot(int index);                       // empty, or why not
  void IssueReboots(EngineOutput& out);                      // to idle nodes with a pending request
  void RebootDone(int index);                                // the agent registered again
  void CheckReboots(EngineOutput& out);                      // ResumeTimeout passed: DOWN
  void On(const ChangePartition& event, EngineOutput& out);  // engine_partitions.cc
  // Takes `next` as the configuration in force: jobs follow their partitions to it.
  void Adopt(std::shared_ptr<const ClusterConfig> next, EngineOutput* out);
  void On(const SuspendJobs& event, EngineOutput& out);
  void On(const CreateReservation& event, EngineOutput& out);
  void On(const UpdateReservation& event, EngineOutput& out);
  void On(const DeleteReservation& event, EngineOutput& out);
  void On(const TopJobs& event, EngineOutput& out);  // engine_top.cc
  // scontrol top: the jobs it moves (nullopt after replying with a refusal); their group's
  // pending jobs with their priorities now, the listed ones first, in the order given.
  std::optional<std::vector<uint64_t>> TopListed(const TopJobs& event, EngineOutput& out) const;
  std::vector<std::pair<uint64_t, int64_t>> TopGroup(const std::vector<uint64_t>& listed) const;
  void On(const Reconfigure& event, EngineOutput& out);  // engine_reconfigure.cc
  // accounting (engine_accounting.cc)
  void On(const ChangeAccounting& event, EngineOutput& out);
  // The scheduler's association tree and QOS from the database (usage kept by account and user).
  void RebuildAccounting();
  std::string AccountingCluster() const;  // ClusterName, in lower case as accounting keeps names
  // A submission's default account and QOS, and what AccountingStorageEnforce refuses, in
  // Slurm's words; "" when it may run.
  std::string AdmitAccounting(JobSpec& spec) const;
  // What submitting `count` jobs like `spec` would break: MaxSubmitJobs, GrpSubmitJobs and the
  // QOS's, and with DenyOnLimit (or safe and a GrpTRESMins budget) the limits the job breaks
  // on its own; "" when none, else Slurm's message with what to do.
  std::string CheckSubmitLimits(const JobSpec& spec, size_t count) const;
  // Pending and running jobs by association (with their subtree) and QOS, for the submit
  // limits; kept only while some such limit is set.
  void RecountActiveJobs();
  void CountActive(const JobSpec& spec, int64_t delta);
  // PriorityUsageResetPeriod: clears usage when a period boundary has passed (engine_cycle.cc).
  void ResetUsageIfDue();
  // Why `next` cannot replace the running configuration, or "".
  std::string ReconfigureRefusal(const ClusterConfig& next) const;
  // steps and interactive allocations (engine_steps.cc)
  void On(const CreateStep& event, EngineOutput& out);
  void On(const StepEnded& event, EngineOutput& out);
  void On(const ReleaseJob& event, EngineOutput& out);
  // The job the caller may act on, or nullptr after replying with Slurm's refusal.
  const Job* OwnJob(uint64_t token, const Caller& caller, uint64_t job_id, EngineOutput& out) const;
  void On(const WillRunJob& event, EngineOutput& out);  // engine_will_run.cc
  // Applies the fields to `reservation` (a copy); the refusal in Slurm's words, or "".
  std::string ApplyReservation(const ReservationFields& fields, Reservation& reservation) const;
  void ExpireReservations(EngineOutput& out);
  ReservationMap& MutableReservations();
  void On(const NodeRegistered& event, EngineOutput& out);
  void On(const Heartbeat& event, EngineOutput& out);
  void On(const JobEnded& event, EngineOutput& out);
  void On(const Tick& event, EngineOutput& out);

  // jobs
  // The frame of cancel, hold, requeue and update: select the jobs, refuse those the caller may
  // not touch, and collect the reply. `act` returns nullopt when it acted on the job, "" to skip
  // it quietly, or the refusal to report; `selected` is how many jobs the filter named.
  using JobAction =
      std::function<std::optional<std::string>(uint64_t id, const Job& job, size_t selected)>;
  void ActOnJobs(uint64_t token, const Caller& caller, const JobFilter& filter, EngineOutput& out,
                 const JobAction& act);
  Job& Mutable(uint64_t id, EngineOutput& out);
  // A change readers must see but the store need not keep (a pending reason).
  Job& MutableTransient(uint64_t id, EngineOutput& out);
  std::vector<uint64_t> Select(const JobFilter& filter) const;  // by JobMatches
  void CancelSteps(const CancelJobs& event, EngineOutput& out);
  bool MayAct(const Caller& caller, const Job& job) const;
  void Finish(Job& job, JobState state);
  void Release(Job& job);  // frees the job's nodes
  void Requeue(Job& job, JobState run_state, EngineOutput& out);
  std::string Validate(const JobSpec& spec, size_t tasks) const;
  // access (engine_access.cc). Sets the server-owned fields of a submission (owner, group, IDs,
  // array fields) from the caller and drops the partitions the job may not use; the refusal in
  // Slurm's words, or "".
  std::string Admit(const Caller& caller, JobSpec& spec) const;
  std::string AdmitPartitions(const Caller& caller, JobSpec& spec) const;
  // A pending job moved to another partition or QOS by an update: may it use them?
  std::string UpdatedPartitionRefusal(const Caller& caller, const JobSpec& spec) const;

  // time (engine_cycle.cc). The tick's checks look at `holding`, the running and suspended jobs
  // (HoldingJobs), not at every job of the queue.
  std::vector<uint64_t> HoldingJobs() const;
  void EnforceTimeLimits(const std::vector<uint64_t>& holding, EngineOutput& out);
  void EnforceRunningLimits(const std::vector<uint64_t>& holding, EngineOutput& out);
  // scancel N.S: the step's SIGKILL, KillWait after its SIGTERM.
  void KillCancelledSteps(const std::vector<uint64_t>& holding, EngineOutput& out);
  // --deadline: pending jobs that can no longer end before theirs end DEADLINE (engine_cycle.cc).
  void ExpireDeadlines(EngineOutput& out);
  void ApplyStart(const sched::StartDecision& start, EngineOutput& out);
  void ApplyPending(const sched::PendingDecision& pending, bool kill_invalid, EngineOutput& out);
  // a node that stopped answering: its jobs end NODE_FAIL, are requeued, or (--no-kill) go on
  // without it (engine_nodes.cc)
  // --mail-type (engine_mail.cc). Mutable() notes a job's state before the batch changes it;
  // the end of the batch mails what changed (began, ended, requeued).
  void NoteForMail(const Job& before);
  void MailChanges(EngineOutput& out);
  void MailTimeLimits(uint64_t id, const Job& job, int64_t now, EngineOutput& out);
  void Mail(const Job& job, MailType event, EngineOutput& out);
  // Without ARRAY_TASKS an array mails as one: when its first task begins and its last ends.
  bool FirstOfArrayToStart(const Job& job) const;
  std::optional<ArraySummary> ArrayEnded(const Job& job) const;
  // preemption (engine_preempt.cc)
  void Preempt(const sched::PreemptDecision& decision, EngineOutput& out);
  void EnforcePreemptions(const std::vector<uint64_t>& holding, EngineOutput& out);
  // Victims of PreemptMode=SUSPEND whose cores and GPUs are free again run on (SIGCONT).
  void ResumeSuspendedVictims(EngineOutput& out);
  void EndPreempted(Job& job, EngineOutput& out);  // requeued or cancelled, as its mode says
  std::vector<sched::AdvanceReservation> SchedulerReservations() const;
  void CheckNodeLiveness(EngineOutput& out);
  // The GPUs the batch's registrations reported, merged into one new configuration.
  void MergeRegisteredGpus(EngineOutput& out);
  void AccrueUsage(const std::vector<uint64_t>& holding);
  // Adds `seconds` of the running job's billing TRES to its association's usage.
  void Charge(const Job& job, int64_t seconds);
  void PurgeOldJobs(EngineOutput& out);
  void MaybeSchedule(EngineOutput& out);
  void RunCycle(EngineOutput& out);
  std::vector<sched::NodeState> NodeStates() const;  // as the scheduler sees the nodes
  int Association(const std::string& account, const std::string& user);

  // sched::JobOutcomes
  sched::JobOutcome Find(uint64_t job_id) const override;
  sched::JobOutcome FindArrayTask(uint64_t array_job_id, uint32_t task_id) const override;

  std::shared_ptr<const ClusterConfig> config_;  // in force: base_ with scontrol's changes
  // Maxima()'s and Totals()'s cache and the configuration they were computed for (held, so a new
  // configuration can never be at the same address).
  mutable std::shared_ptr<const ClusterConfig> maxima_config_;
  mutable std::vector<sched::NodeMaxima> maxima_;
  mutable sched::ClusterTotals totals_;
  uint64_t revisions_ = 0;                     // the last Job::revision given
  sched::RunningPool kept_pool_;               // the running jobs' pool, kept between cycles
  std::shared_ptr<const ClusterConfig> base_;  // slurm.conf's, as last read
  std::map<std::string, PartitionOverride> partition_overrides_;
  const Clock& clock_;
  EngineOptions options_;
  int64_t min_cycle_interval_seconds_ = 0;  // options_'s, or the configuration's
  JobTable jobs_;
  std::map<std::pair<uint64_t, uint32_t>, uint64_t> array_tasks_;  // (array, task) -> job ID
  std::unordered_map<uint64_t, sched::JobOutcome> purged_outcomes_;
  std::vector<NodeStatus> nodes_;
  std::vector<sched::Association> associations_;
  std::map<std::pair<std::string, std::string>, int> association_index_;
  std::shared_ptr<const acct::Database> accounting_;
  std::vector<sched::Qos> qos_;
  // The submit limits' counts (CountActive): each association's jobs with its subtree's, and
  // by QOS, QOS and user, QOS and account.
  bool submit_limits_ = false;
  std::vector<int64_t> active_by_association_;
  std::map<std::string, int64_t> active_by_qos_;
  std::map<std::pair<std::string, std::string>, int64_t> active_by_qos_user_,
      active_by_qos_account_;
  int64_t last_usage_reset_ = 0;
  bool usage_reset_now_done_ = false;  // PriorityUsageResetPeriod=NOW has been carried out
  bool usage_reset_changed_ = false;   // last_usage_reset_ changed: the store keeps it
  uint64_t next_job_id_;
  bool schedule_requested_ = true;
  std::vector<int> gpus_reported_;  // nodes whose registration this batch reported new GPUs
  int64_t last_cycle_ = INT64_MIN / 2;
  int64_t last_accrual_ = 0;
  uint64_t cycles_ = 0;
  uint64_t submitted_total_ = 0;
  std::map<JobState, uint64_t> finished_total_;
  uint64_t started_total_ = 0;
  uint64_t backfilled_total_ = 0;
  uint64_t considered_total_ = 0;
  JobWaits waits_;
  sched::SchedulerResult last_result_;
  std::shared_ptr<std::vector<sched::PriorityFactors>> priorities_;  // the last cycle's
  std::shared_ptr<std::vector<sched::PriorityFactors>> spare_priorities_;
  std::shared_ptr<const std::vector<uint32_t>> priority_by_id_;  // see Snapshot
  std::shared_ptr<const sched::FairShare> fair_share_;
  std::shared_ptr<const std::vector<sched::PlannedStart>> plan_;
  std::shared_ptr<ReservationMap> reservations_;  // copied before a change a snapshot shares
  uint64_t next_reservation_ = 1;
  // Jobs no scheduling cycle has seen yet: one that starts in its first cycle is SchedSubmit.
  std::set<uint64_t> unseen_;
  // Jobs with --mail-type that this batch changed, and their state and run before it.
  std::map<uint64_t, std::pair<JobState, uint32_t>> mail_watch_;
};

}  // namespace drover::ctld
