// Hostlist expansion and compression in Slurm's bracket notation (see hostlist.h).
// Expansion parses each top-level element into literal text and bracket groups and takes their
// cartesian product; compression walks the names once, grouping runs that share a prefix.
#include "common/hostlist.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <utility>

#include "common/text.h"

namespace drover {
namespace {

constexpr uint64_t kMaxCount = std::numeric_limits<uint64_t>::max();
constexpr std::string_view kDigits = "0123456789";

// Counts saturate rather than wrap so that n[0-18446744073709551615][1-2] still hits the cap.
uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return a > kMaxCount - b ? kMaxCount : a + b;
}
uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  return a != 0 && b > kMaxCount / a ? kMaxCount : a * b;
}

std::string Concat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view part : parts) out += part;
  return out;
}

// Messages quote only the start of very long text, so an error on a 10,000-node list stays
// readable.
std::string Quote(std::string_view text) {
  constexpr size_t kMaxQuoted = 80;
  if (text.size() <= kMaxQuoted) return Concat({"'", text, "'"});
  return Concat({"'", text.substr(0, kMaxQuoted - 3), "...'"});
}

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

bool IsDigits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), IsDigit);
}

void AppendPadded(std::string& out, uint64_t value, size_t width) {
  char digits[24];
  char* end = std::to_chars(digits, digits + sizeof(digits), value).ptr;
  size_t length = static_cast<size_t>(end - digits);
  if (length < width) out.append(width - length, '0');
  out.append(digits, length);
}

// ---- Expansion ----

// lo..hi inclusive; every number is printed zero-padded to `width`, the width of lo as written.
struct Range {
  uint64_t lo = 0;
  uint64_t hi = 0;
  size_t width = 0;
};

// One element: literals[0] groups[0] literals[1] ... groups[n-1] literals[n].
struct Pattern {
  std::vector<std::string_view> literals;
  std::vector<std::vector<Range>> groups;
};

// Commas inside brackets separate ranges, not names. A stray ']' does not close anything, so
// it stays in its element and is reported there.
std::vector<std::string_view> SplitElements(std::string_view expression) {
  std::vector<std::string_view> elements;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < expression.size(); ++i) {
    char c = expression[i];
    if (c == '[') ++depth;
    if (c == ']' && depth > 0) --depth;
    if (c == ',' && depth == 0) {
      elements.push_back(expression.substr(start, i - start));
      start = i + 1;
    }
  }
  elements.push_back(expression.substr(start));
  return elements;
}

Result<Range> ParseRange(std::string_view item, std::string_view element) {
  size_t dash = item.find('-');
  std::string_view lo_text = Trim(item.substr(0, dash));
  std::string_view hi_text = dash == std::string_view::npos ? lo_text : Trim(item.substr(dash + 1));
  if (!IsDigits(lo_text) || !IsDigits(hi_text)) {
    return MakeError(Concat({"'", item, "' is not a number or range in ", Quote(element)}));
  }
  std::optional<uint64_t> lo = ParseUint64(lo_text);
  std::optional<uint64_t> hi = ParseUint64(hi_text);
  if (!lo || !hi) {
    return MakeError(
        Concat({"number '", lo ? hi_text : lo_text, "' is too large in ", Quote(element)}));
  }
  if (*lo > *hi) {
    return MakeError(
        Concat({"range ", lo_text, "-", hi_text, " is backwards in ", Quote(element)}));
  }
  return Range{*lo, *hi, lo_text.size()};
}

// `body` is the text between '[' and ']': comma-separated numbers and ranges.
Result<std::vector<Range>> ParseGroup(std::string_view body, std::string_view element) {
  if (Trim(body).empty()) return MakeError(Concat({"empty brackets in ", Quote(element)}));
  std::vector<Range> ranges;
  size_t start = 0;
  while (start <= body.size()) {
    size_t comma = std::min(body.find(',', start), body.size());
    std::string_view item = Trim(body.substr(start, comma - start));
    if (item.empty()) return MakeError(Concat({"empty range in ", Quote(element)}));
    Result<Range> range = ParseRange(item, element);
    if (!range.ok()) return std::move(range).take_error();
    ranges.push_back(*range);
    start = comma + 1;
  }
  return ranges;
}

Result<Pattern> ParsePattern(std::string_view element) {
  Pattern pattern;
  size_t literal_start = 0;
  size_t pos = 0;
  while ((pos = element.find_first_of("[]", pos)) != std::string_view::npos) {
    if (element[pos] == ']') return MakeError(Concat({"unbalanced ']' in ", Quote(element)}));
    size_t close = element.find_first_of("[]", pos + 1);
    if (close == std::string_view::npos) {
      return MakeError(Concat({"unbalanced '[' in ", Quote(element)}));
    }
    if (element[close] == '[') return MakeError(Concat({"nested '[' in ", Quote(element)}));
    Result<std::vector<Range>> group =
        ParseGroup(element.substr(pos + 1, close - pos - 1), element);
    if (!group.ok()) return std::move(group).take_error();
    pattern.literals.push_back(element.substr(literal_start, pos - literal_start));
    pattern.groups.push_back(std::move(*group));
    pos = literal_start = close + 1;
  }
  pattern.literals.push_back(element.substr(literal_start));
  return pattern;
}

uint64_t CountNames(const Pattern& pattern) {
  uint64_t product = 1;
  for (const std::vector<Range>& group : pattern.groups) {
    uint64_t sum = 0;
    for (const Range& range : group)
      sum = SaturatingAdd(sum, SaturatingAdd(range.hi - range.lo, 1));
    product = SaturatingMul(product, sum);
  }
  return product;
}

// Called once the pattern's count is within the caller's cap, which bounds each group's.
std::vector<std::string> ExpandGroup(const std::vector<Range>& group) {
  std::vector<std::string> numbers;
  uint64_t count = 0;
  for (const Range& range : group)
    count = SaturatingAdd(count, SaturatingAdd(range.hi - range.lo, 1));
  numbers.reserve(count);
  for (const Range& range : group) {
    for (uint64_t value = range.lo;; ++value) {
      AppendPadded(numbers.emplace_back(), value, range.width);
      if (value == range.hi) break;  // hi may be the largest uint64_t
    }
  }
  return numbers;
}

// Odometer over the groups, rightmost fastest, so the leftmost group varies slowest.
void AppendProduct(const Pattern& pattern, std::vector<std::string>& names) {
  std::vector<std::vector<std::string>> numbers;
  for (const std::vector<Range>& group : pattern.groups) numbers.push_back(ExpandGroup(group));
  std::vector<size_t> index(numbers.size(), 0);
  while (true) {
    std::string& name = names.emplace_back(pattern.literals[0]);
    for (size_t g = 0; g < numbers.size(); ++g) {
      name += numbers[g][index[g]];
      name += pattern.literals[g + 1];
    }
    size_t g = numbers.size();
    while (g > 0 && ++index[g - 1] == numbers[g - 1].size()) index[--g] = 0;
    if (g == 0) return;
  }
}

Error EmptyNameError(std::string_view expression, std::string_view previous) {
  if (previous.empty()) {
    return MakeError(Concat({"empty name at the start of hostlist ", Quote(expression)}));
  }
  return MakeError(
      Concat({"empty name after ", Quote(previous), " in hostlist ", Quote(expression)}));
}

Error CapError(size_t max_names, std::string_view element) {
  return MakeError(Concat({"hostlist expands to more than ", std::to_string(max_names),
                           " names (the limit), reached at ", Quote(element)}));
}

// ---- Compression ----

// A name split into prefix and numeric suffix. A name without trailing digits (or whose
// trailing digits overflow uint64_t) has empty `digits` and is never merged with another.
struct NameParts {
  std::string_view prefix;
  std::string_view digits;
  uint64_t value = 0;
};

NameParts SplitName(std::string_view name) {
  size_t last_other = name.find_last_not_of(kDigits);
  size_t start = last_other == std::string_view::npos ? 0 : last_other + 1;
  std::optional<uint64_t> value = ParseUint64(name.substr(start));
  if (!value) return NameParts{name, {}, 0};
  return NameParts{name.substr(0, start), name.substr(start), *value};
}

std::vector<NameParts> SplitNames(std::span<const std::string> names) {
  std::vector<NameParts> parts;
  parts.reserve(names.size());
  for (const std::string& name : names) parts.push_back(SplitName(name));
  return parts;
}

// A range lo-hi expands with the width of lo as written, so `next` may extend it only if
// printing its value at that width reproduces its digits exactly ("n9,n10" yes; "n1,n02" no).
bool ExtendsRange(const NameParts& last, const NameParts& next, size_t width) {
  if (last.value == kMaxCount || next.value != last.value + 1) return false;
  size_t length = next.digits.size();
  return length == width || (length > width && next.digits[0] != '0');
}

// `group` shares one prefix and has at least two names, all with numeric suffixes.
void AppendBracketed(std::string& out, std::span<const NameParts> group) {
  out += group[0].prefix;
  out += '[';
  size_t first = 0;
  while (first < group.size()) {
    size_t last = first;
    size_t width = group[first].digits.size();
    while (last + 1 < group.size() && ExtendsRange(group[last], group[last + 1], width)) ++last;
    if (first > 0) out += ',';
    out += group[first].digits;
    if (last > first) {
      out += '-';
      out += group[last].digits;
    }
    first = last + 1;
  }
  out += ']';
}

// Like Slurm, consecutive numbered names with the same prefix share one bracket group even when
// their widths differ ("n1,n01" -> "n[1,01]"); only ranges require compatible widths.
std::string CompressParts(std::span<const NameParts> parts) {
  std::string out;
  size_t begin = 0;
  while (begin < parts.size()) {
    const NameParts& head = parts[begin];
    size_t end = begin + 1;
    if (!head.digits.empty()) {
      while (end < parts.size() && !parts[end].digits.empty() && parts[end].prefix == head.prefix)
        ++end;
    }
    if (begin > 0) out += ',';
    if (end - begin == 1) {
      out += head.prefix;
      out += head.digits;
    } else {
      AppendBracketed(out, parts.subspan(begin, end - begin));
    }
    begin = end;
  }
  return out;
}

// Digit runs compare by value, so rack2 sorts before rack10 (Slurm uses strnatcmp for
// prefixes). Ties between spellings of one number ("a01" vs "a1") fall back to bytes.
int NaturalCompare(std::string_view a, std::string_view b) {
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (IsDigit(a[i]) && IsDigit(b[j])) {
      size_t i_end = std::min(a.find_first_not_of(kDigits, i), a.size());
      size_t j_end = std::min(b.find_first_not_of(kDigits, j), b.size());
      std::string_view x = a.substr(i, i_end - i);
      std::string_view y = b.substr(j, j_end - j);
      x.remove_prefix(std::min(x.find_first_not_of('0'), x.size()));
      y.remove_prefix(std::min(y.find_first_not_of('0'), y.size()));
      if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
      if (int order = x.compare(y); order != 0) return order;
      i = i_end;
      j = j_end;
    } else if (a[i] != b[j]) {
      return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]) ? -1 : 1;
    } else {
      ++i;
      ++j;
    }
  }
  if ((i < a.size()) != (j < b.size())) return i < a.size() ? 1 : -1;
  return a.compare(b);
}

// An unnumbered name has value 0 and width 0, so it sorts before numbered names sharing its
// prefix ("n" before "n0").
bool SortsBefore(const NameParts& a, const NameParts& b) {
  if (int order = NaturalCompare(a.prefix, b.prefix); order != 0) return order < 0;
  if (a.value != b.value) return a.value < b.value;
  return a.digits.size() < b.digits.size();
}

bool SameName(const NameParts& a, const NameParts& b) {
  return a.prefix == b.prefix && a.digits == b.digits;
}

}  // namespace

Result<std::vector<std::string>> ExpandHostlist(std::string_view expression, size_t max_names) {
  if (Trim(expression).empty()) return MakeError("empty hostlist");
  if (expression.size() > kMaxHostlistLength)
    return MakeError(
        Concat({"hostlist of ", std::to_string(expression.size()),
                " characters is longer than the limit of ", std::to_string(kMaxHostlistLength),
                " (use ranges such as n[1-100])"}));
  std::vector<std::string> names;
  std::string_view previous;
  for (std::string_view raw : SplitElements(expression)) {
    std::string_view element = Trim(raw);
    if (element.empty()) return EmptyNameError(expression, previous);
    previous = element;
    if (element.find_first_of("[]") == std::string_view::npos) {
      if (names.size() >= max_names) return CapError(max_names, element);
      names.emplace_back(element);
      continue;
    }
    Result<Pattern> pattern = ParsePattern(element);
    if (!pattern.ok()) return std::move(pattern).take_error();
    uint64_t count = CountNames(*pattern);
    if (count > max_names - names.size()) return CapError(max_names, element);
    // The first element's names at once (within max_names, checked above): "n[00001-10000]"
    // without moves. Later elements grow the vector as push_back does, geometrically.
    if (names.empty()) names.reserve(count);
    AppendProduct(*pattern, names);
  }
  return names;
}

std::string CompressHostlist(std::span<const std::string> names) {
  return CompressParts(SplitNames(names));
}

std::string CompressHostlistSorted(std::span<const std::string> names) {
  std::vector<NameParts> parts = SplitNames(names);
  std::stable_sort(parts.begin(), parts.end(), SortsBefore);
  parts.erase(std::unique(parts.begin(), parts.end(), SameName), parts.end());
  return CompressParts(parts);
}

}  // namespace drover
