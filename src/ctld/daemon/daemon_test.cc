// droverctld as a real process: started on a loopback port chosen at run time with its own
// temporary state, driven over gRPC, killed with SIGKILL mid-stream, restarted; every job ID it
// acknowledged is there exactly once. Every process started here is stopped by PID.
#include <fcntl.h>
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>

#include "auth/auth.h"
#include "auth/grpc_auth.h"
#include "common/mutex.h"
#include "proto/drover.grpc.pb.h"
#include "testing/postgres_server.h"
#include "wire/job_pages.h"

namespace drover::ctld {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// The cluster's authentication: auth/slurm with a key in the test's directory.
auth::Settings AuthSettings(const fs::path& dir) {
  ConfigLoad load = LoadClusterConfig((dir / "slurm.conf").string());
  auto settings = auth::SettingsOf(load.config);
  EXPECT_TRUE(settings.ok()) << (settings ? "" : settings.error());
  return settings ? *settings : auth::Settings{};
}

// Makes the call one of `uid` (the test holds the key, as root could).
void As(grpc::ClientContext& context, const fs::path& dir, uint32_t uid) {
  auto credential = auth::CredentialFor(AuthSettings(dir), {uid, uid});
  ASSERT_TRUE(credential.ok()) << credential.error();
  context.AddMetadata(auth::kCredentialHeader, *credential);
}

class Controller {
 public:
  explicit Controller(const fs::path& dir) : dir_(dir) {}
  ~Controller() { Kill(SIGKILL); }

  void Start() {
    fs::remove(dir_ / "port");
    pid_ = fork();
    if (pid_ == 0) {
      int log = open((dir_ / "ctld.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      dup2(log, 2);
      execl(DROVERCTLD_PATH, "droverctld", "--conf", (dir_ / "slurm.conf").c_str(), "--state",
            (dir_ / "state").c_str(), "--listen", "127.0.0.1:0", "--port-file",
            (dir_ / "port").c_str(), "--http-listen", "127.0.0.1:0", nullptr);
      _exit(127);
    }
    for (int i = 0; i < 200 && port_ == 0; ++i) {
      std::this_thread::sleep_for(50ms);
      std::ifstream in(dir_ / "port");
      in >> port_;
    }
    ASSERT_GT(port_, 0) << "droverctld did not start; see " << (dir_ / "ctld.log");
    ConfigLoad load = LoadClusterConfig((dir_ / "slurm.conf").string());
    auto authenticator = auth::Create(AuthSettings(dir_), auth::Role::kClient);
    ASSERT_TRUE(authenticator.ok()) << authenticator.error();
    authenticator_ = std::move(*authenticator);
    auto channel = auth::NewChannel("127.0.0.1:" + std::to_string(port_), load.config,
                                    grpc::ChannelArguments(), *authenticator_);
    ASSERT_TRUE(channel.ok()) << channel.error();
    stub_ = v1::Controller::NewStub(*channel);
  }

  void Kill(int signal) {
    if (pid_ <= 0) return;
    ::kill(pid_, signal);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = 0;
    port_ = 0;
  }

  v1::Controller::Stub& stub() { return *stub_; }
  pid_t pid() const { return pid_; }

 private:
  fs::path dir_;
  pid_t pid_ = 0;
  int port_ = 0;
  std::unique_ptr<auth::Authenticator> authenticator_;
  std::unique_ptr<v1::Controller::Stub> stub_;
};

class DaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("drover_ctld_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "slurm.conf")
        << "ClusterName=daemontest\nGresTypes=gpu\nMaxJobCount=100000\nDefMemPerCPU=100\n"
           "NodeName=n[1-2] CPUs=8 RealMemory=8000 Gres=gpu:2\n"
           "PartitionName=p Nodes=ALL Default=YES MaxTime=1:00:00\n"
        << "AuthType=auth/slurm\nAuthInfo=key=" << (dir_ / "slurm.key").string() << "\n";
    ASSERT_TRUE(auth::WriteKey((dir_ / "slurm.key").string(), false).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  static grpc::Status Submit(v1::Controller::Stub& stub, const std::string& name, uint64_t* id) {
    v1::SubmitRequest request;
    v1::JobSpec* spec = request.mutable_spec();
    spec->set_name(name);
    spec->set_user("alice");
    spec->set_account("research");
    spec->set_min_nodes(1);
    spec->set_max_nodes(1);
    spec->set_ntasks(1);
    spec->set_cpus_per_task(1);
    spec->set_time_limit_seconds(600);
    spec->set_array_task_id(UINT32_MAX);
    spec->set_requeue(true);
    request.set_script("#!/bin/sh\ntrue\n");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    v1::SubmitReply reply;
    grpc::Status status = stub.Submit(&context, request, &reply);
    *id = reply.job_id();
    return status;
  }

  // Every job, in pages of 7 (the commands' pages are larger, and work the same way).
  static std::vector<v1::Job> AllJobs(v1::Controller::Stub& stub) {
    v1::JobQuery query;
    query.set_all_states(true);
    query.set_limit(7);
    v1::JobList list;
    int pages = 0;
    grpc::Status status = wire::ListJobPages(
        [&stub, &pages](const v1::JobQuery& page, v1::JobList* reply) {
          ++pages;
          grpc::ClientContext context;
          grpc::Status one = stub.ListJobs(&context, page, reply);
          EXPECT_LE(reply->jobs_size(), 7);
          return one;
        },
        query, &list);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(pages, std::max(1, (list.jobs_size() + 6) / 7));  // a full last page ends it
    std::vector<v1::Job> jobs(list.jobs_size());
    for (int i = 0; i < list.jobs_size(); ++i) EXPECT_TRUE(jobs[i].ParseFromString(list.jobs(i)));
    return jobs;
  }

  // Submissions from 8 clients, the controller killed with -9 among them, started again: every
  // acknowledged job is there once, and new IDs follow the stored ones.
  void ExpectEveryAcknowledgedJobSurvivesKill9();

  fs::path dir_;
};

// SlurmctldPidFile, set: written with the pid at start, removed at a clean stop.
TEST_F(DaemonTest, WritesThePidFileItIsGivenAndRemovesItOnStop) {
  std::ofstream(dir_ / "slurm.conf", std::ios::app)
      << "SlurmctldPidFile=" << (dir_ / "ctld.pid").string() << "\n";
  Controller ctld(dir_);
  ctld.Start();
  std::ifstream in(dir_ / "ctld.pid");
  pid_t written = 0;
  in >> written;
  EXPECT_EQ(written, ctld.pid());
  ctld.Kill(SIGTERM);
  EXPECT_FALSE(fs::exists(dir_ / "ctld.pid"));
}

TEST_F(DaemonTest, SubmitQueryPingAndErrors) {
  Controller ctld(dir_);
  ctld.Start();
  uint64_t id = 0;
  grpc::Status submitted = Submit(ctld.stub(), "first", &id);
  ASSERT_TRUE(submitted.ok()) << submitted.error_message();
  EXPECT_EQ(id, 1u);
  std::vector<v1::Job> jobs = AllJobs(ctld.stub());
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].spec().name(), "first");
  EXPECT_EQ(jobs[0].state(), "PENDING");  // no agent has registered its node yet
  v1::PingReply ping;
  grpc::ClientContext context;
  ASSERT_TRUE(ctld.stub().Ping(&context, v1::PingRequest(), &ping).ok());
  EXPECT_EQ(ping.cluster_name(), "daemontest");

  v1::SubmitRequest bad;
  bad.mutable_spec()->set_min_nodes(1);
  bad.mutable_spec()->set_ntasks(1);
  bad.mutable_spec()->set_cpus_per_task(1);
  bad.mutable_spec()->set_gpus_per_node(3);
  bad.mutable_spec()->set_array_task_id(UINT32_MAX);
  grpc::ClientContext bad_context;
  v1::SubmitReply reply;
  grpc::Status status = ctld.stub().Submit(&bad_context, bad, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("Requested node configuration is not available"),
            std::string::npos)
      << status.error_message();
}

TEST_F(DaemonTest, EveryAcknowledgedJobSurvivesKill9ExactlyOnce) {
  ExpectEveryAcknowledgedJobSurvivesKill9();
}

// The same with the state in PostgreSQL (StorageType), a server of the test's own.
TEST_F(DaemonTest, EveryAcknowledgedJobSurvivesKill9ExactlyOnceOnPostgres) {
  auto server = drover::testing::PostgresServer::Start();
  if (!server) GTEST_SKIP() << server.error();
  std::ofstream(dir_ / "slurm.conf", std::ios::app)
      << "StorageType=postgresql\nStorageHost=127.0.0.1\nStoragePort=" << (*server)->port()
      << "\nStorageUser=drover\nStorageLoc=drover\n";
  ExpectEveryAcknowledgedJobSurvivesKill9();
  // The state was there, not in StateSaveLocation.
  EXPECT_FALSE(fs::exists(dir_ / "state" / "drover.db"));
}

// PostgreSQL stopped and started again while 8 clients submit: the controller waits for it,
// reconnects and goes on (it does not exit), and every job it acknowledged is there once.
TEST_F(DaemonTest, APostgresRestartUnderLoadLosesNoAcknowledgedJob) {
  auto server = drover::testing::PostgresServer::Start();
  if (!server) GTEST_SKIP() << server.error();
  std::ofstream(dir_ / "slurm.conf", std::ios::app)
      << "StorageType=postgresql\nStorageHost=127.0.0.1\nStoragePort=" << (*server)->port()
      << "\nStorageUser=drover\nStorageLoc=drover\n";
  Controller ctld(dir_);
  ctld.Start();
  struct Acknowledged {
    Mutex mutex;
    std::multiset<uint64_t> ids GUARDED_BY(mutex);
  } acknowledged;
  std::atomic<bool> done{false};
  std::vector<std::thread> submitters;
  for (int t = 0; t < 8; ++t)
    submitters.emplace_back([&] {
      while (!done) {
        uint64_t id = 0;
        if (!Submit(ctld.stub(), "load", &id).ok()) continue;
        MutexLock lock(acknowledged.mutex);
        acknowledged.ids.insert(id);
      }
    });
  auto count = [&] {
    MutexLock lock(acknowledged.mutex);
    return acknowledged.ids.size();
  };
  auto wait_for = [&](size_t target) {
    for (auto deadline = std::chrono::steady_clock::now() + 60s;
         count() < target && std::chrono::steady_clock::now() < deadline;)
      std::this_thread::sleep_for(10ms);
    return count() >= target;
  };
  ASSERT_TRUE(wait_for(200));
  (*server)->Stop();
  std::this_thread::sleep_for(1s);
  drover::Status restarted = (*server)->Restart();
  ASSERT_TRUE(restarted.ok()) << restarted.error();
  const size_t after_restart = count();
  EXPECT_TRUE(wait_for(after_restart + 200)) << "no submission acknowledged after the restart";
  done = true;
  for (std::thread& thread : submitters) thread.join();
  EXPECT_EQ(::waitpid(ctld.pid(), nullptr, WNOHANG), 0) << "the controller exited";
  std::multiset<uint64_t> found;
  for (const v1::Job& job : AllJobs(ctld.stub())) found.insert(job.spec().job_id());
  MutexLock lock(acknowledged.mutex);
  for (uint64_t id : acknowledged.ids) {
    EXPECT_EQ(acknowledged.ids.count(id), 1u) << "job ID " << id << " acknowledged twice";
    EXPECT_EQ(found.count(id), 1u) << "job " << id;
  }
  std::ifstream log(dir_ / "ctld.log");
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("reconnected"), std::string::npos) << text;
}

// `drover storage migrate`: a SQLite state with jobs, copied into an empty PostgreSQL database;
// the controller started on it has every job, and new IDs follow. A second copy into the same
// database is refused, and so is one while a controller runs on it.
TEST_F(DaemonTest, StorageMigrateCopiesASqliteStateIntoPostgres) {
  auto server = drover::testing::PostgresServer::Start();
  if (!server) GTEST_SKIP() << server.error();
  std::set<uint64_t> submitted;
  {
    Controller ctld(dir_);
    ctld.Start();
    for (int i = 0; i < 25; ++i) {
      uint64_t id = 0;
      ASSERT_TRUE(Submit(ctld.stub(), "before", &id).ok());
      submitted.insert(id);
    }
    ctld.Kill(SIGTERM);
  }
  std::ofstream(dir_ / "slurm.conf", std::ios::app)
      << "StorageType=postgresql\nStorageHost=127.0.0.1\nStoragePort=" << (*server)->port()
      << "\nStorageUser=drover\nStorageLoc=drover\n";
  auto migrate = [&] {
    const std::string command = fmt::format(
        "'{}' storage migrate --conf '{}' --from '{}' > '{}' 2>&1", DROVER_PATH,
        (dir_ / "slurm.conf").string(), (dir_ / "state").string(), (dir_ / "migrate.out").string());
    int status = std::system(command.c_str());
    std::ifstream in(dir_ / "migrate.out");
    std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return std::make_pair(WIFEXITED(status) ? WEXITSTATUS(status) : -1, output);
  };
  auto [code, output] = migrate();
  ASSERT_EQ(code, 0) << output;
  EXPECT_NE(output.find("jobs: 25 rows"), std::string::npos) << output;
  EXPECT_NE(output.find("scripts: 25 rows"), std::string::npos) << output;

  Controller ctld(dir_);
  ctld.Start();
  std::set<uint64_t> found;
  for (const v1::Job& job : AllJobs(ctld.stub())) found.insert(job.spec().job_id());
  EXPECT_EQ(found, submitted);
  uint64_t next = 0;
  ASSERT_TRUE(Submit(ctld.stub(), "after", &next).ok());
  EXPECT_GT(next, *submitted.rbegin());
  // A controller leads on the database now: the copy is refused.
  auto [running_code, running] = migrate();
  EXPECT_EQ(running_code, 1);
  EXPECT_NE(running.find("is running on database drover: stop every droverctld first"),
            std::string::npos)
      << running;
  ctld.Kill(SIGTERM);
  // Stopped, and the database not empty: refused too, and nothing changed.
  auto [again_code, again] = migrate();
  EXPECT_EQ(again_code, 1);
  EXPECT_NE(again.find("already holds a state"), std::string::npos) << again;
}

void DaemonTest::ExpectEveryAcknowledgedJobSurvivesKill9() {
  Controller ctld(dir_);
  ctld.Start();
  struct Acknowledged {
    Mutex mutex;
    std::set<uint64_t> ids GUARDED_BY(mutex);
  } acknowledged;
  std::atomic<int> attempts{0};
  std::vector<std::thread> submitters;
  for (int t = 0; t < 8; ++t) {
    submitters.emplace_back([&] {
      while (attempts++ < 1000) {
        uint64_t id = 0;
        if (!Submit(ctld.stub(), "load", &id).ok()) continue;
        MutexLock lock(acknowledged.mutex);
        EXPECT_TRUE(acknowledged.ids.insert(id).second) << "job ID " << id << " given twice";
      }
    });
  }
  // Kill while submissions are in flight.
  while (true) {
    std::this_thread::sleep_for(5ms);
    MutexLock lock(acknowledged.mutex);
    if (acknowledged.ids.size() >= 300) break;
  }
  ctld.Kill(SIGKILL);
  for (std::thread& thread : submitters) thread.join();
  MutexLock lock(acknowledged.mutex);  // the submitters are done; the analysis wants it held
  size_t before = acknowledged.ids.size();
  ASSERT_GE(before, 300u);

  ctld.Start();
  std::vector<v1::Job> jobs = AllJobs(ctld.stub());
  std::multiset<uint64_t> found;
  for (const v1::Job& job : jobs) found.insert(job.spec().job_id());
  for (uint64_t id : acknowledged.ids) EXPECT_EQ(found.count(id), 1u) << "job " << id;
  // New IDs continue after every stored one.
  uint64_t next = 0;
  ASSERT_TRUE(Submit(ctld.stub(), "after", &next).ok());
  EXPECT_GT(next, *found.rbegin());
}

TEST_F(DaemonTest, SubmitManyGivesEachItsIdOrError) {
  Controller ctld(dir_);
  ctld.Start();
  v1::SubmitManyRequest request;
  for (int i = 0; i < 3; ++i) {
    v1::SubmitRequest* one = request.add_jobs();
    v1::JobSpec* spec = one->mutable_spec();
    spec->set_min_nodes(1);
    spec->set_ntasks(1);
    spec->set_cpus_per_task(1);
    spec->set_array_task_id(UINT32_MAX);
    if (i == 1) spec->set_gpus_per_node(3);  // more than any node has
  }
  v1::SubmitManyReply reply;
  grpc::ClientContext context;
  ASSERT_TRUE(ctld.stub().SubmitMany(&context, request, &reply).ok());
  ASSERT_EQ(reply.results_size(), 3);
  EXPECT_EQ(reply.results(0).job_id(), 1u);
  EXPECT_EQ(reply.results(1).job_id(), 0u);
  EXPECT_NE(reply.results(1).error().find("Requested node configuration is not available"),
            std::string::npos);
  EXPECT_EQ(reply.results(2).job_id(), 2u);
}

TEST_F(DaemonTest, FinishedJobsLeaveTheQueueButStayInTheHistory) {
  std::ofstream(dir_ / "slurm.conf", std::ios::app) << "MinJobAge=1\n";
  Controller ctld(dir_);
  ctld.Start();
  uint64_t id = 0;
  ASSERT_TRUE(Submit(ctld.stub(), "short", &id).ok());
  v1::CancelRequest cancel;
  cancel.mutable_filter()->add_job_ids(id);
  v1::ActionReply cancelled;
  grpc::ClientContext cancel_context;
  ASSERT_TRUE(ctld.stub().Cancel(&cancel_context, cancel, &cancelled).ok());
  for (int i = 0; i < 100 && !AllJobs(ctld.stub()).empty(); ++i) std::this_thread::sleep_for(50ms);
  EXPECT_TRUE(AllJobs(ctld.stub()).empty()) << "MinJobAge=1 should have purged job " << id;
  auto history = [&] {
    v1::HistoryQuery query;
    query.mutable_filter()->add_job_ids(id);
    v1::JobList list;
    grpc::ClientContext context;
    EXPECT_TRUE(ctld.stub().History(&context, query, &list).ok());
    return list;
  };
  v1::JobList found = history();
  ASSERT_EQ(found.jobs_size(), 1);
  v1::Job record;
  ASSERT_TRUE(record.ParseFromString(found.jobs(0)));
  EXPECT_EQ(record.state(), "CANCELLED");
  EXPECT_EQ(record.cancelled_by(), getuid()) << "the canceller is who the credential proves";
  ctld.Kill(SIGTERM);
  ctld.Start();
  EXPECT_EQ(history().jobs_size(), 1) << "the history survives a restart";
}

}  // namespace
}  // namespace drover::ctld

namespace drover::ctld {
namespace {

TEST_F(DaemonTest, ReservationsAndPartitionsThroughTheApi) {
  Controller ctld(dir_);
  ctld.Start();
  v1::ReservationRequest request;
  request.set_name("maint");
  request.set_start_time(std::time(nullptr) + 3600);
  request.set_duration_seconds(7200);
  request.set_node_list("n2");
  request.set_users("root");
  request.set_flags("MAINT");
  {
    grpc::ClientContext context;
    As(context, dir_, 0);  // an operator
    v1::ReservationReply reply;
    grpc::Status status = ctld.stub().CreateReservation(&context, request, &reply);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(reply.name(), "maint");
  }
  {
    v1::ReservationRequest user = request;
    user.set_name("mine");
    grpc::ClientContext context;
    As(context, dir_, 1000);  // a user
    v1::ReservationReply reply;
    grpc::Status status = ctld.stub().CreateReservation(&context, user, &reply);
    EXPECT_EQ(status.error_message(), "Access/permission denied");
  }
  auto list = [&] {
    grpc::ClientContext context;
    v1::ReservationList reservations;
    EXPECT_TRUE(ctld.stub().ListReservations(&context, v1::ReservationQuery(), &reservations).ok());
    return reservations;
  };
  ctld.Kill(SIGKILL);
  ctld.Start();
  v1::ReservationList after = list();
  ASSERT_EQ(after.reservations_size(), 1) << "reservations persist across a restart";
  EXPECT_EQ(after.reservations(0).name(), "maint");
  EXPECT_EQ(after.reservations(0).node_list(), "n2");
  EXPECT_EQ(after.reservations(0).flags(0), "MAINT");

  {
    v1::DeleteReservationRequest remove;
    remove.set_name("maint");
    grpc::ClientContext context;
    As(context, dir_, 0);
    v1::ActionReply reply;
    ASSERT_TRUE(ctld.stub().DeleteReservation(&context, remove, &reply).ok());
  }
  ctld.Kill(SIGTERM);
  ctld.Start();
  EXPECT_EQ(list().reservations_size(), 0) << "a deleted reservation stays deleted";

  grpc::ClientContext context;
  v1::PartitionList partitions;
  ASSERT_TRUE(ctld.stub().ListPartitions(&context, v1::PartitionQuery(), &partitions).ok());
  ASSERT_EQ(partitions.partitions_size(), 1);
  const v1::Partition& p = partitions.partitions(0);
  EXPECT_EQ(p.name(), "p");
  EXPECT_TRUE(p.is_default());
  EXPECT_EQ(p.node_list(), "n[1-2]");
  EXPECT_EQ(p.total_cpus(), 16u);
  EXPECT_EQ(p.total_gpus(), 4u);
  EXPECT_EQ(p.max_time_seconds(), 3600);
  EXPECT_EQ(p.nodes_other(), 2u);  // no agent has registered
}

// scontrol's partition and node changes are committed and applied again over slurm.conf after
// a kill -9, as Slurm keeps them in its state files.
TEST_F(DaemonTest, PartitionAndNodeChangesSurviveARestart) {
  Controller ctld(dir_);
  ctld.Start();
  auto change = [&](const std::string& name, std::vector<std::string> settings, bool create) {
    v1::UpdatePartitionRequest request;
    request.set_name(name);
    for (const std::string& setting : settings) request.add_settings(setting);
    request.set_create(create);
    grpc::ClientContext context;
    As(context, dir_, 0);
    v1::ActionReply reply;
    return ctld.stub().UpdatePartition(&context, request, &reply);
  };
  grpc::Status status = change("p", {"MaxTime=30"}, false);
  ASSERT_TRUE(status.ok()) << status.error_message();
  status = change("debug", {"Nodes=n2", "Default=YES"}, true);
  ASSERT_TRUE(status.ok()) << status.error_message();
  {
    v1::UpdateNodeRequest request;
    request.set_nodes("n1");
    request.set_weight(7);
    request.set_features("big");
    request.set_comment("new fan");
    grpc::ClientContext context;
    As(context, dir_, 0);
    v1::ActionReply reply;
    status = ctld.stub().UpdateNode(&context, request, &reply);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  ctld.Kill(SIGKILL);
  ctld.Start();
  grpc::ClientContext context;
  v1::PartitionList partitions;
  ASSERT_TRUE(ctld.stub().ListPartitions(&context, v1::PartitionQuery(), &partitions).ok());
  ASSERT_EQ(partitions.partitions_size(), 2);
  EXPECT_EQ(partitions.partitions(0).name(), "p");
  EXPECT_EQ(partitions.partitions(0).max_time_seconds(), 1800);
  EXPECT_FALSE(partitions.partitions(0).is_default());
  EXPECT_EQ(partitions.partitions(1).name(), "debug");
  EXPECT_TRUE(partitions.partitions(1).is_default());
  EXPECT_EQ(partitions.partitions(1).node_list(), "n2");
  grpc::ClientContext nodes_context;
  v1::NodeList nodes;
  ASSERT_TRUE(ctld.stub().ListNodes(&nodes_context, v1::NodeQuery(), &nodes).ok());
  ASSERT_EQ(nodes.nodes_size(), 2);
  EXPECT_EQ(nodes.nodes(0).weight(), 7u);
  EXPECT_EQ(nodes.nodes(0).features(), "big");
  EXPECT_EQ(nodes.nodes(0).active_features(), "big");
  EXPECT_EQ(nodes.nodes(0).comment(), "new fan");
  EXPECT_EQ(nodes.nodes(1).weight(), 1u);
}

// A TLS file that cannot be read is fatal at start, with the key and the path, before the
// controller listens or touches its state.
TEST_F(DaemonTest, UnreadableTlsFileStopsTheControllerAtStart) {
  const fs::path missing = dir_ / "missing";
  std::ofstream(dir_ / "slurm.conf", std::ios::app)
      << "DroverTLSCertFile=" << (missing / "host.pem").string() << "\n"
      << "DroverTLSKeyFile=" << (missing / "host.key").string() << "\n"
      << "DroverTLSCAFile=" << (missing / "ca.pem").string() << "\n";
  pid_t pid = fork();
  if (pid == 0) {
    int log = open((dir_ / "ctld.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(log, 2);
    execl(DROVERCTLD_PATH, "droverctld", "--conf", (dir_ / "slurm.conf").c_str(), "--state",
          (dir_ / "state").c_str(), "--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0",
          nullptr);
    _exit(127);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::ifstream in(dir_ / "ctld.log");
  std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(log, "droverctld: error: DroverTLSCAFile=" + (missing / "ca.pem").string() +
                     ": cannot read it: No such file or directory (every Drover process "
                     "verifies the others against it)\n");
  EXPECT_FALSE(fs::exists(dir_ / "state"));
}

}  // namespace
}  // namespace drover::ctld
