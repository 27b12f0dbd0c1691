// `drover sim ARGS`: runs the drover-sim binary that sits beside this one (both are built into
// bin/ and installed together), with the same arguments. drover never links the simulator, the
// controller's engine or the scheduler: they are drover-sim's alone.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace drover::cli {

int RunSim(Arguments args) {
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) {
    fmt::print(stderr, "drover sim: error: cannot find drover's own path: {}\n", error.message());
    return 1;
  }
  std::string path = (self.parent_path() / "drover-sim").string();
  std::vector<char*> argv = {path.data()};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(nullptr);
  ::execv(path.c_str(), argv.data());
  fmt::print(stderr, "drover sim: error: cannot run {}: {}\n", path, std::strerror(errno));
  return 1;
}

}  // namespace drover::cli
