// See resource_limits.h.
#include "common/resource_limits.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include "common/text.h"

namespace drover {
namespace {

constexpr std::pair<std::string_view, int> kLimits[] = {
    {"AS", RLIMIT_AS},         {"CORE", RLIMIT_CORE},   {"CPU", RLIMIT_CPU},
    {"DATA", RLIMIT_DATA},     {"FSIZE", RLIMIT_FSIZE}, {"MEMLOCK", RLIMIT_MEMLOCK},
    {"NOFILE", RLIMIT_NOFILE}, {"NPROC", RLIMIT_NPROC}, {"RSS", RLIMIT_RSS},
    {"STACK", RLIMIT_STACK},
};

std::string Upper(std::string_view text) {
  std::string upper(text);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper;
}

std::string FormatValue(rlim_t value) {
  return value == RLIM_INFINITY ? "unlimited" : std::to_string(value);
}

std::optional<rlim_t> ParseValue(std::string_view text) {
  if (text == "unlimited") return RLIM_INFINITY;
  std::optional<uint64_t> number = ParseUint64(text);
  if (!number) return std::nullopt;
  return static_cast<rlim_t>(*number);
}

}  // namespace

const std::vector<std::string_view>& ResourceLimitNames() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> all;
    for (const auto& [name, resource] : kLimits) all.push_back(name);
    return all;
  }();
  return names;
}

std::optional<int> ResourceOfLimit(std::string_view name) {
  for (const auto& [known, resource] : kLimits)
    if (known == name) return resource;
  return std::nullopt;
}

Result<std::vector<std::string>> ParseLimitList(std::string_view text) {
  std::vector<std::string> chosen;
  for (const std::string& item : Split(text, ',')) {
    std::string word = Upper(Trim(item));
    if (word == "ALL") {
      chosen.assign(ResourceLimitNames().begin(), ResourceLimitNames().end());
    } else if (word == "NONE") {
      chosen.clear();
    } else if (ResourceOfLimit(word)) {
      if (std::find(chosen.begin(), chosen.end(), word) == chosen.end()) chosen.push_back(word);
    } else {
      return MakeError(
          fmt::format("'{}' is not a resource limit (expected ALL, NONE or {})", Trim(item),
                      Join({ResourceLimitNames().begin(), ResourceLimitNames().end()}, ", ")));
    }
  }
  std::vector<std::string> ordered;
  for (std::string_view name : ResourceLimitNames())
    if (std::find(chosen.begin(), chosen.end(), name) != chosen.end()) ordered.emplace_back(name);
  return ordered;
}

Result<LimitChoice> ChooseLimits(const std::optional<std::string>& option,
                                 const std::optional<std::string>& conf_limits,
                                 const std::string& conf_except) {
  LimitChoice choice;
  if (option) {
    auto names = ParseLimitList(option->empty() ? "ALL" : *option);
    if (!names) return std::move(names).take_error();
    choice.names = std::move(*names);
    choice.user_requested = true;
    return choice;
  }
  if (!conf_except.empty()) {
    auto excluded = ParseLimitList(conf_except);
    if (!excluded) return std::move(excluded).take_error();
    for (std::string_view name : ResourceLimitNames())
      if (std::find(excluded->begin(), excluded->end(), name) == excluded->end())
        choice.names.emplace_back(name);
    return choice;
  }
  auto names = ParseLimitList(conf_limits.value_or("ALL"));
  if (!names) return std::move(names).take_error();
  choice.names = std::move(*names);
  return choice;
}

std::string FormatPropagatedLimit(const PropagatedLimit& limit) {
  return fmt::format("{}={}{}:{}", limit.name, limit.user_requested ? "U" : "",
                     FormatValue(limit.soft), FormatValue(limit.hard));
}

Result<PropagatedLimit> ParsePropagatedLimit(std::string_view entry) {
  auto bad = [&] {
    return MakeError(fmt::format(
        "resource limit '{}' is not NAME=soft:hard (values a number or unlimited)", entry));
  };
  size_t equals = entry.find('=');
  size_t colon = entry.find(':');
  if (equals == std::string_view::npos || colon == std::string_view::npos || colon < equals)
    return bad();
  PropagatedLimit limit;
  limit.name = std::string(entry.substr(0, equals));
  std::optional<int> resource = ResourceOfLimit(limit.name);
  if (!resource) return bad();
  limit.resource = *resource;
  std::string_view soft = entry.substr(equals + 1, colon - equals - 1);
  if (soft.starts_with('U')) {
    limit.user_requested = true;
    soft.remove_prefix(1);
  }
  auto soft_value = ParseValue(soft);
  auto hard_value = ParseValue(entry.substr(colon + 1));
  if (!soft_value || !hard_value) return bad();
  limit.soft = *soft_value;
  limit.hard = *hard_value;
  return limit;
}

std::vector<std::string> CaptureLimits(const LimitChoice& choice) {
  std::vector<std::string> entries;
  for (const std::string& name : choice.names) {
    rlimit value{};
    int resource = ResourceOfLimit(name).value_or(-1);
    if (resource < 0 || ::getrlimit(resource, &value) != 0) continue;
    entries.push_back(FormatPropagatedLimit(
        {name, resource, value.rlim_cur, value.rlim_max, choice.user_requested}));
  }
  return entries;
}

}  // namespace drover
