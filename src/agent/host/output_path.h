// The file names a batch job's stdout, stderr and stdin go to: Slurm's filename patterns (%j, %A,
// %a, %N, %u, %x, ... with zero padding, %% and the "\" escape), expanded as slurmstepd expands
// them and resolved against the job's working directory. Pure: never touches the file system.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/job_spec.h"
#include "common/result.h"

namespace drover::agent {

// What the patterns can name. For a batch script node_id and task_id are 0 and step_id is empty.
struct PatternContext {
  uint64_t job_id = 0;
  uint64_t array_job_id = 0;              // 0: not an array task
  uint32_t array_task_id = kNoArrayTask;  // kNoArrayTask: not an array task
  std::optional<uint32_t> step_id;        // empty: the batch script, which Slurm names "batch"
  uint32_t node_id = 0;                   // %n: this node's index in the job
  uint32_t task_id = 0;                   // %t: the task's rank
  std::string node_name;                  // %N: cut at the first '.', as Slurm's short hostname
  std::string user_name;                  // %u
  std::string job_name;                   // %x
  std::string work_dir;                   // relative names resolve against this absolute path
};

// The context for a job's batch script running on `node_name` (the job's first node).
PatternContext BatchPatternContext(const JobSpec& spec, std::string_view node_name);

// Expands `pattern` and makes it absolute. Symbols, as Slurm's sbatch(1) lists them:
//   %% a '%'          %A array master job id (the job id outside arrays)
//   %a array task id (4294967294 outside arrays, Slurm's NO_VAL)   %b %a modulo 10
//   %J jobid.stepid ("123.batch" for the batch script)   %j job id   %s step id ("batch")
//   %N short node name   %n node index   %t task rank   %u user name   %x job name
// A number after '%' zero-pads numeric symbols ("%5j" -> 00123), at most 10 wide, and is ignored
// for %N %u %x. Anything else after '%' stays as written ("%c" -> "%c"), except that Slurm keeps
// only the last digit of a width that precedes no symbol ("%12c" -> "2c"). A pattern containing
// '\' is not expanded at all: each '\' is dropped and "\\" gives one '\'.
// Errors: an empty pattern; a relative pattern with no absolute working directory.
Result<std::string> ExpandOutputPattern(std::string_view pattern, const PatternContext& ctx);

// The pattern used when the job names no stdout file: "slurm-%j.out", or "slurm-%A_%a.out" for
// an array task.
std::string DefaultOutputPath(const JobSpec& spec);

struct BatchIoPaths {
  std::string stdout_path, stderr_path, stdin_path;
};

// The batch script's three files: stdout from spec.stdout_path or the default, stderr from
// spec.stderr_path or else the same file as stdout, stdin from spec.stdin_path or /dev/null.
Result<BatchIoPaths> ResolveBatchIoPaths(const JobSpec& spec, const PatternContext& ctx);

}  // namespace drover::agent
