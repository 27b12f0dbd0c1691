// Spawn's description reaches the child: descriptors, directory, environment, session, limits,
// signals and user; and a child that cannot start says which phase failed and why.
#include "agent/host/spawn.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/text.h"
#include "testing/temp_dir.h"

namespace drover::agent {
namespace {

namespace fs = std::filesystem;

// Each test's own directory, named for this suite.
class TempDir : public testing::TempDir {
 public:
  TempDir() : testing::TempDir("spawn_test") {}
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Ran {
  std::string output;  // stdout and stderr
  int status = -1;     // wait status
  pid_t pid = -1;
  std::optional<SpawnFailure> failure;
};

// Runs `spec` with stdout (and stderr, unless the spec says otherwise) into a pipe.
Ran RunSpawned(ProcessSpec spec, const std::function<Status(pid_t)>& join = {}) {
  int out[2];
  EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
  if (spec.stdout_source.kind == StdioSource::kInherit)
    spec.stdout_source = StdioSource::Descriptor(out[1]);
  if (spec.stderr_source.kind == StdioSource::kInherit)
    spec.stderr_source = StdioSource::SameAsStdout();
  auto spawned = Spawn(spec, join);
  ::close(out[1]);
  Ran ran;
  if (!spawned) {
    ::close(out[0]);
    ADD_FAILURE() << spawned.error();
    return ran;
  }
  ran.pid = spawned->pid;
  ran.failure = ReadSpawnFailure(spawned->report_fd);
  char buffer[4096];
  for (ssize_t got; (got = ::read(out[0], buffer, sizeof buffer)) > 0;)
    ran.output.append(buffer, got);
  ::close(out[0]);
  ::waitpid(ran.pid, &ran.status, 0);
  return ran;
}

ProcessSpec Shell(const std::string& script) {
  ProcessSpec spec;
  spec.program = "/bin/sh";
  spec.argv = {"sh", "-c", script};
  spec.environment = {"PATH=/usr/bin:/bin"};
  return spec;
}

int ExitCode(const Ran& ran) {
  return WIFEXITED(ran.status) ? WEXITSTATUS(ran.status) : -1;
}

TEST(Spawn, StdoutStderrAndStdinGoWhereTheDescriptionSays) {
  TempDir dir;
  std::ofstream(dir.path() / "in") << "from the file\n";
  ProcessSpec spec = Shell("cat; echo to-stderr >&2");
  spec.stdin_source = StdioSource::File((dir.path() / "in").string(), O_RDONLY);
  spec.stdout_source = StdioSource::File((dir.path() / "out").string(), O_WRONLY | O_CREAT);
  spec.stderr_source = StdioSource::File((dir.path() / "err").string(), O_WRONLY | O_CREAT);
  Ran ran = RunSpawned(spec);
  EXPECT_EQ(ExitCode(ran), 0);
  EXPECT_FALSE(ran.failure);
  EXPECT_EQ(ReadFile(dir.path() / "out"), "from the file\n");
  EXPECT_EQ(ReadFile(dir.path() / "err"), "to-stderr\n");
}

TEST(Spawn, StderrSameAsStdoutSharesOneOpenFile) {
  TempDir dir;
  ProcessSpec spec = Shell("echo one; echo two >&2; echo three");
  spec.stdout_source = StdioSource::File((dir.path() / "out").string(), O_WRONLY | O_CREAT);
  spec.stderr_source = StdioSource::SameAsStdout();
  RunSpawned(spec);
  EXPECT_EQ(ReadFile(dir.path() / "out"), "one\ntwo\nthree\n");  // one offset: nothing overwritten
}

TEST(Spawn, NoOtherDescriptorOfTheCallerReachesTheProgram) {
  int leaked = ::open("/dev/null", O_RDONLY);  // not close-on-exec
  ASSERT_GT(leaked, 2);
  Ran ran =
      RunSpawned(Shell(fmt::format("[ -e /proc/self/fd/{} ] && echo open || echo closed", leaked)));
  ::close(leaked);
  EXPECT_EQ(ran.output, "closed\n");
}

TEST(Spawn, WorkingDirectoryAndItsFallbackToTmp) {
  TempDir dir;
  ProcessSpec spec = Shell("pwd");
  spec.work_dir = dir.path().string();
  EXPECT_EQ(RunSpawned(spec).output, dir.path().string() + "\n");

  spec.work_dir = (dir.path() / "missing").string();
  spec.stderr_prefix = "test: error: ";
  EXPECT_EQ(RunSpawned(spec).output,
            fmt::format("test: error: couldn't chdir to `{}': No such file or directory: going to "
                        "/tmp instead\n/tmp\n",
                        *spec.work_dir));
}

TEST(Spawn, EnvironmentIsExactlyTheDescriptionsPlusTheTaskPid) {
  ProcessSpec spec;
  spec.program = "/usr/bin/env";
  spec.argv = {"env"};
  spec.environment = {"A=1", "SLURM_TASK_PID=old", "B=two words"};
  spec.task_pid_variable = true;
  Ran ran = RunSpawned(spec);
  EXPECT_EQ(ran.output, fmt::format("A=1\nSLURM_TASK_PID={}\nB=two words\n", ran.pid));

  spec.environment = {"A=1"};
  ran = RunSpawned(spec);
  EXPECT_EQ(ran.output, fmt::format("A=1\nSLURM_TASK_PID={}\n", ran.pid));
}

// pid, process group and session from the child's own /proc/self/stat (cat is the child).
struct Ids {
  long pid = 0, group = 0, session = 0, terminal = 0;
};
Ids IdsOf(SessionKind session, int terminal = -1) {
  ProcessSpec spec;
  spec.program = "/bin/cat";
  spec.argv = {"cat", "/proc/self/stat"};
  spec.session = session;
  spec.terminal = terminal;
  Ran ran = RunSpawned(spec);
  Ids ids;
  std::string_view text = ran.output;
  std::istringstream fields(std::string(text.substr(text.rfind(')') + 2)));
  std::string state;
  long parent = 0;
  fields >> state >> parent >> ids.group >> ids.session >> ids.terminal;
  ids.pid = ran.pid;
  return ids;
}

TEST(Spawn, SessionKinds) {
  Ids inherited = IdsOf(SessionKind::kInherit);
  EXPECT_EQ(inherited.group, ::getpgrp());
  EXPECT_EQ(inherited.session, ::getsid(0));
  Ids group = IdsOf(SessionKind::kProcessGroup);
  EXPECT_EQ(group.group, group.pid);
  EXPECT_EQ(group.session, ::getsid(0));
  Ids session = IdsOf(SessionKind::kSession);
  EXPECT_EQ(session.group, session.pid);
  EXPECT_EQ(session.session, session.pid);
}

TEST(Spawn, APseudoTerminalBecomesTheControllingTerminal) {
  int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  ASSERT_GE(master, 0);
  ASSERT_EQ(::grantpt(master), 0);
  ASSERT_EQ(::unlockpt(master), 0);
  int slave = ::open(::ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
  ASSERT_GE(slave, 0);
  struct stat info {};
  ASSERT_EQ(::fstat(slave, &info), 0);
  Ids ids = IdsOf(SessionKind::kTerminal, slave);
  ::close(slave);
  ::close(master);
  EXPECT_EQ(ids.session, ids.pid);
  EXPECT_EQ(static_cast<dev_t>(ids.terminal), info.st_rdev);
}

TEST(Spawn, JoinSeesTheChildInItsSessionAndItsErrorKillsIt) {
  TempDir dir;
  ProcessSpec spec = Shell(fmt::format("touch {}/ran", dir.path().string()));
  spec.name = "the test's child";
  spec.session = SessionKind::kSession;
  pid_t seen = 0;
  auto spawned = Spawn(spec, [&](pid_t pid) {
    seen = ::getsid(pid);
    return MakeError("no cgroup for it");
  });
  ASSERT_FALSE(spawned);
  EXPECT_EQ(spawned.error(), "no cgroup for it");
  EXPECT_GT(seen, 0);
  EXPECT_FALSE(fs::exists(dir.path() / "ran"));
}

// The note the parent makes during join (srun --cpu-bind=verbose's lines name the child's pid)
// is written by the child itself on its stderr, once that is in place, before the program runs.
TEST(Spawn, TheJoinsStderrNoteIsWrittenByTheChildBeforeTheProgram) {
  TempDir dir;
  std::string note;
  ProcessSpec spec = Shell("echo program >&2");
  spec.stderr_note = &note;
  spec.stderr_source = StdioSource::File((dir.path() / "err").string(), O_WRONLY | O_CREAT);
  pid_t child = 0;
  Ran ran = RunSpawned(spec, [&](pid_t pid) {
    child = pid;
    note = fmt::format("task [{}]: mask 0x3 set\n", pid);
    return OkStatus();
  });
  EXPECT_EQ(ExitCode(ran), 0);
  EXPECT_EQ(ReadFile(dir.path() / "err"), fmt::format("task [{}]: mask 0x3 set\nprogram\n", child));

  note.clear();  // an empty note writes nothing; a long one is cut at kStderrNoteMost
  spec.stderr_source = StdioSource::File((dir.path() / "empty").string(), O_WRONLY | O_CREAT);
  EXPECT_EQ(ExitCode(RunSpawned(spec)), 0);
  EXPECT_EQ(ReadFile(dir.path() / "empty"), "program\n");
  spec.stderr_source = StdioSource::File((dir.path() / "long").string(), O_WRONLY | O_CREAT);
  ran = RunSpawned(spec, [&](pid_t) {
    note.assign(kStderrNoteMost + 100, 'x');
    return OkStatus();
  });
  EXPECT_EQ(ReadFile(dir.path() / "long"), std::string(kStderrNoteMost, 'x') + "program\n");
}

TEST(Spawn, ResourceLimitsAndUmaskApply) {
  ProcessSpec spec = Shell("ulimit -n; umask");
  spec.limits.push_back({RLIMIT_NOFILE, 77, 77});
  spec.umask = 027;
  EXPECT_EQ(RunSpawned(spec).output, "77\n0027\n");
}

// --propagate: the soft limit is set as the user; one above what the user may raise reports
// Slurm's words on stderr and the program still runs, with the limit unchanged.
TEST(Spawn, PropagatedLimitsAreSetOrReportedAsSlurmsStepdDoes) {
  rlimit files{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &files), 0);
  ASSERT_GT(files.rlim_cur, 64u);
  ProcessSpec spec = Shell("ulimit -S -n");
  spec.propagated_limits.push_back({"NOFILE", RLIMIT_NOFILE, 64, 4096, true});
  Ran ran = RunSpawned(spec);
  EXPECT_EQ(ran.output, "64\n");

  if (::geteuid() == 0 || files.rlim_max == RLIM_INFINITY) GTEST_SKIP() << "may raise any limit";
  spec = Shell("ulimit -S -n; ulimit -H -n");
  rlim_t above = files.rlim_max + 1;
  spec.propagated_limits = {{"NOFILE", RLIMIT_NOFILE, above, above, true}};
  ran = RunSpawned(spec);
  EXPECT_EQ(ran.output, fmt::format("droverstepd: error: Can't propagate RLIMIT_NOFILE of {} from "
                                    "submit host: Operation not permitted\n{}\n{}\n",
                                    above, files.rlim_cur, files.rlim_max));
  EXPECT_TRUE(WIFEXITED(ran.status) && WEXITSTATUS(ran.status) == 0);
  // From slurm.conf's PropagateResourceLimits, not asked for: nothing said.
  spec.propagated_limits[0].user_requested = false;
  ran = RunSpawned(spec);
  EXPECT_EQ(ran.output, fmt::format("{}\n{}\n", files.rlim_cur, files.rlim_max));
}

TEST(Spawn, SignalDispositionsAreResetUnlessTheDescriptionKeepsThem) {
  ::signal(SIGUSR1, SIG_IGN);
  ProcessSpec spec = Shell("exec grep SigIgn /proc/self/status");
  std::string reset = RunSpawned(spec).output;
  spec.default_signals.clear();
  std::string kept = RunSpawned(spec).output;
  ::signal(SIGUSR1, SIG_DFL);
  unsigned long reset_mask = std::stoul(reset.substr(reset.find('\t') + 1), nullptr, 16);
  unsigned long kept_mask = std::stoul(kept.substr(kept.find('\t') + 1), nullptr, 16);
  EXPECT_EQ(reset_mask & (1ul << (SIGUSR1 - 1)), 0u) << reset;
  EXPECT_NE(kept_mask & (1ul << (SIGUSR1 - 1)), 0u) << kept;
}

TEST(Spawn, ExecFailureReportsErrnoAndExitsWithIt) {
  ProcessSpec spec;
  spec.program = "/nonexistent/program";
  spec.argv = {"program"};
  spec.stderr_prefix = "test: error: ";
  Ran ran = RunSpawned(spec);
  ASSERT_TRUE(ran.failure);
  EXPECT_EQ(ran.failure->phase, SpawnPhase::kExec);
  EXPECT_EQ(ran.failure->error, ENOENT);
  EXPECT_EQ(ran.failure->message, "execve(): /nonexistent/program: No such file or directory");
  EXPECT_EQ(ran.output, "test: error: execve(): /nonexistent/program: No such file or directory\n");
  EXPECT_EQ(ExitCode(ran), ENOENT);

  spec.program.clear();  // a program that ResolveProgram did not find
  ran = RunSpawned(spec);
  ASSERT_TRUE(ran.failure);
  EXPECT_EQ(ran.failure->error, ENOENT);
}

TEST(Spawn, AnOutputFileThatCannotBeOpenedNamesItsPhase) {
  TempDir dir;
  ProcessSpec spec = Shell("echo never");
  std::string path = (dir.path() / "missing" / "out").string();
  spec.stdout_source = StdioSource::File(path, O_WRONLY | O_CREAT);
  Ran ran = RunSpawned(spec);
  ASSERT_TRUE(ran.failure);
  EXPECT_EQ(ran.failure->phase, SpawnPhase::kStdout);
  EXPECT_EQ(ran.failure->message,
            fmt::format("could not open stdout file {}: No such file or directory", path));
  EXPECT_EQ(ExitCode(ran), 1);

  spec.stdout_source = {};
  spec.stdin_source = StdioSource::File(path, O_RDONLY);
  ran = RunSpawned(spec);
  ASSERT_TRUE(ran.failure);
  EXPECT_EQ(ran.failure->phase, SpawnPhase::kStdin);
}

TEST(Spawn, ResolveProgramUsesTheEnvironmentsPath) {
  TempDir dir;
  fs::path tool = dir.path() / "tool";
  std::ofstream(tool) << "#!/bin/sh\n";
  fs::permissions(tool, fs::perms::owner_read);  // not executable: not found
  EXPECT_EQ(ResolveProgram("tool", {"PATH=" + dir.path().string()}), "");
  fs::permissions(tool, fs::perms::owner_all);
  EXPECT_EQ(ResolveProgram("tool", {"PATH=/nonexistent:" + dir.path().string()}), tool.string());
  EXPECT_EQ(ResolveProgram("./relative/tool", {}), "./relative/tool");
}

std::optional<ProcessUser> Nobody() {
  passwd* entry = ::getpwnam("nobody");
  if (!entry) return std::nullopt;
  return ProcessUser{"nobody", entry->pw_uid, entry->pw_gid, GroupsOf("nobody", entry->pw_gid)};
}

TEST(Spawn, BecomesTheUserAndOpensFilesAsThem) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can start a process as another user";
  std::optional<ProcessUser> nobody = Nobody();
  if (!nobody) GTEST_SKIP() << "no user 'nobody' here";
  TempDir dir;
  ::chmod(dir.path().c_str(), 0777);
  ProcessSpec spec = Shell("id -u; id -g");
  spec.user = nobody;
  spec.stdout_source = StdioSource::File((dir.path() / "out").string(), O_WRONLY | O_CREAT);
  RunSpawned(spec);
  EXPECT_EQ(ReadFile(dir.path() / "out"), fmt::format("{}\n{}\n", nobody->uid, nobody->gid));
  struct stat info {};
  ASSERT_EQ(::stat((dir.path() / "out").c_str(), &info), 0);
  EXPECT_EQ(info.st_uid, nobody->uid);

  ::chmod(dir.path().c_str(), 0755);  // no longer writable by nobody
  spec.stdout_source = StdioSource::File((dir.path() / "other").string(), O_WRONLY | O_CREAT);
  Ran ran = RunSpawned(spec);
  ASSERT_TRUE(ran.failure);
  EXPECT_EQ(ran.failure->error, EACCES);
}

TEST(Spawn, CreateFileAsUser) {
  TempDir dir;
  std::string mine = (dir.path() / "mine").string();
  EXPECT_EQ(CreateFileAsUser(std::nullopt, mine, O_WRONLY | O_CREAT | O_TRUNC), 0);
  EXPECT_TRUE(fs::exists(mine));
  EXPECT_EQ(CreateFileAsUser(std::nullopt, (dir.path() / "no/such").string(), O_WRONLY | O_CREAT),
            ENOENT);
  if (::geteuid() != 0) GTEST_SKIP() << "only root can create a file as another user";
  std::optional<ProcessUser> nobody = Nobody();
  if (!nobody) GTEST_SKIP() << "no user 'nobody' here";
  EXPECT_EQ(CreateFileAsUser(nobody, (dir.path() / "theirs").string(), O_WRONLY | O_CREAT), EACCES);
  ::chmod(dir.path().c_str(), 0777);
  EXPECT_EQ(CreateFileAsUser(nobody, (dir.path() / "theirs").string(), O_WRONLY | O_CREAT), 0);
  struct stat info {};
  ASSERT_EQ(::stat((dir.path() / "theirs").c_str(), &info), 0);
  EXPECT_EQ(info.st_uid, nobody->uid);
}

// scontrol notify's write: as the user, so only into what the user may write, and never blocked
// by a full pipe.
TEST(Spawn, AppendFileAsUser) {
  TempDir dir;
  std::string mine = (dir.path() / "mine").string();
  std::ofstream(mine) << "one\n";
  EXPECT_EQ(AppendFileAsUser(std::nullopt, mine, "two\n"), 0);
  EXPECT_EQ(ReadFile(mine), "one\ntwo\n");
  EXPECT_EQ(AppendFileAsUser(std::nullopt, (dir.path() / "none").string(), "x"), ENOENT);
  int full[2];
  ASSERT_EQ(::pipe2(full, O_CLOEXEC), 0);
  std::string path = fmt::format("/proc/self/fd/{}", full[1]);  // the child's own copy of it
  EXPECT_EQ(AppendFileAsUser(std::nullopt, path, std::string(1 << 20, 'x')), EAGAIN);
  ::close(full[0]);
  ::close(full[1]);
  if (::geteuid() != 0) GTEST_SKIP() << "only root can write as another user";
  std::optional<ProcessUser> nobody = Nobody();
  if (!nobody) GTEST_SKIP() << "no user 'nobody' here";
  ::chmod(mine.c_str(), 0644);
  EXPECT_EQ(AppendFileAsUser(nobody, mine, "three\n"), EACCES);
  EXPECT_EQ(ReadFile(mine), "one\ntwo\n");
}

}  // namespace
}  // namespace drover::agent
