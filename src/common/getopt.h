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

// Parses `args` (without the command's own name). The error is GNU getopt's message, such as
// "unrecognized option '--foo'" or "option requires an argument -- 'p'".
Result<ParsedOptions> ParseOptions(std::span<const std::string> args,
                                   std::span<const OptionSpec> specs);

// Prints "COMMAND: MESSAGE" and Slurm's hint to stderr; returns the exit code Slurm's commands
// use for a bad option (1, or 2 where `code` says so).
int OptionError(std::string_view command, std::string_view message, int code = 1);

}  // namespace drover
