// An emulated cluster on this host — droverctld and one droverd per node, on loopback ports
// chosen at run time, with temporary state — driven over gRPC: jobs really run.
#include <fcntl.h>
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/host/cgroup.h"
#include "proto/drover.grpc.pb.h"
#include "testing/local_cluster.h"

namespace drover::agent {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class ClusterTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (::testing::Test::HasFailure() && cluster_) std::printf("%s", cluster_->Logs().c_str());
    cluster_.reset();
  }

  // `extra`: more slurm.conf lines; `cgroup_conf`: a cgroup.conf beside it.
  void Boot(const std::string& extra = "", const std::string& cgroup_conf = "") {
    cluster_ = std::make_unique<testing::LocalCluster>(
        testing::ClusterPaths{DROVERCTLD_PATH, DROVERD_PATH},
        "ClusterName=test\nGresTypes=gpu\nSlurmdTimeout=30\nKillWait=2\nMinJobAge=600\n"
        "ReturnToService=2\n" +
            extra +
            "NodeName=n[1-2] NodeAddr=127.0.0.1 CPUs=8 RealMemory=4000 Gres=gpu:4\n"
            "PartitionName=p Nodes=ALL Default=YES MaxTime=1:00:00\n",
        std::vector<std::string>{"n1", "n2"});
    dir_ = cluster_->dir();
    if (!cgroup_conf.empty()) std::ofstream(dir_ / "cgroup.conf") << cgroup_conf;
    cluster_->SetAgentArgs(agent_args_);
    ASSERT_TRUE(cluster_->Boot()) << cluster_->error();
  }

  void WaitFor(const std::function<bool()>& done, const std::string& what,
               std::chrono::seconds limit = 60s) {
    ASSERT_TRUE(testing::LocalCluster::WaitFor(done, limit)) << "timed out waiting for " << what;
  }

  // A failing Prolog (`script`, with `extra` slurm.conf lines) keeps a job on n1 from running:
  // the node drains with a reason holding `reason`, the job is requeued, its script never ran.
  void PrologFailure(const std::string& script, const std::string& extra,
                     const std::string& reason) {
    fs::path prolog = fs::temp_directory_path() / ("drover_prolog_" + std::to_string(getpid()));
    std::ofstream(prolog) << script;
    fs::permissions(prolog, fs::perms::owner_all);
    struct Remove {
      fs::path path;
      ~Remove() { fs::remove(path); }
    } remove{prolog};
    Boot("Prolog=" + prolog.string() + "\n" + extra);
    uint64_t id = Submit("#!/bin/sh\necho ran\n", 0, "n1");
    WaitFor([&] { return NodeState("n1") == "DRAINED"; }, "n1 DRAINED");
    EXPECT_NE(Nodes()["n1"].reason().find(reason), std::string::npos) << Nodes()["n1"].reason();
    v1::Job job = Job(id);
    EXPECT_EQ(job.state(), "PENDING");
    EXPECT_EQ(job.restart_count(), 1u);
    EXPECT_EQ(Output(id), "") << "the script never ran";
  }

  std::map<std::string, v1::NodeStatus> Nodes() { return cluster_->Nodes(); }
  std::string NodeState(const std::string& node) { return cluster_->NodeState(node); }
  v1::Job Job(uint64_t id) { return cluster_->Job(id); }
  v1::Controller::Stub* stub() { return &cluster_->stub(); }

  uint64_t Submit(const std::string& script, uint32_t gpus = 0, const std::string& node = "",
                  uint64_t mem_mb = 0) {
    v1::SubmitRequest request;
    v1::JobSpec* spec = request.mutable_spec();
    spec->set_name("test");
    spec->set_user("tester");
    spec->set_account("qa");
    spec->set_min_nodes(1);
    spec->set_ntasks(1);
    spec->set_cpus_per_task(1);
    spec->set_gpus_per_node(gpus);
    spec->set_mem_per_node_mb(mem_mb ? mem_mb : 100);
    spec->set_array_task_id(UINT32_MAX);
    spec->set_time_limit_seconds(600);
    spec->set_work_dir(dir_.string());
    spec->set_stdout_path("out-%j.txt");
    spec->add_environment("FROM_SUBMIT=yes");
    if (!node.empty()) spec->add_nodelist(node);
    request.set_script(script);
    grpc::ClientContext context;
    v1::SubmitReply reply;
    grpc::Status status = stub()->Submit(&context, request, &reply);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return reply.job_id();
  }

  bool Cancel(uint64_t id) {
    v1::CancelRequest cancel;
    cancel.mutable_filter()->add_job_ids(id);
    grpc::ClientContext context;
    v1::ActionReply reply;
    return stub()->Cancel(&context, cancel, &reply).ok();
  }

  void WaitForState(uint64_t id, const std::string& state, std::chrono::seconds limit = 60s) {
    WaitFor([&] { return Job(id).state() == state; },
            "job " + std::to_string(id) + " " + state + " (is " + Job(id).state() + ")", limit);
  }

  // Once the job has ended: its state.
  std::string EndState(uint64_t id) {
    WaitFor(
        [&] {
          std::string state = Job(id).state();
          return state != "PENDING" && state != "RUNNING";
        },
        "job " + std::to_string(id) + " to end");
    return Job(id).state();
  }

  std::string Output(uint64_t id) {
    std::ifstream in(dir_ / ("out-" + std::to_string(id) + ".txt"));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  // PIDs of processes whose environment holds SLURM_JOB_ID=<id> and this cluster's submit
  // directory (other tests' clusters, running at the same time, number their jobs from 1 too).
  std::set<int> ProcessesOfJob(uint64_t id) const {
    std::set<int> pids;
    std::string needle = "SLURM_JOB_ID=" + std::to_string(id);
    std::string ours = "SLURM_SUBMIT_DIR=" + dir_.string();
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
      std::string name = entry.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream in(entry.path() / "environ");
      std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      bool job = false, cluster = false;
      for (size_t at = 0; at < env.size();) {
        size_t end = env.find('\0', at);
        if (end == std::string::npos) end = env.size();
        job = job || env.compare(at, end - at, needle) == 0;
        cluster = cluster || env.compare(at, end - at, ours) == 0;
        at = end + 1;
      }
      if (job && cluster) pids.insert(std::stoi(name));
    }
    return pids;
  }

  std::unique_ptr<testing::LocalCluster> cluster_;
  fs::path dir_;
  std::vector<std::string> agent_args_;  // more droverd arguments for Boot
};

TEST_F(ClusterTest, AJobRunsWithSlurmsEnvironmentAndItsOutputFile) {
  Boot();
  uint64_t id = Submit("#!/bin/sh\necho hello from $SLURM_JOB_ID on $SLURMD_NODENAME\nenv\n", 2);
  WaitForState(id, "COMPLETED");
  std::string out = Output(id);
  EXPECT_NE(out.find("hello from " + std::to_string(id) + " on n1"), std::string::npos) << out;
  for (std::string line :
       {"SLURM_JOB_ID=" + std::to_string(id), std::string("SLURM_NNODES=1"),
        std::string("SLURM_JOB_NODELIST=n1"), std::string("SLURM_JOB_PARTITION=p"),
        std::string("SLURM_CLUSTER_NAME=test"), std::string("SLURM_GPUS_ON_NODE=2"),
        std::string("CUDA_VISIBLE_DEVICES=0,1"), std::string("SLURM_SUBMIT_DIR=" + dir_.string()),
        std::string("FROM_SUBMIT=yes")})
    EXPECT_NE(out.find("\n" + line + "\n"), std::string::npos) << line << " missing in:\n" << out;
  EXPECT_EQ(Job(id).exit_code(), 0);
}

TEST_F(ClusterTest, ExitCodesAndSignalsAreSlurms) {
  Boot();
  uint64_t failed = Submit("#!/bin/sh\nexit 3\n");
  uint64_t killed = Submit("#!/bin/sh\nkill -9 $$\n");
  WaitForState(failed, "FAILED");
  EXPECT_EQ(Job(failed).exit_code(), 3);
  WaitForState(killed, "FAILED");
  EXPECT_EQ(Job(killed).exit_signal(), 9);
}

TEST_F(ClusterTest, ConcurrentJobsOnANodeGetDisjointGpus) {
  Boot();
  std::string script = "#!/bin/sh\necho $CUDA_VISIBLE_DEVICES\nsleep 1\n";
  uint64_t a = Submit(script, 2, "n1");
  uint64_t b = Submit(script, 2, "n1");
  WaitForState(a, "COMPLETED");
  WaitForState(b, "COMPLETED");
  std::set<std::string> seen;
  for (uint64_t id : {a, b}) {
    std::string out = Output(id);
    std::stringstream devices(out.substr(0, out.find('\n')));
    for (std::string device; std::getline(devices, device, ',');)
      EXPECT_TRUE(seen.insert(device).second) << "GPU " << device << " given twice";
  }
  EXPECT_EQ(seen, (std::set<std::string>{"0", "1", "2", "3"}));
}

TEST_F(ClusterTest, CancelLeavesNoProcessBehind) {
  Boot();
  uint64_t id = Submit("#!/bin/sh\nsleep 1000 &\nsleep 1000\n");
  WaitForState(id, "RUNNING");
  WaitFor([&] { return ProcessesOfJob(id).size() >= 2; }, "the job's processes");
  ASSERT_TRUE(Cancel(id));
  WaitForState(id, "CANCELLED");
  EXPECT_TRUE(ProcessesOfJob(id).empty()) << "a process of the cancelled job survived";
}

// An agent that stops removes its node's level of the job cgroups, once empty: an emulated
// node's is named after its spool, new with every cluster, and would otherwise pile up.
TEST_F(ClusterTest, AStoppedClusterLeavesNoCgroupLevelOfItsNodes) {
  CgroupHierarchy cgroups = DetectCgroups();
  if (cgroups.mode == CgroupMode::kNone)
    GTEST_SKIP() << "cgroups are not writable here: " << cgroups.reason;
  const std::vector<fs::path> mounts = CgroupMounts(cgroups);
  Boot();
  WaitForState(Submit("#!/bin/sh\ntrue\n"), "COMPLETED");
  // The level as the agent names it (Agent::CgroupParent): the node, then its spool's hash.
  const std::string spool = fs::absolute(dir_ / "spool" / "n1").lexically_normal().string();
  const std::string level =
      fmt::format("n1-{:08x}", static_cast<uint32_t>(std::hash<std::string>()(spool)));
  auto levels = [&] {
    std::vector<fs::path> found;
    for (const fs::path& mount : mounts)
      if (fs::exists(mount / "drover" / level)) found.push_back(mount / "drover" / level);
    return found;
  };
  ASSERT_FALSE(levels().empty()) << "the job ran in no cgroup under drover/" << level;
  cluster_.reset();
  for (const fs::path& left : levels()) ADD_FAILURE() << left << " is left";
}

TEST_F(ClusterTest, SuspendStopsTheJobAndResumeContinuesIt) {
  Boot();
  fs::path counter = dir_ / "counter";
  uint64_t id = Submit("#!/bin/sh\ni=0\nwhile true; do i=$((i+1)); echo $i > " + counter.string() +
                       "; sleep 0.05; done\n");
  auto count = [&] {
    std::ifstream in(counter);
    long value = 0;
    in >> value;
    return value;
  };
  WaitFor([&] { return count() > 2; }, "the job to count");
  auto suspend = [&](bool resume) {
    v1::SuspendRequest request;
    request.mutable_filter()->add_job_ids(id);
    request.set_resume(resume);
    grpc::ClientContext context;
    v1::ActionReply reply;
    grpc::Status status = stub()->Suspend(&context, request, &reply);
    EXPECT_TRUE(status.ok()) << status.error_message();
  };
  suspend(false);
  WaitForState(id, "SUSPENDED");
  std::this_thread::sleep_for(300ms);  // the stop reaches the job after the commit
  long stopped = count();
  std::this_thread::sleep_for(600ms);
  EXPECT_EQ(count(), stopped) << "the job kept running while suspended";
  suspend(true);
  WaitForState(id, "RUNNING");
  WaitFor([&] { return count() > stopped + 2; }, "the job to count again");
  ASSERT_TRUE(Cancel(id));
  WaitForState(id, "CANCELLED");
}

TEST_F(ClusterTest, AnAgentKilledAndRestartedReadoptsItsJob) {
  Boot();
  uint64_t id = Submit("#!/bin/sh\necho start\nsleep 3\necho end\n", 0, "n1");
  WaitForState(id, "RUNNING");
  // RUNNING is the controller's word once it sends the launch; the script's first line says the
  // agent has started it (under load, a kill before that left no job to re-adopt).
  WaitFor([&] { return Output(id).find("start") != std::string::npos; }, "the script's start");
  cluster_->StopAgent("n1", SIGKILL);
  std::this_thread::sleep_for(500ms);
  ASSERT_TRUE(cluster_->StartAgent("n1"));
  WaitForState(id, "COMPLETED");
  EXPECT_EQ(Output(id), "start\nend\n") << "ran once, to its end";
  EXPECT_EQ(Job(id).restart_count(), 0u);
}

// A supervisor killed with -9 writes no status: its end (a pidfd the agent watches) wakes the
// agent's look at once, with no look on a timer but the 30 s net, for a supervisor it started
// and for one it re-adopted after a restart.
TEST_F(ClusterTest, AKilledSupervisorsJobEndsAtOnceStartedOrReadopted) {
  Boot();
  auto kill_supervisor = [&](uint64_t id) {
    const fs::path record = dir_ / "spool" / "n1" / fmt::format("job_{}", id) / "supervisor.pid";
    pid_t pid = 0;
    WaitFor(
        [&] {
          std::ifstream in(record);
          std::string line;
          while (std::getline(in, line))
            if (line.starts_with("pid=")) pid = std::atoi(line.c_str() + 4);
          return pid > 0;
        },
        "the supervisor's record");
    ASSERT_EQ(::kill(pid, SIGKILL), 0) << std::strerror(errno);
  };
  for (bool readopted : {false, true}) {
    uint64_t id = Submit("#!/bin/sh\necho start\nsleep 300\n", 0, "n1");
    WaitFor([&] { return Output(id).find("start") != std::string::npos; }, "the script's start");
    if (readopted) {
      cluster_->StopAgent("n1", SIGKILL);
      ASSERT_TRUE(cluster_->StartAgent("n1"));
      WaitFor([&] { return NodeState("n1") == "ALLOCATED" || NodeState("n1") == "MIXED"; },
              "n1 back");
      std::this_thread::sleep_for(1s);  // past the first look after its start
    }
    kill_supervisor(id);
    WaitFor(
        [&] {
          std::string state = Job(id).state();
          return state != "PENDING" && state != "RUNNING";
        },
        fmt::format("job {}{} to end", id, readopted ? " (re-adopted)" : ""), 10s);
  }
}

TEST_F(ClusterTest, AFailingHealthCheckDrainsTheNodeAndAPassingOneResumesIt) {
  fs::path scratch = fs::temp_directory_path() / ("drover_health_" + std::to_string(getpid()));
  fs::create_directories(scratch);
  fs::path flag = scratch / "sick";
  fs::path check = scratch / "health.sh";
  std::ofstream(check) << "#!/bin/sh\nif [ -e " << flag.string()
                       << " ]; then echo disk full; exit 1; fi\nexit 0\n";
  fs::permissions(check, fs::perms::owner_all);
  Boot("HealthCheckProgram=" + check.string() + "\nHealthCheckInterval=1\n");
  std::ofstream(flag) << "x";
  WaitFor([&] { return NodeState("n1") == "DRAINED"; }, "n1 DRAINED");
  EXPECT_EQ(Nodes()["n1"].reason(), "disk full");
  fs::remove(flag);
  WaitFor([&] { return NodeState("n1") == "IDLE"; }, "n1 IDLE again");
  fs::remove_all(scratch);
}

#ifdef DROVER_FAKE_NVML
// Agents whose GPUs come from NVML (the fake library, described by a file): the controller
// learns their types, UUIDs and affinity, a job's GPUs are recorded by UUID, and the built-in
// probes drain a node for an XID on one GPU, naming it, and hold it drained once it passed.
TEST_F(ClusterTest, NvmlIdentityReachesTheControllerAndAnXidDrainsTheNode) {
  fs::path conf = fs::temp_directory_path() / ("drover_nvml_" + std::to_string(getpid()));
  struct Remove {
    fs::path path;
    ~Remove() { fs::remove(path); }
  } remove{conf};
  int writes = 0;
  // Written beside and renamed over: the agents read it on every NVML call, never half-written.
  auto describe = [&](const std::string& n2_gpu3) {
    fs::path next = conf.string() + ".new";
    std::ofstream out(next, std::ios::trunc);
    out << "#" << std::string(++writes, '.') << "\n";
    for (std::string node : {"n1", "n2"}) {
      out << "node " << node << "\n";
      for (int i = 0; i < 4; ++i)
        out << "gpu name=\"NVIDIA H100 80GB HBM3\" uuid=GPU-" << node << "-" << i << " minor=" << i
            << " bus=" << 0x18 + i << " cpus=" << (i < 2 ? "0-3" : "4-7")
            << (node == "n2" && i == 3 ? " " + n2_gpu3 : "") << "\n";
    }
    out.close();
    fs::rename(next, conf);
  };
  describe("");
  setenv("FAKE_NVML_CONFIG", conf.c_str(), 1);  // the agents inherit it
  agent_args_ = {"--nvml", DROVER_FAKE_NVML};
  Boot("HealthCheckInterval=1\n");
  unsetenv("FAKE_NVML_CONFIG");
  // CPUs=8 alone is 8 one-core sockets, as Slurm reads it.
  EXPECT_EQ(Nodes()["n2"].gres(), "gpu:nvidia_h100_80gb_hbm3:4(S:0-7)");
  uint64_t id = Submit("#!/bin/sh\nsleep 30\n", 4, "n2");
  WaitForState(id, "RUNNING");
  v1::Job job = Job(id);
  ASSERT_EQ(job.allocation_size(), 1);
  EXPECT_EQ(std::vector<std::string>(job.allocation(0).gpu_uuids().begin(),
                                     job.allocation(0).gpu_uuids().end()),
            (std::vector<std::string>{"GPU-n2-0", "GPU-n2-1", "GPU-n2-2", "GPU-n2-3"}));
  describe("xid=79");
  WaitFor([&] { return NodeState("n2") == "DRAINING" || NodeState("n2") == "DRAINED"; },
          "n2 draining");
  EXPECT_EQ(Nodes()["n2"].reason(), "gpu 3 (GPU-n2-3): XID 79");
  Cancel(id);
  WaitFor([&] { return NodeState("n2") == "DRAINED"; }, "n2 DRAINED");
  std::this_thread::sleep_for(2500ms);  // probes that find nothing new since
  EXPECT_EQ(NodeState("n2"), "DRAINED") << "an XID holds the node until an operator resumes it";
  EXPECT_EQ(NodeState("n1"), "IDLE");
}
#endif

TEST_F(ClusterTest, AFailingPrologDrainsTheNodeAndRequeuesTheJob) {
  PrologFailure("#!/bin/sh\necho no scratch space >&2\nexit 1\n", "", "Prolog error");
}

TEST_F(ClusterTest, AHungPrologIsKilledAtPrologEpilogTimeoutDrainingTheNode) {
  PrologFailure("#!/bin/sh\nsleep 300\n", "PrologEpilogTimeout=1\n",
                "timed out after 1 s (PrologEpilogTimeout)");
}

// A job past its memory request is limited only where the configuration asks: by its cgroup
// (TaskPlugin=task/cgroup, ConstrainRAMSpace=yes) or by the accounting poll (OverMemoryKill).
constexpr const char* kPastItsMemory =
    "#!/bin/sh\n"
    "# 300 MB held for two seconds by dd, whose write blocks on the pipe until sleep exits.\n"
    "dd if=/dev/zero bs=300M count=1 2>/dev/null | sleep 2\n"
    "echo survived\n";

TEST_F(ClusterTest, WithoutEnforcementAJobPastItsMemorySurvives) {
  Boot();  // TaskPlugin=task/none (Slurm's default), no cgroup.conf, no OverMemoryKill
  uint64_t id = Submit(kPastItsMemory, 0, "", 64);
  EXPECT_EQ(EndState(id), "COMPLETED");
  EXPECT_EQ(Output(id), "survived\n");
}

TEST_F(ClusterTest, ConstrainRAMSpaceEndsAJobPastItsMemoryOutOfMemory) {
  CgroupHierarchy cgroups = DetectCgroups();
  if (cgroups.mode == CgroupMode::kNone)
    GTEST_SKIP() << "cgroups are not writable here: " << cgroups.reason;
  Boot("TaskPlugin=task/cgroup,task/affinity\n", "ConstrainRAMSpace=yes\n");
  uint64_t id = Submit(kPastItsMemory, 0, "", 64);
  EXPECT_EQ(EndState(id), "OUT_OF_MEMORY");
}

TEST_F(ClusterTest, OverMemoryKillEndsAJobPastItsMemoryOutOfMemory) {
  Boot(
      "JobAcctGatherType=jobacct_gather/linux\nJobAcctGatherParams=OverMemoryKill\n"
      "JobAcctGatherFrequency=task=1\n");
  uint64_t id = Submit(
      "#!/bin/sh\ndd if=/dev/zero bs=300M count=1 2>/dev/null | sleep 30\n"
      "echo survived\n",
      0, "", 64);
  EXPECT_EQ(EndState(id), "OUT_OF_MEMORY");
  EXPECT_EQ(Output(id), "");
}

}  // namespace
}  // namespace drover::agent
