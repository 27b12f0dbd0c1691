// sreport's reports, as Slurm 22.05 prints them, from the job history (jobs with their runs and
// allocations), the configuration (what the cluster has) and the accounting tree: cluster
// Utilization, cluster AccountUtilizationByUser, user TopUsage and job SizesByAccount. Usage
// is what the jobs' allocations held within the window, in TRES-seconds, printed in the time
// format asked for. Drover keeps no history of node states: Down, PLND Down and Planned are 0
// (docs/accounting.md says so).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/accounting.h"
#include "common/cluster_config.h"
#include "common/result.h"
#include "proto/drover.pb.h"

namespace drover::cli {

// -t: Slurm's time formats, in the order its parser tries them.
enum class SreportTime { kSeconds, kMinutes, kHours, kPercent, kSecPer, kMinPer, kHourPer };
// "SecPer", "MinPer", "HourPer", "Seconds", "Minutes", "Hours", "Percent" (any case, Slurm's
// shortest prefixes); nullopt for anything else.
std::optional<SreportTime> ParseSreportTime(std::string_view text);

struct SreportOptions {
  SreportTime time = SreportTime::kMinutes;
  std::vector<std::string> tres;  // -T: "cpu", "mem", "node", "gres/gpu", "energy"; empty: cpu
  bool no_header = false, parsable = false, parsable2 = false;
  std::string cluster;         // the cluster's name as sreport prints it
  int64_t start = 0, end = 0;  // the window [start, end)
  // cluster AccountUtilizationByUser / user TopUsage / job SizesByAccount
  bool tree = false, group = false;
  uint32_t top = 10;
  std::vector<std::string> users, accounts;
  std::vector<uint64_t> grouping = {50, 250, 500, 1000};
  bool print_job_count = false, flat_view = false, acct_as_parent = false;
  // The user's full name (the GECOS field to its first comma), for Proper Name.
  std::function<std::string(const std::string&)> proper_name;
};

// The window: the previous day by default; a given start or end rounded to the nearest hour,
// the end no later than `now`, at least an hour long (slurmdb_report_set_start_end_time).
void SreportWindow(SreportOptions& options, std::optional<int64_t> start,
                   std::optional<int64_t> end, int64_t now);

std::string FormatClusterUtilization(const ClusterConfig& cluster, const std::vector<v1::Job>& jobs,
                                     const SreportOptions& options);
std::string FormatAccountUtilizationByUser(const ClusterConfig& cluster,
                                           const acct::Database& accounting,
                                           const std::vector<v1::Job>& jobs,
                                           const SreportOptions& options);
std::string FormatTopUsage(const ClusterConfig& cluster, const std::vector<v1::Job>& jobs,
                           const SreportOptions& options);
// Refused (Slurm's words) with more than one TRES.
Result<std::string> FormatJobSizesByAccount(const ClusterConfig& cluster,
                                            const acct::Database& accounting,
                                            const std::vector<v1::Job>& jobs,
                                            const SreportOptions& options);

}  // namespace drover::cli
