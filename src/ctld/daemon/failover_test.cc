// High availability with real processes: two droverctld on one PostgreSQL server (started by the
// test), each on its own loopback port chosen at run time, named by its SlurmctldHost line.
// Eight clients submit through whichever leads while the leader is killed with -9 again and
// again; every job acknowledged is there exactly once. A leader stopped (SIGSTOP) past its lease
// is replaced, and once it runs again it writes nothing and exits. SQLite with two controller
// lines is refused. Every process started here is stopped by PID.
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "auth/auth.h"
#include "auth/grpc_auth.h"
#include "common/cluster_config.h"
#include "common/mutex.h"
#include "common/process_file.h"
#include "proto/drover.grpc.pb.h"
#include "testing/free_port.h"
#include "testing/postgres_server.h"
#include "wire/job_pages.h"

namespace drover::ctld {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// One droverctld, started as the SlurmctldHost line `name`.
class Ctld {
 public:
  Ctld(fs::path dir, std::string name) : dir_(std::move(dir)), name_(std::move(name)) {}
  ~Ctld() { Kill(SIGKILL); }

  void Start() {
    ASSERT_EQ(pid_, 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      int log = ::open(Log().c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      ::dup2(log, 2);
      ::execl(DROVERCTLD_PATH, "droverctld", "--conf", (dir_ / "slurm.conf").c_str(), "--state",
              (dir_ / ("state-" + name_)).c_str(), "--name", name_.c_str(), "--http-listen",
              "127.0.0.1:0", nullptr);
      ::_exit(127);
    }
  }
  // SIGKILL and SIGTERM end it (and it is reaped); others (SIGSTOP, SIGCONT) are only sent.
  void Kill(int signal) {
    if (pid_ <= 0) return;
    ::kill(pid_, signal);
    if (signal != SIGKILL && signal != SIGTERM) return;
    if (signal == SIGTERM) ::kill(pid_, SIGCONT);
    ::waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }
  // Its exit status once it has ended by itself within `within`; nullopt if it still runs.
  std::optional<int> WaitExit(std::chrono::milliseconds within) {
    for (auto deadline = Clock::now() + within; Clock::now() < deadline;) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(20ms);
    }
    return std::nullopt;
  }
  // Waits (up to 5 s) until a SIGSTOP has taken hold: kill(2) returns before the process stops,
  // and until then it may still answer.
  bool WaitStopped() const {
    for (auto deadline = Clock::now() + 5s; Clock::now() < deadline;) {
      std::string stat = ReadFile("/proc/" + std::to_string(pid_) + "/stat");
      size_t end = stat.rfind(')');
      if (end != std::string::npos && end + 2 < stat.size() && stat[end + 2] == 'T') return true;
      std::this_thread::sleep_for(5ms);
    }
    return false;
  }
  fs::path Log() const { return dir_ / (name_ + ".log"); }
  const std::string& name() const { return name_; }
  bool running() const { return pid_ > 0; }

 private:
  fs::path dir_;
  std::string name_;
  pid_t pid_ = 0;
};

class FailoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("drover_failover_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ASSERT_TRUE(auth::WriteKey((dir_ / "slurm.key").string(), false).ok());
    ports_ = {drover::testing::FreeLoopbackPort(), drover::testing::FreeLoopbackPort()};
  }
  void TearDown() override { fs::remove_all(dir_); }

  // slurm.conf for two controllers; the state in `server` when given.
  void WriteConf(const drover::testing::PostgresServer* server) {
    std::ofstream conf(dir_ / "slurm.conf");
    conf << "ClusterName=failover\nMaxJobCount=100000\nDefMemPerCPU=100\n"
         << "SlurmctldHost=ctl1(127.0.0.1:" << ports_[0] << ")\n"
         << "SlurmctldHost=ctl2(127.0.0.1:" << ports_[1] << ")\n"
         << "SlurmctldTimeout=2\nDroverControllerListen=127.0.0.1\n"
         << "SlurmctldLogFile=" << (dir_ / "ctld.log").string() << "\n"
         << "NodeName=n[1-2] CPUs=8 RealMemory=8000\n"
         << "PartitionName=p Nodes=ALL Default=YES MaxTime=1:00:00\n"
         << "AuthType=auth/slurm\nAuthInfo=key=" << (dir_ / "slurm.key").string() << "\n";
    if (server)
      conf << "StorageType=postgresql\nStorageHost=127.0.0.1\nStoragePort=" << server->port()
           << "\nStorageUser=drover\nStorageLoc=drover\n";
  }

  void Connect() {
    ConfigLoad load = LoadClusterConfig((dir_ / "slurm.conf").string());
    ASSERT_TRUE(load.ok());
    auto settings = auth::SettingsOf(load.config);
    ASSERT_TRUE(settings.ok()) << settings.error();
    auto authenticator = auth::Create(*settings, auth::Role::kClient);
    ASSERT_TRUE(authenticator.ok()) << authenticator.error();
    authenticator_ = std::move(*authenticator);
    // A controller that comes back is tried again within a second, as the agents do (gRPC's
    // default backoff grows to two minutes).
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    for (int i = 0; i < 2; ++i) {
      auto channel = auth::NewChannel("127.0.0.1:" + std::to_string(ports_[i]), load.config, args,
                                      *authenticator_);
      ASSERT_TRUE(channel.ok()) << channel.error();
      stubs_[i] = v1::Controller::NewStub(*channel);
    }
  }

  // Which controller answers Ping as the one in charge: 0, 1, or -1 for neither. Asked on new
  // channels, as a command (a new process) asks: a long-lived channel to a port whose server
  // went away reconnects only after its backoff.
  int Leader() {
    for (int i = 0; i < 2; ++i) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + 1s);
      v1::PingReply reply;
      if (FreshStub(i)->Ping(&context, v1::PingRequest(), &reply).ok() && !reply.standby())
        return i;
    }
    return -1;
  }
  std::unique_ptr<v1::Controller::Stub> FreshStub(int i) {
    ConfigLoad load = LoadClusterConfig((dir_ / "slurm.conf").string());
    auto channel = auth::NewChannel("127.0.0.1:" + std::to_string(ports_[i]), load.config,
                                    grpc::ChannelArguments(), *authenticator_);
    EXPECT_TRUE(channel.ok()) << channel.error();
    return v1::Controller::NewStub(*channel);
  }
  // Waits (up to `within`) for a leader: its index, or -1.
  int WaitForLeader(std::chrono::milliseconds within) {
    for (auto deadline = Clock::now() + within; Clock::now() < deadline;) {
      if (int leader = Leader(); leader >= 0) return leader;
      std::this_thread::sleep_for(50ms);
    }
    return -1;
  }

  static grpc::Status Submit(v1::Controller::Stub& stub, uint64_t* id) {
    v1::SubmitRequest request;
    v1::JobSpec* spec = request.mutable_spec();
    spec->set_name("load");
    spec->set_user("alice");
    spec->set_min_nodes(1);
    spec->set_max_nodes(1);
    spec->set_ntasks(1);
    spec->set_cpus_per_task(1);
    spec->set_time_limit_seconds(600);
    spec->set_array_task_id(UINT32_MAX);
    request.set_script("#!/bin/sh\ntrue\n");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    v1::SubmitReply reply;
    grpc::Status status = stub.Submit(&context, request, &reply);
    *id = reply.job_id();
    return status;
  }

  std::vector<uint64_t> AllJobIds(v1::Controller::Stub& stub) {
    v1::JobQuery query;
    query.set_all_states(true);
    query.set_limit(5000);
    v1::JobList list;
    grpc::Status status = wire::ListJobPages(
        [&stub](const v1::JobQuery& page, v1::JobList* reply) {
          grpc::ClientContext context;
          return stub.ListJobs(&context, page, reply);
        },
        query, &list);
    EXPECT_TRUE(status.ok()) << status.error_message();
    std::vector<uint64_t> ids;
    for (int i = 0; i < list.jobs_size(); ++i) {
      v1::Job job;
      EXPECT_TRUE(job.ParseFromString(list.jobs(i)));
      ids.push_back(job.spec().job_id());
    }
    return ids;
  }

  // A PostgreSQL server of the test's own, slurm.conf for it, ctl1 leading and ctl2 its
  // standby. False when PostgreSQL is not installed (why_ says so; the test skips).
  bool StartPair(Ctld& one, Ctld& two) {
    auto server = drover::testing::PostgresServer::Start();
    if (!server) {
      why_ = server.error();
      return false;
    }
    server_ = std::move(*server);
    WriteConf(server_.get());
    one.Start();
    Connect();
    EXPECT_EQ(WaitForLeader(20s), 0) << Logs({&one, &two});
    two.Start();
    return true;
  }

  std::string Logs(const std::vector<Ctld*>& controllers) {
    std::string text = "--- SlurmctldLogFile:\n" + ReadFile(dir_ / "ctld.log");
    for (const Ctld* ctld : controllers)
      text += "--- " + ctld->name() + ":\n" + ReadFile(ctld->Log());
    return text;
  }

  fs::path dir_;
  std::array<int, 2> ports_{};
  std::unique_ptr<auth::Authenticator> authenticator_;
  std::array<std::unique_ptr<v1::Controller::Stub>, 2> stubs_;
  std::unique_ptr<drover::testing::PostgresServer> server_;  // outlives the tests' controllers
  std::string why_;
};

TEST_F(FailoverTest, TwoControllersOnSqliteAreRefused) {
  WriteConf(nullptr);
  Ctld ctld(dir_, "ctl1");
  ctld.Start();
  std::optional<int> status = ctld.WaitExit(10s);
  ASSERT_TRUE(status) << "it did not stop";
  EXPECT_EQ(*status, 1);
  // In SlurmctldLogFile, time-stamped.
  const std::string log = ReadFile(dir_ / "ctld.log");
  EXPECT_NE(log.find("] error: slurm.conf names 2 SlurmctldHost lines"), std::string::npos) << log;
  EXPECT_NE(log.find("backups need StorageType=postgresql"), std::string::npos) << log;
}

// The leader killed with -9 three times under load from 8 clients (bench/failover.sh does it
// ten times and reports the takeover times): each time the standby takes over, and every job any
// controller acknowledged is there exactly once.
TEST_F(FailoverTest, EveryAcknowledgedJobSurvivesKillingTheLeader) {
  Ctld one(dir_, "ctl1"), two(dir_, "ctl2");
  std::array<Ctld*, 2> controllers = {&one, &two};
  if (!StartPair(one, two)) GTEST_SKIP() << why_;
  ASSERT_FALSE(HasFailure());

  struct Acknowledged {
    Mutex mutex;
    std::multiset<uint64_t> ids GUARDED_BY(mutex);
  } acknowledged;
  std::atomic<bool> done{false};
  std::vector<std::thread> clients;
  for (int t = 0; t < 8; ++t)
    clients.emplace_back([&, t] {
      int target = t % 2;
      while (!done) {
        uint64_t id = 0;
        grpc::Status status = Submit(*stubs_[target], &id);
        if (!status.ok()) {  // down, or a standby: the other one, after a moment
          target = 1 - target;
          std::this_thread::sleep_for(20ms);
          continue;
        }
        MutexLock lock(acknowledged.mutex);
        acknowledged.ids.insert(id);
      }
    });
  auto count = [&] {
    MutexLock lock(acknowledged.mutex);
    return acknowledged.ids.size();
  };
  // DROVER_FAILOVER_ROUNDS: more kills (bench/failover.sh asks for ten).
  const int rounds = std::getenv("DROVER_FAILOVER_ROUNDS")
                         ? std::max(1, std::atoi(std::getenv("DROVER_FAILOVER_ROUNDS")))
                         : 3;
  for (int round = 0; round < rounds; ++round) {
    const size_t before = count();
    for (auto deadline = Clock::now() + 30s; count() < before + 100 && Clock::now() < deadline;)
      std::this_thread::sleep_for(10ms);
    ASSERT_GE(count(), before + 100) << "round " << round << Logs({&one, &two});
    int leader = Leader();
    ASSERT_GE(leader, 0) << Logs({&one, &two});
    controllers[leader]->Kill(SIGKILL);
    const auto killed = Clock::now();
    int next = WaitForLeader(30s);
    std::printf(
        "round %d: %zu acknowledged before; %s took over in %lld ms\n", round, count(),
        controllers[1 - leader]->name().c_str(),
        static_cast<long long>(
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - killed).count()));
    ASSERT_EQ(next, 1 - leader) << "round " << round << Logs({&one, &two});
    controllers[leader]->Start();  // back, as the standby
  }
  done = true;
  for (std::thread& client : clients) client.join();

  int leader = WaitForLeader(30s);
  ASSERT_GE(leader, 0);
  std::vector<uint64_t> ids = AllJobIds(*FreshStub(leader));
  std::multiset<uint64_t> found(ids.begin(), ids.end());
  MutexLock lock(acknowledged.mutex);
  for (uint64_t id : acknowledged.ids) {
    EXPECT_EQ(acknowledged.ids.count(id), 1u) << "job ID " << id << " acknowledged twice";
    EXPECT_EQ(found.count(id), 1u) << "job " << id;
  }
  EXPECT_EQ(found.size(), std::set<uint64_t>(ids.begin(), ids.end()).size()) << "a job twice";
}

// Jobs running when the leader is killed: the agents register with the new leader, which
// adopts them; each runs to its end once (a line in its own file), none is started again.
TEST_F(FailoverTest, RunningJobsAreAdoptedByTheNewLeaderAndRunOnce) {
  Ctld one(dir_, "ctl1"), two(dir_, "ctl2");
  if (!StartPair(one, two)) GTEST_SKIP() << why_;
  ASSERT_FALSE(HasFailure());
  // Two emulated agents that know both controllers (no --controller: slurm.conf's lines).
  std::vector<pid_t> agents;
  for (const char* node : {"n1", "n2"}) {
    fs::create_directories(dir_ / "spool" / node);
    pid_t pid = ::fork();
    if (pid == 0) {
      int log = ::open((dir_ / (std::string(node) + ".log")).c_str(), O_WRONLY | O_CREAT | O_APPEND,
                       0644);
      ::dup2(log, 2);
      ::execl(DROVERD_PATH, "droverd", "-N", node, "--conf", (dir_ / "slurm.conf").c_str(),
              "--emulate", "--spool", (dir_ / "spool" / node).c_str(), "--listen", "127.0.0.1:0",
              nullptr);
      ::_exit(127);
    }
    agents.push_back(pid);
  }
  struct StopAgents {
    std::vector<pid_t>& pids;
    ~StopAgents() {
      for (pid_t pid : pids) ::kill(pid, SIGTERM);
      for (pid_t pid : pids) ::waitpid(pid, nullptr, 0);
    }
  } stop_agents{agents};
  auto states = [&](int leader) {
    std::map<uint64_t, std::string> by_id;
    v1::JobQuery query;
    query.set_all_states(true);
    v1::JobList list;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    if (!FreshStub(leader)->ListJobs(&context, query, &list).ok()) return by_id;
    for (int i = 0; i < list.jobs_size(); ++i) {
      v1::Job job;
      if (job.ParseFromString(list.jobs(i))) by_id[job.spec().job_id()] = job.state();
    }
    return by_id;
  };
  std::vector<uint64_t> ids;
  for (int i = 0; i < 4; ++i) {
    v1::SubmitRequest request;
    v1::JobSpec* spec = request.mutable_spec();
    spec->set_name("adopted");
    spec->set_user("tester");
    spec->set_min_nodes(1);
    spec->set_ntasks(1);
    spec->set_cpus_per_task(1);
    spec->set_mem_per_node_mb(100);
    spec->set_array_task_id(UINT32_MAX);
    spec->set_time_limit_seconds(600);
    spec->set_work_dir(dir_.string());
    spec->set_stdout_path("out-%j.txt");
    request.set_script("#!/bin/sh\necho ran >> \"" + dir_.string() +
                       "/runs.$SLURM_JOB_ID\"\nsleep 4\n");
    grpc::ClientContext context;
    v1::SubmitReply reply;
    ASSERT_TRUE(FreshStub(0)->Submit(&context, request, &reply).ok());
    ids.push_back(reply.job_id());
  }
  auto all_in = [&](int leader, const std::string& state) {
    std::map<uint64_t, std::string> now = states(leader);
    return std::all_of(ids.begin(), ids.end(), [&](uint64_t id) { return now[id] == state; });
  };
  for (auto deadline = Clock::now() + 60s; !all_in(0, "RUNNING") && Clock::now() < deadline;)
    std::this_thread::sleep_for(100ms);
  ASSERT_TRUE(all_in(0, "RUNNING")) << Logs({&one, &two});
  one.Kill(SIGKILL);
  ASSERT_EQ(WaitForLeader(30s), 1) << Logs({&one, &two});
  for (auto deadline = Clock::now() + 60s; !all_in(1, "COMPLETED") && Clock::now() < deadline;)
    std::this_thread::sleep_for(100ms);
  std::map<uint64_t, std::string> final_states = states(1);
  for (uint64_t id : ids) {
    EXPECT_EQ(final_states[id], "COMPLETED") << "job " << id << Logs({&one, &two});
    EXPECT_EQ(ReadFile(dir_ / ("runs." + std::to_string(id))), "ran\n") << "job " << id;
  }
}

// scontrol takeover: the leader hands control to the first backup and comes back (the same
// process) as its standby; scontrol ping shows both UP.
TEST_F(FailoverTest, ScontrolTakeoverHandsControlToTheBackup) {
  if (::geteuid() != 0) GTEST_SKIP() << "scontrol takeover is for operators: run as root";
  Ctld one(dir_, "ctl1"), two(dir_, "ctl2");
  if (!StartPair(one, two)) GTEST_SKIP() << why_;
  ASSERT_FALSE(HasFailure());
  uint64_t before = 0;
  ASSERT_TRUE(Submit(*FreshStub(0), &before).ok());
  auto scontrol = [&](const std::string& words) {
    const std::string command =
        fmt::format("SLURM_CONF='{}' '{}' scontrol {} > '{}' 2>&1", (dir_ / "slurm.conf").string(),
                    DROVER_PATH, words, (dir_ / "scontrol.out").string());
    int status = std::system(command.c_str());
    return std::make_pair(WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                          ReadFile(dir_ / "scontrol.out"));
  };
  auto [code, output] = scontrol("takeover");
  ASSERT_EQ(code, 0) << output << Logs({&one, &two});
  EXPECT_EQ(Leader(), 1);
  EXPECT_TRUE(one.running()) << "the old leader did not come back as a standby";
  // The old leader, started again as a standby, answers Ping as one.
  bool standby = false;
  for (auto deadline = Clock::now() + 20s; !standby && Clock::now() < deadline;) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 1s);
    v1::PingReply reply;
    standby = FreshStub(0)->Ping(&context, v1::PingRequest(), &reply).ok() && reply.standby() &&
              reply.leader() == "ctl2";
    if (!standby) std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(standby) << Logs({&one, &two});
  auto [ping_code, ping] = scontrol("ping");
  EXPECT_EQ(ping_code, 0);
  EXPECT_EQ(ping, "Slurmctld(primary) at ctl1 is UP\nSlurmctld(backup) at ctl2 is UP\n");
  // The state came along: the job is there, and IDs go on.
  std::vector<uint64_t> ids = AllJobIds(*FreshStub(1));
  EXPECT_NE(std::find(ids.begin(), ids.end(), before), ids.end());
  uint64_t after = 0;
  ASSERT_TRUE(Submit(*FreshStub(1), &after).ok());
  EXPECT_GT(after, before);
  // No third line: index 2 is refused by the command.
  auto [bad_code, bad] = scontrol("takeover 2");
  EXPECT_EQ(bad_code, 1);
  EXPECT_EQ(bad, "Invalid takeover index: 2\n");
}

// drover up on a configuration with two SlurmctldHost lines: one controller per line, each on a
// loopback port of its own, on the configured database; the agents follow whichever leads.
TEST_F(FailoverTest, DroverUpStartsAControllerPerLine) {
  auto server = drover::testing::PostgresServer::Start();
  if (!server) GTEST_SKIP() << server.error();
  fs::create_directories(dir_ / "up");
  std::ofstream(dir_ / "up" / "slurm.conf")
      << "ClusterName=upha\nSlurmctldHost=ctl1\nSlurmctldHost=ctl2\nSlurmctldTimeout=2\n"
      << "NodeName=n[1-2] CPUs=4 RealMemory=4000\nPartitionName=p Nodes=ALL Default=YES\n"
      << "StorageType=postgresql\nStorageHost=127.0.0.1\nStoragePort=" << (*server)->port()
      << "\nStorageUser=drover\nStorageLoc=drover\n";
  const fs::path state = dir_ / "upstate";
  auto drover = [&](const std::string& words) {
    const std::string command = fmt::format(
        "XDG_STATE_HOME='{}' SLURM_CONF='{}' '{}' {} > '{}' 2>&1", (dir_ / "xdg").string(),
        (state / "slurm.conf").string(), DROVER_PATH, words, (dir_ / "drover.out").string());
    int status = std::system(command.c_str());
    return std::make_pair(WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                          ReadFile(dir_ / "drover.out"));
  };
  struct Down {
    std::function<void()> stop;
    ~Down() { stop(); }
  } down{[&] { drover("down --state '" + state.string() + "'"); }};
  auto [code, up] = drover(fmt::format("up --conf '{}' --state '{}'",
                                       (dir_ / "up" / "slurm.conf").string(), state.string()));
  ASSERT_EQ(code, 0) << up;
  EXPECT_NE(up.find("(ctl2)"), std::string::npos) << up;
  auto [status_code, status] = drover(fmt::format("status --state '{}'", state.string()));
  EXPECT_EQ(status_code, 0) << status;
  EXPECT_NE(status.find("droverctld-ctl2"), std::string::npos) << status;
  auto [ping_code, ping] = drover("scontrol ping");
  EXPECT_EQ(ping, "Slurmctld(primary) at ctl1 is UP\nSlurmctld(backup) at ctl2 is UP\n");
  // The leader killed: the commands find ctl2, and a job runs on the agents it adopted.
  auto leader = ReadProcessFile(state / "pids" / "ctld");
  ASSERT_TRUE(leader.ok()) << leader.error();
  ASSERT_EQ(::kill(leader->pid, SIGKILL), 0);
  auto [submit_code, submitted] = drover("sbatch --wait -o /dev/null --wrap true");
  EXPECT_EQ(submit_code, 0) << submitted << ReadFile(state / "logs" / "ctld-ctl2.log");
  EXPECT_NE(submitted.find("Submitted batch job"), std::string::npos) << submitted;
}

// A leader paused past its lease: the standby takes over, and the old one, once it runs again,
// commits nothing (its submissions in flight fail) and stops.
TEST_F(FailoverTest, APausedLeaderIsFencedAndStops) {
  Ctld one(dir_, "ctl1"), two(dir_, "ctl2");
  if (!StartPair(one, two)) GTEST_SKIP() << why_;
  ASSERT_FALSE(HasFailure());
  uint64_t first = 0;
  ASSERT_TRUE(Submit(*stubs_[0], &first).ok());

  one.Kill(SIGSTOP);
  ASSERT_TRUE(one.WaitStopped());
  const auto stopped = Clock::now();
  // A submission to the paused leader waits in its socket.
  std::optional<grpc::Status> late;
  uint64_t late_id = 0;
  std::thread stuck([&] { late = Submit(*stubs_[0], &late_id); });
  struct Join {  // on every way out: a test that returns with it running would terminate
    std::thread& thread;
    ~Join() {
      if (thread.joinable()) thread.join();
    }
  } join{stuck};
  ASSERT_EQ(WaitForLeader(30s), 1) << Logs({&one, &two});
  // The lease ran out (SlurmctldTimeout=2): what a takeover from another host takes.
  std::printf(
      "paused leader: ctl2 took over in %lld ms\n",
      static_cast<long long>(
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - stopped).count()));
  uint64_t second = 0;
  ASSERT_TRUE(Submit(*FreshStub(1), &second).ok());
  one.Kill(SIGCONT);
  std::optional<int> status = one.WaitExit(20s);
  stuck.join();
  ASSERT_TRUE(status) << "the fenced leader still runs" << Logs({&one, &two});
  EXPECT_EQ(*status, 1);
  ASSERT_TRUE(late.has_value());
  EXPECT_FALSE(late->ok() && late_id != 0 && late_id != second)
      << "the old leader acknowledged job " << late_id << " after it lost the lease";
  std::vector<uint64_t> ids = AllJobIds(*FreshStub(1));
  std::set<uint64_t> found(ids.begin(), ids.end());
  EXPECT_EQ(found.size(), ids.size()) << "a job twice";
  EXPECT_TRUE(found.count(first) && found.count(second));
  if (late->ok()) {
    EXPECT_TRUE(found.count(late_id)) << "acknowledged and lost: " << late_id;
  }
}

}  // namespace
}  // namespace drover::ctld
