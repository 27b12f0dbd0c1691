// What sprio and sshare print, as Slurm 22.05 prints it, from the controller's PriorityList and
// ShareList: pure functions from drover.proto's messages and a few options to text (tables,
// parsable lines, JSON). They never call the controller, read a file or the clock.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "proto/drover.pb.h"

namespace drover::cli {

// ---------- sprio ----------

struct SprioOptions {
  std::string format;        // -o; empty: the default for the flags and weights below
  bool no_header = false;    // -h
  bool long_format = false;  // -l
  bool normalized = false;   // -n: factors in [0, 1] instead of weighted
  bool weights = false;      // -w: one "Weights" line instead of the jobs
  bool show_user = false;    // -u was given: the default format gains a USER column
  bool jobs_given = false;   // -j was given: no match prints Slurm's "Unable to find jobs" line
  // PriorityWeightAge etc. by factor name ("age", "fairshare", "jobsize", "partition", "qos",
  // "assoc"), as PriorityList.weights; a factor weighted 0 has no column by default.
  std::map<std::string, uint32_t> factor_weights;
  // PriorityWeightTRES ("CPU", 1000), for %T and its default column.
  std::vector<std::pair<std::string, double>> tres_weights;
  std::string cluster_name;                 // %c
  std::map<uint64_t, std::string> job_qos;  // %n; a job missing here prints "normal"
  std::string sort;                         // -S: "u,r,-y"; after the default, ascending job ID
};

// Jobs print in job ID order, as sprio's default sort. A field of an unknown letter is left out
// (SprioFormatErrors says which).
std::string FormatSprio(std::span<const v1::JobPriority> jobs, const SprioOptions& options);

// sprio's stderr lines for a -o string ("Invalid job format specification: !").
std::vector<std::string> SprioFormatErrors(std::string_view format);

// {"jobs": [{"job_id", "partition", "user", "account", "priority", "nice", "factors": {...},
// "tres": {...}}], "weights": {...}}: every factor normalized (as -n) and weighted.
std::string SprioJson(std::span<const v1::JobPriority> jobs, const SprioOptions& options);

// ---------- sshare ----------

struct SshareOptions {
  std::string fields;              // -o: "Account,User%12,RawUsage"; empty: the default (or -l's)
  bool long_format = false;        // -l: NormUsage, LevelFS, GrpTRESMins, TRESRunMins too
  bool no_header = false;          // -n
  bool parsable = false;           // -p: '|' after every field
  bool parsable2 = false;          // -P: '|' between fields
  bool users_only = false;         // -U: no account lines
  bool fair_tree = true;           // Fair Tree (FairShare only on user lines, LevelFS in -l)
  std::vector<std::string> users;  // user lines only for these; empty: every user (-a)
  std::vector<std::string> accounts;  // -A: only these accounts' lines; empty: all
  std::string cluster_name;           // Cluster
  bool partitions = false;            // -m: the Partition column in the default fields
};

// The associations in Slurm's tree order (under each account its users, then its sub-accounts,
// each by name), account names indented by depth. Fails like sshare on an unknown field:
// `Invalid field requested: "Foo"`.
Result<std::string> FormatSshare(std::span<const v1::Share> shares, const SshareOptions& options);

// {"shares": {"shares": [{"id", "cluster", "name", "parent", "partition", "shares",
// "shares_normalized", "usage", "usage_normalized", "effective_usage", "fairshare": {"factor",
// "level"}, "type": ["USER"|"ASSOCIATION"]}]}}, in the same order and filtering as the table.
std::string SshareJson(std::span<const v1::Share> shares, const SshareOptions& options);

}  // namespace drover::cli
