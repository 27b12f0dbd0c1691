// Diag: `sdiag` (and the REST API's /diag). The engine's counters come from the latest
// snapshot, the cycle timings from the engine loop, the agents' queue from the dispatcher and the
// RPC counts from rpc_stats.h. Any user may read them, as sdiag; `sdiag -r` (reset) is for
// operators.
#include <pwd.h>

#include <ctime>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "common/log.h"
#include "ctld/daemon/requests.h"
#include "ctld/daemon/service.h"

namespace drover::ctld {
namespace {

// The process's threads, as /proc/self/status counts them.
uint32_t ThreadCount() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Threads:", 0) == 0) return static_cast<uint32_t>(std::stoul(line.substr(8)));
  return 0;
}

std::string UserNameOf(uint32_t uid) {
  if (uid == 4294967295u) return "(other users)";
  std::vector<char> buffer(16384);
  passwd entry{}, *found = nullptr;
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found && found->pw_name)
    return found->pw_name;
  return std::to_string(uid);
}

}  // namespace

ControllerService::Reactor* ControllerService::Diag(Context* context,
                                                    const v1::DiagRequest* request,
                                                    v1::DiagReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  if (request->reset()) {
    if (!IsOperator(caller))
      return Finished(context,
                      grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "Permission denied"));
    log::Info("sdiag statistics reset by uid {}", caller.uid);
    if (rpc_stats_) rpc_stats_->Reset();
    loop_.ResetMaxCycle();
    return Finished(context, grpc::Status::OK);
  }
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  const LoopStats& stats = loop_.stats();
  reply->set_time(static_cast<int64_t>(std::time(nullptr)));
  reply->set_started(started_);
  reply->set_since(rpc_stats_ && rpc_stats_->since() ? rpc_stats_->since() : started_);
  reply->set_server_threads(ThreadCount());
  if (agents_) {
    AgentDispatcher::Load load = agents_->CurrentLoad();
    reply->set_agent_queue(load.queued);
    reply->set_agent_busy(load.busy);
    reply->set_agent_workers(load.workers);
  }
  reply->set_jobs_submitted(snapshot->submitted_total);
  reply->set_jobs_started(snapshot->started_total);
  for (const auto& [state, count] : snapshot->finished_total) {
    if (state == JobState::kCompleted)
      reply->set_jobs_completed(reply->jobs_completed() + count);
    else if (state == JobState::kCancelled)
      reply->set_jobs_canceled(reply->jobs_canceled() + count);
    else if (state != JobState::kRequeued)
      reply->set_jobs_failed(reply->jobs_failed() + count);
  }
  for (const JobPtr& job : snapshot->jobs) {
    if (job->state == JobState::kPending) reply->set_jobs_pending(reply->jobs_pending() + 1);
    if (job->state == JobState::kRunning) reply->set_jobs_running(reply->jobs_running() + 1);
  }
  reply->set_cycle_last_micros(stats.last_cycle_micros.load());
  reply->set_cycle_max_micros(stats.max_cycle_micros.load());
  reply->set_cycles(snapshot->cycles);
  reply->set_cycle_total_micros(static_cast<uint64_t>(stats.cycle_seconds.sum() * 1e6));
  reply->set_considered_total(snapshot->considered_total);
  reply->set_queue_length(snapshot->last_cycle_considered);
  reply->set_backfilled(snapshot->backfilled_total);
  if (rpc_stats_) {
    for (const RpcStats::Entry& entry : rpc_stats_->ByMethod()) {
      v1::RpcStat* stat = reply->add_by_method();
      stat->set_name(entry.name);
      stat->set_count(entry.count);
      stat->set_total_micros(entry.total_micros);
    }
    for (const RpcStats::Entry& entry : rpc_stats_->ByUser()) {
      v1::RpcStat* stat = reply->add_by_user();
      stat->set_name(UserNameOf(entry.uid));
      stat->set_uid(entry.uid);
      stat->set_count(entry.count);
      stat->set_total_micros(entry.total_micros);
    }
  }
  return Finished(context, grpc::Status::OK);
}

}  // namespace drover::ctld
