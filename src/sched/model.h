// The scheduler's view of the world for one pass: the cluster (from ClusterConfig), what runs
// where, what waits, the association tree with its usage, QOS, and a way to look up other jobs'
// outcomes for dependencies. Everything is handed in; src/sched reads no clock, file or socket.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/cluster_config.h"
#include "common/job_spec.h"
#include "common/tres.h"

namespace drover::sched {

// What one job holds on one node.
struct NodeAllocation {
  int node = -1;           // index into ClusterConfig::nodes
  std::vector<int> cores;  // core indexes on the node (socket-major: socket s, core c is
                           // s * cores_per_socket + c), each with all its threads
  uint64_t memory_mb = 0;
  std::vector<int> gpus;  // GPU device indexes (GpuDevice::index)
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
  int64_t start_time = 0;
  int64_t end_time = 0;  // start + time limit: when the job will be gone at the latest
  uint64_t array_job_id = 0;
};

enum class NodeState { kUp, kDrain, kDown };  // scheduling only cares whether a node takes work

struct Qos {
  std::string name;
  uint32_t priority = 0;
  TresList max_tres_per_user;      // MaxTRESPerUser
  uint32_t max_jobs_per_user = 0;  // MaxJobsPerUser; 0: none
  int64_t max_wall_seconds = 0;    // MaxWall; 0: none
  TresList grp_tres;               // GrpTRES over all jobs of the QOS
};

// An account (user empty) or a user under an account, with raw shares and decayed usage.
struct Association {
  std::string account;
  std::string user;       // empty for an account
  int parent = -1;        // index of the parent account; -1 for root
  uint32_t shares = 1;    // raw shares (Fairshare=)
  double usage = 0;       // decayed billing-seconds
  TresList grp_tres;      // GrpTRES of the association; empty: none
  uint32_t max_jobs = 0;  // MaxJobs; 0: none
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

struct SchedulerInput {
  const ClusterConfig* cluster = nullptr;
  std::vector<NodeState> node_states;  // per node; empty: all up
  std::vector<RunningJob> running;
  std::vector<const JobSpec*> pending;
  std::vector<Association> associations;  // index 0 is root when not empty
  std::vector<Qos> qos;
  const JobOutcomes* outcomes = nullptr;  // null: every other job is unknown
  int64_t now = 0;
};

}  // namespace drover::sched
