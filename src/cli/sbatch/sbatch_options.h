// sbatch's options as Slurm's sbatch reads them: GNU getopt on the command line, #SBATCH lines at
// the top of the script and SBATCH_* variables (command line > environment > script), validated
// into a JobSpec. Pure: files come through `read_file` and the time through `now`; it never
// prints, exits, reads the clock (unless asked to) or talks to the controller. Its parts are in
// src/cli/sbatch/sbatch_*.h (docs/cli.md).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/job_spec.h"
#include "common/result.h"

namespace drover::cli {

struct SbatchRequest {
  JobSpec spec;        // every field the options give (script_args too); the rest keep defaults
  std::string array;   // --array as given; the controller parses it
  std::string script;  // the script's text (a file, stdin, or the one --wrap writes)
  bool parsable = false, test_only = false, wait = false, quiet = false, hold = false;
  // -M/--clusters (SBATCH_CLUSTERS, SLURM_CLUSTERS) as given: sbatch checks it against the
  // cluster's name once it has read slurm.conf, and then names the cluster when it reports.
  std::optional<std::string> clusters;
  // --propagate's list as given ("": ALL), checked: sbatch reads its limits (spec.rlimits) once
  // it has read slurm.conf, whose PropagateResourceLimits apply when the option is not given.
  std::optional<std::string> propagate;
  // Lines to print on stderr before submitting ("sbatch: warning: ..."), each said once: options
  // Drover accepts but does not act on, and what sbatch itself warns about.
  std::vector<std::string> notices;
  // --help, --usage, --version: print this on stdout and exit with exit_code; nothing else is set.
  std::string print_and_exit;
  int exit_code = 0;
};

// Reads a whole file; "-" is standard input. An error carries the reason (for example
// "No such file or directory").
using ReadFile = std::function<Result<std::string>(const std::string& path)>;

// argv without "sbatch". `environment` is the caller's environment: SBATCH_* input variables are
// read from it and --export copies from it, so the caller adds what sbatch itself sets in its own
// environment and cannot compute purely (SLURM_SUBMIT_HOST, SLURM_UMASK, SLURM_PRIO_PROCESS)
// before calling; SLURM_SUBMIT_DIR (= cwd) is added here. `cwd` must be absolute. `now` (epoch
// seconds) resolves --begin and --deadline, in the process's local time zone as Slurm does.
//
// Errors are the lines to print on stderr, without a trailing newline, after which sbatch exits
// with status 1. Option errors read exactly as Slurm's ("sbatch: unrecognized option '--foo'\n
// Try \"sbatch --help\" for more information", "sbatch: error: Invalid --time specification");
// those from #SBATCH lines or SBATCH_* variables end with where the value came from
// (" (#SBATCH on line 3)", " (SBATCH_TIMELIMIT=x)").
Result<SbatchRequest> ParseSbatch(std::span<const std::string> argv, const ReadFile& read_file,
                                  const std::map<std::string, std::string>& environment,
                                  const std::string& cwd, uint32_t uid, uint32_t gid,
                                  const std::string& user, int64_t now);

// The same from the command line alone: the script's #SBATCH (#PBS, #BSUB) lines and the
// SBATCH_* variables of `environment` are not read, as slurmrestd reads a job description (the
// REST API's submissions).
Result<SbatchRequest> ParseSbatchCommandLine(std::span<const std::string> argv,
                                             const ReadFile& read_file,
                                             const std::map<std::string, std::string>& environment,
                                             const std::string& cwd, uint32_t uid, uint32_t gid,
                                             const std::string& user, int64_t now);

// The same as ParseSbatch, with `now` read from the system clock.
Result<SbatchRequest> ParseSbatch(std::span<const std::string> argv, const ReadFile& read_file,
                                  const std::map<std::string, std::string>& environment,
                                  const std::string& cwd, uint32_t uid, uint32_t gid,
                                  const std::string& user);

}  // namespace drover::cli
