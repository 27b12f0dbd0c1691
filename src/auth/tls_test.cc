// TLS on Drover's gRPC ports, end to end over loopback: a CA and certificates made with the
// openssl command for the run, a server answering the controller's Ping with ServerCredentials,
// and which clients get through: the cluster's own, not a plain one, not one trusting another
// CA, and with DroverTLSRequireClientCert only one with a certificate of the cluster's CA.
#include "auth/tls.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "proto/drover.grpc.pb.h"
#include "testing/temp_dir.h"

namespace drover::auth {
namespace {

namespace fs = std::filesystem;

// The CA and the leaf certificates: each leaf `NAME.pem`/`NAME.key`, signed by the CA `ISSUER`
// and naming SUBJECT_ALT_NAMES. These are the commands docs/security.md shows.
constexpr const char* kMakeCertificates = R"(set -e
ca() {
  openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$1.key" -out "$1.pem" -days 2 -subj "/CN=$1"
}
leaf() {  # NAME ISSUER SUBJECT_ALT_NAMES
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$1.key" -out "$1.csr" -subj "/CN=$1"
  printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$3" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -days 2 \
    -extfile "$1.ext" -out "$1.pem"
}
ca ca
ca other-ca
leaf server ca IP:127.0.0.1,DNS:localhost
leaf client ca DNS:client
leaf shared ca DNS:drover-cluster
leaf stranger other-ca DNS:client
)";

class PingOnly final : public v1::Controller::Service {
  grpc::Status Ping(grpc::ServerContext*, const v1::PingRequest*, v1::PingReply* reply) override {
    reply->set_cluster_name("tls-test");
    return grpc::Status::OK;
  }
};

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir("auth_tls_test");
    std::ofstream(dir_->path() / "make.sh") << kMakeCertificates;
    std::string command =
        fmt::format("cd '{}' && sh make.sh > make.log 2>&1", dir_->path().string());
    if (std::system(command.c_str()) != 0) {
      std::ifstream log(dir_->path() / "make.log");
      std::ostringstream text;
      text << log.rdbuf();
      make_error_ =
          "making the test certificates with openssl failed (scripts/setup installs "
          "openssl):\n" +
          text.str();
    }
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(make_error_.empty()) << make_error_; }
  void TearDown() override {
    if (server_) server_->Shutdown(std::chrono::system_clock::now());
  }

  static std::string File(const std::string& name) { return (dir_->path() / name).string(); }

  // A cluster whose host certificate is `leaf` (signed by ca.pem).
  static ClusterConfig Cluster(const std::string& leaf, bool require_client_cert = false) {
    ClusterConfig cluster;
    cluster.settings.tls = {File(leaf + ".pem"), File(leaf + ".key"), File("ca.pem"),
                            require_client_cert, ""};
    return cluster;
  }

  // Starts the Ping server on a port of 127.0.0.1 chosen now.
  void Serve(const ClusterConfig& cluster) {
    auto credentials = ServerCredentials(cluster);
    ASSERT_TRUE(credentials.ok()) << credentials.error();
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", *credentials, &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_TRUE(server_ && port_ != 0);
  }

  // Pings the server as a client of `cluster` would, dialling `host`.
  grpc::Status Ping(const ClusterConfig& cluster, const std::string& host = "127.0.0.1") {
    auto credentials = ChannelCredentials(cluster);
    EXPECT_TRUE(credentials.ok()) << credentials.error();
    if (!credentials.ok()) return grpc::Status(grpc::StatusCode::INTERNAL, credentials.error());
    return PingWith(*credentials, cluster, host);
  }

  grpc::Status PingWith(std::shared_ptr<grpc::ChannelCredentials> credentials,
                        const ClusterConfig& cluster, const std::string& host = "127.0.0.1") {
    grpc::ChannelArguments args;
    ApplyTlsChannelArgs(cluster, args);
    auto stub = v1::Controller::NewStub(
        grpc::CreateCustomChannel(fmt::format("{}:{}", host, port_), std::move(credentials), args));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::PingReply reply;
    grpc::Status status = stub->Ping(&context, v1::PingRequest(), &reply);
    if (status.ok()) {
      EXPECT_EQ(reply.cluster_name(), "tls-test");
    }
    return status;
  }

  static testing::TempDir* dir_;
  static std::string make_error_;
  PingOnly service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

testing::TempDir* TlsTest::dir_ = nullptr;
std::string TlsTest::make_error_;

TEST_F(TlsTest, WithoutTheKeysBothSidesArePlainTcp) {
  ClusterConfig plain;
  Serve(plain);
  EXPECT_TRUE(Ping(plain).ok());
  // A client that expects TLS does not talk to a plain server.
  EXPECT_FALSE(Ping(Cluster("client")).ok());
}

TEST_F(TlsTest, TheClusterCaLetsClientsIn) {
  ClusterConfig cluster = Cluster("server");
  Serve(cluster);
  grpc::Status by_address = Ping(cluster, "127.0.0.1");
  EXPECT_TRUE(by_address.ok()) << by_address.error_message();
  grpc::Status by_name = Ping(cluster, "localhost");
  EXPECT_TRUE(by_name.ok()) << by_name.error_message();
}

TEST_F(TlsTest, PlainClientsAndClientsOfAnotherCaAreRefused) {
  Serve(Cluster("server"));
  EXPECT_EQ(PingWith(grpc::InsecureChannelCredentials(), ClusterConfig()).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  ClusterConfig other = Cluster("stranger");
  other.settings.tls.ca_file = File("other-ca.pem");
  EXPECT_EQ(Ping(other).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, MutualTlsRefusesClientsWithoutTheClustersCertificate) {
  Serve(Cluster("server", /*require_client_cert=*/true));
  grpc::Status member = Ping(Cluster("client", true));
  EXPECT_TRUE(member.ok()) << member.error_message();
  // Trusts the server, but presents no certificate.
  EXPECT_EQ(Ping(Cluster("client", false)).error_code(), grpc::StatusCode::UNAVAILABLE);
  // Presents a certificate that another CA signed.
  ClusterConfig stranger = Cluster("stranger", true);
  EXPECT_EQ(Ping(stranger).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, TheCertificateMustNameTheHostDialledUnlessServerNameSaysOtherwise) {
  ClusterConfig cluster = Cluster("shared");  // names drover-cluster only
  Serve(cluster);
  EXPECT_EQ(Ping(cluster).error_code(), grpc::StatusCode::UNAVAILABLE);
  cluster.settings.tls.server_name = "drover-cluster";
  grpc::Status named = Ping(cluster);
  EXPECT_TRUE(named.ok()) << named.error_message();
  cluster.settings.tls.server_name = "someone-else";
  EXPECT_EQ(Ping(cluster).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, FilesThatCannotBeReadAreNamedWithTheirKey) {
  ClusterConfig cluster = Cluster("server");
  cluster.settings.tls.ca_file = File("missing-ca.pem");
  auto client = ChannelCredentials(cluster);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.error(), "DroverTLSCAFile=" + File("missing-ca.pem") +
                                ": cannot read it: No such file or directory (every Drover "
                                "process verifies the others against it)");

  cluster = Cluster("server");
  cluster.settings.tls.key_file = File("make.log");
  auto server = ServerCredentials(cluster);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.error(), "DroverTLSKeyFile=" + File("make.log") +
                                ": not a PEM file (no -----BEGIN line); give the path of a PEM "
                                "certificate or key");

  // Without mutual TLS a client reads only the CA: users need not read the host's key.
  cluster = Cluster("server");
  cluster.settings.tls.key_file = File("missing.key");
  EXPECT_TRUE(ChannelCredentials(cluster).ok());
  cluster.settings.tls.require_client_cert = true;
  auto mutual = ChannelCredentials(cluster);
  ASSERT_FALSE(mutual.ok());
  EXPECT_EQ(mutual.error(), "DroverTLSKeyFile=" + File("missing.key") +
                                ": cannot read it: No such file or directory (with "
                                "DroverTLSRequireClientCert=yes every client, commands included, "
                                "presents it)");
}

TEST_F(TlsTest, AnUnreadableKeySaysSo) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads through permission bits";
  std::string key = File("locked.key");
  fs::copy_file(File("server.key"), key, fs::copy_options::overwrite_existing);
  ASSERT_EQ(::chmod(key.c_str(), 0), 0);
  ClusterConfig cluster = Cluster("server");
  cluster.settings.tls.key_file = key;
  auto server = ServerCredentials(cluster);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.error(), "DroverTLSKeyFile=" + key +
                                ": cannot read it: Permission denied (the daemons present it to "
                                "their clients)");
}

}  // namespace
}  // namespace drover::auth
