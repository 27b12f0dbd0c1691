// The CUDA MPS control daemon of each GPU that MPS jobs (gres/mps) share on this node, as Slurm
// sites start one in a prolog: `nvidia-cuda-mps-control -d` for the first MPS job on a GPU, with
// CUDA_VISIBLE_DEVICES naming that GPU and its pipe and log directories under the agent's spool;
// "quit" on the control program's stdin once the last MPS job there has ended. Only where the
// control program is installed (the NVIDIA driver's utilities); otherwise MPS jobs run with
// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE alone, as under a site that runs no daemon.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "common/result.h"

namespace drover::agent {

class MpsControl {
 public:
  // `program`: the control program's path. `base`: where each GPU's directories go
  // (base/<gpu index>/pipe and /log).
  MpsControl(std::string program, std::filesystem::path base);

  // The control program along `path` (a PATH value); empty when it is not installed.
  static std::string Find(const std::string& path);

  // Job `job_id` shares GPU `gpu` (device index; `visible` is what the daemon's
  // CUDA_VISIBLE_DEVICES names it by: its UUID, else the index): starts the GPU's daemon unless
  // it runs, and returns the variables that lead the job's CUDA to it (CUDA_MPS_PIPE_DIRECTORY,
  // CUDA_MPS_LOG_DIRECTORY). An error when the daemon cannot be started.
  Result<std::vector<std::string>> Acquire(uint64_t job_id, int gpu, const std::string& visible)
      EXCLUDES(mutex_);
  // The job has ended here: the GPU's daemon is told to quit when no other job uses it.
  void Release(uint64_t job_id) EXCLUDES(mutex_);

  const std::string& program() const { return program_; }
  // CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY for GPU `gpu`'s daemon (a step's tasks).
  std::vector<std::string> Variables(int gpu) const;

 private:
  // Runs the control program for `gpu` with `args`, `input` on its stdin; waits up to 30 s.
  Status Run(int gpu, const std::string& visible, const std::vector<std::string>& args,
             const std::string& input);
  std::filesystem::path Dir(int gpu, const char* which) const;

  const std::string program_;
  const std::filesystem::path base_;
  Mutex mutex_;
  std::map<int, std::set<uint64_t>> jobs_on_ GUARDED_BY(mutex_);  // per GPU
  std::map<uint64_t, std::pair<int, std::string>> gpu_of_ GUARDED_BY(mutex_);
};

}  // namespace drover::agent
