// libFuzzer target for hostlist parsing: any input must expand or fail cleanly, and whatever
// expands must survive a compress/expand round trip, sorted or not.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/hostlist.h"
#include "common/text.h"

namespace {

// Small enough that hostile ranges fail fast instead of spending the fuzzer's time on memory.
constexpr size_t kFuzzMaxNames = 10'000;

// Only names like these are promised to round-trip; others cannot be written in a hostlist.
bool IsPlainHostName(const std::string& name) {
  return !name.empty() && name.find_first_of(",[]") == std::string::npos &&
         drover::Trim(name) == name;
}

void CheckRoundTrip(const std::vector<std::string>& names) {
  drover::Result<std::vector<std::string>> again =
      drover::ExpandHostlist(drover::CompressHostlist(names), kFuzzMaxNames);
  if (!again.ok() || *again != names) __builtin_trap();
}

void CheckSorted(const std::vector<std::string>& names) {
  std::string sorted = drover::CompressHostlistSorted(names);
  drover::Result<std::vector<std::string>> again = drover::ExpandHostlist(sorted, kFuzzMaxNames);
  if (!again.ok()) __builtin_trap();
  std::set<std::string> unique(names.begin(), names.end());
  if (again->size() != unique.size()) __builtin_trap();
  if (std::set<std::string>(again->begin(), again->end()) != unique) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  drover::Result<std::vector<std::string>> names = drover::ExpandHostlist(input, kFuzzMaxNames);
  if (!names.ok()) {
    if (names.error().empty()) __builtin_trap();  // every failure must say why
    return 0;
  }
  if (names->empty()) __builtin_trap();
  for (const std::string& name : *names) {
    if (!IsPlainHostName(name)) {
      (void)drover::CompressHostlistSorted(*names);
      return 0;
    }
  }
  CheckRoundTrip(*names);
  CheckSorted(*names);
  return 0;
}
