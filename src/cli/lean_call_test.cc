// The lean call against a real gRPC server (grpc++, on loopback): replies, the server's errors
// with their messages, the channel's retries, a large request past HTTP/2's windows, no server,
// and a deadline.
#include "cli/lean_call.h"

#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "proto/drover.grpc.pb.h"

namespace drover::cli {
namespace {

// Submit answers by the script: "exhausted N" refuses the first N calls as busy; "invalid" fails
// with a message that needs percent-encoding; "slow" takes 3 s; anything else is accepted with
// the script's size as the job ID. The header x-test must be "yes".
class FakeController final : public v1::Controller::Service {
 public:
  grpc::Status Submit(grpc::ServerContext* context, const v1::SubmitRequest* request,
                      v1::SubmitReply* reply) override {
    ++calls;
    auto header = context->client_metadata().find("x-test");
    if (header == context->client_metadata().end() || header->second != "yes")
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "no x-test header");
    const std::string& script = request->script();
    if (script.starts_with("exhausted ") && calls <= std::stoi(script.substr(10)))
      return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "busy");
    if (script == "invalid")
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "100% wrong: naïve\nsecond line");
    if (script == "slow") std::this_thread::sleep_for(std::chrono::seconds(3));
    reply->set_job_id(script.size());
    return grpc::Status::OK;
  }
  // As many 1 KiB entries as the first job ID asks for.
  grpc::Status ListJobs(grpc::ServerContext*, const v1::JobQuery* query,
                        v1::JobList* reply) override {
    for (uint64_t i = 0; i < query->filter().job_ids(0); ++i)
      reply->add_jobs(std::string(1024, static_cast<char>('a' + i % 26)));
    return grpc::Status::OK;
  }
  std::atomic<int> calls{0};
};

class LeanCallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&service_);
    builder.SetMaxReceiveMessageSize(-1);
    builder.SetMaxSendMessageSize(-1);
    server_ = builder.BuildAndStart();
    ASSERT_NE(port_, 0);
  }
  void TearDown() override { server_->Shutdown(); }

  grpc::Status Submit(const std::string& script, v1::SubmitReply* reply, int deadline = 10,
                      int port = 0) {
    v1::SubmitRequest request;
    request.set_script(script);
    return LeanUnaryCall(
        {"127.0.0.1", port ? port : port_}, "/drover.v1.Controller/Submit", request, reply,
        [] {
          return LeanMetadata{{"x-test", "yes"}};
        },
        deadline);
  }

  FakeController service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

TEST_F(LeanCallTest, AReplyIsParsed) {
  v1::SubmitReply reply;
  grpc::Status status = Submit("#!/bin/sh\n", &reply);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(reply.job_id(), 10u);
}

TEST_F(LeanCallTest, TheServersErrorComesWithItsMessage) {
  v1::SubmitReply reply;
  grpc::Status status = Submit("invalid", &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "100% wrong: naïve\nsecond line");
  EXPECT_EQ(service_.calls, 1);  // not retried
}

TEST_F(LeanCallTest, ABusyControllerIsTriedAgainFiveTimesAtMost) {
  v1::SubmitReply reply;
  EXPECT_TRUE(Submit("exhausted 2", &reply).ok());
  EXPECT_EQ(service_.calls, 3);
  service_.calls = 0;
  EXPECT_EQ(Submit("exhausted 9", &reply).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(service_.calls, 5);
}

TEST_F(LeanCallTest, ALargeRequestGoesThroughTheFlowControlWindows) {
  v1::SubmitReply reply;
  grpc::Status status = Submit(std::string(3'000'000, 'x'), &reply);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(reply.job_id(), 3'000'000u);
}

TEST_F(LeanCallTest, ALargeReplyComesWhole) {
  v1::JobQuery query;
  query.mutable_filter()->add_job_ids(40'000);  // 40 MiB
  v1::JobList list;
  grpc::Status status = LeanUnaryCall(
      {"127.0.0.1", port_}, "/drover.v1.Controller/ListJobs", query, &list,
      [] { return LeanMetadata{}; }, 30);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(list.jobs_size(), 40'000);
  EXPECT_EQ(list.jobs(39'999), std::string(1024, static_cast<char>('a' + 39'999 % 26)));
}

TEST_F(LeanCallTest, NoServerIsUnavailable) {
  // A port this process held a moment ago, so nothing listens there.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof(address);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), size), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size), 0);
  close(fd);
  v1::SubmitReply reply;
  grpc::Status status = Submit("x", &reply, 10, ntohs(address.sin_port));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(status.error_message().find("cannot connect to 127.0.0.1"), std::string::npos)
      << status.error_message();
  EXPECT_EQ(service_.calls, 0);
}

TEST_F(LeanCallTest, ASlowAnswerMeetsTheDeadline) {
  v1::SubmitReply reply;
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Submit("slow", &reply, 1).error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2500));
}

TEST(PercentDecodeTest, UndoesGrpcMessageEncoding) {
  EXPECT_EQ(PercentDecode("100%25 done%0A%c3%a9"), "100% done\né");
  EXPECT_EQ(PercentDecode("50%"), "50%");      // too short: kept
  EXPECT_EQ(PercentDecode("%zz%4"), "%zz%4");  // not hex: kept
}

}  // namespace
}  // namespace drover::cli
