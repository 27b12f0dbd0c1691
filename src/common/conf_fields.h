// Table-driven binding of configuration keys to typed fields: each key names a setter that
// parses its value and stores it, or returns the message to show. Used for slurm.conf's
// cluster keys and for NodeName and PartitionName lines, so every key is one table row.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/duration.h"
#include "common/memory_size.h"
#include "common/text.h"

namespace drover {

// An error message, or nullopt when the value was stored.
using SetResult = std::optional<std::string>;

template <typename Target>
struct ConfField {
  std::string_view name;  // Slurm's spelling; matched case-insensitively
  std::function<SetResult(Target&, std::string_view)> set;
};

template <typename Target>
const ConfField<Target>* FindField(const std::vector<ConfField<Target>>& table,
                                   std::string_view key) {
  for (const auto& field : table)
    if (EqualsIgnoreCase(field.name, key)) return &field;
  return nullptr;
}

namespace conf {

inline SetResult Invalid(std::string_view value, std::string_view expected) {
  return fmt::format("invalid value '{}' ({})", value, expected);
}

// YES/NO, TRUE/FALSE, 1/0, in any case.
std::optional<bool> ParseBool(std::string_view value);

template <typename Target>
auto String(std::string Target::*member) {
  return [member](Target& target, std::string_view value) -> SetResult {
    target.*member = std::string(value);
    return std::nullopt;
  };
}

template <typename Target, typename Int>
auto Integer(Int Target::*member, int64_t min = 0,
             int64_t max = std::numeric_limits<int32_t>::max()) {
  return [=](Target& target, std::string_view value) -> SetResult {
    auto parsed = ParseInt64(value);
    if (!parsed || *parsed < min || *parsed > max)
      return Invalid(value, fmt::format("expected a whole number from {} to {}", min, max));
    target.*member = static_cast<Int>(*parsed);
    return std::nullopt;
  };
}

// A whole number, or UNLIMITED/INFINITE which stores `unlimited`.
template <typename Target, typename Int>
auto Limit(Int Target::*member, Int unlimited) {
  return [=](Target& target, std::string_view value) -> SetResult {
    if (EqualsIgnoreCase(value, "UNLIMITED") || EqualsIgnoreCase(value, "INFINITE")) {
      target.*member = unlimited;
      return std::nullopt;
    }
    auto parsed = ParseInt64(value);
    if (!parsed || *parsed < 0) return Invalid(value, "expected a whole number or UNLIMITED");
    target.*member = static_cast<Int>(*parsed);
    return std::nullopt;
  };
}

template <typename Target, typename Member>
auto Duration(Member Target::*member) {
  return [=](Target& target, std::string_view value) -> SetResult {
    auto parsed = ParseDuration(value);
    if (!parsed) return parsed.error();
    target.*member = *parsed;
    return std::nullopt;
  };
}

template <typename Target, typename Member>
auto Memory(Member Target::*member) {
  return [=](Target& target, std::string_view value) -> SetResult {
    if (EqualsIgnoreCase(value, "UNLIMITED") || EqualsIgnoreCase(value, "INFINITE")) {
      target.*member = 0;
      return std::nullopt;
    }
    auto parsed = ParseMemoryMB(value);
    if (!parsed) return parsed.error();
    target.*member = *parsed;
    return std::nullopt;
  };
}

template <typename Target>
auto Bool(bool Target::*member) {
  return [=](Target& target, std::string_view value) -> SetResult {
    auto parsed = ParseBool(value);
    if (!parsed) return Invalid(value, "expected YES or NO");
    target.*member = *parsed;
    return std::nullopt;
  };
}

// One of a fixed set of words (any case). `expected` words the error; by default it lists them
// all, which reads badly when some are legacy aliases.
template <typename Target, typename Enum>
auto Choice(Enum Target::*member, std::vector<std::pair<std::string_view, Enum>> choices,
            std::string expected = "") {
  return [=](Target& target, std::string_view value) -> SetResult {
    std::vector<std::string> names;
    for (const auto& [name, choice] : choices) {
      if (EqualsIgnoreCase(name, value)) {
        target.*member = choice;
        return std::nullopt;
      }
      names.emplace_back(name);
    }
    return Invalid(value, expected.empty() ? "expected one of " + Join(names, ", ") : expected);
  };
}

// A comma-separated list; `upper` folds each item to upper case.
template <typename Target>
auto List(std::vector<std::string> Target::*member, bool upper = false) {
  return [=](Target& target, std::string_view value) -> SetResult {
    std::vector<std::string> items;
    for (auto& item : Split(value, ',')) {
      std::string trimmed(Trim(item));
      if (trimmed.empty()) continue;
      if (upper)
        for (char& c : trimmed) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      items.push_back(std::move(trimmed));
    }
    target.*member = std::move(items);
    return std::nullopt;
  };
}

}  // namespace conf
}  // namespace drover
