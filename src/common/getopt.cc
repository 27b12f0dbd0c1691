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

// An exact long name wins; otherwise a prefix must name exactly one option.
Result<const OptionSpec*> FindLong(std::string_view name, std::span<const OptionSpec> specs) {
  std::vector<const OptionSpec*> candidates;
  for (const OptionSpec& spec : specs) {
    if (spec.long_name.empty()) continue;
    if (spec.long_name == name) return &spec;
    if (spec.long_name.starts_with(name)) candidates.push_back(&spec);
  }
  if (candidates.size() == 1) return candidates[0];
  if (candidates.empty()) return MakeError(fmt::format("unrecognized option '--{}'", name));
  std::string possibilities;
  for (const OptionSpec* spec : candidates)
    possibilities += fmt::format(" '--{}'", spec->long_name);
  return MakeError(
      fmt::format("option '--{}' is ambiguous; possibilities:{}", name, possibilities));
}

}  // namespace

Result<ParsedOptions> ParseOptions(std::span<const std::string> args,
                                   std::span<const OptionSpec> specs) {
  ParsedOptions parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      for (++i; i < args.size(); ++i) parsed.operands.push_back(args[i]);
      break;
    }
    if (arg.size() > 2 && arg.starts_with("--")) {
      std::string name = arg.substr(2), value;
      size_t eq = name.find('=');
      bool has_value = eq != std::string::npos;
      if (has_value) {
        value = name.substr(eq + 1);
        name.resize(eq);
      }
      auto found = FindLong(name, specs);
      if (!found) return std::move(found).take_error();
      const OptionSpec& spec = **found;
      switch (spec.argument) {
        case OptionSpec::kNone:
          if (has_value)
            return MakeError(
                fmt::format("option '--{}' doesn't allow an argument", spec.long_name));
          break;
        case OptionSpec::kRequired:
          if (!has_value) {
            if (i + 1 >= args.size())
              return MakeError(fmt::format("option '--{}' requires an argument", spec.long_name));
            value = args[++i];
          }
          break;
        case OptionSpec::kOptional:
          break;  // only "--name=value" gives an optional argument
      }
      parsed.options.emplace_back(std::string(spec.long_name), std::move(value));
      continue;
    }
    if (arg.size() > 1 && arg[0] == '-') {
      for (size_t k = 1; k < arg.size(); ++k) {
        const OptionSpec* spec = nullptr;
        for (const OptionSpec& s : specs)
          if (s.short_name != 0 && s.short_name == arg[k]) spec = &s;
        if (!spec) return MakeError(fmt::format("invalid option -- '{}'", arg[k]));
        if (spec->argument == OptionSpec::kNone) {
          parsed.options.emplace_back(std::string(spec->long_name), "");
          continue;
        }
        std::string value;
        if (k + 1 < arg.size()) {
          value = arg.substr(k + 1);
        } else if (spec->argument == OptionSpec::kRequired) {
          if (i + 1 >= args.size())
            return MakeError(fmt::format("option requires an argument -- '{}'", arg[k]));
          value = args[++i];
        }
        parsed.options.emplace_back(std::string(spec->long_name), std::move(value));
        break;
      }
      continue;
    }
    parsed.operands.push_back(arg);
  }
  return parsed;
}

int OptionError(std::string_view command, std::string_view message, int code) {
  std::fprintf(stderr, "%.*s: %.*s\nTry \"%.*s --help\" for more information\n",
               static_cast<int>(command.size()), command.data(), static_cast<int>(message.size()),
               message.data(), static_cast<int>(command.size()), command.data());
  return code;
}

}  // namespace drover
