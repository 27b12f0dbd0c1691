// See srun_options.h.
#include "cli/srun/srun_options.h"

#include <fmt/format.h>

#include <sstream>

#include "common/text.h"

namespace drover::cli {

size_t CommandStart(std::span<const std::string> args, std::span<const OptionSpec> specs) {
  ScanRules rules;
  rules.stop_at_operand = true;
  OptionScan scan = ScanOptions(args, specs, rules);
  // A bad option before the command: every word goes to ParseOptions, which reports it.
  if (scan.error) return args.size();
  return scan.operands.empty() ? args.size() : scan.operands.front();
}

Result<std::map<uint32_t, std::vector<std::string>>> ParseMultiProg(std::string_view text,
                                                                    std::string_view file,
                                                                    uint32_t ntasks) {
  std::map<uint32_t, std::vector<std::string>> commands;
  std::istringstream lines{std::string(text)};
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    std::string trimmed(Trim(line));
    if (trimmed.empty() || trimmed[0] == '#') continue;
    std::istringstream words(trimmed);
    std::string ranks;
    words >> ranks;
    std::vector<std::string> argv;
    for (std::string word; words >> word;) argv.push_back(word);
    if (argv.empty())
      return MakeError(fmt::format("{} line {}: no program for ranks {}", file, number, ranks));
    std::vector<uint32_t> which;
    if (ranks == "*") {
      for (uint32_t t = 0; t < ntasks; ++t) which.push_back(t);
    } else {
      for (const std::string& part : Split(ranks, ',')) {
        std::vector<std::string> bounds = Split(part, '-');
        auto low = ParseUint64(bounds.front());
        auto high = ParseUint64(bounds.back());
        if (bounds.size() > 2 || !low || !high || *low > *high || *high >= ntasks)
          return MakeError(fmt::format("{} line {}: invalid task ranks '{}' for {} tasks", file,
                                       number, ranks, ntasks));
        for (uint64_t t = *low; t <= *high; ++t) which.push_back(static_cast<uint32_t>(t));
      }
    }
    for (size_t offset = 0; offset < which.size(); ++offset) {
      std::vector<std::string> expanded = argv;
      for (std::string& word : expanded) {
        for (size_t at = word.find("%t"); at != std::string::npos; at = word.find("%t", at))
          word.replace(at, 2, std::to_string(which[offset]));
        for (size_t at = word.find("%o"); at != std::string::npos; at = word.find("%o", at))
          word.replace(at, 2, std::to_string(offset));
      }
      commands.emplace(which[offset], std::move(expanded));  // the first line naming it wins
    }
  }
  for (uint32_t t = 0; t < ntasks; ++t)
    if (!commands.count(t)) return MakeError(fmt::format("{}: no program for task {}", file, t));
  return commands;
}

}  // namespace drover::cli
