// See tls.h. LoadClusterConfig has checked that the three files come as a set; here each process
// reads the ones it needs when it builds its credentials, so an unreadable file is reported by
// the process that needs it, naming the key and the path.
#include "auth/tls.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace drover::auth {
namespace {

// The contents of the PEM file that `key` names.
Result<std::string> ReadPem(std::string_view key, const std::string& path, std::string_view why) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return MakeError(
        fmt::format("{}={}: cannot read it: {} ({})", key, path, std::strerror(errno), why));
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().find("-----BEGIN ") == std::string::npos)
    return MakeError(
        fmt::format("{}={}: not a PEM file (no -----BEGIN line); give the path of "
                    "a PEM certificate or key",
                    key, path));
  return text.str();
}

struct TlsFiles {
  std::string cert, key, ca;
};

// The CA always; this host's certificate and key when `pair_reason` (why they are needed) is set.
Result<TlsFiles> ReadTlsFiles(const TlsSettings& tls, std::string_view pair_reason) {
  TlsFiles files;
  auto ca = ReadPem("DroverTLSCAFile", tls.ca_file,
                    "every Drover process verifies the others "
                    "against it");
  if (!ca) return std::move(ca).take_error();
  files.ca = std::move(*ca);
  if (pair_reason.empty()) return files;
  auto cert = ReadPem("DroverTLSCertFile", tls.cert_file, pair_reason);
  if (!cert) return std::move(cert).take_error();
  auto key = ReadPem("DroverTLSKeyFile", tls.key_file, pair_reason);
  if (!key) return std::move(key).take_error();
  files.cert = std::move(*cert);
  files.key = std::move(*key);
  return files;
}

}  // namespace

Result<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentials(const ClusterConfig& cluster) {
  const TlsSettings& tls = cluster.settings.tls;
  if (!tls.enabled()) return grpc::InsecureChannelCredentials();
  // A client needs its own certificate only for servers that ask for one (mutual TLS): without
  // it, commands run by users need read access to the CA alone.
  auto files = ReadTlsFiles(tls, tls.require_client_cert
                                     ? "with DroverTLSRequireClientCert=yes every client, "
                                       "commands included, presents it"
                                     : "");
  if (!files) return std::move(files).take_error();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = std::move(files->ca);
  options.pem_private_key = std::move(files->key);
  options.pem_cert_chain = std::move(files->cert);
  return grpc::SslCredentials(options);
}

Result<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(const ClusterConfig& cluster) {
  const TlsSettings& tls = cluster.settings.tls;
  if (!tls.enabled()) return grpc::InsecureServerCredentials();
  auto files = ReadTlsFiles(tls, "the daemons present it to their clients");
  if (!files) return std::move(files).take_error();
  grpc::SslServerCredentialsOptions options(
      tls.require_client_cert ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                              : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  options.pem_root_certs = std::move(files->ca);
  options.pem_key_cert_pairs.push_back({std::move(files->key), std::move(files->cert)});
  return grpc::SslServerCredentials(options);
}

void ApplyTlsChannelArgs(const ClusterConfig& cluster, grpc::ChannelArguments& args) {
  const TlsSettings& tls = cluster.settings.tls;
  if (tls.enabled() && !tls.server_name.empty()) args.SetSslTargetNameOverride(tls.server_name);
}

}  // namespace drover::auth
