// See leadership.h.
#include "ctld/daemon/leadership.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <string_view>
#include <utility>

#include "auth/grpc_auth.h"
#include "auth/jwt.h"
#include "common/log.h"
#include "common/sd_notify.h"

namespace drover::ctld {

Result<ControllerSelf> FindSelf(const ClusterSettings& settings, const std::string& explicit_name,
                                const std::string& hostname) {
  const std::vector<ControllerHost>& hosts = settings.controller_hosts;
  auto self_of = [&](const ControllerHost& host) {
    return ControllerSelf{host.name, ControllerHostAddress(settings, host),
                          host.port ? host.port : settings.controller_port};
  };
  std::string names;
  for (const ControllerHost& host : hosts) names += (names.empty() ? "" : ", ") + host.name;
  if (!explicit_name.empty()) {
    for (const ControllerHost& host : hosts)
      if (host.name == explicit_name) return self_of(host);
    if (hosts.size() <= 1)
      return ControllerSelf{
          explicit_name, ControllerAddress(settings),
          hosts.empty() || !hosts.front().port ? settings.controller_port : hosts.front().port};
    return MakeError(
        fmt::format("--name {}: slurm.conf has no SlurmctldHost line of that name "
                    "(its lines: {})",
                    explicit_name, names));
  }
  const std::string short_name = hostname.substr(0, hostname.find('.'));
  for (const ControllerHost& host : hosts)
    if (host.name == short_name || host.name == hostname) return self_of(host);
  if (hosts.size() == 1) return self_of(hosts.front());
  if (hosts.empty())
    return ControllerSelf{short_name.empty() ? "localhost" : short_name,
                          ControllerAddress(settings), settings.controller_port};
  return MakeError(
      fmt::format("this host ({}) is none of slurm.conf's SlurmctldHost lines ({}); "
                  "start droverctld on one of them, or say which it is with --name",
                  hostname, names));
}

std::chrono::milliseconds LeaseLength(const ClusterSettings& settings) {
  return std::chrono::milliseconds(std::max<int64_t>(settings.slurmctld_timeout_seconds, 1) * 1000);
}

void StandbyService::SetLeader(std::string leader) {
  MutexLock lock(mutex_);
  leader_ = std::move(leader);
}

std::string StandbyService::Leader() {
  MutexLock lock(mutex_);
  return leader_;
}

grpc::Status StandbyService::Ping(const grpc::ServerContextBase& context, v1::PingReply* reply) {
  // A REST API ping carries a token, which the standby does not check (it serves nothing but
  // this answer): it says it is up and who leads, as it would to anyone who can reach it.
  const bool by_token = context.client_metadata().count(auth::kJwtTokenHeader) > 0;
  if (!by_token)
    if (Result<auth::Identity> identity = auth::Authenticate(context, authenticator_); !identity)
      return auth::Unauthenticated(identity.error());
  reply->set_cluster_name(cluster_name_);
  reply->set_host(name_);
  reply->set_time(static_cast<int64_t>(std::time(nullptr)));
  reply->set_standby(true);
  reply->set_leader(Leader());
  return grpc::Status::OK;
}

namespace {

// One call to a standby: Ping's request read and its reply written; any other refused at once.
class StandbyCall final : public grpc::ServerGenericBidiReactor {
 public:
  StandbyCall(StandbyService& service, grpc::GenericCallbackServerContext* context)
      : service_(service), context_(context) {
    if (context->method() != "/drover.v1.Controller/Ping") {
      const std::string leader = service.Leader();
      Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                          leader.empty()
                              ? "this controller is a standby, and none leads yet: try again"
                              : fmt::format("this controller is a standby; {} leads", leader)));
      return;
    }
    StartRead(&request_);
  }
  void OnReadDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no Ping request"));
      return;
    }
    v1::PingReply reply;
    grpc::Status status = service_.Ping(*context_, &reply);
    if (!status.ok()) {
      Finish(status);
      return;
    }
    std::string bytes = reply.SerializeAsString();
    grpc::Slice slice(bytes);
    reply_ = grpc::ByteBuffer(&slice, 1);
    StartWriteAndFinish(&reply_, grpc::WriteOptions(), grpc::Status::OK);
  }
  void OnDone() override { delete this; }

 private:
  StandbyService& service_;
  grpc::GenericCallbackServerContext* context_;
  grpc::ByteBuffer request_, reply_;
};

}  // namespace

grpc::ServerGenericBidiReactor* StandbyService::CreateReactor(
    grpc::GenericCallbackServerContext* context) {
  return new StandbyCall(*this, context);
}

Result<std::optional<std::unique_ptr<Leadership>>> Leadership::Wait(
    const ClusterConfig& cluster, const ControllerSelf& self, const std::string& conninfo,
    const std::string& listen, std::shared_ptr<grpc::ServerCredentials> credentials,
    auth::Authenticator& authenticator, const std::atomic<bool>& stopping, int& port) {
  const std::chrono::milliseconds length = LeaseLength(cluster.settings);
  // A standby looks ten times a lease (at most every 2 s, at least every 100 ms).
  const auto look = std::clamp<std::chrono::milliseconds>(
      length / 10, std::chrono::milliseconds(100), std::chrono::seconds(2));
  StandbyService standby(cluster.settings.cluster_name, self.name, authenticator);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, credentials, &port);
  builder.RegisterCallbackGenericService(&standby);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0)
    return MakeError(
        fmt::format("cannot listen on {}; is another controller running here?", listen));
  // Started, as far as systemd is concerned (Type=notify): a standby may wait for days.
  NotifySystemd(fmt::format("READY=1\nSTATUS=standby {}: waiting for the leader lease", self.name));
  std::unique_ptr<LeaderLease> lease;
  std::string said;  // the last thing logged, so each is logged once
  auto say = [&](log::Level level, const std::string& text) {
    if (text == said) return;
    said = text;
    level == log::Level::kInfo ? log::Info("{}", text) : log::Error("{}", text);
  };
  while (!stopping) {
    if (!lease) {
      auto opened = OpenLeaderLease(conninfo, self.name, self.address, length);
      if (opened) {
        lease = std::move(*opened);
      } else {
        say(log::Level::kError, opened.error() + "; trying again every second");
        std::this_thread::sleep_for(std::chrono::seconds(1));
        continue;
      }
    }
    Result<std::optional<int64_t>> term = lease->TryAcquire();
    if (term && *term) {
      server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
      server->Wait();
      log::Info("{} leads the cluster now (term {})", self.name, **term);
      return std::optional<std::unique_ptr<Leadership>>(
          std::unique_ptr<Leadership>(new Leadership(std::move(lease), **term, length)));
    }
    if (!term) {
      say(log::Level::kError, term.error() + "; trying again");
    } else if (Result<LeaseState> state = lease->Read(); state) {
      standby.SetLeader(state->holder);
      say(log::Level::kInfo,
          state->holder.empty()
              ? std::string("standby: no controller leads; taking over")
              : fmt::format("standby: {} ({}) leads, term {}; taking over when its lease of {} "
                            "s (SlurmctldTimeout) runs out",
                            state->holder, state->address, state->term, length.count() / 1000));
    }
    std::this_thread::sleep_for(look);
  }
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  return std::optional<std::unique_ptr<Leadership>>();
}

Leadership::~Leadership() {
  {
    MutexLock lock(mutex_);
    stop_ = true;
  }
  wake_.NotifyAll();
  if (renewer_.joinable()) renewer_.join();
}

void Leadership::StartRenewing() {
  renewer_ = std::thread([this] {
    using Clock = std::chrono::steady_clock;
    auto renewed = Clock::now();
    bool failing = false;
    while (true) {
      {
        MutexLock lock(mutex_);
        if (wake_.WaitFor(mutex_, length_ / 4, [&]() REQUIRES(mutex_) { return stop_; })) return;
      }
      Result<bool> kept = lease_->Renew(term_);
      if (kept && *kept) {
        if (failing) log::Info("the leader lease is renewed again (term {})", term_);
        failing = false;
        renewed = Clock::now();
        continue;
      }
      if (kept) {
        log::Error(
            "another controller took the leader lease (term {} is over); stopping at once: "
            "nothing this controller acknowledged is lost, and it writes nothing more",
            term_);
        std::_Exit(1);
      }
      if (!failing) log::Error("cannot renew the leader lease: {}", kept.error());
      failing = true;
      if (Clock::now() - renewed >= length_) {
        log::Error(
            "the leader lease could not be renewed for a whole lease ({} ms); another "
            "controller may lead by now: stopping",
            length_.count());
        std::_Exit(1);
      }
    }
  });
}

void Leadership::Release(const std::string& to) {
  {
    MutexLock lock(mutex_);
    stop_ = true;
  }
  wake_.NotifyAll();
  if (renewer_.joinable()) renewer_.join();
  if (Status released = lease_->Release(term_, to); !released)
    log::Warning("could not hand the leader lease back: {}; a standby takes over when it runs out",
                 released.error());
}

}  // namespace drover::ctld
