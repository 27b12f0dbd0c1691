// `drover version`: the version this binary was built from.
#include <fmt/format.h>

#include "cli/commands.h"

namespace drover::cli {

int RunVersion(Arguments) {
  fmt::print("drover {}\n", DROVER_VERSION);
  return 0;
}

// Tools parse "slurm X.Y.Z" from the commands' --version; the Slurm release whose commands and
// output Drover's follow, then Drover's own version.
std::string SlurmVersionLine() {
  return fmt::format("slurm 22.05.8 (drover {})", DROVER_VERSION);
}

int PrintSlurmVersion() {
  fmt::print("{}\n", SlurmVersionLine());
  return 0;
}

}  // namespace drover::cli
