// Option parsing as GNU getopt_long does it, shared by every command and both daemons: long
// options with "=value" or a separate value, unambiguous prefixes of long options ("--part" for
// "--partition"), short options with the value attached ("-N2") or separate ("-n 4"), bundled
// short flags ("-hl"), operands anywhere ("scancel 12 --signal USR2"), repeated options kept in
// order, and "--" ending options. Errors carry GNU's wording; the caller adds its "Try ... --help".
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace drover {

struct OptionSpec {
  enum Argument { kNone, kRequired, kOptional };
  char short_name;             // 0: none
  std::string_view long_name;  // the name every parsed option is reported under
  Argument argument;
};

struct ParsedOptions {
  std::vector<std::pair<std::string, std::string>> options;  // long name, value, in order
  std::vector<std::string> operands;

  bool Has(std::string_view name) const;
  // The last value given for `name` (a repeated option overrides), if it was given.
  std::optional<std::string> Last(std::string_view name) const;
  // Every value given for `name`, in order.
  std::vector<std::string> All(std::string_view name) const;
};

// GNU getopt's scan itself, for a command that needs more than ParseOptions gives (sbatch, for
// its command line and its #SBATCH lines): the spec each option matched and the word it came
// from, an optional argument told apart from an empty one, and what came before an error.
struct OptionUse {
  const OptionSpec* spec = nullptr;
  std::optional<std::string> value;  // nullopt: none given (kNone, or a kOptional left out)
  size_t argument = 0;               // index in args of the word it ended on (its value's)
};

struct OptionScan {
  std::vector<OptionUse> uses;              // in order; after an error, those before it
  std::vector<size_t> operands;             // indexes in args, in order
  std::optional<std::string> error;         // GNU getopt's message; the scan stopped there
  size_t error_argument = 0;                // index in args of the word the error is about
  const OptionSpec* lacks_value = nullptr;  // the error is this option's missing value
};

struct ScanRules {
  // getopt's leading '+' (POSIXLY_CORRECT): the first operand ends the options, and every word
  // from it on is an operand. Otherwise operands may come anywhere, as GNU permutes them.
  bool stop_at_operand = false;
  // An unknown or ambiguous long option is quoted whole, "=value" included, as glibc quotes it
  // ("unrecognized option '--foo=1'"); otherwise by its name alone ("'--foo'").
  bool quote_whole_argument = false;
};

OptionScan ScanOptions(std::span<const std::string> args, std::span<const OptionSpec> specs,
                       ScanRules rules = {});

// For a command that takes no operands: the index of the first word it refuses — an operand, or
// the word the scan stopped at (an unknown or ambiguous option, one missing its value).
std::optional<size_t> FirstRefused(const OptionScan& scan);

// Parses `args` (without the command's own name). The error is GNU getopt's message, such as
// "unrecognized option '--foo'" or "option requires an argument -- 'p'".
Result<ParsedOptions> ParseOptions(std::span<const std::string> args,
                                   std::span<const OptionSpec> specs);

// Prints "COMMAND: MESSAGE" and Slurm's hint to stderr; returns the exit code Slurm's commands
// use for a bad option (1, or 2 where `code` says so).
int OptionError(std::string_view command, std::string_view message, int code = 1);

}  // namespace drover
