// The engine thread and its group commit; see engine_loop.h.
#include "ctld/daemon/engine_loop.h"

#include <fmt/format.h>
#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "common/hostlist.h"
#include "common/log.h"
#include "ctld/records.h"
#include "wire/accounting_codec.h"

namespace drover::ctld {
namespace {

// The accounting table's key for a QOS's usage: the prefix, then its name.
constexpr std::string_view kQosUsagePrefix = "qos_usage\n";

template <typename T>
concept HasToken = requires(T event) {
  event.token;
};

}  // namespace

EngineLoop::EngineLoop(std::shared_ptr<const ClusterConfig> cluster, std::unique_ptr<Store> store,
                       const Clock& clock, EffectSink& sink, EngineLoopOptions options)
    : store_(std::move(store)),
      clock_(clock),
      sink_(sink),
      options_(options),
      engine_(std::move(cluster), clock) {
  snapshot_ = engine_.Publish();
}

EngineLoop::~EngineLoop() {
  Stop();
}

// scontrol's partition changes, applied over slurm.conf before the jobs that may use them.
Status EngineLoop::RestorePartitions() {
  auto rows = store_->Load("partitions");
  if (!rows) return std::move(rows).take_error();
  std::map<std::string, PartitionOverride> overrides;
  for (const auto& [name, value] : *rows) {
    v1::PartitionOverride record;
    if (!record.ParseFromString(value))
      return MakeError(fmt::format("partition record {} in the store cannot be read", name));
    overrides[name] = PartitionOverride{
        {record.settings().begin(), record.settings().end()}, record.created(), record.deleted()};
  }
  for (const std::string& problem : engine_.RestorePartitions(std::move(overrides)))
    log::Warning("{}", problem);
  return OkStatus();
}

Status EngineLoop::Restore() {
  if (Status partitions = RestorePartitions(); !partitions) return partitions;
  const ClusterConfig& cluster = engine_.cluster();
  auto rows = store_->Load("jobs");
  if (!rows) return std::move(rows).take_error();
  std::vector<Job> jobs;
  std::vector<uint64_t> ids;
  for (const auto& [key, value] : *rows) {
    v1::Job record;
    if (!record.ParseFromString(value))
      return MakeError(fmt::format("job record {} in the store cannot be read", key));
    auto job = FromProto(record, cluster);
    if (!job) return std::move(job).take_error();
    ids.push_back(job->spec.job_id);
    jobs.push_back(std::move(*job));
  }
  auto meta = store_->Get("meta", "next_job_id");
  if (!meta) return std::move(meta).take_error();
  uint64_t next = *meta ? std::strtoull((*meta)->c_str(), nullptr, 10) : 0;
  engine_.Restore(std::move(jobs), next);
  EngineOutput restored;
  restored.republished_jobs = std::move(ids);
  Records(restored);  // encodes the records for ListJobs; writes nothing
  auto nodes = store_->Load("nodes");
  if (!nodes) return std::move(nodes).take_error();
  for (const auto& [name, value] : *nodes) {
    v1::NodeStatus record;
    int index = cluster.FindNode(name);
    if (index >= 0 && record.ParseFromString(value)) engine_.RestoreNode(index, FromProto(record));
  }
  auto reservations = store_->Load("reservations");
  if (!reservations) return std::move(reservations).take_error();
  for (const auto& [name, value] : *reservations) {
    v1::Reservation record;
    if (!record.ParseFromString(value))
      return MakeError(fmt::format("reservation {} in the store cannot be read", name));
    auto reservation = FromProto(record, cluster);
    if (!reservation) return std::move(reservation).take_error();
    engine_.RestoreReservation(std::move(*reservation));
  }
  // Accounting before usage: the usage goes to the associations it builds.
  auto accounting = store_->Get("accounting", "database");
  if (!accounting) return std::move(accounting).take_error();
  if (*accounting) {
    v1::AccountingDatabase record;
    if (!record.ParseFromString(**accounting))
      return MakeError("the accounting database in the store cannot be read");
    auto database = wire::FromProto(record);
    if (!database)
      return MakeError(fmt::format("the accounting database in the store: {}", database.error()));
    engine_.RestoreAccounting(std::move(*database));
  }
  auto usage = store_->Load("usage");
  if (!usage) return std::move(usage).take_error();
  for (const auto& [key, value] : *usage) {
    size_t split = key.find('\n');
    if (split != std::string::npos)
      engine_.RestoreUsage(key.substr(0, split), key.substr(split + 1), value);
  }
  // The QOS's usage and the last PriorityUsageResetPeriod reset live with the accounting.
  auto kept = store_->Load("accounting");
  if (!kept) return std::move(kept).take_error();
  for (const auto& [key, value] : *kept) {
    if (key.starts_with(kQosUsagePrefix))
      engine_.RestoreQosUsage(key.substr(kQosUsagePrefix.size()), value);
    if (key == "usage_reset") engine_.RestoreUsageReset(std::atoll(value.c_str()));
  }
  MutexLock lock(mutex_);
  snapshot_ = engine_.Publish();
  return OkStatus();
}

void EngineLoop::Start() {
  commit_thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "ctld-commit");
    RunCommits();
  });
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "ctld-engine");
    Run();
  });
}

void EngineLoop::Stop() {
  {
    MutexLock lock(mutex_);
    stop_ = true;
  }
  wake_.NotifyAll();
  if (thread_.joinable()) thread_.join();
  {
    MutexLock lock(commit_mutex_);
    commits_stop_ = true;  // after the engine thread's last batch: the queue drains first
  }
  commit_wake_.NotifyAll();
  if (commit_thread_.joinable()) commit_thread_.join();
}

namespace {

// The agents' events: never refused, or a node's report of a job's end could be lost.
bool FromAgent(const Event& event) {
  return std::holds_alternative<NodeRegistered>(event) ||
         std::holds_alternative<Heartbeat>(event) || std::holds_alternative<JobEnded>(event);
}

}  // namespace

void EngineLoop::Submit(Event event, std::function<void(const Reply&)> done) {
  {
    MutexLock lock(mutex_);
    if (queue_.size() < options_.max_queued || FromAgent(event)) {
      Enqueue(std::move(event), std::move(done));
      return;
    }
  }
  Reply busy;
  busy.ok = false;
  busy.busy = true;
  busy.error = kEngineBusy;
  done(busy);
}

void EngineLoop::Enqueue(Event event, std::function<void(const Reply&)> done) {
  uint64_t token = next_token_++;
  std::visit(
      [token](auto& e) {
        if constexpr (HasToken<decltype(e)>) e.token = token;
      },
      event);
  queue_.push_back(Request{std::move(event), token, std::move(done)});
  wake_.NotifyOne();
}

std::future<Reply> EngineLoop::Submit(Event event) {
  auto promise = std::make_shared<std::promise<Reply>>();
  std::future<Reply> reply = promise->get_future();
  Submit(std::move(event), [promise](const Reply& result) { promise->set_value(result); });
  return reply;
}

std::shared_ptr<const Snapshot> EngineLoop::snapshot() const {
  MutexLock lock(mutex_);
  return snapshot_;
}

void EngineLoop::Run() {
  int64_t next_tick = clock_.Now();
  while (true) {
    std::vector<Request> requests;
    {
      MutexLock lock(mutex_);
      wake_.WaitFor(mutex_, std::chrono::milliseconds(engine_.wants_cycle() ? 20 : 200),
                    [&]() REQUIRES(mutex_) { return stop_ || !queue_.empty(); });
      if (stop_ && queue_.empty()) return;
      while (!queue_.empty() && requests.size() < options_.max_batch) {
        requests.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    bool tick = clock_.Now() >= next_tick;
    if (tick) next_tick = clock_.Now() + options_.tick_seconds;
    bool deferred_cycle_due =
        engine_.wants_cycle() &&
        std::chrono::steady_clock::now() - last_cycle_end_ >= last_cycle_length_;
    if (!requests.empty() || tick || deferred_cycle_due) ApplyBatch(requests, tick);
  }
}

namespace {

// At debug: each cycle's length and how many jobs it started.
void LogCycle(const EngineOutput& out, std::chrono::steady_clock::duration length) {
  if (!log::Enabled(log::Level::kDebug)) return;
  auto starts = std::count_if(out.effects.begin(), out.effects.end(),
                              [](const Effect& e) { return std::holds_alternative<Launch>(e); });
  log::Debug("sched: scheduling cycle took {} usec, {} job(s) started",
             std::chrono::duration_cast<std::chrono::microseconds>(length).count(), starts);
}

// TraceJobs: each job's start and end, with its nodes.
void TraceJob(std::string_view what, uint64_t job_id, const std::vector<int>& nodes,
              const ClusterConfig& cluster) {
  if (!log::FlagSet(log::kFlagTraceJobs)) return;
  std::vector<std::string> names;
  for (int node : nodes)
    if (node >= 0 && static_cast<size_t>(node) < cluster.nodes.size())
      names.push_back(cluster.nodes[node].name);
  log::Flagged(log::kFlagTraceJobs, "TraceJobs: JobId={} {} on {}", job_id, what,
               names.empty() ? "(null)" : CompressHostlist(names));
}

}  // namespace

void EngineLoop::ApplyBatch(std::vector<Request>& requests, bool tick) {
  std::vector<Event> events;
  events.reserve(requests.size() + 1);
  // The events move into the engine (a submission's script and environment are not copied);
  // only the requests' tokens and callbacks are needed afterwards.
  for (Request& request : requests) events.push_back(std::move(request.event));
  if (tick) events.push_back(Tick{});
  auto started = std::chrono::steady_clock::now();
  bool may_schedule = started - last_cycle_end_ >= last_cycle_length_;
  EngineOutput out = engine_.Apply(std::move(events), may_schedule);
  auto seconds_since = [](std::chrono::steady_clock::time_point from) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
  };
  if (out.scheduled) {
    const double cycle = seconds_since(started);
    stats_.cycle_seconds.Observe(cycle);
    const auto micros = static_cast<uint64_t>(cycle * 1e6);
    stats_.last_cycle_micros = micros;
    stats_.last_cycle_time = static_cast<int64_t>(std::time(nullptr));
    uint64_t longest = stats_.max_cycle_micros.load();
    while (micros > longest && !stats_.max_cycle_micros.compare_exchange_weak(longest, micros)) {
    }
    uint64_t peak = stats_.peak_cycle_micros.load();
    while (micros > peak && !stats_.peak_cycle_micros.compare_exchange_weak(peak, micros)) {
    }
    last_cycle_end_ = std::chrono::steady_clock::now();
    last_cycle_length_ = last_cycle_end_ - started;
    LogCycle(out, last_cycle_length_);
  }
  Applied applied{std::move(requests), std::move(out), {}, nullptr};
  applied.records = Records(applied.out);
  applied.snapshot = engine_.Publish();
  MutexLock lock(commit_mutex_);
  commit_room_.Wait(commit_mutex_,
                    [&]() REQUIRES(commit_mutex_) { return commits_.size() < kCommitDepth; });
  commits_.push_back(std::move(applied));
  commit_wake_.NotifyOne();
}

void EngineLoop::RunCommits() {
  while (true) {
    Applied applied;
    {
      MutexLock lock(commit_mutex_);
      commit_wake_.Wait(commit_mutex_, [&]() REQUIRES(commit_mutex_) {
        return commits_stop_ || !commits_.empty();
      });
      if (commits_.empty()) return;
      applied = std::move(commits_.front());
      commits_.pop_front();
    }
    commit_room_.NotifyOne();
    Commit(applied);
  }
}

void EngineLoop::Commit(Applied& applied) {
  if (!applied.records.empty()) {
    auto commit_started = std::chrono::steady_clock::now();
    Status committed = store_->Commit(applied.records);
    stats_.commit_seconds.Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - commit_started).count());
    if (!committed) {
      // The engine has moved on but the store has not: nothing may be acknowledged, and the
      // only safe state to continue from is the store's. Stop and let the restart reload it.
      for (Request& request : applied.requests)
        request.done(
            Reply{request.token, false, "state save failed: " + committed.error(), {}, {}});
      log::At(log::Level::kFatal, "{}", committed.error());
      std::_Exit(1);
    }
  }
  ++stats_.batches;
  std::shared_ptr<const ClusterConfig> cluster = applied.snapshot->cluster;
  if (const int64_t now = std::time(nullptr); queue_history_.Due(now)) {
    QueueHistory::Sample sample;
    sample.time = now;
    for (const JobPtr& job : applied.snapshot->jobs) {
      if (job->state == JobState::kPending) ++sample.pending;
      if (job->state == JobState::kRunning) ++sample.running;
    }
    sample.cycle_micros = stats_.peak_cycle_micros.exchange(0);
    queue_history_.Record(sample);
  }
  {
    MutexLock lock(mutex_);
    snapshot_ = std::move(applied.snapshot);
  }
  CarryOut(applied.out, applied.requests, cluster);
}

WriteBatch EngineLoop::Records(const EngineOutput& out) {
  const ClusterConfig& cluster = engine_.cluster();
  WriteBatch batch;
  // Every new record is encoded once, here, for the store and for every ListJobs after it.
  v1::Job record;
  auto encode = [&](const Job& job) {
    if (!job.wire.get()) {
      record.Clear();
      ToProto(job, cluster, &record);
      job.wire.Set(std::make_shared<const std::string>(record.SerializeAsString()));
    }
    return job.wire.get();
  };
  for (uint64_t id : out.changed_jobs)
    if (const Job* job = engine_.FindJob(id))
      batch.puts.push_back({"jobs", JobKey(id), *encode(*job)});
  for (uint64_t id : out.republished_jobs)
    if (const Job* job = engine_.FindJob(id)) encode(*job);
  // A finished job leaves the live queue but stays in the history that sacct reads.
  for (const JobPtr& job : out.purged_records) {
    std::string key = JobKey(job->spec.job_id);
    batch.puts.push_back({"job_history", key, *encode(*job)});
    for (std::string& index :
         HistoryIndexKeys(job->spec.job_id, job->spec.array_job_id, job->spec.uid, job->end_time))
      batch.puts.push_back({"history_index", std::move(index), ""});
    batch.deletes.push_back({"jobs", key});
  }
  for (uint64_t id : out.dropped_scripts) batch.deletes.push_back({"scripts", JobKey(id)});
  for (uint64_t id : out.dropped_environments)
    batch.deletes.push_back({"environments", JobKey(id)});
  for (const EngineOutput::Script& script : out.new_scripts) {
    batch.puts.push_back({"scripts", JobKey(script.job_id), script.script});
    batch.puts.push_back(
        {"environments", JobKey(script.job_id), EncodeEnvironment(script.environment)});
  }
  for (int index : out.changed_nodes) {
    v1::NodeStatus node;
    ToProto(engine_.node(index), cluster.nodes[index].name, &node);
    batch.puts.push_back({"nodes", cluster.nodes[index].name, node.SerializeAsString()});
  }
  for (const std::string& name : out.changed_reservations)
    if (const Reservation* reservation = engine_.FindReservation(name)) {
      v1::Reservation encoded;
      ToProto(*reservation, cluster, &encoded);
      batch.puts.push_back({"reservations", name, encoded.SerializeAsString()});
    }
  for (const std::string& name : out.changed_partitions) {
    const PartitionOverride* change = engine_.FindPartitionOverride(name);
    if (!change) {
      batch.deletes.push_back({"partitions", name});
      continue;
    }
    v1::PartitionOverride kept;
    kept.set_name(name);
    for (const std::string& setting : change->settings) kept.add_settings(setting);
    kept.set_created(change->created);
    kept.set_deleted(change->deleted);
    batch.puts.push_back({"partitions", name, kept.SerializeAsString()});
  }
  for (const std::string& name : out.deleted_reservations)
    if (!engine_.FindReservation(name)) batch.deletes.push_back({"reservations", name});
  if (!out.changed_jobs.empty())
    batch.puts.push_back({"meta", "next_job_id", std::to_string(engine_.next_job_id())});
  if (out.changed_accounting) {
    v1::AccountingDatabase accounting;
    wire::ToProto(engine_.accounting(), &accounting);
    batch.puts.push_back({"accounting", "database", accounting.SerializeAsString()});
  }
  if (out.changed_usage) {
    for (const sched::Association& association : engine_.associations())
      if (!association.user.empty())
        batch.puts.push_back({"usage", association.account + "\n" + association.user,
                              FormatUsage(association.usage, association.used)});
    for (const sched::Qos& qos : engine_.qos())
      batch.puts.push_back(
          {"accounting", std::string(kQosUsagePrefix) + qos.name, FormatUsage(0, qos.used)});
    if (engine_.TakeUsageReset())
      batch.puts.push_back(
          {"accounting", "usage_reset", std::to_string(engine_.last_usage_reset())});
  }
  return batch;
}

void EngineLoop::CarryOut(const EngineOutput& out, std::vector<Request>& requests,
                          const std::shared_ptr<const ClusterConfig>& cluster) {
  if (out.reconfigured) sink_.Reconfigured(cluster);
  std::unordered_map<uint64_t, Reply> replies;
  for (const Effect& effect : out.effects) {
    if (const auto* reply = std::get_if<Reply>(&effect)) {
      replies[reply->token] = *reply;
    } else if (const auto* launch = std::get_if<Launch>(&effect)) {
      uint64_t script_id =
          launch->job->spec.array_job_id ? launch->job->spec.array_job_id : launch->job_id;
      auto script = store_->Get("scripts", JobKey(script_id));
      auto stored = store_->Get("environments", JobKey(script_id));
      std::vector<std::string> environment;
      if (stored.ok() && *stored) environment = DecodeEnvironment(**stored);
      std::vector<int> nodes;
      for (const auto& placed : launch->job->allocation.nodes) nodes.push_back(placed.node);
      TraceJob("started", launch->job_id, nodes, *cluster);
      sink_.Launch(*launch, script.ok() && *script ? **script : std::string(),
                   std::move(environment));
    } else if (const auto* signal = std::get_if<SignalJob>(&effect)) {
      sink_.Signal(*signal);
    } else if (const auto* terminate = std::get_if<TerminateJob>(&effect)) {
      TraceJob("terminating", terminate->job_id, terminate->nodes, *cluster);
      sink_.Terminate(*terminate);
    } else if (const auto* mail = std::get_if<MailJob>(&effect)) {
      sink_.Mail(*mail);
    } else if (const auto* reboot = std::get_if<RebootNode>(&effect)) {
      sink_.Reboot(*reboot);
    }
  }
  for (Request& request : requests) {
    auto it = replies.find(request.token);
    request.done(it != replies.end() ? it->second : Reply{request.token, true, "", {}, {}});
  }
}

}  // namespace drover::ctld
