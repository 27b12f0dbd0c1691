// sbatch's option table, after Slurm's slurm_opt.c (names, letters, argument kinds, so GNU
// getopt's abbreviations resolve to the same options), and how one option's use is applied to
// the Settings. The table is data; each handler validates only its own option's value.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/sbatch/sbatch_settings.h"
#include "common/getopt.h"
#include "common/result.h"

namespace drover::cli::sbatch {

using Arg = OptionSpec::Argument;

struct OptionDef;

struct Use {
  const OptionDef* def = nullptr;
  std::optional<std::string> value;
  Source source = Source::kCommandLine;
  const Inputs* in = nullptr;
  const std::string& text() const { return *value; }
};

using Handler = Status (*)(const Use&, Settings&);

struct OptionDef {
  constexpr OptionDef(std::string_view name_, char letter_, Arg arg_, Handler handler_,
                      bool early_ = false, std::string_view alias_of_ = {})
      : name(name_),
        letter(letter_),
        arg(arg_),
        handler(handler_),
        early(early_),
        alias_of(alias_of_) {}

  std::string_view name;  // after "--"; empty for an environment-only option
  char letter;            // the short option; 0 for none
  Arg arg;
  Handler handler;            // none for --help, --usage and --version, which end parsing
  bool early;                 // Slurm reads it before the script, and ignores it in #SBATCH lines
  std::string_view alias_of;  // the option this name also spells (getopt treats them as one)
};

// Every option, alphabetical; two unnamed environment-only entries end it.
const std::vector<OptionDef>& Options();
// The option named `name` (a bug when there is none).
const OptionDef& Option(std::string_view name);

// Runs the option's handler over `s`, with `in` for what it reads.
Status Apply(Use use, const Inputs& in, Settings& s);
// Appends where a value came from to the first line of an error.
Error WithOrigin(Error error, std::string_view origin);

// The options among `args`, as GNU getopt_long with "+" finds them (common/getopt.h): they stop
// at the first operand or at "--".
struct ScannedOptions {
  std::vector<std::pair<Use, size_t>> uses;  // each option and the word it ended on
  size_t operands = 0;                       // the index of the first operand
  std::string error;                         // sbatch's message; `uses` are those before it
  size_t error_at = 0;                       // the word the error is about
};
ScannedOptions ScanSbatchOptions(std::span<const std::string> args);

}  // namespace drover::cli::sbatch
