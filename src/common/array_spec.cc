// Job array index expressions; see array_spec.h.
#include "common/array_spec.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/text.h"

namespace drover {
namespace {

Error Invalid(std::string_view text) {
  return MakeError(
      fmt::format("Invalid job array specification '{}' (expected indexes such as 0-99, "
                  "1,3,5 or 0-15:4, optionally with %N)",
                  text.size() > 80 ? std::string(text.substr(0, 77)) + "..." : std::string(text)));
}

// One comma item: first..last by step.
struct IndexRange {
  uint64_t first = 0, last = 0, step = 1;
  uint64_t count() const { return (last - first) / step + 1; }
};

Result<IndexRange> ParseRange(std::string_view item, std::string_view text) {
  IndexRange range;
  if (size_t colon = item.find(':'); colon != std::string_view::npos) {
    auto step = ParseUint64(item.substr(colon + 1));
    if (!step || *step == 0) return Invalid(text);
    range.step = *step;
    item = item.substr(0, colon);
  }
  size_t dash = item.find('-');
  auto first = ParseUint64(item.substr(0, dash));
  auto last = dash == std::string_view::npos ? first : ParseUint64(item.substr(dash + 1));
  if (!first || !last || *last < *first) return Invalid(text);
  range.first = *first;
  range.last = *last;
  return range;
}

// Every range is checked and the tasks counted before any index is stored, so a hostile
// "0-1000,0-1000,..." of 100,000 items is refused without allocating for its tasks.
Result<std::vector<IndexRange>> ParseRanges(std::string_view body, std::string_view text,
                                            uint64_t max_array_size) {
  std::vector<IndexRange> ranges;
  uint64_t tasks = 0;
  for (const std::string& item : Split(body, ',')) {
    Result<IndexRange> range = ParseRange(item, text);
    if (!range) return std::move(range).take_error();
    if (range->last >= max_array_size)
      return MakeError(
          fmt::format("Invalid job array specification: index {} is at or above MaxArraySize={}",
                      range->last, max_array_size));
    tasks += range->count();  // each count < MaxArraySize: no overflow before the check
    if (tasks > max_array_size)
      return MakeError(
          fmt::format("Invalid job array specification: more than MaxArraySize={} tasks (split the "
                      "array into several submissions)",
                      max_array_size));
    ranges.push_back(*range);
  }
  return ranges;
}

}  // namespace

Result<ArraySpec> ParseArraySpec(std::string_view text, uint64_t max_array_size) {
  if (text.size() > kMaxArraySpecLength)
    return MakeError(fmt::format(
        "Invalid job array specification: {} characters, the limit is {} (use ranges such "
        "as 0-999 instead of listing every index)",
        text.size(), kMaxArraySpecLength));
  ArraySpec spec;
  std::string_view body = Trim(text);
  if (size_t percent = body.find('%'); percent != std::string_view::npos) {
    auto limit = ParseUint64(body.substr(percent + 1));
    if (!limit || *limit == 0 || *limit > UINT32_MAX) return Invalid(text);
    spec.max_running = static_cast<uint32_t>(*limit);
    body = body.substr(0, percent);
  }
  if (body.empty()) return Invalid(text);
  auto ranges = ParseRanges(body, text, max_array_size);
  if (!ranges) return std::move(ranges).take_error();
  for (const IndexRange& range : *ranges)
    for (uint64_t k = 0; k < range.count(); ++k)  // k * step <= last - first: no wrap
      spec.indexes.push_back(static_cast<uint32_t>(range.first + k * range.step));
  std::sort(spec.indexes.begin(), spec.indexes.end());
  spec.indexes.erase(std::unique(spec.indexes.begin(), spec.indexes.end()), spec.indexes.end());
  return spec;
}

std::string FormatArrayIndexes(const std::vector<uint32_t>& indexes, uint32_t max_running) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < indexes.size();) {
    size_t j = i;
    while (j + 1 < indexes.size() && indexes[j + 1] == indexes[j] + 1) ++j;
    parts.push_back(j == i ? std::to_string(indexes[i])
                           : fmt::format("{}-{}", indexes[i], indexes[j]));
    i = j + 1;
  }
  std::string out = Join(parts, ",");
  if (max_running) out += fmt::format("%{}", max_running);
  return out;
}

}  // namespace drover
