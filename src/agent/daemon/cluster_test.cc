// An emulated cluster on this host — droverctld and one droverd per node, on loopback ports
// chosen at run time, with temporary state — driven over gRPC: jobs really run.
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "agent/host/cgroup.h"
#include "proto/drover.grpc.pb.h"

namespace drover::agent {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A daemon this test started; stopped (SIGKILL unless stopped before) by PID.
class Daemon {
 public:
  Daemon() = default;
  Daemon(const Daemon&) = delete;
  ~Daemon() { Stop(SIGKILL); }

  // Starts `argv`, with stderr to `log`, and waits for `port_file` to name a port.
  int Start(std::vector<std::string> argv, const fs::path& log, const fs::path& port_file) {
    fs::remove(port_file);
    pid_ = fork();
    if (pid_ == 0) {
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      dup2(fd, 2);
      std::vector<char*> args;
      for (std::string& arg : argv) args.push_back(arg.data());
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    int port = 0;
    for (int i = 0; i < 200 && port == 0; ++i) {
      std::this_thread::sleep_for(25ms);
      std::ifstream(port_file) >> port;
    }
    return port;
  }
  void Stop(int signal) {
    if (pid_ <= 0) return;
    ::kill(pid_, signal);
    waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }

 private:
  pid_t pid_ = 0;
};

class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/drover_cluster_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    fs::permissions(dir_, fs::perms::all);
  }
  void TearDown() override {
    for (auto& [name, agent] : agents_) agent->Stop(SIGKILL);
    ctld_.Stop(SIGKILL);
    // Jobs' supervisors outlive their agents by design: cancel what is left by PID.
    for (const auto& entry : fs::recursive_directory_iterator(dir_ / "spool", ec_))
      if (entry.path().filename() == "supervisor.pid") {
        std::ifstream in(entry.path());
        std::string line;
        while (std::getline(in, line))
          if (line.starts_with("pid=")) ::kill(std::stoi(line.substr(4)), SIGKILL);
      }
    if (::testing::Test::HasFailure())
      for (const char* log : {"ctld.log", "n1.log", "n2.log"}) {
        std::ifstream in(dir_ / log);
        std::stringstream text;
        text << in.rdbuf();
        std::printf("--- %s\n%s", log, text.str().c_str());
      }
    fs::remove_all(dir_, ec_);
  }

  void Boot(const std::string& extra = "") {
    std::ofstream(dir_ / "slurm.conf")
        << "ClusterName=test\nSlurmctldHost=localhost(127.0.0.1)\nGresTypes=gpu\n"
           "SlurmdTimeout=30\nKillWait=2\nMinJobAge=600\nReturnToService=2\n"
        << extra
        << "NodeName=n[1-2] NodeAddr=127.0.0.1 CPUs=8 RealMemory=4000 Gres=gpu:4\n"
           "PartitionName=p Nodes=ALL Default=YES MaxTime=1:00:00\n";
    int port = ctld_.Start({DROVERCTLD_PATH, "--conf", (dir_ / "slurm.conf").string(), "--state",
                            (dir_ / "state").string(), "--listen", "127.0.0.1:0", "--port-file",
                            (dir_ / "ctld.port").string(), "--http-listen", "127.0.0.1:0"},
                           dir_ / "ctld.log", dir_ / "ctld.port");
    ASSERT_GT(port, 0) << "droverctld did not start";
    controller_ = "127.0.0.1:" + std::to_string(port);
    stub_ = v1::Controller::NewStub(
        grpc::CreateChannel(controller_, grpc::InsecureChannelCredentials()));
    for (const char* node : {"n1", "n2"}) StartAgent(node);
    WaitFor([&] { return NodeState("n1") == "IDLE" && NodeState("n2") == "IDLE"; },
            "both nodes IDLE");
  }

  void StartAgent(const std::string& node) {
    auto& agent = agents_[node];
    if (!agent) agent = std::make_unique<Daemon>();
    int port = agent->Start(
        {DROVERD_PATH, "-N", node, "--conf", (dir_ / "slurm.conf").string(), "--emulate", "--spool",
         (dir_ / "spool" / node).string(), "--listen", "127.0.0.1:0", "--port-file",
         (dir_ / (node + ".port")).string(), "--controller", controller_},
        dir_ / (node + ".log"), dir_ / (node + ".port"));
    ASSERT_GT(port, 0) << "droverd " << node << " did not start";
  }

  void WaitFor(const std::function<bool()>& done, const std::string& what,
               std::chrono::seconds limit = 20s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "timed out waiting for " << what;
      std::this_thread::sleep_for(20ms);
    }
  }

  std::map<std::string, v1::NodeStatus> Nodes() {
    grpc::ClientContext context;
    v1::NodeList list;
    EXPECT_TRUE(stub_->ListNodes(&context, v1::NodeQuery(), &list).ok());
    std::map<std::string, v1::NodeStatus> nodes;
    for (const v1::NodeStatus& node : list.nodes()) nodes[node.name()] = node;
    return nodes;
  }
  std::string NodeState(const std::string& node) { return Nodes()[node].state(); }

  v1::Job Job(uint64_t id) {
    v1::JobQuery query;
    query.mutable_filter()->add_job_ids(id);
    grpc::ClientContext context;
    v1::JobList list;
    EXPECT_TRUE(stub_->ListJobs(&context, query, &list).ok());
    v1::Job job;
    if (list.jobs_size() == 1) {
      EXPECT_TRUE(job.ParseFromString(list.jobs(0)));
    }
    return job;
  }

  uint64_t Submit(const std::string& script, uint32_t gpus = 0, const std::string& node = "",
                  uint64_t mem_mb = 0) {
    v1::SubmitRequest request;
    request.mutable_caller()->set_uid(getuid());
    request.mutable_caller()->set_gid(getgid());
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
    grpc::Status status = stub_->Submit(&context, request, &reply);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return reply.job_id();
  }

  void WaitForState(uint64_t id, const std::string& state, std::chrono::seconds limit = 20s) {
    WaitFor([&] { return Job(id).state() == state; },
            "job " + std::to_string(id) + " " + state + " (is " + Job(id).state() + ")", limit);
  }

  std::string Output(uint64_t id) {
    std::ifstream in(dir_ / ("out-" + std::to_string(id) + ".txt"));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  // PIDs of processes whose environment holds SLURM_JOB_ID=<id>.
  static std::set<int> ProcessesOfJob(uint64_t id) {
    std::set<int> pids;
    std::string needle = "SLURM_JOB_ID=" + std::to_string(id);
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
      std::string name = entry.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream in(entry.path() / "environ");
      std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      for (size_t at = 0; at < env.size();) {
        size_t end = env.find('\0', at);
        if (end == std::string::npos) end = env.size();
        if (env.compare(at, end - at, needle) == 0) pids.insert(std::stoi(name));
        at = end + 1;
      }
    }
    return pids;
  }

  fs::path dir_;
  std::error_code ec_;
  Daemon ctld_;
  std::map<std::string, std::unique_ptr<Daemon>> agents_;
  std::string controller_;
  std::unique_ptr<v1::Controller::Stub> stub_;
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
  v1::CancelRequest cancel;
  cancel.mutable_caller()->set_uid(getuid());
  cancel.mutable_filter()->add_job_ids(id);
  grpc::ClientContext context;
  v1::ActionReply reply;
  ASSERT_TRUE(stub_->Cancel(&context, cancel, &reply).ok());
  WaitForState(id, "CANCELLED");
  EXPECT_TRUE(ProcessesOfJob(id).empty()) << "a process of the cancelled job survived";
}

TEST_F(ClusterTest, AnAgentKilledAndRestartedReadoptsItsJob) {
  Boot();
  uint64_t id = Submit("#!/bin/sh\necho start\nsleep 3\necho end\n", 0, "n1");
  WaitForState(id, "RUNNING");
  agents_["n1"]->Stop(SIGKILL);
  std::this_thread::sleep_for(500ms);
  StartAgent("n1");
  WaitForState(id, "COMPLETED");
  EXPECT_EQ(Output(id), "start\nend\n") << "ran once, to its end";
  EXPECT_EQ(Job(id).restart_count(), 0u);
}

TEST_F(ClusterTest, AFailingHealthCheckDrainsTheNodeAndAPassingOneResumesIt) {
  fs::path flag = dir_ / "sick";
  fs::path check = dir_ / "health.sh";
  std::ofstream(check) << "#!/bin/sh\nif [ -e " << flag.string()
                       << " ]; then echo disk full; exit 1; fi\nexit 0\n";
  fs::permissions(check, fs::perms::owner_all);
  Boot("HealthCheckProgram=" + check.string() + "\nHealthCheckInterval=1\n");
  std::ofstream(flag) << "x";
  WaitFor([&] { return NodeState("n1") == "DRAINED"; }, "n1 DRAINED");
  EXPECT_EQ(Nodes()["n1"].reason(), "disk full");
  fs::remove(flag);
  WaitFor([&] { return NodeState("n1") == "IDLE"; }, "n1 IDLE again");
}

TEST_F(ClusterTest, AFailingPrologDrainsTheNodeAndRequeuesTheJob) {
  fs::path prolog = dir_ / "prolog.sh";
  std::ofstream(prolog) << "#!/bin/sh\necho no scratch space >&2\nexit 1\n";
  fs::permissions(prolog, fs::perms::owner_all);
  Boot("Prolog=" + prolog.string() + "\n");
  uint64_t id = Submit("#!/bin/sh\necho ran\n", 0, "n1");
  WaitFor([&] { return NodeState("n1") == "DRAINED"; }, "n1 DRAINED");
  EXPECT_NE(Nodes()["n1"].reason().find("Prolog error"), std::string::npos);
  v1::Job job = Job(id);
  EXPECT_EQ(job.state(), "PENDING");
  EXPECT_EQ(job.restart_count(), 1u);
  EXPECT_EQ(Output(id), "") << "the script never ran";
}

TEST_F(ClusterTest, AJobPastItsMemoryEndsOutOfMemory) {
  CgroupHierarchy cgroups = DetectCgroups();
  if (cgroups.mode == CgroupMode::kNone)
    GTEST_SKIP() << "cgroups are not writable here: " << cgroups.reason;
  Boot();
  uint64_t id =
      Submit("#!/bin/sh\ndd if=/dev/zero of=/dev/null bs=300M count=1\necho survived\n", 0, "", 64);
  WaitFor(
      [&] {
        std::string state = Job(id).state();
        return state != "PENDING" && state != "RUNNING";
      },
      "the job to end");
  EXPECT_EQ(Job(id).state(), "OUT_OF_MEMORY");
}

}  // namespace
}  // namespace drover::agent
