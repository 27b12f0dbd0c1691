// The batch script sbatch submits: where it is read from, Slurm's checks on it, the script
// --wrap writes, and its #SBATCH lines, read as Slurm's get_argument reads them and applied as
// options. Reads files only through Inputs::read_file.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/sbatch/sbatch_settings.h"
#include "common/result.h"

namespace drover::cli::sbatch {

struct ScriptWord {
  std::string text;
  int line = 0;
};
// The words of the script's `magic` lines ("#SBATCH", "#PBS", "#BSUB"), split as Slurm's
// get_argument splits them, up to the first command when `commands_allowed` is 0, else until
// more than that many lines that do not start with '#'.
Result<std::vector<ScriptWord>> DirectiveWords(std::string_view script, std::string_view magic,
                                               int commands_allowed);

// Slurm's checks on a batch script, with its messages.
Status CheckScript(std::string_view script);
// The script named on the command line: absolute, else in the working directory, else (a bare
// name) on PATH, as Slurm's search_path looks for it; "-" or none is standard input.
Result<std::string> ReadScript(const std::optional<std::string>& operand, const Inputs& in);
std::string WrapScript(const std::string& command);
// Applies the #SBATCH lines before the script's first command; --help and the other options
// Slurm reads before the script are ignored there, with a notice.
Status ApplyScript(std::string_view script, const Inputs& in, Settings& s);

}  // namespace drover::cli::sbatch
