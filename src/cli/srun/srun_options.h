// What srun and salloc read before they talk to anyone: where their own options end and the
// command begins, and srun's --multi-prog file. Pure, for tests.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/getopt.h"
#include "common/result.h"

namespace drover::cli {

// GNU getopt with a leading '+' (as srun and salloc use it) stops at the first operand: what
// follows is the command's. Returns the index of the command's first word (args.size() when
// there is none); a "--" before it is not part of either.
size_t CommandStart(std::span<const std::string> args, std::span<const OptionSpec> specs);

// --multi-prog's file: lines "RANKS PROGRAM ARGS...", ranks as "0", "1-3", "0,2-3" or "*",
// '#' comments; in the arguments "%t" is the task's rank and "%o" its offset within the line's
// ranks. Every task 0..ntasks-1 needs a line. Errors name the file and line.
Result<std::map<uint32_t, std::vector<std::string>>> ParseMultiProg(std::string_view text,
                                                                    std::string_view file,
                                                                    uint32_t ntasks);

// An input environment variable standing for an option (srun(1) and salloc(1), INPUT ENVIRONMENT
// VARIABLES).
struct InputVariable {
  std::string_view variable;
  std::string_view option;  // the long name, as `specs` spell it
};

// The option words the variables set in `env` stand for, to be read before the command line's
// (which win). A flag is set by an empty value, "yes" or a non-zero number, and by nothing else;
// the first variable listed for an option wins over later ones.
std::vector<std::string> InputVariableWords(std::span<const InputVariable> table,
                                            std::span<const OptionSpec> specs,
                                            const std::map<std::string, std::string>& env);

// The step's environment under --export=`value` (srun(1)): ALL (the default) every variable of
// `env`; NONE only the SLURM_* ones (Slurm's own, which its step daemon would set); a list
// "[ALL,]NAME[=value],..." the SLURM_* ones and those named (with ALL, all of them, a variable
// of `env` winning over the value given).
std::map<std::string, std::string> ExportedEnvironment(
    std::string_view value, const std::map<std::string, std::string>& env);

// --het-group=LIST (srun(1)): component indexes as "1", "0,2", "0-2" or "[0-2]", each from 0 to
// 127, as Slurm's srun reads them. The highest index, or "Invalid --het-group value: LIST".
Result<uint32_t> HighestHetGroup(std::string_view list);

// --slurmd-debug=LEVEL: a number N (Slurm's error level plus N) or a SlurmdDebug name (quiet,
// fatal, error, info, verbose, debug, debug2 ... debug5), as Slurm's log levels number them
// (quiet 0 ... verbose 4, debug 5 ... debug5 9).
Result<int> SlurmdDebugLevel(std::string_view level);
inline constexpr int kLogVerbose = 4;  // the level from which the step's agent says more

// A positive count of seconds (--msg-timeout), as Slurm's parse_int checks it; otherwise
// "Invalid numeric value "TEXT" for --NAME.".
Result<int> PositiveSeconds(std::string_view text, std::string_view name);

}  // namespace drover::cli
