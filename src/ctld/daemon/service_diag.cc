// Diag: `sdiag` (and the REST API's /diag). The engine's counters come from the latest
// snapshot, the cycle timings from the engine loop, the agents' queue from the dispatcher and the
// RPC counts from rpc_stats.h. Any user may read them, as sdiag; `sdiag -r` (reset) is for
// operators.
#include <pwd.h>

#include <chrono>
#include <ctime>
#include <string>

#include <fmt/format.h>

#include "common/log.h"
#include "ctld/daemon/requests.h"
#include "ctld/daemon/service.h"
#include "ctld/views/jobs.h"
#include "sched/pending_reason.h"

namespace drover::ctld {
namespace {}  // namespace

void ControllerService::DiagCounts(v1::DiagReply* reply) {
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  const LoopStats& stats = loop_.stats();
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
  const ClusterConfig& cluster = *snapshot->cluster;
  auto& by_reason = *reply->mutable_pending_by_reason();
  auto& pending_by_partition = *reply->mutable_pending_by_partition();
  auto& running_by_partition = *reply->mutable_running_by_partition();
  for (const JobPtr& job : snapshot->jobs) {
    if (job->state == JobState::kPending) {
      reply->set_jobs_pending(reply->jobs_pending() + 1);
      ++by_reason[std::string(sched::PendingReasonName(job->reason))];
      ++pending_by_partition[views::PartitionLabel(*job, cluster)];
    }
    if (job->state == JobState::kRunning) {
      reply->set_jobs_running(reply->jobs_running() + 1);
      ++running_by_partition[views::PartitionLabel(*job, cluster)];
    }
  }
  reply->set_cycles(snapshot->cycles);
  reply->set_cycle_total_micros(static_cast<uint64_t>(stats.cycle_seconds.sum() * 1e6));
  reply->set_considered_total(snapshot->considered_total);
  reply->set_queue_length(snapshot->last_cycle_considered);
  reply->set_backfilled(snapshot->backfilled_total);
  reply->set_backfilled_total(snapshot->backfilled_total);
  reply->set_cycle_last_micros(stats.last_cycle_micros.load());
  reply->set_cycle_max_micros(stats.max_cycle_micros.load());
  reply->set_cycle_last_time(stats.last_cycle_time.load());
  for (const QueueHistory::Sample& sample : loop_.queue_history().Samples()) {
    v1::QueueSample* out = reply->add_queue_history();
    out->set_time(sample.time);
    out->set_pending(sample.pending);
    out->set_running(sample.running);
    out->set_cycle_micros(sample.cycle_micros);
  }
}

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
    v1::DiagReply now;
    DiagCounts(&now);
    now.clear_queue_history();
    {
      MutexLock lock(diag_mutex_);
      diag_baseline_ = now;
    }
    if (rpc_stats_) rpc_stats_->Reset();
    loop_.ResetMaxCycle();
    return Finished(context, grpc::Status::OK);
  }
  reply->set_time(static_cast<int64_t>(std::time(nullptr)));
  reply->set_started(started_);
  reply->set_since(rpc_stats_ && rpc_stats_->since() ? rpc_stats_->since() : started_);
  // The calls being served now (Slurm's "server thread count": its RPC threads at work).
  reply->set_server_threads(rpc_stats_ ? static_cast<uint32_t>(rpc_stats_->in_progress()) : 1);
  if (agents_) {
    AgentDispatcher::Load load = agents_->CurrentLoad();
    reply->set_agent_queue(load.queued);
    reply->set_agent_busy(load.busy);
    reply->set_agent_workers(load.workers);
  }
  DiagCounts(reply);
  {
    // The counts since the reset (pending and running are now's).
    MutexLock lock(diag_mutex_);
    const v1::DiagReply& base = diag_baseline_;
    auto since = [](uint64_t now, uint64_t then) { return now >= then ? now - then : now; };
    reply->set_jobs_submitted(since(reply->jobs_submitted(), base.jobs_submitted()));
    reply->set_jobs_started(since(reply->jobs_started(), base.jobs_started()));
    reply->set_jobs_completed(since(reply->jobs_completed(), base.jobs_completed()));
    reply->set_jobs_canceled(since(reply->jobs_canceled(), base.jobs_canceled()));
    reply->set_jobs_failed(since(reply->jobs_failed(), base.jobs_failed()));
    reply->set_cycles(since(reply->cycles(), base.cycles()));
    reply->set_cycle_total_micros(since(reply->cycle_total_micros(), base.cycle_total_micros()));
    reply->set_considered_total(since(reply->considered_total(), base.considered_total()));
    reply->set_backfilled(since(reply->backfilled(), base.backfilled()));
  }
  // Slurm's "Latency for 1000 calls to gettimeofday()".
  auto before = std::chrono::steady_clock::now();
  timespec clock_now{};
  for (int i = 0; i < 1000; ++i) clock_gettime(CLOCK_REALTIME, &clock_now);
  reply->set_gettimeofday_latency(
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                std::chrono::steady_clock::now() - before)
                                .count()));
  if (rpc_stats_) {
    for (const RpcStats::Entry& entry : rpc_stats_->ByMethod()) {
      v1::RpcStat* stat = reply->add_by_method();
      stat->set_name(entry.name);
      stat->set_id(entry.id);
      stat->set_count(entry.count);
      stat->set_total_micros(entry.total_micros);
    }
    for (const RpcStats::Entry& entry : rpc_stats_->ByUser()) {
      v1::RpcStat* stat = reply->add_by_user();
      stat->set_name(callers_.Of(entry.uid, 0).user);  // NSS's name (cached), else the number
      stat->set_uid(entry.uid);
      stat->set_count(entry.count);
      stat->set_total_micros(entry.total_micros);
    }
  }
  return Finished(context, grpc::Status::OK);
}

}  // namespace drover::ctld
