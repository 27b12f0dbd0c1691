// Job cgroups: the file-level logic on fake v1 and v2 trees, session tracking without cgroups
// on real processes, and real cgroups on this host (OOM, kill, freeze, cpuset, devices) where
// they are writable; those skip, with the reason, where they are not.
#include "agent/host/cgroup.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <thread>

namespace drover::agent {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// Pids far above any pid_max: nothing real is touched if one is ever signalled.
constexpr pid_t kFakePid = 2000000001, kFakeNestedPid = 2000000002;

class FakeTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("drover_cgroup_" + std::to_string(::getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // A v1 tree with `controllers` mounted, and the files the kernel would give job 7 of n1.
  void MakeV1(const std::vector<std::string>& controllers) {
    for (const std::string& name : controllers) Write(root_ / name / "cgroup.procs", "");
    Write(root_ / "cpuset/cpuset.cpus", "0-7\n");
    Write(root_ / "cpuset/cpuset.mems", "0\n");
    for (const char* level : {"drover", "drover/n1", "drover/n1/job_7"})
      for (const char* file : {"cpuset.cpus", "cpuset.mems"})
        Write(root_ / "cpuset" / level / file, "\n");
    std::map<std::string, std::vector<std::pair<std::string, std::string>>> files = {
        {"memory",
         {{"memory.limit_in_bytes", "9223372036854771712\n"},
          {"memory.memsw.limit_in_bytes", "9223372036854771712\n"},
          {"memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n"},
          {"memory.failcnt", "0\n"},
          {"memory.max_usage_in_bytes", "1048576\n"}}},
        {"freezer", {{"freezer.state", "THAWED\n"}}},
        {"devices", {{"devices.deny", ""}}},
        {"cpuacct", {{"cpuacct.usage", "123456789\n"}}},
    };
    for (const std::string& name : controllers) {
      Write(Job(name) / "cgroup.procs", "");
      for (const auto& [file, text] : files[name]) Write(Job(name) / file, text);
    }
  }

  // A v2 tree with the files the kernel would give job 7 of n1.
  void MakeV2() {
    Write(root_ / "cgroup.controllers", "cpuset cpu io memory hugetlb pids\n");
    Write(root_ / "cgroup.subtree_control", "");
    for (const char* level : {"drover", "drover/n1"}) {
      Write(root_ / level / "cgroup.controllers", "cpuset cpu memory pids\n");
      Write(root_ / level / "cgroup.subtree_control", "");
    }
    for (const auto& [file, text] : std::vector<std::pair<std::string, std::string>>{
             {"cgroup.procs", ""},
             {"cgroup.freeze", "0\n"},
             {"cgroup.events", "populated 1\nfrozen 1\n"},
             {"memory.max", "max\n"},
             {"memory.swap.max", "max\n"},
             {"memory.events", "low 0\nhigh 0\nmax 5\noom 1\noom_kill 1\n"},
             {"memory.peak", "67100672\n"},
             {"cpuset.cpus", "\n"},
             {"cpu.stat", "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n"}})
      Write(Job("") / file, text);
  }

  fs::path Job(const std::string& controller) const {
    return root_ / controller / "drover/n1/job_7";
  }

  JobCgroup CreateJob() {
    auto job = JobCgroup::Create(DetectCgroups(root_), "n1", 7);
    EXPECT_TRUE(job.ok()) << job.error();
    return std::move(job).value();
  }

  fs::path root_;
};

TEST_F(FakeTree, DetectsV1) {
  MakeV1({"memory", "cpuset", "freezer", "devices", "cpuacct"});
  CgroupHierarchy found = DetectCgroups(root_);
  EXPECT_EQ(found.mode, CgroupMode::kV1);
  EXPECT_EQ(found.reason, "");
  EXPECT_EQ(found.controllers.size(), 5u);
  EXPECT_EQ(found.controllers["freezer"], root_ / "freezer");
}

TEST_F(FakeTree, DetectsV1WithoutOptionalControllers) {
  MakeV1({"memory", "cpuset", "freezer"});
  CgroupHierarchy found = DetectCgroups(root_);
  EXPECT_EQ(found.mode, CgroupMode::kV1);
  EXPECT_EQ(found.reason,
            "v1 devices controller not mounted: GPUs are not isolated; v1 cpuacct controller not "
            "mounted: CPU time is not measured");
  JobCgroup job = CreateJob();
  auto isolation = job.RestrictDevices({{195, 1}});
  ASSERT_TRUE(isolation.ok()) << isolation.error();
  EXPECT_FALSE(isolation->enforced);
  auto cpu = job.CpuTimeNanoseconds();
  ASSERT_FALSE(cpu.ok());
  EXPECT_NE(cpu.error().find("cpuacct controller is not mounted"), std::string::npos);
}

TEST_F(FakeTree, WithoutARequiredControllerCgroupsAreOff) {
  MakeV1({"memory", "cpuset", "devices"});
  CgroupHierarchy found = DetectCgroups(root_);
  EXPECT_EQ(found.mode, CgroupMode::kNone);
  EXPECT_EQ(found.reason, "no usable cgroup hierarchy at " + root_.string() +
                              ": no cgroup.controllers (v2) and no v1 freezer controller "
                              "mounted there; jobs are tracked by session, without limits");
  auto job = JobCgroup::Create(found, "n1", 7);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->mode(), CgroupMode::kNone);
  EXPECT_EQ(job->untracked_reason(), found.reason);
  EXPECT_EQ(job->path(), fs::path());
}

TEST_F(FakeTree, EmptyRootMeansNoCgroups) {
  fs::create_directories(root_);
  CgroupHierarchy found = DetectCgroups(root_);
  EXPECT_EQ(found.mode, CgroupMode::kNone);
  EXPECT_NE(found.reason.find("no v1 memory, cpuset, freezer controllers"), std::string::npos)
      << found.reason;
}

TEST_F(FakeTree, V1LimitsAndProcesses) {
  MakeV1({"memory", "cpuset", "freezer", "devices", "cpuacct"});
  JobCgroup job = CreateJob();
  EXPECT_EQ(job.mode(), CgroupMode::kV1);
  EXPECT_EQ(job.path(), Job("memory"));
  // Intermediate cpusets and the job's own start with the parent's CPUs and memory nodes.
  EXPECT_EQ(Read(root_ / "cpuset/drover/n1/cpuset.cpus"), "0-7");
  EXPECT_EQ(Read(Job("cpuset") / "cpuset.cpus"), "0-7");
  EXPECT_EQ(Read(Job("cpuset") / "cpuset.mems"), "0");

  ASSERT_TRUE(job.SetMemoryLimit(64 << 20).ok());
  EXPECT_EQ(Read(Job("memory") / "memory.limit_in_bytes"), "67108864");
  EXPECT_EQ(Read(Job("memory") / "memory.memsw.limit_in_bytes"), "67108864");
  ASSERT_TRUE(job.SetMemoryLimit(0).ok());
  EXPECT_EQ(Read(Job("memory") / "memory.limit_in_bytes"), "-1");
  EXPECT_EQ(Read(Job("memory") / "memory.memsw.limit_in_bytes"), "-1");

  ASSERT_TRUE(job.SetCpus({5, 2, 3}).ok());
  EXPECT_EQ(Read(Job("cpuset") / "cpuset.cpus"), "2-3,5");
  EXPECT_FALSE(job.SetCpus({}).ok());

  auto isolation = job.RestrictDevices({{195, 0}, {195, 3}});
  ASSERT_TRUE(isolation.ok()) << isolation.error();
  EXPECT_TRUE(isolation->enforced);
  EXPECT_EQ(Read(Job("devices") / "devices.deny"), "c 195:0 rwm\nc 195:3 rwm\n");

  ASSERT_TRUE(job.AddProcess(kFakePid).ok());
  for (const char* controller : {"memory", "cpuset", "freezer", "devices", "cpuacct"})
    EXPECT_EQ(Read(Job(controller) / "cgroup.procs"), "2000000001\n") << controller;
  Write(Job("freezer") / "step_0/cgroup.procs", "2000000002\n");
  auto pids = job.Pids();
  ASSERT_TRUE(pids.ok()) << pids.error();
  EXPECT_EQ(*pids, (std::vector<pid_t>{kFakePid, kFakeNestedPid}));

  ASSERT_TRUE(job.Freeze().ok());
  EXPECT_EQ(Read(Job("freezer") / "freezer.state"), "FROZEN");
  ASSERT_TRUE(job.Thaw().ok());
  EXPECT_EQ(Read(Job("freezer") / "freezer.state"), "THAWED");
}

TEST_F(FakeTree, V1WithoutSwapAccountingSetsOnlyTheLimit) {
  MakeV1({"memory", "cpuset", "freezer"});
  fs::remove(Job("memory") / "memory.memsw.limit_in_bytes");
  JobCgroup job = CreateJob();
  ASSERT_TRUE(job.SetMemoryLimit(1 << 30).ok());
  EXPECT_EQ(Read(Job("memory") / "memory.limit_in_bytes"), "1073741824");
  EXPECT_FALSE(fs::exists(Job("memory") / "memory.memsw.limit_in_bytes"));
}

TEST_F(FakeTree, V1Usage) {
  MakeV1({"memory", "cpuset", "freezer", "cpuacct"});
  JobCgroup job = CreateJob();
  struct Case {
    std::string oom_control, failcnt, peak, limit;
    bool oom;
  } cases[] = {
      {"oom_kill_disable 0\nunder_oom 0\noom_kill 1\n", "9", "67108864", "67108864", true},
      {"oom_kill_disable 0\nunder_oom 0\noom_kill 0\n", "9", "67108864", "67108864", false},
      // Kernels before 4.13 have no oom_kill line: a limit that was hit and reached.
      {"oom_kill_disable 0\nunder_oom 0\n", "3", "67108864", "67108864", true},
      {"oom_kill_disable 0\nunder_oom 0\n", "0", "67108864", "67108864", false},
      {"oom_kill_disable 0\nunder_oom 0\n", "3", "1048576", "67108864", false},
  };
  for (const Case& c : cases) {
    Write(Job("memory") / "memory.oom_control", c.oom_control);
    Write(Job("memory") / "memory.failcnt", c.failcnt);
    Write(Job("memory") / "memory.max_usage_in_bytes", c.peak);
    Write(Job("memory") / "memory.limit_in_bytes", c.limit);
    auto oom = job.OomKilled();
    ASSERT_TRUE(oom.ok()) << oom.error();
    EXPECT_EQ(*oom, c.oom) << c.oom_control << c.failcnt;
  }
  auto peak = job.PeakMemoryBytes();
  ASSERT_TRUE(peak.ok()) << peak.error();
  EXPECT_EQ(*peak, 1048576u);
  auto cpu = job.CpuTimeNanoseconds();
  ASSERT_TRUE(cpu.ok()) << cpu.error();
  EXPECT_EQ(*cpu, 123456789u);
}

TEST_F(FakeTree, ErrorsNameTheFileAndTheCause) {
  MakeV1({"memory", "cpuset", "freezer"});
  fs::remove(Job("memory") / "memory.limit_in_bytes");
  fs::remove(Job("memory") / "memory.memsw.limit_in_bytes");
  JobCgroup job = CreateJob();
  Status ok = job.SetMemoryLimit(1 << 20);
  ASSERT_FALSE(ok.ok());
  EXPECT_EQ(ok.error(), (Job("memory") / "memory.limit_in_bytes").string() +
                            ": cannot write '1048576': No such file or directory (the "
                            "controller's file is missing: is the controller mounted or "
                            "enabled?)");
  Write(Job("memory") / "memory.max_usage_in_bytes", "lots\n");
  auto peak = job.PeakMemoryBytes();
  ASSERT_FALSE(peak.ok());
  EXPECT_EQ(peak.error(), (Job("memory") / "memory.max_usage_in_bytes").string() +
                              ": expected a number, found 'lots'");
  auto bad = JobCgroup::Create(DetectCgroups(root_), "../etc", 7);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), "invalid node name '../etc' for a cgroup directory");
}

TEST_F(FakeTree, V2LimitsAndUsage) {
  MakeV2();
  CgroupHierarchy found = DetectCgroups(root_);
  EXPECT_EQ(found.mode, CgroupMode::kV2);
  JobCgroup job = CreateJob();
  EXPECT_EQ(job.mode(), CgroupMode::kV2);
  EXPECT_EQ(job.path(), Job(""));
  // Controllers are enabled from the root down to the job's parent.
  EXPECT_EQ(Read(root_ / "cgroup.subtree_control"), "+cpuset +cpu +memory +pids");
  EXPECT_EQ(Read(root_ / "drover/n1/cgroup.subtree_control"), "+cpuset +cpu +memory +pids");

  ASSERT_TRUE(job.SetMemoryLimit(64 << 20).ok());
  EXPECT_EQ(Read(Job("") / "memory.max"), "67108864");
  EXPECT_EQ(Read(Job("") / "memory.swap.max"), "0");
  ASSERT_TRUE(job.SetCpus({0, 1}).ok());
  EXPECT_EQ(Read(Job("") / "cpuset.cpus"), "0-1");

  // v2 attaches an eBPF program to the job's cgroup: a folder that is no cgroup refuses it.
  auto isolation = job.RestrictDevices({{195, 0}});
  ASSERT_FALSE(isolation.ok());
  EXPECT_NE(isolation.error().find("device program"), std::string::npos) << isolation.error();

  ASSERT_TRUE(job.AddProcess(kFakePid).ok());
  EXPECT_EQ(Read(Job("") / "cgroup.procs"), "2000000001\n");
  ASSERT_TRUE(job.Freeze().ok());
  EXPECT_EQ(Read(Job("") / "cgroup.freeze"), "1");
  ASSERT_TRUE(job.Thaw().ok());
  EXPECT_EQ(Read(Job("") / "cgroup.freeze"), "0");

  auto oom = job.OomKilled();
  ASSERT_TRUE(oom.ok()) << oom.error();
  EXPECT_TRUE(*oom);
  Write(Job("") / "memory.events", "low 0\nhigh 0\nmax 5\noom 0\noom_kill 0\n");
  EXPECT_FALSE(*job.OomKilled());
  EXPECT_EQ(*job.PeakMemoryBytes(), 67100672u);
  EXPECT_EQ(*job.CpuTimeNanoseconds(), 1500000u);
  fs::remove(Job("") / "memory.peak");
  auto peak = job.PeakMemoryBytes();
  ASSERT_FALSE(peak.ok());
  EXPECT_NE(peak.error().find("no memory.peak (Linux before 5.19)"), std::string::npos);
}

TEST_F(FakeTree, V2FreezeWaitsForTheKernel) {
  MakeV2();
  Write(Job("") / "cgroup.events", "populated 1\nfrozen 0\n");
  JobCgroup job = CreateJob();
  Status ok = job.Freeze();
  ASSERT_FALSE(ok.ok());
  EXPECT_NE(ok.error().find("cgroup.freeze: not frozen after 2 s"), std::string::npos)
      << ok.error();
}

// ---- Real processes ------------------------------------------------------------------------

// A forked child that waits for Go() before it runs `body`, so the parent can place it first.
// Its reports (pids, errnos) come back through Report().
class Child {
 public:
  explicit Child(const std::function<void(int report)>& body) {
    int go[2], report[2];
    if (::pipe(go) != 0 || ::pipe(report) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(go[1]);
      ::close(report[0]);
      char byte;
      if (::read(go[0], &byte, 1) != 1) ::_exit(99);
      body(report[1]);
      ::_exit(0);
    }
    ::close(go[0]);
    ::close(report[1]);
    go_ = go[1];
    report_ = report[0];
  }
  ~Child() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(go_);
    ::close(report_);
  }
  pid_t pid() const { return pid_; }
  void Go() { ASSERT_EQ(::write(go_, "g", 1), 1); }
  int Report() {  // one int the child wrote, or -1 at end of file
    int value = -1;
    return ::read(report_, &value, sizeof value) == sizeof value ? value : -1;
  }
  int Wait() {  // the wait status
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
    return status;
  }

 private:
  pid_t pid_ = -1;
  int go_ = -1, report_ = -1;
  bool reaped_ = false;
};

void Send(int fd, int value) {
  if (::write(fd, &value, sizeof value) != sizeof value) ::_exit(98);
}

// Forks `count` children that wait for a signal, reporting each pid, then waits itself.
void ForkSleepers(int report, int count) {
  for (int i = 0; i < count; ++i) {
    pid_t pid = ::fork();
    if (pid == 0) {
      for (;;) ::pause();
    }
    Send(report, pid);
  }
  Send(report, ::getpid());
  for (;;) ::pause();
}

// Gone, or a zombie waiting for its parent (init) to reap it.
bool Dead(pid_t pid) {
  std::string stat = Read(fs::path("/proc") / std::to_string(pid) / "stat");
  size_t close = stat.rfind(')');
  return close == std::string::npos || stat.substr(close + 2, 1) == "Z";
}

char State(pid_t pid) {
  std::string stat = Read(fs::path("/proc") / std::to_string(pid) / "stat");
  size_t close = stat.rfind(')');
  return close == std::string::npos ? '?' : stat[close + 2];
}

// KillAll leaves none of `expected` (the leader and its descendants) alive or listed.
void ExpectAllKilled(JobCgroup& job, Child& leader, const std::set<pid_t>& expected) {
  Status killed = job.KillAll(milliseconds(5000));
  ASSERT_TRUE(killed.ok()) << killed.error();
  int status = leader.Wait();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  for (pid_t pid : expected) EXPECT_TRUE(Dead(pid)) << pid;
  auto left = job.Pids();
  ASSERT_TRUE(left.ok()) << left.error();
  EXPECT_TRUE(left->empty());
}

TEST(SessionTracking, FindsFreezesAndKillsTheWholeSession) {
  CgroupHierarchy none = DetectCgroups("/nonexistent/cgroup");
  ASSERT_EQ(none.mode, CgroupMode::kNone);
  auto created = JobCgroup::Create(none, "n1", 3);
  ASSERT_TRUE(created.ok());
  JobCgroup job = *created;

  Child leader([](int report) {
    ::setsid();
    ForkSleepers(report, 2);
  });
  leader.Go();
  std::set<pid_t> expected;
  for (int i = 0; i < 3; ++i) expected.insert(leader.Report());
  ASSERT_EQ(expected.count(-1), 0u);
  ASSERT_TRUE(expected.count(leader.pid()));

  ASSERT_TRUE(job.AddProcess(leader.pid()).ok());
  auto pids = job.Pids();
  ASSERT_TRUE(pids.ok()) << pids.error();
  EXPECT_EQ(std::set<pid_t>(pids->begin(), pids->end()), expected);

  ASSERT_TRUE(job.Freeze().ok());
  for (pid_t pid : expected) {
    for (int i = 0; i < 100 && State(pid) != 'T'; ++i) std::this_thread::sleep_for(milliseconds(5));
    EXPECT_EQ(State(pid), 'T') << pid;
  }
  ASSERT_TRUE(job.Thaw().ok());
  for (pid_t pid : expected) {
    for (int i = 0; i < 100 && State(pid) == 'T'; ++i) std::this_thread::sleep_for(milliseconds(5));
    EXPECT_NE(State(pid), 'T') << pid;
  }

  ExpectAllKilled(job, leader, expected);
}

TEST(SessionTracking, RefusesTheAgentsOwnSessionAndSaysWhatIsNotMeasured) {
  CgroupHierarchy none = DetectCgroups("/nonexistent/cgroup");
  JobCgroup job = JobCgroup::Untracked(none, "n1", 3, "cgroups are off for this test");
  Status ok = job.AddProcess(::getpid());
  ASSERT_FALSE(ok.ok());
  EXPECT_NE(ok.error().find("is in droverd's own session; the job must call setsid() first"),
            std::string::npos);
  EXPECT_TRUE(job.SetMemoryLimit(1 << 20).ok());
  EXPECT_FALSE(*job.OomKilled());
  auto peak = job.PeakMemoryBytes();
  ASSERT_FALSE(peak.ok());
  EXPECT_EQ(peak.error(),
            "job 3 on node n1: peak memory is not measured: cgroups are off for this test");
  auto isolation = job.RestrictDevices({{195, 0}});
  ASSERT_TRUE(isolation.ok());
  EXPECT_FALSE(isolation->enforced);
  EXPECT_EQ(isolation->reason, "cgroups are off for this test");
  EXPECT_TRUE(job.Pids()->empty());
  EXPECT_TRUE(job.KillAll(milliseconds(100)).ok());
}

// ---- Real cgroups on this host -------------------------------------------------------------

class RealCgroup : public ::testing::Test {
 protected:
  void SetUp() override {
    hierarchy_ = DetectCgroups();
    if (hierarchy_.mode == CgroupMode::kNone)
      GTEST_SKIP() << "cgroups are not usable here: " << hierarchy_.reason;
    node_ = "gtest-" + std::to_string(::getpid());
    auto probe = JobCgroup::Create(hierarchy_, node_, 0);
    if (!probe.ok()) {
      const std::string& error = probe.error();
      bool environment = hierarchy_.mode == CgroupMode::kV2 ||
                         error.find(std::strerror(EACCES)) != std::string::npos ||
                         error.find(std::strerror(EPERM)) != std::string::npos ||
                         error.find(std::strerror(EROFS)) != std::string::npos;
      if (environment) GTEST_SKIP() << "cannot create a cgroup here: " << error;
      FAIL() << error;
    }
    jobs_.push_back(*probe);
  }

  void TearDown() override {
    if (node_.empty()) return;
    const bool checked = !IsSkipped();
    for (JobCgroup& job : jobs_) {
      Status killed = job.KillAll(milliseconds(5000));
      EXPECT_TRUE(killed.ok()) << killed.error();
      Status removed = job.Remove();
      EXPECT_TRUE(removed.ok()) << removed.error();
    }
    std::vector<fs::path> mounts;
    if (hierarchy_.mode == CgroupMode::kV2) mounts.push_back(hierarchy_.root);
    for (const auto& [name, mount] : hierarchy_.controllers) mounts.push_back(mount);
    for (const fs::path& mount : mounts) {
      if (!fs::exists(mount / "drover" / node_)) continue;
      int removed = ::rmdir((mount / "drover" / node_).c_str()) == 0 ? 0 : errno;
      if (checked) {
        EXPECT_EQ(removed, 0) << (mount / "drover" / node_) << ": " << std::strerror(removed);
      }
      ::rmdir((mount / "drover").c_str());  // still used by a real agent: fine, it stays
    }
  }

  JobCgroup& Make(uint64_t job_id) {
    auto job = JobCgroup::Create(hierarchy_, node_, job_id);
    EXPECT_TRUE(job.ok()) << job.error();
    jobs_.push_back(job.ok() ? *job : JobCgroup::Untracked(hierarchy_, node_, job_id, "failed"));
    return jobs_.back();
  }

  CgroupHierarchy hierarchy_;
  std::string node_;
  std::deque<JobCgroup> jobs_;  // Make's references stay valid
};

void Allocate(int megabytes) {
  for (int i = 0; i < megabytes; ++i) {
    char* block = static_cast<char*>(::malloc(1 << 20));
    if (!block) ::_exit(97);
    std::memset(block, i + 1, 1 << 20);
  }
}

TEST_F(RealCgroup, OomKillerIsDetected) {
  JobCgroup& greedy = Make(1);
  ASSERT_EQ(greedy.mode(), hierarchy_.mode);
  // Raise, then lower: the kernel refuses either if limit and swap limit go in the wrong order.
  ASSERT_TRUE(greedy.SetMemoryLimit(128 << 20).ok());
  Status limited = greedy.SetMemoryLimit(64 << 20);
  ASSERT_TRUE(limited.ok()) << limited.error();
  Child child([](int) { Allocate(512); });
  ASSERT_TRUE(greedy.AddProcess(child.pid()).ok());
  child.Go();
  int status = child.Wait();
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "the child was not OOM-killed: wait status " << status;
  auto oom = greedy.OomKilled();
  ASSERT_TRUE(oom.ok()) << oom.error();
  EXPECT_TRUE(*oom);
  auto peak = greedy.PeakMemoryBytes();
  if (peak.ok()) {
    EXPECT_GT(*peak, 32u << 20);
    EXPECT_LE(*peak, 64u << 20);
  }

  JobCgroup& modest = Make(2);
  ASSERT_TRUE(modest.SetMemoryLimit(64 << 20).ok());
  Child small([](int) { Allocate(8); });
  ASSERT_TRUE(modest.AddProcess(small.pid()).ok());
  small.Go();
  status = small.Wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_FALSE(*modest.OomKilled());
}

TEST_F(RealCgroup, KillAllLeavesNoProcess) {
  JobCgroup& job = Make(3);
  Child leader([](int report) { ForkSleepers(report, 3); });
  ASSERT_TRUE(job.AddProcess(leader.pid()).ok());
  leader.Go();
  std::set<pid_t> expected;
  for (int i = 0; i < 4; ++i) expected.insert(leader.Report());
  ASSERT_EQ(expected.count(-1), 0u);
  auto pids = job.Pids();
  ASSERT_TRUE(pids.ok()) << pids.error();
  EXPECT_EQ(std::set<pid_t>(pids->begin(), pids->end()), expected);

  ExpectAllKilled(job, leader, expected);
  Status removed = job.Remove();
  EXPECT_TRUE(removed.ok()) << removed.error();
  EXPECT_FALSE(fs::exists(job.path()));
}

TEST_F(RealCgroup, FreezeStopsTheJobAndCpuTimeIsCounted) {
  JobCgroup& job = Make(4);
  auto* counter = static_cast<std::atomic<uint64_t>*>(::mmap(nullptr, sizeof(std::atomic<uint64_t>),
                                                             PROT_READ | PROT_WRITE,
                                                             MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(counter, MAP_FAILED);
  counter->store(0);
  Child spinner([counter](int) {
    for (;;) counter->fetch_add(1, std::memory_order_relaxed);
  });
  ASSERT_TRUE(job.AddProcess(spinner.pid()).ok());
  spinner.Go();
  std::this_thread::sleep_for(milliseconds(200));
  Status frozen = job.Freeze();
  ASSERT_TRUE(frozen.ok()) << frozen.error();
  uint64_t before = counter->load();
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(counter->load(), before) << "the job ran while frozen";
  ASSERT_TRUE(job.Thaw().ok());
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_GT(counter->load(), before) << "the job did not run after thawing";

  auto cpu = job.CpuTimeNanoseconds();
  if (hierarchy_.mode == CgroupMode::kV2 || hierarchy_.controllers.count("cpuacct")) {
    ASSERT_TRUE(cpu.ok()) << cpu.error();
    EXPECT_GT(*cpu, 10'000'000u);  // it spun for most of 300 ms
  }
  ASSERT_TRUE(job.KillAll(milliseconds(5000)).ok());
  spinner.Wait();
  ::munmap(counter, sizeof(std::atomic<uint64_t>));
}

TEST_F(RealCgroup, CpusetConfinesTheJob) {
  JobCgroup& job = Make(5);
  Child sleeper([](int) {
    for (;;) ::pause();
  });
  ASSERT_TRUE(job.AddProcess(sleeper.pid()).ok());
  Status set = job.SetCpus({0});
  ASSERT_TRUE(set.ok()) << set.error();
  std::string status = Read(fs::path("/proc") / std::to_string(sleeper.pid()) / "status");
  EXPECT_NE(status.find("Cpus_allowed_list:\t0\n"), std::string::npos) << status;
}

TEST_F(RealCgroup, GpusNotGivenCannotBeOpened) {
  if (hierarchy_.mode != CgroupMode::kV1 || !hierarchy_.controllers.count("devices"))
    GTEST_SKIP() << "device isolation is enforced on cgroup v1 with the devices controller only";
  fs::path dir = fs::temp_directory_path() / ("drover_devices_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (int minor : {0, 1}) {
    fs::path node = dir / ("nvidia" + std::to_string(minor));
    if (::mknod(node.c_str(), S_IFCHR | 0666, makedev(195, minor)) != 0) {
      int error = errno;
      fs::remove_all(dir);
      GTEST_SKIP() << "cannot make a device node in " << dir << ": " << std::strerror(error);
    }
  }
  if (int fd = ::open((dir / "nvidia1").c_str(), O_RDWR); fd >= 0 || errno == EACCES) {
    int error = errno;
    if (fd >= 0) ::close(fd);
    fs::remove_all(dir);
    GTEST_SKIP() << "device nodes in " << dir << " do not behave as on a host without NVIDIA's "
                 << "driver (" << (fd >= 0 ? "it opened" : std::strerror(error)) << ")";
  }
  JobCgroup& job = Make(6);
  auto isolation = job.RestrictDevices({{195, 0}});
  ASSERT_TRUE(isolation.ok()) << isolation.error();
  EXPECT_TRUE(isolation->enforced);
  Child opener([dir](int report) {
    for (int minor : {0, 1}) {
      int fd = ::open((dir / ("nvidia" + std::to_string(minor))).c_str(), O_RDWR);
      Send(report, fd >= 0 ? 0 : errno);
    }
  });
  ASSERT_TRUE(job.AddProcess(opener.pid()).ok());
  opener.Go();
  int denied = opener.Report(), given = opener.Report();
  opener.Wait();
  fs::remove_all(dir);
  EXPECT_EQ(denied, EPERM) << std::strerror(denied);
  // No NVIDIA driver here: the device the job was given fails further on, not with EPERM.
  EXPECT_NE(given, EPERM) << std::strerror(given);
}

// cgroup v2's device control: the eBPF program DenyDevices attaches refuses the listed devices
// and lets every other through. On any writable cgroup2 mount (the unified one of a hybrid
// host too), as root; /dev/random (1:8) is denied, /dev/urandom (1:9) is not.
TEST(DeviceFilter, AProgramOnACgroupV2DeniesOnlyTheListedDevices) {
  fs::path mount;
  for (const char* candidate : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
    struct statfs info {};
    if (::statfs(candidate, &info) == 0 && info.f_type == CGROUP2_SUPER_MAGIC) mount = candidate;
  }
  if (mount.empty() || ::geteuid() != 0)
    GTEST_SKIP() << "needs root and a cgroup2 mount (at /sys/fs/cgroup or /sys/fs/cgroup/unified)";
  fs::path dir = mount / ("drover_device_filter_" + std::to_string(::getpid()));
  if (::mkdir(dir.c_str(), 0755) != 0) GTEST_SKIP() << dir << ": " << std::strerror(errno);
  Status denied = DenyDevices(dir, {{1, 8}, {1, 99}});
  if (!denied) {
    ::rmdir(dir.c_str());
    FAIL() << denied.error();
  }
  Child opener([](int report) {
    for (const char* device : {"/dev/random", "/dev/urandom"}) {
      int fd = ::open(device, O_RDONLY);
      Send(report, fd >= 0 ? 0 : errno);
    }
  });
  std::ofstream(dir / "cgroup.procs") << opener.pid() << "\n";
  opener.Go();
  int random = opener.Report(), urandom = opener.Report();
  opener.Wait();
  ::rmdir(dir.c_str());
  EXPECT_EQ(random, EPERM) << std::strerror(random);
  EXPECT_EQ(urandom, 0) << std::strerror(urandom);
}

TEST(DeviceFilter, DeviceNumbersParseAndPrint) {
  EXPECT_EQ(*ParseDeviceNumber("195:3"), (DeviceNumber{195, 3}));
  EXPECT_EQ(DeviceText({226, 128}), "226:128");
  for (const char* bad : {"", "195", "195:", ":3", "a:b", "195:3:1", "-1:2", "4294967296:0"})
    EXPECT_FALSE(ParseDeviceNumber(bad).ok()) << bad;
  EXPECT_EQ(*CharDeviceAt("/dev/null"), (DeviceNumber{1, 3}));
  EXPECT_FALSE(CharDeviceAt("/").ok());
  EXPECT_FALSE(CharDeviceAt("/no/such/device").ok());
}

}  // namespace
}  // namespace drover::agent
