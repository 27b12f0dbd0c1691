// The jobs view: squeue and scontrol show job (the live queue, with the last cycle's plan for
// waiting jobs) and sbatch --test-only's answer, from one snapshot. Only reads the snapshot;
// never speaks gRPC. Job records themselves are encoded by ctld/records (the store's record).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/cluster_config.h"
#include "ctld/engine/engine.h"
#include "ctld/engine/events.h"
#include "wire/read_model.h"

namespace drover::ctld::views {

struct JobSelection {
  int64_t time = 0;
  std::vector<JobPtr> jobs;                     // by ID
  std::vector<wire::PlannedStartInfo> planned;  // the listed waiting jobs' expected starts
  uint64_t more_after = 0;  // the page was full and more jobs match: the last listed job's ID
};

// A listing's page: at most this many jobs, and it ends before it passes this many bytes of
// records (after one job at least). Commands ask for the next page until the last.
inline constexpr size_t kJobsPerPage = 10'000;
inline constexpr size_t kJobPageBytes = size_t{16} << 20;

// One page of a listing: the jobs after `after` (a job ID), at most `limit` of them.
struct JobPage {
  uint64_t after = 0;
  size_t limit = SIZE_MAX;
};

// The live queue's jobs that `filter` names and `caller` may see (PrivateData=jobs). Finished
// jobs only when asked for: by ID, by their state, or with `all_states`. `with_plan` adds the
// plan of the listed waiting jobs. `holding_nodes`: only jobs that hold nodes now (RUNNING,
// SUSPENDED, COMPLETING). A filter that names jobs reads those jobs (and their arrays' tasks)
// alone, so its cost does not grow with the queue.
JobSelection SelectJobs(const Snapshot& snapshot, const Caller& caller, const JobFilter& filter,
                        bool all_states, bool with_plan, bool holding_nodes = false,
                        const JobPage& page = {});

// The live records that `filter` names by ID (its job IDs, with their arrays' tasks, and its
// array tasks), by ID and once each, read from the table by ID: the cost does not grow with the
// queue. Nothing else of the filter is applied.
std::vector<JobPtr> NamedJobs(const Snapshot& snapshot, const JobFilter& filter);

wire::PlannedStartInfo PlannedStartOf(const sched::PlannedStart& plan,
                                      const ClusterConfig& cluster);
wire::WillRunInfo WillRunOf(const WillRun& will_run, const ClusterConfig& cluster);

// The partition's name; "" for an index the configuration does not have.
std::string PartitionName(int partition, const ClusterConfig& cluster);
// The allocation's nodes as a hostlist, in the allocation's order.
std::string NodeList(const sched::Allocation& allocation, const ClusterConfig& cluster);
// The partition a job is counted under by name on the metrics page: where it runs, else the
// first it asked for, else the default.
std::string PartitionLabel(const Job& job, const ClusterConfig& cluster);

}  // namespace drover::ctld::views
