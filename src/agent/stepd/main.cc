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

struct Invocation {
  std::string job_dir;
  bool attached = false;  // --attached: the agent's child, already in its own session
};

// The one operand, a job directory; --attached, the agent's way.
std::optional<Invocation> InvocationOf(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  static const drover::OptionSpec kOptions[] = {{0, "attached", drover::OptionSpec::kNone}};
  auto parsed = drover::ParseOptions(args, kOptions);
  if (!parsed || parsed->operands.size() != 1 || parsed->operands[0].starts_with("-"))
    return std::nullopt;
  return Invocation{parsed->operands[0], parsed->Has("attached")};
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<Invocation> invocation = InvocationOf(argc, argv);
  if (!invocation) {
    fmt::print(stderr, "usage: droverstepd [--attached] <job directory>\n");
    return 2;
  }
  // Nothing of the agent's (sockets, files) reaches the job; attached, but the ready pipe.
  ::close_range(invocation->attached ? kReadyFd + 1 : 3, ~0U, 0);
  const fs::path job_dir = fs::absolute(invocation->job_dir);
  auto launch = ReadLaunch(job_dir);
  std::string failure;
  std::vector<std::string> environment;
  if (!launch)
    failure = launch.error();
  else if (auto read = ReadEnvironment(job_dir); !read)
    failure = read.error();
  else
    environment = std::move(*read);
  if (invocation->attached) {
    // One process from the agent's spawn to the job's end: no forks to detach.
    drover::Status ready = failure.empty()
                               ? WriteProcessFile(job_dir / "supervisor.pid", ::getpid())
                               : drover::Status(drover::MakeError(failure));
    if (!Attach(ready)) return 1;
    SuperviseBatchJob(job_dir, *launch, environment);
    return 0;
  }
  if (!failure.empty()) {
    fmt::print(stderr, "droverstepd: error: {}\n", failure);
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
  SuperviseBatchJob(job_dir, *launch, environment);
  return 0;
}
