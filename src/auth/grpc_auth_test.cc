// Authentication on gRPC calls: a channel from NewChannel puts a fresh credential on every
// call and the server learns the caller's uid from it; a plain channel is refused.
#include "auth/grpc_auth.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "auth/slurm_auth.h"
#include "proto/drover.grpc.pb.h"

namespace drover::auth {
namespace {

// Ping answers with the caller's proven uid in cluster_name.
class PingService final : public v1::Controller::Service {
 public:
  explicit PingService(Authenticator& authenticator) : authenticator_(authenticator) {}
  grpc::Status Ping(grpc::ServerContext* context, const v1::PingRequest*,
                    v1::PingReply* reply) override {
    auto who = Authenticate(*context, authenticator_);
    if (!who) return Unauthenticated(who.error());
    reply->set_cluster_name(std::to_string(who->uid) + ":" + std::to_string(who->gid));
    return grpc::Status::OK;
  }

 private:
  Authenticator& authenticator_;
};

class GrpcAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/drover-grpc-auth-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    Settings settings;
    settings.scheme = Scheme::kSlurm;
    settings.key_path = dir_ + "/slurm.key";
    ASSERT_TRUE(WriteKey(settings.key_path, false).ok());
    auto auth = Create(settings, Role::kDaemon);
    ASSERT_TRUE(auth.ok()) << auth.error();
    auth_ = std::move(*auth);
    service_ = std::make_unique<PingService>(*auth_);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    target_ = "127.0.0.1:" + std::to_string(port);
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
    std::filesystem::remove_all(dir_);
  }

  static grpc::Status Ping(const std::shared_ptr<grpc::Channel>& channel, v1::PingReply& reply) {
    grpc::ClientContext context;
    return v1::Controller::NewStub(channel)->Ping(&context, v1::PingRequest(), &reply);
  }

  std::string dir_, target_;
  std::unique_ptr<Authenticator> auth_;
  std::unique_ptr<PingService> service_;
  std::unique_ptr<grpc::Server> server_;
};

TEST_F(GrpcAuthTest, EveryCallCarriesAFreshCredential) {
  auto channel = NewChannel(target_, ClusterConfig{}, grpc::ChannelArguments(), *auth_);
  ASSERT_TRUE(channel.ok()) << channel.error();
  std::string me = std::to_string(geteuid()) + ":" + std::to_string(getegid());
  for (int i = 0; i < 3; ++i) {  // the same token twice would be refused as replayed
    v1::PingReply reply;
    grpc::Status status = Ping(*channel, reply);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(reply.cluster_name(), me);
  }
}

TEST_F(GrpcAuthTest, ACallWithoutACredentialIsRefused) {
  auto plain = grpc::CreateChannel(target_, grpc::InsecureChannelCredentials());
  v1::PingReply reply;
  grpc::Status status = Ping(plain, reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(status.error_message().find("authentication failed: the call carried no credential"),
            std::string::npos)
      << status.error_message();

  grpc::ClientContext context;  // a forged one
  context.AddMetadata(kCredentialHeader, "drv1.c.AAAA.AAAA");
  status = v1::Controller::NewStub(plain)->Ping(&context, v1::PingRequest(), &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(status.error_message().find("authentication failed: malformed credential"),
            std::string::npos)
      << status.error_message();
}

TEST_F(GrpcAuthTest, NewChannelFailsEarlyWhenNoCredentialCanBeMade) {
  Settings settings;
  settings.scheme = Scheme::kSlurm;
  settings.key_path = dir_ + "/absent.key";
  settings.socket = dir_ + "/absent.socket";
  auto client = Create(settings, Role::kClient);
  ASSERT_TRUE(client.ok()) << client.error();
  auto channel = NewChannel(target_, ClusterConfig{}, grpc::ChannelArguments(), **client);
  ASSERT_FALSE(channel.ok());
  EXPECT_NE(channel.error().find("start droverd or `drover authd` on this host"), std::string::npos)
      << channel.error();
}

}  // namespace
}  // namespace drover::auth
