// The batch shell, the prolog and the epilog as Spawn describes them; see batch_shell.h.
#include "agent/stepd/batch_shell.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent/host/job_env.h"

namespace drover::agent {
namespace {

constexpr const char* kStderrPrefix = "droverstepd: error: ";

mode_t UmaskFor(const std::vector<std::string>& environment) {
  auto text = FindVariable(environment, "SLURM_UMASK");
  if (!text || text->empty() || text->size() > 4) return 022;
  mode_t mask = 0;
  for (char digit : *text) {
    if (digit < '0' || digit > '7') return 022;
    mask = mask * 8 + (digit - '0');
  }
  return mask;
}

int OutputFlags(OpenMode mode) {
  return O_WRONLY | O_CREAT | (mode == OpenMode::kAppend ? O_APPEND : O_TRUNC);
}

}  // namespace

Result<std::optional<ProcessUser>> CredentialsFor(const BatchLaunch& launch) {
  if (::geteuid() != 0) {
    if (launch.uid != ::geteuid() || launch.gid != ::getegid())
      return MakeError(fmt::format(
          "cannot switch to uid {} gid {} (user {}): droverstepd runs as uid {} gid {}, not "
          "root, so it runs only that user's jobs",
          launch.uid, launch.gid, launch.user, ::geteuid(), ::getegid()));
    return std::optional<ProcessUser>();
  }
  passwd entry{}, *found = nullptr;
  std::vector<char> buffer(16384);
  int error = ::getpwnam_r(launch.user.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (!found)
    return MakeError(
        error ? fmt::format("cannot look up user '{}': {}", launch.user, std::strerror(error))
              : fmt::format("user '{}' is unknown on this node", launch.user));
  if (found->pw_uid != launch.uid)
    return MakeError(fmt::format("user '{}' is uid {} on this node, not {}", launch.user,
                                 found->pw_uid, launch.uid));
  return std::optional<ProcessUser>(
      ProcessUser{launch.user, launch.uid, launch.gid, GroupsOf(launch.user, launch.gid)});
}

Result<Spawned> ForkBatchShell(const ShellPlan& plan, const std::function<Status(pid_t)>& join) {
  ProcessSpec spec;
  spec.name = "the batch shell";
  spec.program = plan.script;
  spec.argv.push_back(plan.script);
  spec.argv.insert(spec.argv.end(), plan.arguments.begin(), plan.arguments.end());
  spec.environment = plan.environment;
  spec.task_pid_variable = true;
  spec.user = plan.user;
  spec.stdout_source = StdioSource::File(plan.stdout_path, OutputFlags(plan.open_mode));
  spec.stderr_source = plan.stderr_path == plan.stdout_path
                           ? StdioSource::SameAsStdout()
                           : StdioSource::File(plan.stderr_path, OutputFlags(plan.open_mode));
  spec.stdin_source = StdioSource::File(plan.stdin_path, O_RDONLY);
  spec.work_dir = plan.work_dir;
  spec.session = SessionKind::kSession;
  spec.umask = UmaskFor(plan.environment);
  spec.propagated_limits = plan.limits;
  spec.stderr_prefix = kStderrPrefix;
  spec.mount_namespace = plan.mount_namespace;
  return Spawn(spec, join);
}

std::string ReadLaunchError(int& report_fd) {
  auto failure = ReadSpawnFailure(report_fd);
  return failure ? failure->message : std::string();
}

Result<pid_t> ForkProgram(const std::string& program, const std::vector<std::string>& environment) {
  ProcessSpec spec;
  spec.program = program;
  spec.argv = {program};
  spec.environment = environment;
  spec.stdin_source = StdioSource::File("/dev/null", O_RDONLY);
  spec.stderr_prefix = kStderrPrefix;
  spec.session = SessionKind::kProcessGroup;  // what it starts is killed with it on a timeout
  auto spawned = Spawn(spec);
  if (!spawned) return std::move(spawned).take_error();
  // Its failure is in stepd.log and in its exit code (execve's errno); the report is not needed.
  (void)ReadSpawnFailure(spawned->report_fd);
  return spawned->pid;
}

}  // namespace drover::agent
