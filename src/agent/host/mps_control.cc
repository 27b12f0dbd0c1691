// MPS control daemons per GPU; see mps_control.h.
#include "agent/host/mps_control.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>

#include "agent/host/spawn.h"
#include "common/log.h"

namespace drover::agent {

namespace fs = std::filesystem;

MpsControl::MpsControl(std::string program, fs::path base)
    : program_(std::move(program)), base_(std::move(base)) {}

std::string MpsControl::Find(const std::string& path) {
  return ResolveProgram("nvidia-cuda-mps-control", {"PATH=" + path});
}

std::vector<std::string> MpsControl::Variables(int gpu) const {
  return {"CUDA_MPS_PIPE_DIRECTORY=" + Dir(gpu, "pipe").string(),
          "CUDA_MPS_LOG_DIRECTORY=" + Dir(gpu, "log").string()};
}

fs::path MpsControl::Dir(int gpu, const char* which) const {
  return base_ / std::to_string(gpu) / which;
}

Status MpsControl::Run(int gpu, const std::string& visible, const std::vector<std::string>& args,
                       const std::string& input) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return MakeError("pipe: " + std::string(strerror(errno)));
  ProcessSpec spec;
  spec.name = "nvidia-cuda-mps-control";
  spec.program = program_;
  spec.argv = {program_};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.environment = {"PATH=/usr/local/bin:/usr/bin:/bin", "CUDA_VISIBLE_DEVICES=" + visible,
                      "CUDA_MPS_PIPE_DIRECTORY=" + Dir(gpu, "pipe").string(),
                      "CUDA_MPS_LOG_DIRECTORY=" + Dir(gpu, "log").string()};
  spec.stdin_source = StdioSource::Descriptor(pipe_fds[0]);
  spec.stdout_source = StdioSource::File("/dev/null", O_WRONLY);
  spec.stderr_source = StdioSource::SameAsStdout();
  spec.session = SessionKind::kSession;
  auto spawned = Spawn(spec);
  close(pipe_fds[0]);
  if (!spawned) {
    close(pipe_fds[1]);
    return MakeError(spawned.error());
  }
  if (auto failure = ReadSpawnFailure(spawned->report_fd); failure) {
    close(pipe_fds[1]);
    waitpid(spawned->pid, nullptr, 0);
    return MakeError(failure->message);
  }
  if (!input.empty()) (void)!write(pipe_fds[1], input.data(), input.size());
  close(pipe_fds[1]);
  // `-d` returns once the daemon has detached; "quit" once it was told.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int status = 0;
  pid_t waited = 0;
  while ((waited = waitpid(spawned->pid, &status, WNOHANG)) == 0 ||
         (waited < 0 && errno == EINTR)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(-spawned->pid, SIGKILL);
      waitpid(spawned->pid, &status, 0);
      return MakeError("it did not finish within 30 s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (waited < 0) return MakeError(fmt::format("waitpid: {}", std::strerror(errno)));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return MakeError(fmt::format("it exited with status {}",
                                 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)));
  return OkStatus();
}

Result<std::vector<std::string>> MpsControl::Acquire(uint64_t job_id, int gpu,
                                                     const std::string& visible) {
  MutexLock lock(mutex_);
  if (auto known = gpu_of_.find(job_id); known != gpu_of_.end())
    return Variables(known->second.first);  // a repeated launch
  std::vector<std::string> variables = Variables(gpu);
  std::set<uint64_t>& jobs = jobs_on_[gpu];
  if (jobs.empty()) {
    std::error_code error;
    for (const char* which : {"pipe", "log"}) {
      fs::create_directories(Dir(gpu, which), error);
      if (error)
        return MakeError(
            fmt::format("cannot create {}: {}", Dir(gpu, which).string(), error.message()));
      // The daemon runs as root; the jobs' users reach it through the pipe directory.
      ::chmod(Dir(gpu, which).c_str(), 0755);
    }
    ::chmod((base_ / std::to_string(gpu)).c_str(), 0755);
    ::chmod(base_.c_str(), 0755);
    if (Status started = Run(gpu, visible, {"-d"}, ""); !started) {
      // One an earlier agent started (it does not remember its daemons) still serves the
      // GPU: its pipe folder is in use. It is used, and told to quit after the next job.
      std::error_code ignored;
      if (fs::is_empty(Dir(gpu, "pipe"), ignored))
        return MakeError(fmt::format("the MPS control daemon of GPU {} did not start ({} -d): {}",
                                     gpu, program_, started.error()));
      log::Warning(
          "the MPS control daemon of GPU {} did not start ({}); using the one already "
          "serving {}",
          gpu, started.error(), Dir(gpu, "pipe").string());
    } else {
      log::Info("started the MPS control daemon of GPU {} ({}) for job {}", gpu, visible, job_id);
    }
  }
  jobs.insert(job_id);
  gpu_of_[job_id] = {gpu, visible};
  return variables;
}

void MpsControl::Release(uint64_t job_id) {
  MutexLock lock(mutex_);
  auto it = gpu_of_.find(job_id);
  if (it == gpu_of_.end()) return;
  auto [gpu, visible] = it->second;
  gpu_of_.erase(it);
  std::set<uint64_t>& jobs = jobs_on_[gpu];
  jobs.erase(job_id);
  if (!jobs.empty()) return;
  if (Status stopped = Run(gpu, visible, {}, "quit\n"); !stopped)
    log::Warning("the MPS control daemon of GPU {} did not quit: {}", gpu, stopped.error());
  else
    log::Info("stopped the MPS control daemon of GPU {}: its last MPS job ({}) ended", gpu, job_id);
}

}  // namespace drover::agent
