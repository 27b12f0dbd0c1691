// The gRPC side of authentication: a client interceptor that puts a fresh credential into
// every call's initial metadata, and the server's check of it. Minting stays off the engine:
// a server verifies in its RPC handler's thread.
#include "auth/grpc_auth.h"

#include <grpcpp/support/client_interceptor.h>

#include <chrono>
#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include "auth/tls.h"
#include "common/mutex.h"

namespace drover::auth {
namespace {

using SteadyClock = std::chrono::steady_clock;

// The first credential comes from NewChannel (so a channel that cannot authenticate fails at
// once, with the reason); it serves the first call if that call comes soon enough.
constexpr auto kFirstTokenFreshFor = std::chrono::seconds(10);

class CredentialSource {
 public:
  CredentialSource(Authenticator& authenticator, std::string first)
      : authenticator_(authenticator), first_(std::move(first)), first_made_(SteadyClock::now()) {}

  // nullopt when none can be made: the call then goes without one, and the server refuses it;
  // the reason is printed once per change, so a command or a daemon's log says why.
  std::optional<std::string> Next() EXCLUDES(mutex_) {
    {
      MutexLock lock(mutex_);
      if (first_) {
        std::optional<std::string> first = std::move(first_);
        first_.reset();
        if (SteadyClock::now() - first_made_ < kFirstTokenFreshFor) return first;
      }
    }
    auto token = authenticator_.Credential();
    if (token) return std::move(*token);
    MutexLock lock(mutex_);
    if (token.error() != last_error_) {
      last_error_ = token.error();
      fmt::print(stderr, "drover: cannot authenticate a call: {}\n", last_error_);
    }
    return std::nullopt;
  }

 private:
  Authenticator& authenticator_;
  Mutex mutex_;
  std::optional<std::string> first_ GUARDED_BY(mutex_);
  const SteadyClock::time_point first_made_;
  std::string last_error_ GUARDED_BY(mutex_);
};

class CredentialInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit CredentialInterceptor(std::shared_ptr<CredentialSource> source)
      : source_(std::move(source)) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using Hook = grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(Hook::PRE_SEND_INITIAL_METADATA)) {
      // A call that already carries a credential (made for it with the key) keeps it.
      std::multimap<std::string, std::string>* metadata = methods->GetSendInitialMetadata();
      if (metadata->find(kCredentialHeader) == metadata->end())
        if (std::optional<std::string> token = source_->Next())
          metadata->emplace(kCredentialHeader, std::move(*token));
    }
    methods->Proceed();
  }

 private:
  std::shared_ptr<CredentialSource> source_;
};

class CredentialInterceptorFactory final
    : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit CredentialInterceptorFactory(std::shared_ptr<CredentialSource> source)
      : source_(std::move(source)) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo*) override {
    return new CredentialInterceptor(source_);
  }

 private:
  std::shared_ptr<CredentialSource> source_;
};

}  // namespace

Result<std::shared_ptr<grpc::Channel>> NewChannel(const std::string& target,
                                                  const ClusterConfig& cluster,
                                                  const grpc::ChannelArguments& args,
                                                  Authenticator& authenticator) {
  auto first = authenticator.Credential();
  if (!first) return std::move(first).take_error();
  auto credentials = ChannelCredentials(cluster);
  if (!credentials) return std::move(credentials).take_error();
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> factories;
  factories.push_back(std::make_unique<CredentialInterceptorFactory>(
      std::make_shared<CredentialSource>(authenticator, std::move(*first))));
  grpc::ChannelArguments tls_args = args;
  ApplyTlsChannelArgs(cluster, tls_args);
  return grpc::experimental::CreateCustomChannelWithInterceptors(target, *credentials, tls_args,
                                                                 std::move(factories));
}

Result<Identity> Authenticate(const grpc::ServerContextBase& context,
                              Authenticator& authenticator) {
  auto [begin, end] = context.client_metadata().equal_range(kCredentialHeader);
  size_t count = size_t(std::distance(begin, end));
  if (count == 0)
    return MakeError(
        "authentication failed: the call carried no credential (a client older than this "
        "controller, or one that could not make a credential: see its error output)");
  if (count > 1)
    return MakeError(fmt::format("authentication failed: the call carried {} credentials", count));
  auto identity =
      authenticator.Verify(std::string_view(begin->second.data(), begin->second.size()));
  if (!identity) return MakeError("authentication failed: " + identity.error());
  return identity;
}

grpc::Status Unauthenticated(const std::string& why) {
  return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, why);
}

}  // namespace drover::auth
