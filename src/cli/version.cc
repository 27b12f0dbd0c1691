// `drover version`: the version this binary was built from.
#include <fmt/format.h>

#include "cli/commands.h"

namespace drover::cli {

int RunVersion(Arguments) {
  fmt::print("drover {}\n", DROVER_VERSION);
  return 0;
}

}  // namespace drover::cli
