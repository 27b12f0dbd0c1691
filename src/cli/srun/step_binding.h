// srun's task layout and binding options for a step (srun(1)): -m/--distribution (with
// SLURM_HOSTFILE for arbitrary), --ntasks-per-core, --ntasks-per-socket, --cpu-bind, --mem-bind,
// --gpu-bind, --accel-bind, --hint, --cpu-freq and --gpu-freq, read into what the controller
// lays out (CreateStepRequest) and what the agents bind (StepLaunch). No gRPC, no protobuf.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/getopt.h"
#include "common/result.h"

namespace drover::cli {

struct StepBinding {
  std::string distribution;
  std::vector<std::string> arbitrary_nodes;  // -m arbitrary: SLURM_HOSTFILE's node of each task
  uint32_t ntasks_per_core = 0, ntasks_per_socket = 0;
  // --threads-per-core, or 1 for --hint=nomultithread: the threads of each core the tasks use
  // (0: all).
  uint32_t threads_per_core = 0;
  std::string cpu_bind, mem_bind, gpu_bind, accel_bind, cpu_freq, gpu_freq;
  std::vector<std::string> notices;  // said on stderr (with -v): a --hint srun ignored
};

// --cpu-bind=help and --hint=help print Slurm's help: the exit code when srun ends there.
std::optional<int> BindingHelp(const ParsedOptions& parsed);

// The options (checked: Slurm's error words), with --hint turned into the binding it stands for
// and SLURM_HOSTFILE read for -m arbitrary. `read_file` returns a file's text or the reason it
// cannot.
using FileReader = Result<std::string> (*)(const std::string& path);
Result<StepBinding> ReadStepBinding(const ParsedOptions& parsed,
                                    const std::map<std::string, std::string>& env,
                                    FileReader read_file);

}  // namespace drover::cli
