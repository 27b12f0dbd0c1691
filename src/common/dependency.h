// --dependency as Slurm writes it: "afterok:12:13,afterany:14+10", "afterok:1?afternotok:2",
// "singleton", "after:5+30". Parsed at the edge into a DependencySpec; evaluated by the
// scheduler (sched/dependency.h) against the jobs it names.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace drover {

enum class DependencyType { kAfter, kAfterAny, kAfterOk, kAfterNotOk, kAfterCorr, kSingleton };

struct DependencyTerm {
  DependencyType type = DependencyType::kAfterAny;
  uint64_t job_id = 0;        // 0 for singleton
  int64_t delay_seconds = 0;  // "+time" (minutes in Slurm's syntax), after/afterany/afterok...
  uint32_t array_task_id = UINT32_MAX;  // afterok:N_T: task T of array job N; UINT32_MAX: whole job
  bool operator==(const DependencyTerm&) const = default;
};

struct DependencySpec {
  std::vector<DependencyTerm> terms;
  bool any = false;  // terms joined by '?' (any satisfies) rather than ',' (all must)
  bool empty() const { return terms.empty(); }
  bool operator==(const DependencySpec&) const = default;
};

// Errors: "invalid dependency 'afterok:x' (expected TYPE:JOBID[:JOBID...][+MINUTES], e.g.
// afterok:123, or singleton)"; mixing ',' and '?' is refused as Slurm refuses it.
Result<DependencySpec> ParseDependency(std::string_view text);

// Slurm's form, as `scontrol show job` prints it: "afterok:12_*,afterany:14+10" style without
// the status suffixes: "afterok:12,afterany:14+10".
std::string FormatDependency(const DependencySpec& spec);

}  // namespace drover
