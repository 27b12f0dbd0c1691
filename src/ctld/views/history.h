// The history view: sacct's selection over jobs, both those the store keeps in its history and
// those still in the live queue. Only decides which jobs a query selects; reading the store's
// history is the daemon's (daemon/job_history.h). Never speaks gRPC.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ctld/engine/engine.h"
#include "ctld/engine/events.h"

namespace drover::ctld::views {

struct HistoryQuery {
  JobFilter filter;              // job IDs (a job or its array), user and state are honoured
  int64_t start_time = 0;        // 0: no lower bound
  int64_t end_time = 0;          // 0: no upper bound
  std::vector<uint32_t> uids{};  // sacct -u: these owners' jobs only (empty: anyone's)
};
// Owners a query may name at most (sacct -u).
inline constexpr size_t kMaxHistoryUids = 1'000;

// What the query looks at in a job, whether a stored record or a live one.
struct HistoryKey {
  uint64_t job_id = 0, array_job_id = 0;
  std::string_view user, state;  // state by its Slurm name
  int64_t submit_time = 0, end_time = 0;
  uint32_t uid = 0;
};
HistoryKey KeyOf(const Job& job);

// A job that ended before the window or was submitted after it is out of it.
bool Selects(const HistoryQuery& query, const HistoryKey& job);

// The live queue's jobs the query selects, by ID.
std::vector<JobPtr> LiveHistory(const Snapshot& snapshot, const HistoryQuery& query);

}  // namespace drover::ctld::views
