// See retention.h.
#include "common/retention.h"

#include <fmt/format.h>

#include <cctype>
#include <ctime>
#include <string>

namespace drover {
namespace {

bool IsPrefixOf(std::string_view word, std::string_view of) {
  if (word.size() > of.size()) return false;
  for (size_t i = 0; i < word.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(word[i])) != of[i]) return false;
  return true;
}

}  // namespace

Result<Retention> ParseRetention(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  auto refuse = [&] {
    return MakeError(fmt::format(
        "'{}': expected a count of hours, days or months up to 65535 (e.g. 12months, 30days, "
        "24hours; months when no unit is given)",
        text));
  };
  if (digits == 0) return refuse();
  std::string_view number = text.substr(0, digits);
  while (number.size() > 1 && number.front() == '0') number.remove_prefix(1);  // "012"
  if (number.size() > 5) return refuse();
  Retention retention;
  retention.count = std::stoll(std::string(number));
  if (retention.count > 65535) return refuse();
  std::string_view unit = text.substr(digits);
  if (unit.empty() || IsPrefixOf(unit, "months")) {
    retention.unit = Retention::Unit::kMonths;
  } else if (IsPrefixOf(unit, "hours")) {
    retention.unit = Retention::Unit::kHours;
  } else if (IsPrefixOf(unit, "days")) {
    retention.unit = Retention::Unit::kDays;
  } else {
    return refuse();
  }
  return retention;
}

int64_t RetentionCutoff(const Retention& retention, int64_t now) {
  time_t when = static_cast<time_t>(now);
  struct tm local {};
  localtime_r(&when, &local);
  local.tm_sec = 0;
  local.tm_min = 0;
  local.tm_isdst = -1;
  switch (retention.unit) {
    case Retention::Unit::kHours:
      local.tm_hour -= static_cast<int>(retention.count);
      break;
    case Retention::Unit::kDays:
      local.tm_hour = 0;
      local.tm_mday -= static_cast<int>(retention.count);
      break;
    case Retention::Unit::kMonths:
      local.tm_hour = 0;
      local.tm_mday = 1;
      local.tm_mon -= static_cast<int>(retention.count);
      break;
  }
  return static_cast<int64_t>(std::mktime(&local)) - 1;
}

}  // namespace drover
