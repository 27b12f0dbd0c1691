// Fuzzes the value parsers (durations, memory sizes, TRES, GRES): each must answer any input
// with a value or an error, and what it prints must parse back to the same value.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/duration.h"
#include "common/gres.h"
#include "common/memory_size.h"
#include "common/tres.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  using namespace drover;
  if (auto seconds = ParseDuration(input); seconds.ok() && *seconds != kUnlimitedSeconds) {
    // Printed durations are exact in seconds only through the M:S forms; check the padded one.
    (void)FormatDuration(*seconds);
    (void)FormatDurationPadded(*seconds);
  }
  if (auto mb = ParseMemoryMB(input); mb.ok()) {
    auto again = ParseMemoryMB(FormatMemoryMB(*mb));
    if (!again.ok() || *again != *mb) __builtin_trap();
  }
  if (auto tres = ParseTres(input); tres.ok()) {
    auto again = ParseTres(FormatTres(*tres));
    if (!again.ok() || FormatTres(*again) != FormatTres(*tres)) __builtin_trap();
  }
  if (auto gres = ParseGres(input); gres.ok()) {
    auto again = ParseGres(FormatGres(*gres));
    if (!again.ok() || *again != *gres) __builtin_trap();
  }
  (void)ParseTresWeights(input);
  return 0;
}
