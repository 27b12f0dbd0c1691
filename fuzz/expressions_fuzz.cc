// libFuzzer target for the job expressions parsed at the edge: the first byte picks one, the
// rest is its text. --array (indexes sorted and unique, within MaxArraySize, printed back to the
// same indexes), --dependency (printed back to the same spec) and --constraint (what parses
// can be evaluated against any node). Hostlists have their own target (hostlist_fuzz.cc).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/array_spec.h"
#include "common/dependency.h"
#include "sched/constraint.h"

namespace {

using namespace drover;

// slurm.conf's default MaxArraySize.
constexpr uint64_t kMaxArraySize = 1001;

void CheckArray(std::string_view text) {
  auto spec = ParseArraySpec(text, kMaxArraySize);
  if (!spec.ok()) {
    if (spec.error().empty()) __builtin_trap();
    return;
  }
  const std::vector<uint32_t>& indexes = spec->indexes;
  if (indexes.empty()) __builtin_trap();
  for (size_t i = 0; i < indexes.size(); ++i)
    if (indexes[i] >= kMaxArraySize || (i > 0 && indexes[i - 1] >= indexes[i])) __builtin_trap();
  auto again = ParseArraySpec(FormatArrayIndexes(indexes, spec->max_running), kMaxArraySize);
  if (!again.ok() || again->indexes != indexes || again->max_running != spec->max_running)
    __builtin_trap();
}

void CheckDependency(std::string_view text) {
  auto spec = ParseDependency(text);
  if (!spec.ok()) {
    if (spec.error().empty()) __builtin_trap();
    return;
  }
  if (spec->empty()) return;
  auto again = ParseDependency(FormatDependency(*spec));
  if (!again.ok() || *again != *spec) __builtin_trap();
}

void CheckConstraint(std::string_view text) {
  auto constraint = sched::ParseConstraint(text);
  if (!constraint.ok()) {
    if (constraint.error().empty()) __builtin_trap();
    return;
  }
  const std::vector<std::string> a100_ib = {"a100", "ib"}, none;
  (void)constraint->NodeMatches(a100_ib);
  (void)constraint->NodeMatches(none);
  (void)constraint->CountsMet({&a100_ib, &none, &a100_ib});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      CheckArray(text);
      break;
    case 1:
      CheckDependency(text);
      break;
    case 2:
      CheckConstraint(text);
      break;
  }
  return 0;
}
