// Fuzzes drover sim's trace readers: the input is read as SWF, as an Alibaba pod list and as
// sacct --json, loosely and with --strict. Any crash, hang or sanitizer report is a bug; an error
// or a skipped line is the expected answer to garbage, and every job read must be usable.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "sim/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  using Reader = drover::Result<drover::sim::Trace> (*)(std::istream&, const std::string&,
                                                         const drover::sim::ReadOptions&);
  for (Reader reader : {drover::sim::ReadSwf, drover::sim::ReadAlibabaPods,
                        drover::sim::ReadSacctJson})
    for (bool strict : {false, true}) {
      std::istringstream in(input);
      auto trace = reader(in, "fuzz", {strict});
      if (!trace) continue;
      for (const drover::sim::TraceJob& job : trace->jobs)
        if (job.cpus < 1 || job.run_seconds < 0 || job.limit_seconds < 1) __builtin_trap();
    }
  return 0;
}
