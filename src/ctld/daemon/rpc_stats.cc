// sdiag's RPC statistics: see rpc_stats.h.
#include "ctld/daemon/rpc_stats.h"

#include <algorithm>
#include <ctime>

namespace drover::ctld {
namespace {

constexpr uint32_t kOtherUsers = 4294967295u;

class StatsInterceptor final : public grpc::experimental::Interceptor {
 public:
  StatsInterceptor(RpcStats& stats, grpc::experimental::ServerRpcInfo* info)
      : stats_(stats), info_(info) {
    stats_.Begin(info_->server_context());
  }
  ~StatsInterceptor() override { stats_.Forget(info_->server_context()); }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using Hook = grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(Hook::PRE_SEND_STATUS))
      stats_.End(info_->server_context(), info_->method() ? info_->method() : "");
    methods->Proceed();
  }

 private:
  RpcStats& stats_;
  grpc::experimental::ServerRpcInfo* info_;
};

class StatsInterceptorFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit StatsInterceptorFactory(RpcStats& stats) : stats_(stats) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new StatsInterceptor(stats_, info);
  }

 private:
  RpcStats& stats_;
};

// "/drover.v1.Controller/Submit" -> "Submit"; another service's keep its name
// ("Accounting/Show").
std::string ShortName(const std::string& method) {
  size_t slash = method.rfind('/');
  if (slash == std::string::npos) return method;
  std::string name = method.substr(slash + 1);
  size_t dot = method.rfind('.', slash);
  std::string service = method.substr(dot == std::string::npos ? 1 : dot + 1,
                                      slash - (dot == std::string::npos ? 1 : dot + 1));
  return service == "Controller" ? name : service + "/" + name;
}

}  // namespace

RpcStats::RpcStats(std::vector<std::string> methods)
    : methods_([&methods] {
        std::sort(methods.begin(), methods.end());
        return std::move(methods);
      }()) {}

void RpcStats::Begin(const void* call) {
  auto now = std::chrono::steady_clock::now();
  MutexLock lock(mutex_);
  if (since_ == 0) since_ = static_cast<int64_t>(std::time(nullptr));
  open_[call] = Open{now, std::nullopt};
}

void RpcStats::NameCaller(const void* call, uint32_t uid) {
  MutexLock lock(mutex_);
  auto it = open_.find(call);
  if (it != open_.end()) it->second.uid = uid;
}

void RpcStats::End(const void* call, const std::string& method) {
  auto now = std::chrono::steady_clock::now();
  MutexLock lock(mutex_);
  auto it = open_.find(call);
  if (it == open_.end()) return;
  uint64_t micros = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(now - it->second.started).count());
  const bool known =
      methods_.empty() || std::binary_search(methods_.begin(), methods_.end(), method);
  Totals& by_method = by_method_[known ? method : std::string("UNKNOWN")];
  ++by_method.count;
  by_method.micros += micros;
  if (it->second.uid) {
    uint32_t uid = *it->second.uid;
    if (by_user_.size() >= kMaxUsers && !by_user_.count(uid)) uid = kOtherUsers;
    Totals& by_user = by_user_[uid];
    ++by_user.count;
    by_user.micros += micros;
  }
  open_.erase(it);
}

void RpcStats::Forget(const void* call) {
  MutexLock lock(mutex_);
  open_.erase(call);
}

std::vector<RpcStats::Entry> RpcStats::ByMethod() const {
  MutexLock lock(mutex_);
  std::vector<Entry> entries;
  for (const auto& [name, totals] : by_method_) {
    auto place = std::lower_bound(methods_.begin(), methods_.end(), name);
    uint32_t id = place != methods_.end() && *place == name
                      ? static_cast<uint32_t>(place - methods_.begin()) + 1
                      : static_cast<uint32_t>(methods_.size()) + 1;
    entries.push_back(Entry{ShortName(name), id, 0, totals.count, totals.micros});
  }
  return entries;
}

std::vector<RpcStats::Entry> RpcStats::ByUser() const {
  MutexLock lock(mutex_);
  std::vector<Entry> entries;
  for (const auto& [uid, totals] : by_user_)
    entries.push_back(Entry{std::to_string(uid), 0, uid, totals.count, totals.micros});
  return entries;
}

size_t RpcStats::in_progress() const {
  MutexLock lock(mutex_);
  return open_.size();
}

int64_t RpcStats::since() const {
  MutexLock lock(mutex_);
  return since_;
}

void RpcStats::Reset() {
  MutexLock lock(mutex_);
  by_method_.clear();
  by_user_.clear();
  since_ = static_cast<int64_t>(std::time(nullptr));
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
RpcStats::InterceptorFactory() {
  return std::make_unique<StatsInterceptorFactory>(*this);
}

}  // namespace drover::ctld
