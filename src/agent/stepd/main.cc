// droverstepd <job dir>: the step supervisor of one batch job (supervisor.h). It reads the job
// directory's launch and environ files (an error in them is printed, exit 1, no status), detaches
// (detach.h), writes supervisor.pid and returns 0 in the caller; the supervisor runs the job.
// droverstepd --attached <job dir> is the same without the detach, as the agent spawns it, and
// droverstepd --serve the agent's launcher, which forks supervisors on request (launcher.h);
// the agent adds --title-room=SPACES, room in its command line for the supervisors' titles.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "agent/stepd/detach.h"
#include "agent/stepd/launcher.h"
#include "agent/stepd/spool.h"
#include "agent/stepd/supervisor.h"
#include "common/getopt.h"

namespace fs = std::filesystem;
using namespace drover::agent;

namespace {

struct Invocation {
  std::string job_dir;
  bool attached = false;  // --attached: the agent's child, already in its own session
  bool serve = false;     // --serve: the agent's launcher, its socket on kServeFd
};

// The one operand, a job directory; --attached, the agent's way; or --serve alone.
std::optional<Invocation> InvocationOf(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  static const drover::OptionSpec kOptions[] = {
      {0, "attached", drover::OptionSpec::kNone},
      {0, "serve", drover::OptionSpec::kNone},
      {0, kTitleRoomOption.substr(2), drover::OptionSpec::kRequired}};
  auto parsed = drover::ParseOptions(args, kOptions);
  if (!parsed) return std::nullopt;
  if (parsed->Has("serve")) {
    if (!parsed->operands.empty() || parsed->Has("attached")) return std::nullopt;
    return Invocation{"", false, true};
  }
  if (parsed->Has(kTitleRoomOption.substr(2))) return std::nullopt;
  if (parsed->operands.size() != 1 || parsed->operands[0].starts_with("-")) return std::nullopt;
  return Invocation{parsed->operands[0], parsed->Has("attached"), false};
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<Invocation> invocation = InvocationOf(argc, argv);
  if (!invocation) {
    fmt::print(stderr, "usage: droverstepd [--attached] <job directory> | --serve\n");
    return 2;
  }
  KeepCommandLine(argc, argv);  // each supervisor names its job there (SuperviseBatchJob)
  if (invocation->serve) {
    SetCommandLine("droverstepd --serve");
    ::close_range(kServeFd + 1, ~0U, 0);
    return ServeLaunches(kServeFd);
  }
  // Nothing of the agent's (sockets, files) reaches the job; attached, but the ready pipe.
  ::close_range(invocation->attached ? kReadyFd + 1 : 3, ~0U, 0);
  const fs::path job_dir = fs::absolute(invocation->job_dir);
  if (invocation->attached) return SuperviseAttached(job_dir);
  auto input = ReadSupervisorInput(job_dir);
  if (!input) {
    fmt::print(stderr, "droverstepd: error: {}\n", input.error());
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
  SuperviseBatchJob(job_dir, input->launch, input->environment);
  return 0;
}
