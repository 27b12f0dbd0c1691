// GNU getopt_long's rules over a table of options; see getopt.h.
#include "common/getopt.h"

#include <fmt/format.h>

#include <cstdio>

namespace drover {

bool ParsedOptions::Has(std::string_view name) const {
  for (const auto& [key, value] : options)
    if (key == name) return true;
  return false;
}

std::optional<std::string> ParsedOptions::Last(std::string_view name) const {
  std::optional<std::string> last;
  for (const auto& [key, value] : options)
    if (key == name) last = value;
  return last;
}

std::vector<std::string> ParsedOptions::All(std::string_view name) const {
  std::vector<std::string> all;
  for (const auto& [key, value] : options)
    if (key == name) all.push_back(value);
  return all;
}

namespace {

// An exact long name wins; otherwise a prefix must name exactly one option. `quoted` is how the
// error names what was typed.
Result<const OptionSpec*> FindLong(std::string_view name, std::string_view quoted,
                                   std::span<const OptionSpec> specs) {
  std::vector<const OptionSpec*> candidates;
  for (const OptionSpec& spec : specs) {
    if (spec.long_name.empty()) continue;
    if (spec.long_name == name) return &spec;
    if (spec.long_name.starts_with(name)) candidates.push_back(&spec);
  }
  if (candidates.size() == 1) return candidates[0];
  if (candidates.empty()) return MakeError(fmt::format("unrecognized option '--{}'", quoted));
  std::string possibilities;
  for (const OptionSpec* spec : candidates)
    possibilities += fmt::format(" '--{}'", spec->long_name);
  return MakeError(
      fmt::format("option '--{}' is ambiguous; possibilities:{}", quoted, possibilities));
}

// The scan's position and what it has found so far.
class Scanner {
 public:
  Scanner(std::span<const std::string> args, std::span<const OptionSpec> specs, ScanRules rules)
      : args_(args), specs_(specs), rules_(rules) {}

  OptionScan Run() && {
    for (; i_ < args_.size() && !scan_.error; ++i_) {
      const std::string& arg = args_[i_];
      if (arg == "--") {
        Operands(i_ + 1);
        break;
      }
      size_t at = i_;
      std::optional<std::string> error;
      if (arg.size() > 2 && arg.starts_with("--")) {
        error = Long(arg.substr(2));
      } else if (arg.size() > 1 && arg[0] == '-') {
        error = Shorts(arg);
      } else if (rules_.stop_at_operand) {
        Operands(i_);
        break;
      } else {
        scan_.operands.push_back(i_);
      }
      if (error) {
        scan_.error = std::move(error);
        scan_.error_argument = at;
      }
    }
    return std::move(scan_);
  }

 private:
  void Operands(size_t from) {
    for (size_t k = from; k < args_.size(); ++k) scan_.operands.push_back(k);
  }

  // "--name[=value]"; takes the next word as the value when the option requires one.
  std::optional<std::string> Long(std::string_view typed) {
    size_t equals = typed.find('=');
    std::string_view name = typed.substr(0, equals);
    auto found = FindLong(name, rules_.quote_whole_argument ? typed : name, specs_);
    if (!found) return found.error();
    const OptionSpec& spec = **found;
    OptionUse use{&spec, std::nullopt, i_};
    if (equals != std::string_view::npos) {
      if (spec.argument == OptionSpec::kNone)
        return fmt::format("option '--{}' doesn't allow an argument", spec.long_name);
      use.value = std::string(typed.substr(equals + 1));
    } else if (spec.argument == OptionSpec::kRequired) {
      if (i_ + 1 >= args_.size()) {
        scan_.lacks_value = &spec;
        return fmt::format("option '--{}' requires an argument", spec.long_name);
      }
      use.value = args_[++i_];  // only "--name=value" gives an optional argument
    }
    use.argument = i_;
    scan_.uses.push_back(std::move(use));
    return std::nullopt;
  }

  // A cluster of short options ("-hlN3", "-n", "4").
  std::optional<std::string> Shorts(const std::string& cluster) {
    for (size_t k = 1; k < cluster.size(); ++k) {
      const OptionSpec* spec = nullptr;
      for (const OptionSpec& candidate : specs_)
        if (candidate.short_name != 0 && candidate.short_name == cluster[k]) spec = &candidate;
      if (!spec) return fmt::format("invalid option -- '{}'", cluster[k]);
      OptionUse use{spec, std::nullopt, i_};
      if (spec->argument == OptionSpec::kNone) {
        scan_.uses.push_back(std::move(use));
        continue;
      }
      if (k + 1 < cluster.size()) {
        use.value = cluster.substr(k + 1);
      } else if (spec->argument == OptionSpec::kRequired) {
        if (i_ + 1 >= args_.size()) {
          scan_.lacks_value = spec;
          return fmt::format("option requires an argument -- '{}'", cluster[k]);
        }
        use.value = args_[++i_];
      }
      use.argument = i_;
      scan_.uses.push_back(std::move(use));
      break;
    }
    return std::nullopt;
  }

  std::span<const std::string> args_;
  std::span<const OptionSpec> specs_;
  ScanRules rules_;
  size_t i_ = 0;
  OptionScan scan_;
};

}  // namespace

OptionScan ScanOptions(std::span<const std::string> args, std::span<const OptionSpec> specs,
                       ScanRules rules) {
  return Scanner(args, specs, rules).Run();
}

Result<ParsedOptions> ParseOptions(std::span<const std::string> args,
                                   std::span<const OptionSpec> specs) {
  OptionScan scan = ScanOptions(args, specs);
  if (scan.error) return MakeError(std::move(*scan.error));
  ParsedOptions parsed;
  for (OptionUse& use : scan.uses)
    parsed.options.emplace_back(std::string(use.spec->long_name), use.value.value_or(""));
  for (size_t index : scan.operands) parsed.operands.push_back(args[index]);
  return parsed;
}

int OptionError(std::string_view command, std::string_view message, int code) {
  std::fprintf(stderr, "%.*s: %.*s\nTry \"%.*s --help\" for more information\n",
               static_cast<int>(command.size()), command.data(), static_cast<int>(message.size()),
               message.data(), static_cast<int>(command.size()), command.data());
  return code;
}

std::optional<size_t> FirstRefused(const OptionScan& scan) {
  std::optional<size_t> refused;
  if (!scan.operands.empty()) refused = scan.operands.front();
  if (scan.error && (!refused || scan.error_argument < *refused)) refused = scan.error_argument;
  return refused;
}

}  // namespace drover
