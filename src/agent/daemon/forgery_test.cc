// Forgery, table-driven over the service definitions: every RPC of the controller and of the
// agent is called with no credential, a malformed one, one signed with another key, an expired
// one and a replayed one (each refused as unauthenticated), and with a real user's credential
// and uid 0 in the request's own fields (the daemons' RPCs refused; the message's uid ignored).
// A new RPC fails this test until the table says what it expects.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <string>

#include "auth/auth.h"
#include "auth/grpc_auth.h"
#include "proto/drover.grpc.pb.h"
#include "testing/local_cluster.h"

namespace drover::agent {
namespace {

namespace fs = std::filesystem;

// Who may call each RPC once authenticated: anyone, or only the daemons (root or SlurmUser).
enum class Allowed { kAnyUser, kDaemonsOnly };
const std::map<std::string, Allowed> kControllerRpcs = {
    {"Submit", Allowed::kAnyUser},
    {"SubmitMany", Allowed::kAnyUser},
    {"Cancel", Allowed::kAnyUser},
    {"Hold", Allowed::kAnyUser},
    {"Requeue", Allowed::kAnyUser},
    {"UpdateNode", Allowed::kAnyUser},
    {"RebootNodes", Allowed::kAnyUser},
    {"ListJobs", Allowed::kAnyUser},
    {"ListNodes", Allowed::kAnyUser},
    {"History", Allowed::kAnyUser},
    {"Priorities", Allowed::kAnyUser},
    {"Shares", Allowed::kAnyUser},
    {"UpdateJob", Allowed::kAnyUser},
    {"Ping", Allowed::kAnyUser},
    {"Suspend", Allowed::kAnyUser},
    {"ListPartitions", Allowed::kAnyUser},
    {"CreateReservation", Allowed::kAnyUser},
    {"UpdateReservation", Allowed::kAnyUser},
    {"DeleteReservation", Allowed::kAnyUser},
    {"ListReservations", Allowed::kAnyUser},
    {"Top", Allowed::kAnyUser},
    {"Reconfigure", Allowed::kAnyUser},
    {"SetDebug", Allowed::kAnyUser},
    {"Takeover", Allowed::kAnyUser},
    {"Token", Allowed::kAnyUser},  // for oneself; another user's only for root and SlurmUser
    {"Diag", Allowed::kAnyUser},   // sdiag; its reset for operators only
    {"CreateStep", Allowed::kAnyUser},
    {"StepEnded", Allowed::kAnyUser},
    {"Release", Allowed::kAnyUser},
    {"JobScript", Allowed::kAnyUser},  // the owner's own script, or an operator's
    {"UpdatePartition", Allowed::kAnyUser},
    {"DeletePartition", Allowed::kAnyUser},
    {"Notify", Allowed::kAnyUser},  // the job's owner, or an operator
    {"Register", Allowed::kDaemonsOnly},
    {"Heartbeat", Allowed::kDaemonsOnly},
    {"Heartbeats", Allowed::kDaemonsOnly},
    {"JobEnded", Allowed::kDaemonsOnly},
    {"JobsEnded", Allowed::kDaemonsOnly},
};
const std::map<std::string, Allowed> kAgentRpcs = {
    {"Launch", Allowed::kDaemonsOnly},
    {"LaunchMany", Allowed::kDaemonsOnly},
    {"RunStep", Allowed::kDaemonsOnly},  // a user needs the step's credential besides
    {"Signal", Allowed::kDaemonsOnly},
    {"Terminate", Allowed::kDaemonsOnly},
    {"Reboot", Allowed::kDaemonsOnly},
    {"ListPids", Allowed::kAnyUser},      // each user sees only their own jobs' processes
    {"StepUsage", Allowed::kAnyUser},     // sstat: each user sees only their own jobs' steps
    {"WriteJobFile", Allowed::kAnyUser},  // sbcast: only into a job of the caller's here
    {"AttachStep", Allowed::kAnyUser},    // sattach: only to a step of the caller's here
    {"Notify", Allowed::kDaemonsOnly},
    {"DaemonStatus", Allowed::kAnyUser},  // scontrol show slurmd, as slurmd answers anyone
    {"Relay", Allowed::kDaemonsOnly},
};
// Operators' actions: with a user's credential they are refused whatever the message claims.
const char* const kOperatorOnly[] = {"UpdateNode",        "Suspend",           "Reconfigure",
                                     "CreateReservation", "UpdateReservation", "DeleteReservation",
                                     "RebootNodes",       "SetDebug",          "UpdatePartition",
                                     "DeletePartition",   "Takeover"};

constexpr uint32_t kUser = 4242;  // not root, not SlurmUser

const google::protobuf::ServiceDescriptor* Descriptor(const char* name) {
  return google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name);
}

class ForgeryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = std::make_unique<testing::LocalCluster>(
        testing::ClusterPaths{DROVERCTLD_PATH, DROVERD_PATH},
        "ClusterName=forgery\nNodeName=n1 NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000\n"
        "PartitionName=p Nodes=ALL Default=YES\n",
        std::vector<std::string>{"n1"});
    ASSERT_TRUE(cluster_->Boot()) << cluster_->error() << cluster_->Logs();
    ConfigLoad load = LoadClusterConfig((cluster_->dir() / "slurm.conf").string());
    auto settings = auth::SettingsOf(load.config);
    ASSERT_TRUE(settings.ok());
    settings_ = *settings;
    std::ifstream(cluster_->dir() / "ctld.port") >> controller_port_;
    std::ifstream(cluster_->dir() / "n1.port") >> agent_port_;
    ASSERT_GT(controller_port_, 0);
    ASSERT_GT(agent_port_, 0);
  }
  void TearDown() override {
    if (HasFailure() && cluster_) std::printf("%s", cluster_->Logs().c_str());
  }

  // A unary call of `service`'s `method` with an empty request and `credential` (none if
  // empty): its status.
  grpc::Status Call(int port, const std::string& service, const std::string& method,
                    const std::string& credential) {
    auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                       grpc::InsecureChannelCredentials());
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (!credential.empty()) context.AddMetadata(auth::kCredentialHeader, credential);
    if (method == "RunStep") {  // the one stream: the first message describes the step
      auto stub = v1::Agent::NewStub(channel);
      auto stream = stub->RunStep(&context);
      v1::StepInput first;
      first.mutable_launch()->mutable_job()->mutable_spec()->set_uid(0);
      first.mutable_launch()->add_argv("/bin/true");
      stream->Write(first);
      stream->WritesDone();
      v1::StepOutput output;
      while (stream->Read(&output)) {
      }
      return stream->Finish();
    }
    if (method == "AttachStep") {  // a stream too: the first message names the step
      auto stub = v1::Agent::NewStub(channel);
      auto stream = stub->AttachStep(&context);
      v1::StepAttachInput first;
      first.set_job_id(1);
      stream->Write(first);
      stream->WritesDone();
      v1::StepOutput output;
      while (stream->Read(&output)) {
      }
      return stream->Finish();
    }
    grpc::GenericStub stub(channel);
    grpc::ByteBuffer request, reply;
    grpc::Slice empty("", 0);
    request = grpc::ByteBuffer(&empty, 1);
    std::promise<grpc::Status> done;
    stub.UnaryCall(&context, "/drover.v1." + service + "/" + method, grpc::StubOptions(), &request,
                   &reply, [&done](grpc::Status status) { done.set_value(status); });
    return done.get_future().get();
  }

  std::string CredentialFor(uint32_t uid) {
    auto credential = auth::CredentialFor(settings_, {uid, uid});
    EXPECT_TRUE(credential.ok()) << credential.error();
    return credential ? *credential : "";
  }

  // Every method of `descriptor` is in `table`, and each kind of bad credential is refused.
  void CheckService(const google::protobuf::ServiceDescriptor* descriptor, int port,
                    const std::map<std::string, Allowed>& table) {
    // Another cluster's key: a credential that is well formed but not ours.
    fs::path other = cluster_->dir() / "other.key";
    ASSERT_TRUE(auth::WriteKey(other.string(), true).ok());
    auth::Settings foreign = settings_;
    foreign.key_path = other.string();
    auto foreign_credential = auth::CredentialFor(foreign, {0, 0});
    ASSERT_TRUE(foreign_credential.ok());
    auto expired = auth::CredentialFor(settings_, {0, 0}, std::time(nullptr) - 3600);
    ASSERT_TRUE(expired.ok());
    ASSERT_NE(descriptor, nullptr);
    for (int i = 0; i < descriptor->method_count(); ++i) {
      std::string method = descriptor->method(i)->name();
      SCOPED_TRACE(descriptor->name() + "/" + method);
      auto entry = table.find(method);
      ASSERT_NE(entry, table.end())
          << "a new RPC: add it to this test's table, with who may call it";
      const std::string service = descriptor->name();
      for (const std::string& bad : {std::string(), std::string("drv1.c.forged.credential"),
                                     *foreign_credential, *expired}) {
        grpc::Status status = Call(port, service, method, bad);
        EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED)
            << "credential '" << bad.substr(0, 24) << "': " << status.error_message();
      }
      // Replayed: the second use of one credential is refused, whatever the first did.
      std::string once = CredentialFor(0);
      Call(port, service, method, once);
      grpc::Status replayed = Call(port, service, method, once);
      EXPECT_EQ(replayed.error_code(), grpc::StatusCode::UNAUTHENTICATED)
          << replayed.error_message();
      // A user's credential with uid 0 in the message (its default): the daemons' RPCs refuse it.
      grpc::Status as_user = Call(port, service, method, CredentialFor(kUser));
      if (entry->second == Allowed::kDaemonsOnly)
        EXPECT_EQ(as_user.error_code(), grpc::StatusCode::PERMISSION_DENIED)
            << as_user.error_message();
      else
        EXPECT_NE(as_user.error_code(), grpc::StatusCode::UNAUTHENTICATED)
            << as_user.error_message();
    }
  }

  std::unique_ptr<testing::LocalCluster> cluster_;
  auth::Settings settings_;
  int controller_port_ = 0, agent_port_ = 0;
};

TEST_F(ForgeryTest, EveryControllerRpcRefusesForgedCredentials) {
  CheckService(Descriptor(v1::Controller::service_full_name()), controller_port_, kControllerRpcs);
}

TEST_F(ForgeryTest, EveryAgentRpcRefusesForgedCredentials) {
  CheckService(Descriptor(v1::Agent::service_full_name()), agent_port_, kAgentRpcs);
}

TEST_F(ForgeryTest, OperatorActionsIgnoreTheUidInTheMessage) {
  for (const char* method : kOperatorOnly) {
    SCOPED_TRACE(method);
    grpc::Status status = Call(controller_port_, "Controller", method, CredentialFor(kUser));
    EXPECT_FALSE(status.ok()) << "uid " << kUser << " must not be able to call " << method;
    EXPECT_NE(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
}

}  // namespace
}  // namespace drover::agent
