// The step supervisor: the spool files round-trip and bad ones say where and what; and the real
// droverstepd binary, started as the agent starts it, runs jobs in temporary directories —
// output, environment, exit codes, signals, cancel, leftovers, prolog/epilog, memory limits.
// Every process a test starts carries a marker in its environment and is killed by pid after.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "agent/host/cgroup.h"
#include "agent/stepd/detach.h"
#include "agent/stepd/launcher.h"
#include "agent/stepd/spool.h"
#include "agent/stepd/user_environment.h"
#include "common/fd_io.h"
#include "common/text.h"
#include "testing/temp_dir.h"

namespace drover::agent {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void Write(const fs::path& path, const std::string& text,
           fs::perms perms = fs::perms::owner_read | fs::perms::owner_write) {
  std::ofstream(path, std::ios::binary) << text;
  fs::permissions(path, perms);
}

// Each test's own directory, named for this suite.
class TempDir : public testing::TempDir {
 public:
  TempDir() : testing::TempDir("drover_stepd") {}
};

// ---- The spool files ----------------------------------------------------------------------

BatchLaunch FullLaunch() {
  BatchLaunch launch;
  launch.job_id = 4242;
  launch.uid = 1001;
  launch.gid = 1002;
  launch.user = "alice";
  launch.node_name = "n7";
  launch.work_dir = "/home/alice/run 1";
  launch.stdout_path = "/home/alice/out\\put\n.txt";
  launch.stderr_path = "/home/alice/err\t.txt";
  launch.stdin_path = "/dev/null";
  launch.open_mode = OpenMode::kAppend;
  launch.cgroup_mode = "v2";
  launch.cgroup_root = "/sys/fs/cgroup";
  launch.cpus = {0, 1, 2, 3, 8};
  launch.memory_limit_mib = 4096;
  launch.devices_denied = {{195, 1}, {195, 3}};
  launch.prolog = "/etc/drover/prolog";
  launch.epilog = "/etc/drover/epilog";
  launch.kill_wait_seconds = 45;
  launch.extern_step = true;
  launch.arguments = {"first arg", "", "line\nbreak", "tab\tand\\slash", "caf\xc3\xa9\x01"};
  return launch;
}

TEST(Spool, LaunchRoundTrips) {
  TempDir dir;
  const BatchLaunch launch = FullLaunch();
  Status written = WriteLaunch(dir.path(), launch);
  ASSERT_TRUE(written.ok()) << written.error();
  auto read = ReadLaunch(dir.path());
  ASSERT_TRUE(read.ok()) << read.error();
  EXPECT_EQ(*read, launch);
  EXPECT_NE(Read(dir.path() / "launch").find("cpus=0-3,8\n"), std::string::npos);

  BatchLaunch minimal;
  minimal.user = "bob";
  minimal.node_name = "n1";
  minimal.work_dir = minimal.stdout_path = minimal.stderr_path = minimal.stdin_path = "/tmp";
  ASSERT_TRUE(WriteLaunch(dir.path(), minimal).ok());
  read = ReadLaunch(dir.path());
  ASSERT_TRUE(read.ok()) << read.error();
  EXPECT_EQ(*read, minimal);
}

TEST(Spool, LaunchCpusAreASet) {
  // Found by fuzz_spool: "cpus=8,0-3,0-3" read as written, but wrote back as "0-3,8".
  TempDir dir;
  ASSERT_TRUE(WriteLaunch(dir.path(), FullLaunch()).ok());
  std::string text = Read(dir.path() / "launch");
  size_t at = text.find("cpus=0-3,8\n");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 11, "cpus=8,0-3,0-3\n");
  { std::ofstream(dir.path() / "launch", std::ios::trunc) << text; }
  auto read = ReadLaunch(dir.path());
  ASSERT_TRUE(read.ok()) << read.error();
  EXPECT_EQ(read->cpus, (std::vector<int>{0, 1, 2, 3, 8}));
  ASSERT_TRUE(WriteLaunch(dir.path(), *read).ok());
  auto again = ReadLaunch(dir.path());
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(*again, *read);
}

TEST(Spool, StatusRoundTrips) {
  TempDir dir;
  BatchStatus status;
  status.exit_code = 3;
  status.signal = 9;
  status.out_of_memory = status.cancelled = status.epilog_failed = true;
  status.cpu_seconds = 12.345;
  status.max_rss_mib = 513;
  status.start_time = 1700000000;
  status.end_time = 1700000042;
  status.cgroup_mode = "v1";
  status.reason = "could not open stdout file /x\ny: Permission denied";
  ASSERT_TRUE(WriteStatus(dir.path(), status).ok());
  auto read = ReadStatus(dir.path());
  ASSERT_TRUE(read.ok()) << read.error();
  EXPECT_EQ(*read, status);
}

TEST(Spool, StatusCpuSecondsMustBeAFiniteNumber) {
  TempDir dir;
  const std::string head = "exit_code=0\nsignal=0\nlaunch_failed=0\nprolog_failed=0\n";
  for (const char* value : {"nan", "inf", "-1", "1e400", "x"}) {
    Write(dir.path() / "status", head + "cpu_seconds=" + value + "\n");
    auto status = ReadStatus(dir.path());
    ASSERT_FALSE(status.ok()) << value;
    EXPECT_NE(status.error().find(std::string("status:5: cpu_seconds: expected seconds, found '") +
                                  value + "'"),
              std::string::npos)
        << status.error();
  }
  Write(dir.path() / "status", head + "cpu_seconds=0.250\n");
  auto status = ReadStatus(dir.path());
  ASSERT_TRUE(status.ok()) << status.error();
  EXPECT_EQ(status->cpu_seconds, 0.25);
}

TEST(Spool, BadLaunchFilesSayWhereAndWhat) {
  const std::string good =
      "job_id=1\nuid=0\ngid=0\nuser=u\nnode_name=n\nwork_dir=/w\nstdout=/o\nstderr=/e\n"
      "stdin=/dev/null\n";
  struct Case {
    std::string text, error;
  };
  const std::vector<Case> cases = {
      {good + "jobid=2\n", "launch:10: unknown key 'jobid' (did you mean 'job_id'?)"},
      {"job_id=x\n", "launch:1: job_id: expected a number, found 'x'"},
      {good + "uid=5\n", "launch:10: uid given twice"},
      {good + "open_mode=overwrite\n",
       "launch:10: open_mode: expected truncate or append, found 'overwrite'"},
      {good + "cgroup_mode=v3\n", "launch:10: cgroup_mode: expected auto, v1, v2 or none"},
      {good + "cpus=0-\n", "launch:10: cpus: invalid index list '0-'"},
      {good + "arg=a\\qb\n", "launch:10: unknown escape '\\q'"},
      {good + "# a comment\n\nno equals sign\n", "launch:12: expected key=value"},
      {"job_id=1\nuid=0\n", "launch: missing gid"},
      {"job_id=1\nuid=0\ngid=0\nuser=u\nnode_name=n\nwork_dir=w\nstdout=/o\nstderr=/e\n"
       "stdin=/dev/null\n",
       "launch: work_dir 'w' is not an absolute path"},
      {good + "prolog=prolog.sh\n", "launch: prolog 'prolog.sh' is not an absolute path"},
  };
  TempDir dir;
  for (const Case& test : cases) {
    Write(dir.path() / "launch", test.text);
    auto launch = ReadLaunch(dir.path());
    ASSERT_FALSE(launch.ok()) << test.text;
    EXPECT_EQ(launch.error().find(dir.path().string() + "/"), 0u) << launch.error();
    EXPECT_NE(launch.error().find(test.error), std::string::npos)
        << "expected '" << test.error << "' in: " << launch.error();
  }
  Write(dir.path() / "launch", good);
  EXPECT_TRUE(ReadLaunch(dir.path()).ok());
  fs::remove(dir.path() / "launch");
  auto missing = ReadLaunch(dir.path());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("launch: cannot read it: No such file or directory"),
            std::string::npos)
      << missing.error();
}

TEST(Spool, EnvironmentRoundTripsAndEntriesNeedANameAndAValue) {
  TempDir dir;
  const std::vector<std::string> environment = {"A=1", "MULTI=line1\nline2", "EMPTY=", "EQ=a=b"};
  ASSERT_TRUE(WriteEnvironment(dir.path(), environment).ok());
  auto read = ReadEnvironment(dir.path());
  ASSERT_TRUE(read.ok()) << read.error();
  EXPECT_EQ(*read, environment);

  Write(dir.path() / "environ", std::string("A=1\0NONAME\0", 11));
  read = ReadEnvironment(dir.path());
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().find("environ: entry 2 'NONAME' is not NAME=value"), std::string::npos)
      << read.error();
  Write(dir.path() / "environ", "A=1");
  read = ReadEnvironment(dir.path());
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().find("not ended by a NUL"), std::string::npos) << read.error();
}

TEST(Spool, JobDirectoryIsReachableButNotListableAndNeverReused) {
  TempDir spool;
  auto dir = CreateJobDirectory(spool.path(), 12);
  ASSERT_TRUE(dir.ok()) << dir.error();
  EXPECT_EQ(*dir, spool.path() / "job_12");
  EXPECT_EQ(fs::status(*dir).permissions(),
            fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  auto again = CreateJobDirectory(spool.path(), 12);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error(), (spool.path() / "job_12").string() + ": cannot create it: File exists");
}

// A job's script, environment and launch are its owner's alone: the script is the job user's
// (executable, since it is exec'd for its #! line), the rest the agent's.
TEST(Spool, SpooledFilesAreReadableByTheirOwnerOnly) {
  TempDir spool;
  auto dir = CreateJobDirectory(spool.path(), 7);
  ASSERT_TRUE(dir.ok()) << dir.error();
  ::umask(022);  // what a daemon started from a shell has: the modes must not depend on it
  ASSERT_TRUE(WriteScript(*dir, "#!/bin/sh\necho secret\n", ::getuid(), ::getgid()).ok());
  ASSERT_TRUE(WriteEnvironment(*dir, {"TOKEN=secret"}).ok());
  BatchLaunch launch;
  launch.work_dir = launch.stdout_path = launch.stderr_path = launch.stdin_path = "/tmp";
  ASSERT_TRUE(WriteLaunch(*dir, launch).ok());
  EXPECT_EQ(fs::status(*dir / "script").permissions(), fs::perms::owner_all);
  EXPECT_EQ(fs::status(*dir / "environ").permissions(),
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(fs::status(*dir / "launch").permissions(),
            fs::perms::owner_read | fs::perms::owner_write);
}

TEST(Spool, ProcessFilesTellAReusedPidFromTheProcess) {
  TempDir dir;
  const fs::path file = dir.path() / "supervisor.pid";
  EXPECT_FALSE(SupervisorAlive(dir.path()));  // not started yet
  ASSERT_TRUE(WriteProcessFile(file, ::getpid()).ok());
  auto record = ReadProcessFile(file);
  ASSERT_TRUE(record.ok()) << record.error();
  EXPECT_EQ(record->pid, ::getpid());
  EXPECT_TRUE(ProcessAlive(*record));
  EXPECT_TRUE(SupervisorAlive(dir.path()));

  ProcessRecord reused = *record;
  ++reused.started;  // the same pid, started at another time: another process
  EXPECT_FALSE(ProcessAlive(reused));

  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_TRUE(WriteProcessFile(file, child).ok());
  ::waitpid(child, nullptr, 0);
  EXPECT_FALSE(SupervisorAlive(dir.path()));  // exited and reaped
}

// ---- The supervisor, run as the agent runs it ------------------------------------------------

constexpr uint64_t kJobId = 77;

class Stepd : public ::testing::Test {
 protected:
  void SetUp() override {
    auto created = CreateJobDirectory(spool_.path(), kJobId);
    ASSERT_TRUE(created.ok()) << created.error();
    job_dir_ = *created;
    marker_ = fmt::format("DROVER_STEPD_TEST_MARKER={}-{}", ::getpid(),
                          ::testing::UnitTest::GetInstance()->current_test_info()->name());
    node_ = fmt::format("stepd-test-{}", ::getpid());
    launch_.job_id = kJobId;
    launch_.uid = ::geteuid();
    launch_.gid = ::getegid();
    const passwd* user = ::getpwuid(::geteuid());
    launch_.user = user ? user->pw_name : "unknown";
    launch_.node_name = node_;
    launch_.work_dir = spool_.path().string();
    launch_.stdout_path = (spool_.path() / "out").string();
    launch_.stderr_path = launch_.stdout_path;
    launch_.stdin_path = "/dev/null";
    launch_.kill_wait_seconds = 1;
    environment_ = {"PATH=/usr/local/bin:/usr/bin:/bin", marker_,
                    fmt::format("SLURM_JOB_ID={}", kJobId)};
  }

  void TearDown() override {
    if (auto record = ReadProcessFile(job_dir_ / "supervisor.pid")) {
      // A supervisor that wrote its status exits at once; give it time to, so that what a
      // sanitizer says on its way out (leaks) reaches stepd.log.
      for (auto deadline = Clock::now() + seconds(5);
           fs::exists(job_dir_ / "status") && ProcessAlive(*record) && Clock::now() < deadline;)
        std::this_thread::sleep_for(milliseconds(10));
      if (ProcessAlive(*record)) ::kill(record->pid, SIGKILL);
    }
    const std::string log = Read(job_dir_ / "stepd.log");
    EXPECT_EQ(log.find("Sanitizer"), std::string::npos) << log;
    EXPECT_EQ(log.find("runtime error"), std::string::npos) << log;
    for (pid_t pid : MarkedProcesses()) ::kill(pid, SIGKILL);
    for (pid_t child : children_) ::waitpid(child, nullptr, 0);  // the supervisors we started
    // The supervisor removes the job's cgroup; the node's level above it is ours to remove.
    for (const fs::path& mount : CgroupMounts(DetectCgroups())) {
      ::rmdir((mount / "drover" / node_).c_str());
      ::rmdir((mount / "drover").c_str());  // in use by a real agent: it stays
    }
  }

  void Start(const std::string& script) {
    ASSERT_TRUE(WriteScript(job_dir_, script, launch_.uid, launch_.gid).ok());
    ASSERT_TRUE(WriteEnvironment(job_dir_, environment_).ok());
    ASSERT_TRUE(WriteLaunch(job_dir_, launch_).ok());
    auto started = StartSupervisor(DROVER_STEPD, job_dir_);
    ASSERT_TRUE(started.ok()) << started.error();
    children_.push_back(*started);
    ASSERT_TRUE(fs::exists(job_dir_ / "supervisor.pid"));
  }

  std::optional<BatchStatus> WaitForStatus(Clock::duration limit = seconds(10)) {
    for (auto deadline = Clock::now() + limit; Clock::now() < deadline;
         std::this_thread::sleep_for(milliseconds(20)))
      if (auto status = ReadStatus(job_dir_)) return *status;
    ADD_FAILURE() << "no status after " << std::chrono::duration<double>(limit).count()
                  << " s; stepd.log:\n"
                  << Read(job_dir_ / "stepd.log");
    return std::nullopt;
  }

  bool WaitForText(const fs::path& file, const std::string& text) {
    for (auto deadline = Clock::now() + seconds(10); Clock::now() < deadline;
         std::this_thread::sleep_for(milliseconds(20)))
      if (Read(file).find(text) != std::string::npos) return true;
    return false;
  }

  pid_t SupervisorPid() {
    auto record = ReadProcessFile(job_dir_ / "supervisor.pid");
    EXPECT_TRUE(record.ok()) << record.error();
    return record.ok() ? record->pid : 0;
  }

  // Live processes whose environment holds this test's marker: the job's, wherever they went.
  std::vector<pid_t> MarkedProcesses() const {
    std::vector<pid_t> pids;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator("/proc", error)) {
      auto pid = ParseInt64(entry.path().filename().string());
      if (!pid) continue;
      std::string environment = Read(entry.path() / "environ");
      for (const std::string& variable : Split(environment, '\0'))
        if (variable == marker_) pids.push_back(static_cast<pid_t>(*pid));
    }
    return pids;
  }

  std::string Log() { return "stepd.log:\n" + Read(job_dir_ / "stepd.log"); }

  TempDir spool_;
  std::vector<pid_t> children_;  // supervisors StartSupervisor started: this process reaps them
  fs::path job_dir_;
  std::string marker_, node_;
  BatchLaunch launch_;
  std::vector<std::string> environment_;
};

TEST_F(Stepd, OutputHoldsWhatTheJobPrintedAndItsEnvironmentIsEnvironPlusTaskPid) {
  launch_.stderr_path = (spool_.path() / "err").string();
  launch_.arguments = {"a b", "c"};
  environment_.push_back("MULTI=line1\nline2");
  Start(
      "#!/bin/sh\n"
      "printf '%s|%s\\n' \"$1\" \"$2\"\n"
      "echo oops >&2\n"
      "cat /proc/$$/environ\n");
  auto status = WaitForStatus();
  ASSERT_TRUE(status);
  EXPECT_EQ(status->exit_code, 0) << Log();
  EXPECT_EQ(status->signal, 0);
  EXPECT_FALSE(status->launch_failed || status->out_of_memory || status->cancelled);
  EXPECT_GT(status->start_time, 0);
  EXPECT_GE(status->end_time, status->start_time);

  auto shell = ReadProcessFile(job_dir_ / "job.pid");
  ASSERT_TRUE(shell.ok()) << shell.error();
  std::string expected = "a b|c\n";
  for (const std::string& variable : environment_) expected += variable + '\0';
  expected += fmt::format("SLURM_TASK_PID={}", shell->pid) + '\0';
  EXPECT_EQ(Read(spool_.path() / "out"), expected);
  EXPECT_EQ(Read(spool_.path() / "err"), "oops\n");
}

TEST_F(Stepd, AppendModeKeepsWhatTheFileHeld) {
  launch_.open_mode = OpenMode::kAppend;
  Write(launch_.stdout_path, "before\n");
  Start("#!/bin/sh\necho after\n");
  ASSERT_TRUE(WaitForStatus());
  EXPECT_EQ(Read(launch_.stdout_path), "before\nafter\n");
}

TEST_F(Stepd, ExitCodeIsRecorded) {
  Start("#!/bin/sh\nexit 3\n");
  auto status = WaitForStatus();
  ASSERT_TRUE(status);
  EXPECT_EQ(status->exit_code, 3) << Log();
  EXPECT_EQ(status->signal, 0);
  EXPECT_EQ(status->reason, "");
}

TEST_F(Stepd, SignalThatKilledTheShellIsRecorded) {
  Start("#!/bin/sh\nkill -USR1 $$\nsleep 5\n");
  auto status = WaitForStatus();
  ASSERT_TRUE(status);
  EXPECT_EQ(status->signal, SIGUSR1) << Log();
  EXPECT_EQ(status->exit_code, 0);
}

TEST_F(Stepd, OutlivesTheProcessThatStartedIt) {
  // The caller is a session and process group of its own, killed whole once droverstepd
  // returns: a supervisor that had not detached would die with it.
  pid_t caller = ::fork();
  if (caller == 0) {
    ::setsid();
    bool started =
        WriteScript(job_dir_, "#!/bin/sh\nsleep 1\necho done\n", launch_.uid, launch_.gid).ok() &&
        WriteEnvironment(job_dir_, environment_).ok() && WriteLaunch(job_dir_, launch_).ok() &&
        StartSupervisor(DROVER_STEPD, job_dir_).ok();
    ::_exit(started ? 0 : 1);
  }
  int wait_status = 0;
  ASSERT_EQ(::waitpid(caller, &wait_status, 0), caller);
  ASSERT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) << Log();
  ::killpg(caller, SIGKILL);
  EXPECT_FALSE(fs::exists(job_dir_ / "status")) << "the job should still be sleeping";
  EXPECT_TRUE(SupervisorAlive(job_dir_));
  pid_t supervisor = SupervisorPid();
  EXPECT_NE(::getsid(supervisor), caller);
  auto status = WaitForStatus();
  ASSERT_TRUE(status);
  EXPECT_EQ(status->exit_code, 0) << Log();
  EXPECT_EQ(Read(launch_.stdout_path), "done\n");
}

// SpawnInSession hands a descriptor over as the number asked for, even when it already has that
// number and is close-on-exec (glibc clears the flag on a dup2 onto itself; SpawnInSession relies
// on it), in a session of its own.
TEST(SpawnInSession, HandsOverTheDescriptorEvenWhenItHasTheNumberAlready) {
  int ends[2];
  ASSERT_EQ(::pipe2(ends, O_CLOEXEC), 0);
  constexpr int kAs = 57;
  ASSERT_EQ(::dup3(ends[1], kAs, O_CLOEXEC), kAs);
  ::close(ends[1]);
  auto spawned = SpawnInSession(
      {"/bin/sh", "-c", "set -- $(cat /proc/$$/stat); echo $6 $$ > /proc/self/fd/57"}, kAs, kAs, "",
      nullptr);
  ::close(kAs);
  ASSERT_TRUE(spawned.ok()) << spawned.error();
  int wait_status = 0;
  ASSERT_EQ(::waitpid(*spawned, &wait_status, 0), *spawned);
  std::string said = ReadToEnd(ends[0]);
  ::close(ends[0]);
  std::vector<std::string> words = Split(Trim(said), ' ');
  ASSERT_EQ(words.size(), 2u) << "nothing came through descriptor 57: '" << said << "'";
  EXPECT_EQ(words[0], words[1]) << "not a session of its own";
}

// ---- The launcher: supervisors forked from one droverstepd --serve, as droverd starts them ----

// The parent of process `pid` (/proc/<pid>/stat), or 0 once it is gone.
pid_t ParentOf(pid_t pid) {
  std::string stat = Read(fmt::format("/proc/{}/stat", pid));
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::vector<std::string> fields = Split(Trim(stat.substr(close + 1)), ' ');
  return fields.size() > 1 ? static_cast<pid_t>(ParseInt64(fields[1]).value_or(0)) : 0;
}

// What the descriptors of process `pid` point to ("socket:[123]", "/dev/null", ...).
std::vector<std::string> DescriptorTargets(pid_t pid) {
  std::vector<std::string> targets;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(fmt::format("/proc/{}/fd", pid), error))
    if (auto target = fs::read_symlink(entry.path(), error); !error) targets.push_back(target);
  return targets;
}

// Process `pid`'s command line as ps shows it: its arguments joined by spaces.
std::string CommandLine(pid_t pid) {
  std::string line = Read(fmt::format("/proc/{}/cmdline", pid));
  while (!line.empty() && line.back() == '\0') line.pop_back();
  std::replace(line.begin(), line.end(), '\0', ' ');
  return line;
}

class StepdLauncher : public Stepd {
 protected:
  void Prepare(const fs::path& dir, const std::string& script) {
    ASSERT_TRUE(WriteScript(dir, script, launch_.uid, launch_.gid).ok());
    ASSERT_TRUE(WriteEnvironment(dir, environment_).ok());
    ASSERT_TRUE(WriteLaunch(dir, launch_).ok());
  }
  void TearDown() override {
    for (const fs::path& dir : others_)
      if (auto record = ReadProcessFile(dir / "supervisor.pid"); record && ProcessAlive(*record))
        ::kill(record->pid, SIGKILL);
    Stepd::TearDown();
  }
  // Job `id`'s directory with the fixture's launch, its output in <spool>/out-<id>.
  fs::path OtherJob(uint64_t id, const std::string& script) {
    auto created = CreateJobDirectory(spool_.path(), id);
    EXPECT_TRUE(created.ok()) << created.error();
    if (created.ok()) others_.push_back(*created);
    BatchLaunch launch = launch_;
    launch.job_id = id;
    launch.stdout_path = launch.stderr_path = (spool_.path() / fmt::format("out-{}", id)).string();
    EXPECT_TRUE(WriteScript(*created, script, launch.uid, launch.gid).ok());
    EXPECT_TRUE(WriteEnvironment(*created, environment_).ok());
    EXPECT_TRUE(WriteLaunch(*created, launch).ok());
    return *created;
  }
  pid_t Launch(const fs::path& dir) {
    auto started = launcher_->Start(dir);
    EXPECT_TRUE(started.ok()) << started.error();
    if (!started.ok()) return 0;
    EXPECT_FALSE(started->child) << "spawned, not forked by the launcher";
    EXPECT_TRUE(fs::exists(dir / "supervisor.pid"));
    return started->pid;
  }
  std::optional<BatchStatus> WaitForStatusIn(const fs::path& dir) {
    for (auto deadline = Clock::now() + seconds(10); Clock::now() < deadline;
         std::this_thread::sleep_for(milliseconds(20)))
      if (auto status = ReadStatus(dir)) return *status;
    ADD_FAILURE() << "no status in " << dir << "; stepd.log:\n" << Read(dir / "stepd.log");
    return std::nullopt;
  }

  // Job `id` (OtherJob) ran to exit code 0 and printed `output`.
  void ExpectRan(const fs::path& dir, uint64_t id, const std::string& output) {
    auto status = WaitForStatusIn(dir);
    ASSERT_TRUE(status);
    EXPECT_EQ(status->exit_code, 0) << Read(dir / "stepd.log");
    EXPECT_EQ(Read(spool_.path() / fmt::format("out-{}", id)), output);
  }

  std::unique_ptr<SupervisorLauncher> launcher_ =
      std::make_unique<SupervisorLauncher>(DROVER_STEPD);
  std::vector<fs::path> others_;  // OtherJob's directories: their supervisors killed after
};

TEST_F(StepdLauncher, ForksEachSupervisorInASessionOfItsOwnWithNothingOfItsOwnOpen) {
  Prepare(job_dir_, "#!/bin/sh\nsleep 1\necho hello\n");
  pid_t supervisor = Launch(job_dir_);
  ASSERT_GT(supervisor, 0);
  EXPECT_EQ(supervisor, SupervisorPid());
  const pid_t launcher = launcher_->launcher_pid();
  ASSERT_GT(launcher, 0);
  EXPECT_EQ(ParentOf(launcher), ::getpid());
  EXPECT_EQ(ParentOf(supervisor), launcher);
  EXPECT_EQ(::getsid(supervisor), supervisor);
  EXPECT_EQ(::getsid(launcher), launcher);
  // Neither the launcher's socket to this process nor its signalfd is among the supervisor's
  // descriptors: no socket at all, no signalfd.
  const std::string socket = fs::read_symlink(fmt::format("/proc/{}/fd/{}", launcher, kServeFd));
  ASSERT_TRUE(socket.starts_with("socket:")) << socket;
  for (const std::string& target : DescriptorTargets(supervisor)) {
    EXPECT_FALSE(target.starts_with("socket:")) << target;
    EXPECT_EQ(target.find("signalfd"), std::string::npos) << target;
  }

  // ps names the supervisor's job as Slurm's slurmstepd does ([ID.batch]), and its node; the
  // launcher shows itself without the room it keeps for those titles.
  const std::string title = SupervisorTitle(kJobId, false, launch_.node_name);
  EXPECT_EQ(title, fmt::format("droverstepd: [{}.batch] {}", kJobId, launch_.node_name));
  for (auto deadline = Clock::now() + seconds(5);
       CommandLine(supervisor) != title && Clock::now() < deadline;)
    std::this_thread::sleep_for(milliseconds(10));
  EXPECT_EQ(CommandLine(supervisor), title);
  EXPECT_EQ(CommandLine(launcher), "droverstepd --serve");

  // A second job: the same launcher forks it.
  const fs::path second = OtherJob(kJobId + 1, "#!/bin/sh\necho second\n");
  pid_t other = Launch(second);
  EXPECT_GT(other, 0);
  EXPECT_EQ(launcher_->launcher_pid(), launcher);

  auto status = WaitForStatus();
  ASSERT_TRUE(status);
  EXPECT_EQ(status->exit_code, 0) << Log();
  EXPECT_EQ(Read(launch_.stdout_path), "hello\n");
  ExpectRan(second, kJobId + 1, "second\n");
  // The launcher reaps its supervisors as they end: no zombie is left.
  for (auto deadline = Clock::now() + seconds(5);
       (fs::exists(fmt::format("/proc/{}", supervisor)) ||
        fs::exists(fmt::format("/proc/{}", other))) &&
       Clock::now() < deadline;)
    std::this_thread::sleep_for(milliseconds(10));
  EXPECT_FALSE(fs::exists(fmt::format("/proc/{}", supervisor)));
  EXPECT_FALSE(fs::exists(fmt::format("/proc/{}", other)));
}

TEST_F(StepdLauncher, AFailedLaunchSaysWhatASpawnedSupervisorSays) {
  Prepare(job_dir_, "#!/bin/sh\ntrue\n");
  Write(job_dir_ / "launch", "jobid=77\n");
  auto forked = launcher_->Start(job_dir_);
  ASSERT_FALSE(forked.ok());
  auto spawned = StartSupervisor(DROVER_STEPD, job_dir_);
  ASSERT_FALSE(spawned.ok());
  EXPECT_EQ(forked.error(), spawned.error());
  EXPECT_NE(forked.error().find("jobid"), std::string::npos) << forked.error();
  EXPECT_FALSE(fs::exists(job_dir_ / "supervisor.pid"));
  // The launcher goes on: the same one runs the next job.
  const pid_t launcher = launcher_->launcher_pid();
  const fs::path next = OtherJob(kJobId + 1, "#!/bin/sh\necho next\n");
  EXPECT_GT(Launch(next), 0);
  EXPECT_EQ(launcher_->launcher_pid(), launcher);
  ExpectRan(next, kJobId + 1, "next\n");
}

TEST_F(StepdLauncher, SupervisorsOutliveTheirLauncherAndAKilledOneIsStartedAgain) {
  Prepare(job_dir_, "#!/bin/sh\nsleep 1\necho done\n");
  ASSERT_GT(Launch(job_dir_), 0);
  const pid_t first = launcher_->launcher_pid();
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  // The next job starts a new launcher.
  const fs::path second = OtherJob(kJobId + 1, "#!/bin/sh\nsleep 1\necho second\n");
  ASSERT_GT(Launch(second), 0);
  const pid_t again = launcher_->launcher_pid();
  EXPECT_GT(again, 0);
  EXPECT_NE(again, first);
  // The agent's end: its launcher ends; the supervisors run their jobs to the end.
  launcher_.reset();
  EXPECT_FALSE(fs::exists(fmt::format("/proc/{}", again)));
  auto status = WaitForStatus();
  ASSERT_TRUE(status);
  EXPECT_EQ(status->exit_code, 0) << Log();
  EXPECT_EQ(Read(launch_.stdout_path), "done\n");
  ExpectRan(second, kJobId + 1, "second\n");
}

TEST_F(StepdLauncher, AReplacedDroverstepdRunsTheNextJobsFromANewLauncher) {
  // A copy the test replaces as a package upgrade does: a new file renamed over the old one.
  const fs::path stepd = spool_.path() / "droverstepd";
  fs::copy_file(DROVER_STEPD, stepd);
  launcher_ = std::make_unique<SupervisorLauncher>(stepd);
  Prepare(job_dir_, "#!/bin/sh\nsleep 1\necho done\n");
  ASSERT_GT(Launch(job_dir_), 0);
  const pid_t first = launcher_->launcher_pid();
  ASSERT_GT(first, 0);
  const fs::path second = OtherJob(kJobId + 1, "#!/bin/sh\necho second\n");
  ASSERT_GT(Launch(second), 0);
  EXPECT_EQ(launcher_->launcher_pid(), first) << "the file is unchanged: the same launcher";

  fs::copy_file(DROVER_STEPD, spool_.path() / "droverstepd.new");
  fs::rename(spool_.path() / "droverstepd.new", stepd);
  const fs::path third = OtherJob(kJobId + 2, "#!/bin/sh\necho third\n");
  ASSERT_GT(Launch(third), 0);
  const pid_t again = launcher_->launcher_pid();
  EXPECT_GT(again, 0);
  EXPECT_NE(again, first) << "the replaced file's launcher still runs the jobs";
  EXPECT_FALSE(fs::exists(fmt::format("/proc/{}", first))) << "the old launcher was not reaped";
  EXPECT_EQ(fs::read_symlink(fmt::format("/proc/{}/exe", again)), stepd);
  // The job the old launcher forked runs to its end.
  auto status = WaitForStatus();
  ASSERT_TRUE(status);
  EXPECT_EQ(status->exit_code, 0) << Log();
  EXPECT_EQ(Read(launch_.stdout_path), "done\n");
  ExpectRan(second, kJobId + 1, "second\n");
  ExpectRan(third, kJobId + 2, "third\n");
}

TEST_F(StepdLauncher, ALauncherThatCannotRunFallsBackToASpawnEachWithoutRetryingEveryJob) {
  // A droverstepd whose --serve ends at once (an older one, which does not know --title-room);
  // as --attached it is the real one.
  const fs::path tries = spool_.path() / "serve-tries";
  const fs::path stepd = spool_.path() / "stepd-without-serve";
  Write(stepd,
        fmt::format("#!/bin/sh\nif [ \"$1\" = --serve ]; then echo x >> '{}'; exit 2; fi\n"
                    "exec '{}' \"$@\"\n",
                    tries.string(), DROVER_STEPD),
        fs::perms::owner_all);
  launcher_ = std::make_unique<SupervisorLauncher>(stepd);
  Prepare(job_dir_, "#!/bin/sh\necho first\n");
  auto first = launcher_->Start(job_dir_);
  ASSERT_TRUE(first.ok()) << first.error();
  EXPECT_TRUE(first->child) << "not spawned on its own";
  const fs::path second = OtherJob(kJobId + 1, "#!/bin/sh\necho second\n");
  auto next = launcher_->Start(second);
  ASSERT_TRUE(next.ok()) << next.error();
  EXPECT_TRUE(next->child) << "not spawned on its own";
  EXPECT_EQ(launcher_->launcher_pid(), 0);
  EXPECT_EQ(Read(tries), "x\n") << "a launcher that cannot run was started again within the minute";
  auto status = WaitForStatus();
  ASSERT_TRUE(status);
  EXPECT_EQ(status->exit_code, 0) << Log();
  EXPECT_EQ(Read(launch_.stdout_path), "first\n");
  ExpectRan(second, kJobId + 1, "second\n");
  for (pid_t pid : {first->pid, next->pid})
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
}

// The launcher dies after it forked the supervisor, before it answered: the supervisor it left
// runs the job, and no second one is started for it.
TEST_F(StepdLauncher, ALauncherThatEndsMidLaunchLeavesOneSupervisorForTheJob) {
  Prepare(job_dir_, "#!/bin/sh\necho once >> $0.runs\n");
  // The launch file as a pipe: the forked supervisor waits on it until the launcher is gone.
  const std::string launch = Read(job_dir_ / "launch");
  fs::remove(job_dir_ / "launch");
  ASSERT_EQ(::mkfifo((job_dir_ / "launch").c_str(), 0600), 0) << std::strerror(errno);
  ASSERT_GT(Launch(OtherJob(kJobId + 1, "#!/bin/sh\ntrue\n")), 0);  // the launcher is up
  const pid_t launcher = launcher_->launcher_pid();
  auto children = [&] {
    return Read(fmt::format("/proc/{}/task/{}/children", launcher, launcher));
  };
  auto wait_until = [&](const std::function<bool()>& done) {
    for (auto deadline = Clock::now() + seconds(5); !done() && Clock::now() < deadline;)
      std::this_thread::sleep_for(milliseconds(10));
  };
  wait_until([&] { return Trim(children()).empty(); });  // that job's supervisor ended
  ASSERT_TRUE(Trim(children()).empty()) << children();
  std::optional<Result<SupervisorLauncher::Started>> started;
  std::thread asking([&] { started = launcher_->Start(job_dir_); });
  // Its child, blocked on the pipe, then the launcher's end.
  wait_until([&] { return !Trim(children()).empty(); });
  ASSERT_FALSE(Trim(children()).empty()) << "the launcher forked no supervisor";
  // Written only once the child waits in the pipe's open: a pipe written and closed before
  // its reader opens it drops what was written, and the child would wait forever.
  const std::string child(Trim(children()));
  auto opening = [&] {
    const std::string wchan = Read(fmt::format("/proc/{}/wchan", child));
    return wchan.find("partner") != std::string::npos || wchan.find("fifo") != std::string::npos;
  };
  wait_until(opening);
  ASSERT_TRUE(opening()) << "the supervisor never opened the launch file";
  ASSERT_EQ(::kill(launcher, SIGKILL), 0);
  std::this_thread::sleep_for(milliseconds(200));
  {
    // The orphan goes on. Opened read-write, the pipe never blocks this test, reader or not.
    int pipe = ::open((job_dir_ / "launch").c_str(), O_RDWR);
    ASSERT_GE(pipe, 0) << std::strerror(errno);
    EXPECT_EQ(::write(pipe, launch.data(), launch.size()), static_cast<ssize_t>(launch.size()));
    ::close(pipe);
  }
  asking.join();
  ASSERT_TRUE(started && started->ok()) << (started ? started->error() : "no answer") << "\n"
                                        << Log();
  EXPECT_FALSE((*started)->child);
  EXPECT_EQ((*started)->pid, SupervisorPid());
  auto status = WaitForStatus();
  ASSERT_TRUE(status);
  EXPECT_EQ(status->exit_code, 0) << Log();
  // The script ran once; the next launch has a new launcher.
  auto runs = [&] { return Read(job_dir_ / "script.runs"); };
  EXPECT_EQ(runs(), "once\n");
  EXPECT_GT(Launch(OtherJob(kJobId + 2, "#!/bin/sh\ntrue\n")), 0);
  EXPECT_NE(launcher_->launcher_pid(), launcher);
}

TEST_F(Stepd, OtherSignalsAreDeliveredToTheJob) {
  Start(
      "#!/bin/sh\n"
      "trap 'echo got USR2; exit 7' USR2\n"
      "echo ready\n"
      "while :; do sleep 0.05; done\n");
  ASSERT_TRUE(WaitForText(launch_.stdout_path, "ready")) << Log();
  ASSERT_EQ(::kill(SupervisorPid(), SIGUSR2), 0);
  auto status = WaitForStatus();
  ASSERT_TRUE(status);
  EXPECT_EQ(status->exit_code, 7) << Log();
  EXPECT_FALSE(status->cancelled);
  // The shell's sleep got it too, and the shell may report that between the two lines.
  std::string output = Read(launch_.stdout_path);
  EXPECT_TRUE(output.starts_with("ready\n") && output.ends_with("got USR2\n")) << output;
}

TEST_F(Stepd, ChdirFailureFallsBackToTmpAsSlurmDoes) {
  launch_.work_dir = (spool_.path() / "missing").string();
  Start("#!/bin/sh\npwd\n");
  auto status = WaitForStatus();
  ASSERT_TRUE(status);
  EXPECT_EQ(status->exit_code, 0);
  EXPECT_EQ(Read(launch_.stdout_path),
            fmt::format("droverstepd: error: couldn't chdir to `{}': No such file or directory: "
                        "going to /tmp instead\n/tmp\n",
                        launch_.work_dir));
}

TEST_F(Stepd, AnOutputFileThatCannotBeOpenedFailsTheLaunch) {
  launch_.stdout_path = (spool_.path() / "missing/out").string();
  Start(fmt::format("#!/bin/sh\ntouch {}\n", (spool_.path() / "ran").string()));
  auto status = WaitForStatus();
  ASSERT_TRUE(status);
  EXPECT_TRUE(status->launch_failed);
  EXPECT_EQ(status->exit_code, 1);
  EXPECT_EQ(status->reason, fmt::format("could not open stdout file {}: No such file or directory",
                                        launch_.stdout_path));
  EXPECT_FALSE(fs::exists(spool_.path() / "ran"));
}

TEST_F(Stepd, AScriptThatCannotBeExecutedFailsTheLaunchWithErrnoAsSlurmDoes) {
  Start("echo no interpreter line\n");
  auto status = WaitForStatus();
  ASSERT_TRUE(status);
  const std::string message =
      fmt::format("execve(): {}: Exec format error", (job_dir_ / "script").string());
  EXPECT_TRUE(status->launch_failed);
  EXPECT_EQ(status->exit_code, ENOEXEC);
  EXPECT_EQ(status->reason, message);
  EXPECT_EQ(Read(launch_.stdout_path), "droverstepd: error: " + message + "\n");
}

TEST_F(Stepd, RefusesAJobItCannotRunAs) {
  std::string expected;
  if (::geteuid() == 0) {
    launch_.user = "root";
    launch_.uid = 4321;
    expected = "user 'root' is uid 0 on this node, not 4321";
  } else {
    launch_.uid = ::geteuid() + 1;
    expected = "not root, so it runs only that user's jobs";
  }
  Start(fmt::format("#!/bin/sh\ntouch {}\n", (spool_.path() / "ran").string()));
  auto status = WaitForStatus();
  ASSERT_TRUE(status);
  EXPECT_TRUE(status->launch_failed);
  EXPECT_NE(status->reason.find(expected), std::string::npos) << status->reason;
  EXPECT_FALSE(fs::exists(spool_.path() / "ran"));
  EXPECT_FALSE(fs::exists(launch_.stdout_path));
}

TEST_F(Stepd, RunsTheJobAsItsUserWithFilesOwnedByThem) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can run a job as another user";
  const passwd* nobody = ::getpwnam("nobody");
  if (!nobody) GTEST_SKIP() << "no user 'nobody' here";
  launch_.user = "nobody";
  launch_.uid = nobody->pw_uid;
  launch_.gid = nobody->pw_gid;
  const fs::path work = spool_.path() / "work";
  fs::create_directory(work);
  ASSERT_EQ(::chown(work.c_str(), launch_.uid, launch_.gid), 0);
  fs::permissions(spool_.path(),
                  fs::perms::owner_all | fs::perms::others_exec | fs::perms::group_exec);
  launch_.work_dir = work.string();
  launch_.stdout_path = launch_.stderr_path = (work / "out").string();
  Start("#!/bin/sh\nid -u\nid -g\n");
  auto status = WaitForStatus();
  ASSERT_TRUE(status);
  EXPECT_EQ(status->exit_code, 0) << status->reason << Log();
  EXPECT_EQ(Read(work / "out"), fmt::format("{}\n{}\n", launch_.uid, launch_.gid));
  struct stat file {};
  ASSERT_EQ(::stat(launch_.stdout_path.c_str(), &file), 0);
  EXPECT_EQ(file.st_uid, launch_.uid);
}

TEST_F(Stepd, PrologFailureMeansTheScriptNeverRuns) {
  const fs::path prolog = spool_.path() / "prolog", epilog = spool_.path() / "epilog";
  Write(prolog,
        fmt::format("#!/bin/sh\necho \"$SLURM_JOB_ID $SLURM_SCRIPT_CONTEXT $SLURM_JOB_USER\" > "
                    "{}/prolog.out\nexit 1\n",
                    spool_.path().string()),
        fs::perms::owner_all);
  Write(epilog,
        fmt::format("#!/bin/sh\necho \"$SLURM_JOB_ID $SLURM_SCRIPT_CONTEXT\" > {}/epilog.out\n",
                    spool_.path().string()),
        fs::perms::owner_all);
  launch_.prolog = prolog.string();
  launch_.epilog = epilog.string();
  Start(fmt::format("#!/bin/sh\ntouch {}\n", (spool_.path() / "ran").string()));
  auto status = WaitForStatus();
  ASSERT_TRUE(status);
  EXPECT_TRUE(status->prolog_failed);
  EXPECT_FALSE(status->epilog_failed);
  EXPECT_EQ(status->reason, fmt::format("prolog {} exited with code 1", prolog.string()));
  EXPECT_EQ(Read(spool_.path() / "prolog.out"),
            fmt::format("{} prolog_slurmd {}\n", kJobId, launch_.user));
  EXPECT_FALSE(fs::exists(spool_.path() / "ran"));
  EXPECT_FALSE(fs::exists(launch_.stdout_path));
  EXPECT_FALSE(fs::exists(job_dir_ / "job.pid"));
  // The epilog still runs, to undo whatever the prolog did.
  EXPECT_EQ(Read(spool_.path() / "epilog.out"), fmt::format("{} epilog_slurmd\n", kJobId));
}

TEST_F(Stepd, EpilogFailureIsRecordedWithTheJobsExitCode) {
  const fs::path prolog = spool_.path() / "prolog", epilog = spool_.path() / "epilog";
  Write(prolog, fmt::format("#!/bin/sh\ntouch {}/prolog.ran\n", spool_.path().string()),
        fs::perms::owner_all);
  Write(epilog, "#!/bin/sh\nexit 2\n", fs::perms::owner_all);
  launch_.prolog = prolog.string();
  launch_.epilog = epilog.string();
  Start(fmt::format("#!/bin/sh\ntest -e {}/prolog.ran && exit 5\n", spool_.path().string()));
  auto status = WaitForStatus();
  ASSERT_TRUE(status);
  EXPECT_FALSE(status->prolog_failed);
  EXPECT_TRUE(status->epilog_failed);
  EXPECT_EQ(status->exit_code, 5) << "the prolog ran first";
  EXPECT_EQ(status->reason, fmt::format("epilog {} exited with code 2", epilog.string()));
}

// Cancel and leftovers, with cgroups where this host has them and with session tracking.
class StepdTracking : public Stepd, public ::testing::WithParamInterface<const char*> {
 protected:
  void SetUp() override {
    Stepd::SetUp();
    launch_.cgroup_mode = GetParam();
  }

  // The job's cgroup directories are gone (none exist in session tracking).
  void ExpectCgroupRemoved() {
    for (const fs::path& mount : CgroupMounts(DetectCgroups()))
      EXPECT_FALSE(fs::exists(mount / "drover" / node_ / fmt::format("job_{}", kJobId))) << mount;
  }
};

TEST_P(StepdTracking, CancelEndsAJobThatIgnoresSigtermWithinKillWait) {
  Start(
      "#!/bin/sh\n"
      "trap '' TERM\n"
      "sleep 1000 &\n"
      "echo started\n"
      "wait\n");
  ASSERT_TRUE(WaitForText(launch_.stdout_path, "started")) << Log();
  for (auto deadline = Clock::now() + seconds(5); MarkedProcesses().size() < 2;
       std::this_thread::sleep_for(milliseconds(10)))
    ASSERT_LT(Clock::now(), deadline) << "the shell and its sleep never both ran";
  const auto cancelled = Clock::now();
  ASSERT_EQ(::kill(SupervisorPid(), SIGTERM), 0);
  auto status = WaitForStatus(seconds(launch_.kill_wait_seconds + 5));
  ASSERT_TRUE(status);
  EXPECT_GE(Clock::now() - cancelled, seconds(launch_.kill_wait_seconds))
      << "SIGKILL came before kill_wait";
  EXPECT_TRUE(status->cancelled) << Log();
  EXPECT_EQ(status->signal, SIGKILL);
  EXPECT_EQ(MarkedProcesses(), std::vector<pid_t>{});
  if (std::string(GetParam()) == "none") {
    EXPECT_EQ(status->cgroup_mode, "none");
  }
  ExpectCgroupRemoved();
}

TEST_P(StepdTracking, NoProcessOfAFinishedJobSurvives) {
  // One background sleep stays in the job's session; the other leaves it with setsid, which
  // only the cgroup or the supervisor's subreaper catches.
  Start(
      "#!/bin/sh\n"
      "sleep 1000 &\n"
      "setsid sh -c 'echo $$ > escaped; exec sleep 1000' &\n"
      "while [ ! -s escaped ]; do sleep 0.01; done\n"
      "echo started\n");
  auto status = WaitForStatus();
  ASSERT_TRUE(status);
  EXPECT_EQ(status->exit_code, 0) << Log();
  EXPECT_EQ(Read(launch_.stdout_path), "started\n");
  EXPECT_EQ(MarkedProcesses(), std::vector<pid_t>{}) << Log();
  for (auto deadline = Clock::now() + seconds(5); SupervisorAlive(job_dir_);
       std::this_thread::sleep_for(milliseconds(20)))
    ASSERT_LT(Clock::now(), deadline) << "the supervisor did not exit";
  ExpectCgroupRemoved();
}

INSTANTIATE_TEST_SUITE_P(Modes, StepdTracking, ::testing::Values("auto", "none"));

TEST_F(Stepd, MemoryLimitEndsInOutOfMemory) {
  CgroupHierarchy hierarchy = DetectCgroups();
  if (hierarchy.mode == CgroupMode::kNone)
    GTEST_SKIP() << "cgroups are not usable here: " << hierarchy.reason;
  launch_.memory_limit_mib = 32;
  // tail keeps the whole newline-free stream in memory, far past the limit.
  Start("#!/bin/sh\nhead -c 512M /dev/zero | tail\n");
  auto status = WaitForStatus(seconds(20));
  ASSERT_TRUE(status);
  if (status->cgroup_mode == "none")
    GTEST_SKIP() << "cgroups are detected but the job's could not be used: " << Log();
  EXPECT_TRUE(status->out_of_memory) << Log();
  EXPECT_NE(status->reason.find("out of memory"), std::string::npos) << status->reason;
  EXPECT_LE(status->max_rss_mib, 33u);
  EXPECT_GT(status->max_rss_mib, 8u);
}

// --get-user-env: what follows the marker, NUL-separated; the job's variables win.
TEST(UserEnvironment, OutputAfterTheMarkerMergedUnderTheJobs) {
  std::string output = std::string("motd line\nDROVER_LOGIN_ENVIRONMENT\nA=1\0B=x=y\0junk\0", 50);
  auto login = ParseEnvironmentOutput(output);
  EXPECT_EQ(login, (std::vector<std::string>{"A=1", "B=x=y"}));
  EXPECT_TRUE(ParseEnvironmentOutput("no marker A=1").empty());
  EXPECT_EQ(MergeUnderJobEnvironment(login, {"B=job", "C=3"}),
            (std::vector<std::string>{"A=1", "B=job", "C=3"}));
}

// As root through su, as anyone else through the user's own shell.
TEST(UserEnvironment, LoadsTheLoginEnvironmentOfThisUser) {
  if (::geteuid() == 0 && ::access("/bin/su", X_OK) != 0) GTEST_SKIP() << "root needs /bin/su";
  passwd* me = ::getpwuid(::geteuid());
  ASSERT_NE(me, nullptr);
  auto login = LoadLoginEnvironment(me->pw_name, std::nullopt, {8, 'S'});
  ASSERT_TRUE(login) << login.error();
  EXPECT_NE(std::find(login->begin(), login->end(), std::string("USER=") + me->pw_name),
            login->end());
  EXPECT_NE(std::find(login->begin(), login->end(), std::string("HOME=") + me->pw_dir),
            login->end());
  EXPECT_FALSE(ParseUserEnvironmentRequest("8X"));
}

// As root the agent runs su: only for a name the node gives the job's own uid, never an option.
TEST(UserEnvironment, SuRunsOnlyForTheJobsOwnName) {
  if (::geteuid() != 0 || ::access("/bin/su", X_OK) != 0) GTEST_SKIP() << "needs root and su";
  ProcessUser someone_else{"nobody", 65534, 65534, {}};
  EXPECT_FALSE(LoadLoginEnvironment("root", someone_else, {8, 'S'}));
  EXPECT_FALSE(LoadLoginEnvironment("-s/bin/true", std::nullopt, {8, 'S'}));
}

}  // namespace
}  // namespace drover::agent
