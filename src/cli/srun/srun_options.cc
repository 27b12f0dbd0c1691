// See srun_options.h.
#include "cli/srun/srun_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <iterator>
#include <optional>
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

std::vector<std::string> InputVariableWords(std::span<const InputVariable> table,
                                            std::span<const OptionSpec> specs,
                                            const std::map<std::string, std::string>& env) {
  std::vector<std::string> words;
  std::vector<std::string_view> done;
  for (const InputVariable& input : table) {
    auto it = env.find(std::string(input.variable));
    if (it == env.end() || std::find(done.begin(), done.end(), input.option) != done.end())
      continue;
    auto spec = std::find_if(specs.begin(), specs.end(),
                             [&](const OptionSpec& one) { return one.long_name == input.option; });
    if (spec == specs.end()) continue;  // an option this command does not have
    done.push_back(input.option);
    const std::string& value = it->second;
    if (spec->argument == OptionSpec::kNone) {
      auto number = ParseUint64(value);
      if (value.empty() || ToLower(value) == "yes" || (number && *number != 0))
        words.push_back(fmt::format("--{}", input.option));
    } else if (spec->argument == OptionSpec::kOptional && value.empty()) {
      words.push_back(fmt::format("--{}", input.option));
    } else {
      words.push_back(fmt::format("--{}={}", input.option, value));
    }
  }
  return words;
}

std::map<std::string, std::string> ExportedEnvironment(
    std::string_view value, const std::map<std::string, std::string>& env) {
  std::vector<std::string> items =
      value.empty() ? std::vector<std::string>{"ALL"} : Split(value, ',');
  bool all = std::find(items.begin(), items.end(), "ALL") != items.end();
  std::map<std::string, std::string> out;
  for (const auto& [name, text] : env)
    if (all || name.starts_with("SLURM_")) out.emplace(name, text);
  for (const std::string& item : items) {
    if (item == "ALL" || item == "NONE") continue;
    size_t equals = item.find('=');
    if (equals != std::string::npos) {
      out.emplace(item.substr(0, equals), item.substr(equals + 1));  // the caller's value wins
    } else if (auto it = env.find(item); it != env.end()) {
      out.emplace(it->first, it->second);
    }
  }
  return out;
}

Result<uint32_t> HighestHetGroup(std::string_view list) {
  constexpr uint64_t kMostComponents = 128;  // Slurm's MAX_HET_JOB_COMPONENTS
  auto invalid = [&] { return MakeError(fmt::format("Invalid --het-group value: {}", list)); };
  std::string_view inner = list;
  if (inner.starts_with('[') && inner.ends_with(']')) inner = inner.substr(1, inner.size() - 2);
  if (inner.empty()) return invalid();
  uint64_t highest = 0;
  for (const std::string& item : Split(inner, ',')) {
    std::vector<std::string> bounds = Split(item, '-');
    if (bounds.size() > 2) return invalid();
    std::optional<uint64_t> first = ParseUint64(bounds.front());
    std::optional<uint64_t> last = ParseUint64(bounds.back());
    if (!first || !last || *first > *last || *last >= kMostComponents) return invalid();
    highest = std::max(highest, *last);
  }
  return static_cast<uint32_t>(highest);
}

Result<int> SlurmdDebugLevel(std::string_view level) {
  constexpr std::string_view kNames[] = {"quiet", "fatal",  "error",  "info",   "verbose",
                                         "debug", "debug2", "debug3", "debug4", "debug5"};
  constexpr int kError = 2;
  if (!level.empty() && std::isdigit(static_cast<unsigned char>(level.front()))) {
    std::optional<uint64_t> number = ParseUint64(level);
    if (!number || *number > 7)
      return MakeError(fmt::format("Invalid --slurmd-debug value: {}", level));
    return kError + static_cast<int>(*number);
  }
  for (size_t i = 0; i < std::size(kNames); ++i)
    if (EqualsIgnoreCase(level, kNames[i])) return static_cast<int>(i);
  return MakeError(fmt::format("Invalid --slurmd-debug value: {}", level));
}

Result<int> PositiveSeconds(std::string_view text, std::string_view name) {
  std::optional<int64_t> number = ParseInt64(text);
  if (!number || *number <= 0 || *number > INT32_MAX)
    return MakeError(fmt::format("Invalid numeric value \"{}\" for --{}.", text, name));
  return static_cast<int>(*number);
}

}  // namespace drover::cli
