// Slurm's parse_time; see slurm_time.h.
#include "common/slurm_time.h"

#include <algorithm>
#include <climits>
#include <ctime>
#include <tuple>
#include <utility>

#include "common/text.h"

namespace drover {
namespace {

std::tm LocalTime(int64_t seconds) {
  std::time_t time = static_cast<std::time_t>(seconds);
  std::tm out{};
  localtime_r(&time, &out);
  return out;
}

struct TimeParts {
  int hour = -1, minute = -1, second = 0, month = -1, mday = -1, year = -1;
  void SetDate(const std::tm& tm) {
    month = tm.tm_mon;
    mday = tm.tm_mday;
    year = tm.tm_year;
  }
  void SetClock(int h, int m, int s) {
    hour = h;
    minute = m;
    second = s;
  }
};

bool IsDigit(std::string_view text, size_t pos) {
  return pos < text.size() && text[pos] >= '0' && text[pos] <= '9';
}

// Reads between `min` and `max` digits at `pos`.
bool ReadDigits(std::string_view text, size_t& pos, size_t min, size_t max, int& out) {
  size_t start = pos;
  out = 0;
  while (pos - start < max && IsDigit(text, pos)) out = out * 10 + (text[pos++] - '0');
  return pos - start >= min;
}

bool Eat(std::string_view text, size_t& pos, char c) {
  if (pos >= text.size() || text[pos] != c) return false;
  ++pos;
  return true;
}

// "HH:MM[:SS] [AM|PM]"
bool ParseClock(std::string_view text, size_t& pos, TimeParts& parts) {
  int hour = 0, minute = 0, second = 0;
  if (!ReadDigits(text, pos, 1, 2, hour) || hour > 23 || !Eat(text, pos, ':') ||
      !ReadDigits(text, pos, 2, 2, minute) || minute > 59)
    return false;
  if (Eat(text, pos, ':') && (!ReadDigits(text, pos, 2, 2, second) || second > 59)) return false;
  size_t after = pos;
  while (after < text.size() && (text[after] == ' ' || text[after] == '\t')) ++after;
  std::string_view rest = text.substr(after);
  if (StartsWithIgnoreCase(rest, "pm")) {
    hour += 12;
    if (hour == 24) hour = 12;
    if (hour > 23) return false;
    pos = after + 2;
  } else if (StartsWithIgnoreCase(rest, "am")) {
    if (hour == 12) hour = 0;
    if (hour > 11) return false;
    pos = after + 2;
  }
  parts.SetClock(hour, minute, second);
  return true;
}

// "YYYY-MM-DD", or "MM[/.]DD[[/.]YY]".
bool ParseDate(std::string_view text, size_t& pos, TimeParts& parts) {
  int year = 0, month = 0, day = 0;
  if (text.size() > pos + 7 && text[pos + 4] == '-' && text[pos + 7] == '-') {
    if (!ReadDigits(text, pos, 4, 4, year) || !Eat(text, pos, '-') ||
        !ReadDigits(text, pos, 2, 2, month) || !Eat(text, pos, '-') ||
        !ReadDigits(text, pos, 1, 2, day))
      return false;
    year -= 1900;
  } else {
    if (!ReadDigits(text, pos, 1, 2, month)) return false;
    if (!Eat(text, pos, '/')) Eat(text, pos, '.');
    if (!ReadDigits(text, pos, 1, 2, day)) return false;
    if (!Eat(text, pos, '/')) Eat(text, pos, '.');
    year = -1;
    if (IsDigit(text, pos)) {
      if (!ReadDigits(text, pos, 2, 2, year)) return false;
      year += 100;
    }
  }
  if (month < 1 || month > 12 || day < 1 || day > 31) return false;
  parts.month = month - 1;
  parts.mday = day;
  if (year != -1) parts.year = year;
  return true;
}

// "+N[unit]" or "-N[unit]" after "now", in seconds.
std::optional<int64_t> ParseDelta(std::string_view text, size_t& pos) {
  static constexpr std::pair<std::string_view, int64_t> kUnits[] = {
      {"seconds", 1}, {"second", 1},   {"minutes", 60}, {"minute", 60},       {"hours", 3600},
      {"hour", 3600}, {"days", 86400}, {"day", 86400},  {"weeks", 7 * 86400}, {"week", 7 * 86400}};
  int64_t count = 0;
  bool digits = false;
  while (pos < text.size()) {
    if (text[pos] == ' ' || text[pos] == '\t') {
      ++pos;
      continue;
    }
    auto unit = std::find_if(std::begin(kUnits), std::end(kUnits), [&](const auto& u) {
      return StartsWithIgnoreCase(text.substr(pos), u.first);
    });
    if (unit != std::end(kUnits)) {
      pos += unit->first.size();
      if (!digits || count > INT64_MAX / unit->second) return std::nullopt;
      return count * unit->second;
    }
    if (!IsDigit(text, pos) || count > (INT64_MAX - 9) / 10) return std::nullopt;
    count = count * 10 + (text[pos++] - '0');
    digits = true;
  }
  if (!digits) return std::nullopt;
  return count;
}

// "now" followed by blanks and an optional signed delta; sets the date and clock.
bool ParseNow(std::string_view text, size_t& pos, int64_t now, TimeParts& parts) {
  pos += 3;
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
  int64_t delta = 0;
  if (pos < text.size()) {
    char sign = text[pos++];
    if (sign != '+' && sign != '-') return false;
    std::optional<int64_t> parsed = ParseDelta(text, pos);
    if (!parsed || *parsed > (int64_t{1} << 40)) return false;  // beyond any calendar
    delta = sign == '-' ? -*parsed : *parsed;
  }
  std::tm later = LocalTime(now + delta);
  parts.SetDate(later);
  parts.SetClock(later.tm_hour, later.tm_min, later.tm_sec);
  return true;
}

bool ParseTimeWord(std::string_view text, size_t& pos, int64_t now, TimeParts& parts) {
  static constexpr std::pair<std::string_view, int> kClockWords[] = {
      {"midnight", 0}, {"noon", 12}, {"elevenses", 11}, {"fika", 15}, {"teatime", 16}};
  std::string_view rest = text.substr(pos);
  if (StartsWithIgnoreCase(rest, "today")) {
    parts.SetDate(LocalTime(now));
    pos += 5;
    return true;
  }
  if (StartsWithIgnoreCase(rest, "tomorrow")) {
    parts.SetDate(LocalTime(now + 86400));
    pos += 8;
    return true;
  }
  for (const auto& [word, hour] : kClockWords) {
    if (!StartsWithIgnoreCase(rest, word)) continue;
    parts.SetClock(hour, 0, 0);
    pos += word.size();
    return true;
  }
  if (StartsWithIgnoreCase(rest, "now")) return ParseNow(text, pos, now, parts);
  if (!IsDigit(text, pos)) return false;
  bool clock = (pos + 1 < text.size() && text[pos + 1] == ':') ||
               (pos + 2 < text.size() && text[pos + 2] == ':');
  return clock ? ParseClock(text, pos, parts) : ParseDate(text, pos, parts);
}

}  // namespace

std::optional<int64_t> ParseSlurmTime(std::string_view text, int64_t now) {
  if (StartsWithIgnoreCase(text, "uts")) {
    std::optional<int64_t> epoch = ParseInt64(text.substr(3));
    if (!epoch || *epoch < 1000000) return std::nullopt;
    return *epoch;
  }
  TimeParts parts;
  for (size_t pos = 0; pos < text.size();) {
    char c = text[pos];
    if (c == ' ' || c == '\t' || c == '-' || c == 'T') {
      ++pos;
      continue;
    }
    if (!ParseTimeWord(text, pos, now, parts)) return std::nullopt;
  }
  const std::tm today = LocalTime(now);
  if (parts.hour == -1 && parts.month == -1) return std::nullopt;
  if (parts.hour == -1) {
    parts.SetClock(0, 0, parts.second);
  } else if (parts.month == -1) {
    bool later_today =
        parts.hour > today.tm_hour || (parts.hour == today.tm_hour && parts.minute > today.tm_min);
    parts.SetDate(later_today ? today : LocalTime(now + 86400));
  }
  if (parts.year == -1) {
    auto key = [](int month, int mday, int hour, int minute) {
      return std::tuple(month, mday, hour, minute);
    };
    bool this_year = key(parts.month, parts.mday, parts.hour, parts.minute) >
                     key(today.tm_mon, today.tm_mday, today.tm_hour, today.tm_min);
    parts.year = today.tm_year + (this_year ? 0 : 1);
  }
  std::tm when{};
  when.tm_sec = parts.second;
  when.tm_min = parts.minute;
  when.tm_hour = parts.hour;
  when.tm_mday = parts.mday;
  when.tm_mon = parts.month;
  when.tm_year = parts.year;
  when.tm_isdst = -1;
  std::time_t result = std::mktime(&when);
  if (result == -1) return std::nullopt;
  return static_cast<int64_t>(result);
}

}  // namespace drover
