// `drover sim ARGS` and `drover restd ARGS`: run the drover-sim and drover-restd binaries that
// sit beside this one (built into bin/ and installed together), with the same arguments. drover
// never links the simulator, the controller's engine or the scheduler (drover-sim's), nor the
// HTTP server (drover-restd's).
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace drover::cli {

namespace {

// Runs `binary`, installed beside drover, with `args`; returns only when it cannot.
int RunBeside(const char* verb, const char* binary, Arguments args) {
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) {
    fmt::print(stderr, "drover {}: error: cannot find drover's own path: {}\n", verb,
               error.message());
    return 1;
  }
  std::string path = (self.parent_path() / binary).string();
  std::vector<char*> argv = {path.data()};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(nullptr);
  ::execv(path.c_str(), argv.data());
  fmt::print(stderr, "drover {}: error: cannot run {}: {}\n", verb, path, std::strerror(errno));
  return 1;
}

}  // namespace

int RunSim(Arguments args) {
  return RunBeside("sim", "drover-sim", args);
}

int RunRestd(Arguments args) {
  return RunBeside("restd", "drover-restd", args);
}

}  // namespace drover::cli
