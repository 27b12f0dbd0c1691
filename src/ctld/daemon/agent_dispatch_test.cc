// The dispatcher's launches against an agent served in this process: the launches due for one
// agent address go in one LaunchMany call, in order; an agent that does not know LaunchMany gets
// one Launch call each; a launch the agent refused is tried again.
#include "ctld/daemon/agent_dispatch.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "auth/job_credential.h"
#include "common/agent_address.h"
#include "common/log.h"
#include "common/mutex.h"

namespace drover::ctld {
namespace {

// What the agent got, launch by launch: "NODE:JOB" and how it came (one call or several).
struct Received {
  std::vector<std::string> single;   // Launch calls
  std::vector<std::string> batched;  // the launches of LaunchMany calls
  std::vector<size_t> batch_sizes;   // each LaunchMany call's count
};

class RecordingAgent : public v1::Agent::Service {
 public:
  explicit RecordingAgent(auth::Authenticator& authenticator) : authenticator_(authenticator) {}

  grpc::Status Launch(grpc::ServerContext* context, const v1::LaunchRequest* request,
                      v1::AgentReply*) override {
    auto named = context->client_metadata().find(kAgentNodeMetadata);
    std::string node = named == context->client_metadata().end()
                           ? "?"
                           : std::string(named->second.data(), named->second.size());
    std::string error = Check(node, *request);
    MutexLock lock(mutex_);
    if (!error.empty()) return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, error);
    received_.single.push_back(fmt::format("{}:{}", node, request->job().spec().job_id()));
    changed_.NotifyAll();
    return grpc::Status::OK;
  }

  grpc::Status LaunchMany(grpc::ServerContext* context, const v1::LaunchBatch* request,
                          v1::LaunchBatchReply* reply) override {
    if (!batches_) return Service::LaunchMany(context, request, reply);  // an earlier version
    MutexLock lock(mutex_);
    received_.batch_sizes.push_back(static_cast<size_t>(request->launches_size()));
    for (const v1::NodeLaunch& launch : request->launches()) {
      std::string* error = reply->add_errors();
      *error = Check(launch.node(), launch.launch());
      const std::string name =
          fmt::format("{}:{}", launch.node(), launch.launch().job().spec().job_id());
      if (error->empty() && refuse_once_ == name) {
        *error = "refused once";
        refuse_once_.clear();
      }
      if (error->empty()) received_.batched.push_back(name);
    }
    changed_.NotifyAll();
    return grpc::Status::OK;
  }

  void set_batches(bool batches) { batches_ = batches; }
  void RefuseOnce(const std::string& name) {
    MutexLock lock(mutex_);
    refuse_once_ = name;
  }
  // What arrived once `count` launches did (or 10 s passed).
  Received WaitFor(size_t count) {
    MutexLock lock(mutex_);
    changed_.WaitFor(mutex_, std::chrono::seconds(10), [&]() REQUIRES(mutex_) {
      return received_.single.size() + received_.batched.size() >= count;
    });
    return received_;
  }

 private:
  // The credential must open for the node it was sent to and name the job.
  std::string Check(const std::string& node, const v1::LaunchRequest& request) {
    auth::Settings settings;
    settings.scheme = auth::Scheme::kNone;
    auto claims = auth::OpenJobCredential(authenticator_, settings, request.credential(), node);
    if (!claims) return claims.error();
    if (claims->job_id() != request.job().spec().job_id()) return "the credential's job differs";
    return "";
  }

  auth::Authenticator& authenticator_;
  bool batches_ = true;
  Mutex mutex_;
  CondVar changed_;
  Received received_ GUARDED_BY(mutex_);
  std::string refuse_once_ GUARDED_BY(mutex_);
};

class AgentDispatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auth::Settings settings;
    settings.scheme = auth::Scheme::kNone;
    auto authenticator = auth::Create(settings, auth::Role::kDaemon);
    ASSERT_TRUE(authenticator.ok()) << authenticator.error();
    authenticator_ = std::move(*authenticator);
    agent_ = std::make_unique<RecordingAgent>(*authenticator_);
  }
  void Start(bool batches) {
    log::ChangeFlags(log::kFlagAgent, 0);  // each call in the test's output
    agent_->set_batches(batches);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(agent_.get());
    server_ = builder.BuildAndStart();
    ASSERT_TRUE(server_ && port > 0);
    ConfigLoad load = LoadClusterConfigText(
        fmt::format("ClusterName=dispatch\nAuthType=auth/none\n"
                    "NodeName=n[1-8] NodeAddr=127.0.0.1 Port={} CPUs=2 RealMemory=1000\n"
                    "PartitionName=p Nodes=ALL Default=YES\n",
                    port));
    ASSERT_TRUE(load.ok()) << load.ErrorText();
    cluster_ = std::make_shared<const ClusterConfig>(std::move(load.config));
    auth::Settings settings;
    settings.scheme = auth::Scheme::kNone;
    dispatcher_ = std::make_unique<AgentDispatcher>(cluster_, *authenticator_, settings);
  }
  void TearDown() override {
    dispatcher_.reset();
    log::ChangeFlags(0, log::kFlagAgent);
    if (server_) server_->Shutdown(std::chrono::system_clock::now());
  }
  // A job on nodes n1..nNODES (indexes 0..nodes-1), as the engine hands it over.
  void LaunchJob(uint64_t id, int nodes) {
    auto job = std::make_shared<Job>();
    job->spec.job_id = id;
    job->spec.uid = 1000;
    job->spec.gid = 1000;
    for (int i = 0; i < nodes; ++i) {
      sched::NodeAllocation part;
      part.node = i;
      job->allocation.nodes.push_back(part);
    }
    dispatcher_->Launch(drover::ctld::Launch{id, job}, "#!/bin/sh\ntrue\n", {});
  }
  static std::vector<std::string> Names(uint64_t job, int nodes) {
    std::vector<std::string> names;
    for (int i = 1; i <= nodes; ++i) names.push_back(fmt::format("n{}:{}", i, job));
    return names;
  }

  std::unique_ptr<auth::Authenticator> authenticator_;
  std::unique_ptr<RecordingAgent> agent_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<const ClusterConfig> cluster_;
  std::unique_ptr<AgentDispatcher> dispatcher_;
};

TEST_F(AgentDispatchTest, AJobsLaunchesForOneAgentGoInOneCallInTheirOrder) {
  Start(/*batches=*/true);
  LaunchJob(7, 8);
  Received got = agent_->WaitFor(8);
  EXPECT_TRUE(got.single.empty()) << fmt::format("{}", fmt::join(got.single, " "));
  EXPECT_EQ(got.batch_sizes, std::vector<size_t>{8});
  EXPECT_EQ(got.batched, Names(7, 8));
}

TEST_F(AgentDispatchTest, AnAgentWithoutLaunchManyGetsOneCallEachFromThenOn) {
  Start(/*batches=*/false);
  LaunchJob(7, 4);
  Received got = agent_->WaitFor(4);
  std::sort(got.single.begin(), got.single.end());
  EXPECT_EQ(got.single, Names(7, 4));
  LaunchJob(8, 4);
  got = agent_->WaitFor(8);
  EXPECT_EQ(got.single.size(), 8u);
  EXPECT_TRUE(got.batched.empty());
}

TEST_F(AgentDispatchTest, ALaunchTheAgentRefusedIsTriedAgain) {
  Start(/*batches=*/true);
  agent_->RefuseOnce("n2:9");
  LaunchJob(9, 3);
  Received got = agent_->WaitFor(3);
  std::vector<std::string> all = got.batched;
  all.insert(all.end(), got.single.begin(), got.single.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, Names(9, 3));
  EXPECT_EQ(got.batch_sizes.front(), 3u);  // the first try had all three
}

}  // namespace
}  // namespace drover::ctld
