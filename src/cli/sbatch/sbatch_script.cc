// The batch script and its #SBATCH lines; see sbatch_script.h.
#include "cli/sbatch/sbatch_script.h"

#include <fmt/format.h>

#include <cctype>
#include <vector>

#include "cli/sbatch/sbatch_option_table.h"
#include "cli/sbatch/sbatch_values.h"
#include "common/text.h"

namespace drover::cli::sbatch {
namespace {

// Splits what follows "#SBATCH" as Slurm's get_argument does: quotes group, a backslash escapes,
// an unquoted '#' ends the line, and an empty word ends it too.
Status SplitDirective(std::string_view rest, std::string_view line, int line_number,
                      std::vector<ScriptWord>& words) {
  size_t pos = 0;
  while (true) {
    while (pos < rest.size() && std::isspace(static_cast<unsigned char>(rest[pos]))) ++pos;
    if (pos >= rest.size()) return OkStatus();
    if (rest[pos] == ':')
      return Fail(fmt::format("line {}: Unexpected `:` in [{}]", line_number, line));
    std::string word;
    char quote = 0;
    bool escaped = false, comment = false;
    for (; pos < rest.size() && (quote || !std::isspace(static_cast<unsigned char>(rest[pos])));
         ++pos) {
      char c = rest[pos];
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
        continue;
      } else if (quote) {
        if (c == quote) {
          quote = 0;
          continue;
        }
      } else if (c == '"' || c == '\'') {
        quote = c;
        continue;
      } else if (c == '#') {
        comment = true;
        break;
      }
      word += c;
    }
    if (quote)
      return Fail(fmt::format("line {}: Unmatched `{}` in [{}]", line_number, quote, line));
    if (word.empty()) return OkStatus();
    if (EqualsIgnoreCase(word, "hetjob") || EqualsIgnoreCase(word, "packjob"))
      return Fail(
          fmt::format("heterogeneous jobs (#SBATCH {}) are not supported by Drover (line {})", word,
                      line_number));
    words.push_back({std::move(word), line_number});
    if (comment) return OkStatus();
  }
}

}  // namespace

Result<std::vector<ScriptWord>> DirectiveWords(std::string_view script, std::string_view magic,
                                               int commands_allowed) {
  std::vector<ScriptWord> words;
  int line_number = 0, commands = 0;
  for (const std::string& line : Split(script, '\n')) {
    ++line_number;
    if (line.starts_with(magic)) {
      std::string_view rest = std::string_view(line).substr(magic.size());
      if (Status ok = SplitDirective(rest, line, line_number, words); !ok)
        return std::move(ok).take_error();
      continue;
    }
    // #SBATCH lines end at the first command; Slurm reads #PBS and #BSUB lines until more than
    // 100 lines that do not start with '#', blank ones included.
    bool command = commands_allowed == 0 ? !Trim(line).empty() && Trim(line).front() != '#'
                                         : !line.starts_with('#');
    if (command && ++commands > commands_allowed) break;
  }
  return words;
}

// Slurm's checks on a batch script, with its messages.
Status CheckScript(std::string_view script) {
  if (script.empty()) return Fail("Batch script is empty!");
  if (Trim(script).empty()) return Fail("Batch script contains only whitespace!");
  if (!script.starts_with("#!"))
    return MakeError(
        "sbatch: error: This does not look like a batch script.  The first\n"
        "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
        "sbatch: error: For instance: #!/bin/sh");
  if (script.find('\0') != std::string_view::npos)
    return MakeError(
        "sbatch: error: The Slurm controller does not allow scripts that\n"
        "sbatch: error: contain a NULL character '\\0'.");
  if (script.find("\r\n") != std::string_view::npos)
    return MakeError(
        "sbatch: error: Batch script contains DOS line breaks (\\r\\n)\n"
        "sbatch: error: instead of expected UNIX line breaks (\\n).");
  return OkStatus();
}

// The script named on the command line: absolute, else in the working directory, else (a bare
// name) on PATH, as Slurm's search_path looks for it; "-" or none is standard input.
Result<std::string> ReadScript(const std::optional<std::string>& operand, const Inputs& in) {
  if (!operand || *operand == "-") {
    Result<std::string> text = in.read_file("-");
    if (!text)
      return Fail(
          fmt::format("Unable to read the batch script from standard input: {}", text.error()));
    return text;
  }
  std::vector<std::string> candidates = {Absolute(*operand, in.cwd)};
  auto path = in.environment.find("PATH");
  if (operand->find('/') == std::string::npos && path != in.environment.end())
    for (const std::string& dir : Split(path->second, ':'))
      if (!dir.empty()) candidates.push_back(Absolute(dir + "/" + *operand, in.cwd));
  for (const std::string& candidate : candidates)
    if (Result<std::string> text = in.read_file(candidate)) return text;
  return Fail(fmt::format("Unable to open file {}", *operand));
}

std::string WrapScript(const std::string& command) {
  return fmt::format("#!/bin/sh\n# This script was created by sbatch --wrap.\n\n{}\n", command);
}

Status ApplyScript(std::string_view script, const Inputs& in, Settings& s) {
  Result<std::vector<ScriptWord>> words = DirectiveWords(script, "#SBATCH", 0);
  if (!words) return std::move(words).take_error();
  std::vector<std::string> args;
  for (const ScriptWord& word : *words) args.push_back(word.text);
  ScannedOptions parsed = ScanSbatchOptions(args);
  auto origin = [&](size_t index) {
    return fmt::format("#SBATCH on line {}", (*words)[index].line);
  };
  for (auto& [use, index] : parsed.uses) {
    if (use.def->early) {
      s.Notice(fmt::format(
          "sbatch: warning: --{} is ignored in #SBATCH lines (line {}); give it on the command "
          "line",
          use.def->name, (*words)[index].line));
      continue;
    }
    use.source = Source::kScript;
    if (Status ok = Apply(std::move(use), in, s); !ok)
      return WithOrigin(std::move(ok).take_error(), origin(index));
  }
  if (!parsed.error.empty()) return WithOrigin(MakeError(parsed.error), origin(parsed.error_at));
  if (parsed.operands < args.size())
    s.Notice(fmt::format(
        "sbatch: warning: #SBATCH line {}: '{}' is not an option; it and the #SBATCH options "
        "after it are ignored",
        (*words)[parsed.operands].line, args[parsed.operands]));
  return OkStatus();
}

}  // namespace drover::cli::sbatch
