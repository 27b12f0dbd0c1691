// The commands of the `drover` multi-call binary. Each takes its arguments (without the
// command's own name) and returns the process exit code; main.cc dispatches by name.
#pragma once

#include <span>
#include <string_view>

namespace drover::cli {

using Arguments = std::span<char* const>;

struct Command {
  std::string_view name;     // "config" (as `drover config`) or "sbatch" (as a symlink)
  std::string_view summary;  // one line for `drover help`
  int (*run)(Arguments args);
};

int RunConfig(Arguments args);
int RunVersion(Arguments args);
// A local cluster (local_cluster.cc; built with the daemons).
int RunUp(Arguments args);
int RunDown(Arguments args);
int RunStatus(Arguments args);
int RunEnv(Arguments args);
int RunSbatch(Arguments args);
int RunSqueue(Arguments args);
int RunSinfo(Arguments args);
int RunSacct(Arguments args);
int RunScancel(Arguments args);

}  // namespace drover::cli
