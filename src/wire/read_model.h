// The controller's answers to queries as plain values: what squeue, sinfo, scontrol show, sprio,
// sshare and srun read. The controller's views (src/ctld/views) fill them from a snapshot; the
// codecs beside this file (*_codec.h) turn them into v1 messages. Values only: no proto, no
// controller types, and nothing here decides anything.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace drover::wire {

// sinfo and scontrol show partition: a partition's configuration and what its nodes hold now.
struct PartitionInfo {
  std::string name;
  std::string state;  // UP, DOWN, DRAIN, INACTIVE
  bool is_default = false;
  std::string node_list;
  uint32_t total_nodes = 0, total_cpus = 0, total_gpus = 0;
  int64_t max_time_seconds = -1;      // -1: UNLIMITED
  int64_t default_time_seconds = -1;  // -1: none (MaxTime applies)
  uint64_t max_nodes = 0;             // 0: UNLIMITED
  uint64_t min_nodes = 0;
  uint32_t priority_tier = 0, priority_job_factor = 0;
  std::string over_subscribe;  // NO, EXCLUSIVE, YES:4, FORCE:4
  std::string preempt_mode;
  int64_t grace_time_seconds = 0;
  std::vector<std::string> allow_accounts, allow_qos;
  std::string qos;
  bool hidden = false, root_only = false;
  uint32_t nodes_allocated = 0;  // nodes with at least one job
  uint32_t nodes_idle = 0;
  uint32_t nodes_other = 0;  // down, drained, not responding
  uint32_t cpus_allocated = 0, gpus_allocated = 0;
  uint32_t pending_jobs = 0, running_jobs = 0;
};

// sinfo -N and scontrol show node: a node's Slurm state and why.
struct NodeInfo {
  std::string name;
  std::string state;  // "IDLE", "MIXED", "DRAINED", "DOWN*", "RESERVED", ...
  bool registered = false, down = false, drain = false, drained_by_health = false;
  bool not_responding = false;
  std::string reason;
  int64_t reason_time = 0;
  uint32_t reason_uid = 0;
  int64_t last_heard = 0;
  std::vector<uint64_t> jobs;  // running jobs with a share of the node, by ID
  std::string reservation;     // "RESERVED" or "MAINT" while an advance reservation holds it
  // In force (slurm.conf's, or what scontrol update node set); weight 0: not said.
  uint32_t weight = 0;
  std::string features, active_features;  // comma lists
  std::string comment, extra;
  std::string gres;  // the GPUs by type and socket, else slurm.conf's Gres= (views/nodes.cc)
  // scontrol reboot: pending (REBOOT_REQUESTED) and the state to take after it; the agent's
  // last boot (its registration after a reboot).
  bool reboot_requested = false;
  int64_t boot_time = 0;
  std::string next_state;
  bool health_latched = false;  // a GPU's trouble holds the health drain
  // Where its agent answers ("host:port"): for a query that names the node (sstat asks it).
  std::string agent_address;
};

struct NodeListing {
  int64_t time = 0;
  std::vector<NodeInfo> nodes;
};

// scontrol show reservation (and the stored record: node names, not indexes, so a store outlives
// a reordered slurm.conf).
struct ReservationInfo {
  std::string name;
  int64_t start_time = 0, end_time = 0;
  std::vector<std::string> nodes;  // node names
  std::string node_list;           // hostlist of `nodes`
  std::vector<std::string> users, accounts, flags;
  std::string partition;
  std::string tres;
  uint32_t created_by = 0;
};

struct ReservationListing {
  int64_t time = 0;
  std::vector<ReservationInfo> reservations;
};

// sprio: one pending job's priority and its factors.
struct JobPriorityInfo {
  uint64_t job_id = 0;
  std::string user, account, partition;
  int64_t priority = 0;
  double age = 0, fairshare = 0, job_size = 0, partition_factor = 0, qos = 0, assoc = 0;
  int32_t nice = 0;
  std::vector<std::pair<std::string, double>> tres;  // per PriorityWeightTRES name
};

struct PriorityListing {
  std::vector<JobPriorityInfo> jobs;
  std::vector<std::pair<std::string, uint32_t>> weights;  // PriorityWeightAge etc. by factor
};

// sshare: one association of the fair-share tree.
struct ShareInfo {
  std::string account, user;
  std::string parent;  // the parent account; empty for root
  uint32_t raw_shares = 0;
  double raw_usage = 0, norm_shares = 0, norm_usage = 0, effective_usage = 0, level_fs = 0;
  double fairshare = 0;
  // "cpu=60,mem=0,energy=0,..." as sshare -l prints them (see proto Share).
  std::string grp_tres_mins{}, tres_run_mins{}, grp_tres_raw{};
};

// squeue --start: when a waiting job is expected to start, and where.
struct PlannedStartInfo {
  uint64_t job_id = 0;
  int64_t start_time = 0;
  std::string node_list;
  bool reserved = false;  // the nodes are held for it
};

// sbatch --test-only's answer.
struct WillRunInfo {
  int64_t start_time = 0;
  std::string node_list;
  std::string partition;
  uint32_t processors = 0;  // each allocated core's threads, as Slurm counts them
};

// squeue and sacct: job records as the controller encoded them (v1::Job), shared with the
// controller's cache, and the listed waiting jobs' plan.
struct JobListing {
  int64_t time = 0;
  std::vector<std::shared_ptr<const std::string>> jobs;
  std::vector<PlannedStartInfo> planned;
  std::string next;         // sacct's history: the next page's cursor; empty: the last page
  uint64_t more_after = 0;  // the live queue's listing: the next page starts after this job ID
};

// srun: where a new step's tasks run.
struct StepNodeInfo {
  std::string name;
  std::string address;          // the agent's host:port
  uint32_t node_index = 0;      // SLURM_NODEID: the node's place in the job's allocation
  std::vector<uint32_t> tasks;  // global task ranks on this node
};

struct StepLayout {
  uint32_t step_id = 0;
  std::vector<StepNodeInfo> nodes;
  std::string node_list;
  uint32_t ntasks = 0;
};

}  // namespace drover::wire
