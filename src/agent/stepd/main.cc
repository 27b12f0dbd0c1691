// droverstepd <job dir>: the step supervisor of one batch job (supervisor.h). It reads the job
// directory's launch and environ files (an error in them is printed, exit 1, no status), detaches
// (detach.h), writes supervisor.pid and returns 0 in the caller; the supervisor runs the job.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "agent/stepd/detach.h"
#include "agent/stepd/spool.h"
#include "agent/stepd/supervisor.h"
#include "common/getopt.h"

namespace fs = std::filesystem;
using namespace drover::agent;

namespace {

// The one operand, a job directory; no options.
std::optional<std::string> JobDirectoryOf(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = drover::ParseOptions(args, {});
  if (!parsed || parsed->operands.size() != 1 || parsed->operands[0].starts_with("-"))
    return std::nullopt;
  return parsed->operands[0];
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<std::string> operand = JobDirectoryOf(argc, argv);
  if (!operand) {
    fmt::print(stderr, "usage: droverstepd <job directory>\n");
    return 2;
  }
  ::close_range(3, ~0U, 0);  // nothing of the agent's (sockets, files) reaches the job
  const fs::path job_dir = fs::absolute(*operand);
  auto launch = ReadLaunch(job_dir);
  if (!launch) {
    fmt::print(stderr, "droverstepd: error: {}\n", launch.error());
    return 1;
  }
  auto environment = ReadEnvironment(job_dir);
  if (!environment) {
    fmt::print(stderr, "droverstepd: error: {}\n", environment.error());
    return 1;
  }
  auto detached = Daemonize(job_dir);
  if (!detached) {
    fmt::print(stderr, "droverstepd: error: {}\n", detached.error());
    return 1;
  }
  if (!detached->supervisor) return detached->exit_code;
  drover::Status written = WriteProcessFile(job_dir / "supervisor.pid", ::getpid());
  ReportReady(detached->ready_fd, written);
  if (!written) return 1;
  SuperviseBatchJob(job_dir, *launch, *environment);
  return 0;
}
