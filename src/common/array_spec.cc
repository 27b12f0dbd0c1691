// Job array index expressions; see array_spec.h.
#include "common/array_spec.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/text.h"

namespace drover {
namespace {

Error Invalid(std::string_view text) {
  return MakeError(
      fmt::format("invalid array specification '{}' (expected indexes such as 0-99, "
                  "1,3,5 or 0-15:4, optionally with %N)",
                  text));
}

}  // namespace

Result<ArraySpec> ParseArraySpec(std::string_view text, uint64_t max_array_size) {
  ArraySpec spec;
  std::string_view body = Trim(text);
  if (size_t percent = body.find('%'); percent != std::string_view::npos) {
    auto limit = ParseUint64(body.substr(percent + 1));
    if (!limit || *limit == 0 || *limit > UINT32_MAX) return Invalid(text);
    spec.max_running = static_cast<uint32_t>(*limit);
    body = body.substr(0, percent);
  }
  if (body.empty()) return Invalid(text);
  for (const std::string& item : Split(body, ',')) {
    std::string_view range = item;
    uint64_t step = 1;
    if (size_t colon = range.find(':'); colon != std::string_view::npos) {
      auto parsed = ParseUint64(range.substr(colon + 1));
      if (!parsed || *parsed == 0) return Invalid(text);
      step = *parsed;
      range = range.substr(0, colon);
    }
    size_t dash = range.find('-');
    auto first = ParseUint64(range.substr(0, dash));
    auto last = dash == std::string_view::npos ? first : ParseUint64(range.substr(dash + 1));
    if (!first || !last || *last < *first) return Invalid(text);
    if (*last >= max_array_size)
      return MakeError(
          fmt::format("array index {} is at or above MaxArraySize={}", *last, max_array_size));
    for (uint64_t i = *first; i <= *last; i += step)
      spec.indexes.push_back(static_cast<uint32_t>(i));
  }
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
