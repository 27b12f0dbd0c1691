// `drover version`, and the commands' own --version, --help and --usage: the version this
// binary was built from, and the Slurm release whose commands Drover's follow.
#include <fmt/format.h>

#include <cstdio>

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

std::optional<int> HelpUsageVersion(const ParsedOptions& parsed, std::string_view help,
                                    std::string_view usage) {
  for (const auto& [option, value] : parsed.options) {
    if (option == "help") return std::fwrite(help.data(), 1, help.size(), stdout), 0;
    if (option == "usage") return std::fwrite(usage.data(), 1, usage.size(), stdout), 0;
    if (option == "version") return PrintSlurmVersion();
  }
  return std::nullopt;
}

}  // namespace drover::cli
