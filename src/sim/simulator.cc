// The replay loop; see simulator.h. Each step: set the clock to the next instant, hand the
// engine that instant's submissions, job ends and (at most every tick_seconds, or when the engine
// keeps a deadline then) a Tick, all in one batch, then carry out what it asks for as emulated
// nodes would: a launch starts the job's recorded run; a termination ends the run now.
#include "sim/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <memory>
#include <queue>
#include <unordered_map>

#include "common/hostlist.h"
#include "common/text.h"
#include "ctld/engine/engine.h"
#include "sched/limits.h"
#include "sched/policy.h"

namespace drover::sim {
namespace {

// The engine's clock starts here; reports count from the trace's own zero.
constexpr int64_t kEpoch = 1'700'000'000;

constexpr const char* kSliceType = "1g";     // --gpu-sharing mig: a MIG slice
constexpr const char* kWholeType = "whole";  // and the GPUs left whole

// Whether the job uses part of one GPU only (the Alibaba trace's gpu_milli).
bool Fractional(const TraceJob& job) {
  return job.gpus == 1 && job.gpu_milli > 0 && job.gpu_milli < 1000;
}

// The cluster as --gpu-sharing cuts its GPUs: shards on every GPU, or MIG slices on the first
// GPUs of each node (whole GPUs and slices then typed apart, so that each job asks for one).
void CutGpus(ClusterConfig& cluster, const GpuSharingMode& mode) {
  if (mode.kind == GpuSharingMode::Kind::kWhole) return;
  const char* added = mode.kind == GpuSharingMode::Kind::kShard ? "shard" : nullptr;
  if (added) cluster.settings.gres_types.emplace_back(added);
  for (NodeConfig& node : cluster.nodes) {
    if (node.gpus.empty()) continue;
    std::erase_if(node.gres, [](const GresSpec& gres) { return gres.name == "gpu"; });
    if (mode.kind == GpuSharingMode::Kind::kShard) {
      node.gpu_sharing = "shard";
      for (GpuDevice& gpu : node.gpus.Mutable()) gpu.shares = mode.count;
      node.gres.push_back({"gpu", "", node.gpus.size(), {}});
      node.gres.push_back({"shard", "", mode.count * node.gpus.size(), {}});
      continue;
    }
    size_t cut = mode.count ? std::min<size_t>(mode.count, node.gpus.size())
                            : std::max<size_t>(node.gpus.size() / 2, 1);
    std::vector<GpuDevice> gpus;
    for (size_t g = 0; g < node.gpus.size(); ++g)
      for (uint32_t s = 0; s < (g < cut ? kMigSlicesPerGpu : 1); ++s) {
        GpuDevice device = node.gpus[g];
        device.type = g < cut ? kSliceType : kWholeType;
        device.index = static_cast<int>(gpus.size());
        device.links.clear();
        gpus.push_back(std::move(device));
      }
    if (cut > 0) node.gres.push_back({"gpu", kSliceType, cut * kMigSlicesPerGpu, {}});
    if (cut < node.gpus.size())
      node.gres.push_back({"gpu", kWholeType, node.gpus.size() - cut, {}});
    node.gpus = std::move(gpus);
  }
}

JobSpec SpecOf(const TraceJob& job, const ClusterConfig& cluster, const GpuSharingMode& mode) {
  JobSpec spec;
  spec.name = fmt::format("job{}", job.id);
  spec.user = job.user;
  spec.account = job.account;
  spec.uid = spec.gid = 1000;
  if (!job.partition.empty() && cluster.FindPartition(job.partition) >= 0)
    spec.partitions = {job.partition};
  spec.time_limit_seconds = std::max<int64_t>(job.limit_seconds, 1);
  spec.constraint = job.gpu_type;
  if (job.gpus > 0) {  // GPU jobs: whole GPUs on each node, the CPUs and memory beside them
    uint32_t nodes = std::max<uint32_t>(job.nodes, 1);
    spec.min_nodes = spec.max_nodes = nodes;
    spec.ntasks = nodes;
    spec.cpus_per_task = std::max<uint32_t>((job.cpus + nodes - 1) / nodes, 1);
    spec.gpus_per_node = (job.gpus + nodes - 1) / nodes;
    spec.mem_per_node_mb = job.memory_mb / nodes;
    if (mode.kind == GpuSharingMode::Kind::kShard && Fractional(job)) {
      spec.gpus_per_node = 0;
      spec.other_gres.push_back(
          {"shard",
           "",
           std::max<uint64_t>((uint64_t{job.gpu_milli} * mode.count + 999) / 1000, 1),
           {}});
    } else if (mode.kind == GpuSharingMode::Kind::kMig) {
      bool slice = Fractional(job) && job.gpu_milli * kMigSlicesPerGpu <= 1000;
      spec.gpu_type = slice ? kSliceType : kWholeType;
    }
  } else {  // processors as tasks, one core each, on as many nodes as they need
    spec.ntasks = job.cpus;
    if (job.nodes > 0) spec.min_nodes = spec.max_nodes = job.nodes;
    if (job.memory_mb > 0) spec.mem_per_cpu_mb = std::max<uint64_t>(job.memory_mb / job.cpus, 1);
  }
  return spec;
}

class Replay {
 public:
  Replay(const ClusterConfig& cluster, const Trace& trace, const SimOptions& options)
      : trace_(trace), options_(options), config_(std::make_shared<ClusterConfig>(cluster)) {
    // Emulated nodes send no heartbeats; the whole trace may queue at once.
    config_->settings.slurmd_timeout_seconds = 0;
    config_->settings.max_job_count =
        std::max<uint64_t>(config_->settings.max_job_count, trace.jobs.size() + 1);
    // A job that ended is recorded after its step; it must not be purged within it.
    config_->settings.min_job_age_seconds =
        std::max<int64_t>(config_->settings.min_job_age_seconds, 1);
    if (options.priority) config_->settings.priority = *options.priority;
    for (const NodeConfig& node : config_->nodes) {
      result_.total_cores +=
          static_cast<uint64_t>(node.cores() * std::max(node.threads_per_core, 1));
      result_.total_gpus += node.gpus.size();
    }
    CutGpus(*config_, options.gpu_sharing);
    result_.gpu_sharing = options.gpu_sharing.Name();
    ctld::EngineOptions engine_options;
    engine_options.policy = options.policy;
    engine_options.check_kept_pool = options.check_kept_pool;
    engine_ = std::make_unique<ctld::Engine>(std::shared_ptr<const ClusterConfig>(config_), clock_,
                                             engine_options);
    if (options.accounts) engine_->RestoreAccounting(*options.accounts);
    min_interval_ = ctld::MinCycleInterval(engine_options, *config_);
    result_.trace = trace.name;
    result_.policy =
        std::string(sched::PolicyName(sched::PolicyFor(config_->settings, options.policy).kind));
    result_.priority =
        config_->settings.priority == PriorityType::kMultifactor ? "multifactor" : "basic";
    result_.skipped = trace.skipped;
  }

  Result<SimResult> Run();

 private:
  enum class Kind { kEnd, kDeadline, kWake };
  struct Pending {
    int64_t time;
    uint64_t sequence;
    Kind kind;
    uint64_t job;
    uint32_t run;  // the engine's restart count of the run it ends
    bool operator>(const Pending& other) const {
      return std::tie(time, sequence) > std::tie(other.time, other.sequence);
    }
  };
  struct Running {
    uint32_t run;
    int64_t start;
    uint32_t cores, gpus;  // GPU devices
    double gpu_worth;      // as whole GPUs (shards and slices are parts of one)
    std::string first_node;
  };

  void Later(int64_t time, Kind kind, uint64_t job, uint32_t run) {
    queue_.push({time, next_sequence_++, kind, job, run});
  }
  void Step(int64_t now, std::vector<ctld::Event>& events);
  void CarryOut(const ctld::EngineOutput& out, int64_t now);
  void Launched(const ctld::Launch& launch, int64_t now);
  void RunEnded(uint64_t job, int64_t now);
  void Settle(uint64_t job, int64_t now);  // records a job that reached its final state
  void AccountFragmentation(int64_t until);

  const Trace& trace_;
  const SimOptions& options_;
  std::shared_ptr<ClusterConfig> config_;
  ctld::ManualClock clock_{kEpoch};
  std::unique_ptr<ctld::Engine> engine_;
  SimResult result_;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> queue_;
  uint64_t next_sequence_ = 0;
  std::unordered_map<uint64_t, size_t> record_of_;  // engine job ID -> result_.jobs index
  std::unordered_map<uint64_t, size_t> trace_of_;   // engine job ID -> trace_.jobs index
  std::vector<size_t> token_job_;                   // submission token - 1 -> trace index
  std::unordered_map<uint64_t, Running> running_;
  uint64_t cores_in_use_ = 0;
  double gpus_in_use_ = 0;  // as whole GPUs
  int64_t last_tick_ = INT64_MIN / 2;
  int64_t min_interval_ = 0;    // between two scheduling cycles
  int64_t measured_until_ = 0;  // fragmentation is accounted up to here
  bool head_blocked_ = false;
};

void Replay::Launched(const ctld::Launch& launch, int64_t now) {
  const ctld::Job& job = *launch.job;
  sched::JobUsage usage = sched::UsageOf(*config_, job.allocation);
  Running run{job.restart_count, now, static_cast<uint32_t>(usage.cpus), 0, 0, ""};
  std::vector<std::string> names;
  for (const sched::NodeAllocation& part : job.allocation.nodes) {
    const NodeConfig& node = config_->nodes[part.node];
    run.gpus += static_cast<uint32_t>(part.gpus.size());
    names.push_back(node.name);
    for (int index : part.gpus) {
      auto found = std::find_if(node.gpus.begin(), node.gpus.end(),
                                [&](const GpuDevice& gpu) { return gpu.index == index; });
      if (found == node.gpus.end()) continue;
      const GpuDevice& gpu = *found;
      run.gpu_worth += part.shares && gpu.shares ? static_cast<double>(part.shares) / gpu.shares
                       : gpu.type == kSliceType  ? 1.0 / kMigSlicesPerGpu
                                                 : 1.0;
    }
  }
  run.first_node = config_->nodes[job.allocation.nodes.front().node].name;
  JobRecord& record = result_.jobs[record_of_.at(launch.job_id)];
  if (record.start < 0) record.start = now;
  record.cpus = run.cores;
  record.gpus = run.gpus;
  record.nodes = static_cast<uint32_t>(job.allocation.nodes.size());
  record.node_list = CompressHostlist(names);
  cores_in_use_ += run.cores;
  gpus_in_use_ += run.gpu_worth;
  const TraceJob& traced = trace_.jobs[trace_of_.at(launch.job_id)];
  int64_t over_minutes = config_->settings.over_time_limit_minutes;
  bool never_killed = over_minutes >= kUnlimitedSeconds / 60;  // OverTimeLimit=UNLIMITED
  if (traced.run_seconds <= job.time_limit_seconds || never_killed) {
    Later(now + traced.run_seconds, Kind::kEnd, launch.job_id, run.run);
  } else {  // the engine ends it at its limit (plus OverTimeLimit): be there then
    Later(job.end_time - kEpoch + over_minutes * 60, Kind::kDeadline, launch.job_id, run.run);
  }
  running_[launch.job_id] = std::move(run);
}

// The emulated node saw its job's processes end (as told, or as recorded): the run is over.
void Replay::RunEnded(uint64_t job, int64_t now) {
  auto it = running_.find(job);
  if (it == running_.end()) return;
  JobRecord& record = result_.jobs[record_of_.at(job)];
  double seconds = static_cast<double>(now - it->second.start);
  record.core_seconds += seconds * it->second.cores;
  record.gpu_seconds += seconds * it->second.gpu_worth;
  record.run_seconds = now - it->second.start;
  cores_in_use_ -= it->second.cores;
  gpus_in_use_ -= it->second.gpu_worth;
  running_.erase(it);
}

void Replay::Settle(uint64_t job, int64_t now) {
  const ctld::Job* current = engine_->FindJob(job);
  if (!current || !ctld::IsFinal(current->state)) return;
  JobRecord& record = result_.jobs[record_of_.at(job)];
  if (record.end >= 0) return;
  record.end = now;
  record.state = current->state;
  record.restarts = current->restart_count;
  for (const ctld::JobRun& run : current->history)
    record.preemptions += run.state == ctld::JobState::kPreempted;
  record.preemptions += current->state == ctld::JobState::kPreempted;
}

void Replay::CarryOut(const ctld::EngineOutput& out, int64_t now) {
  std::vector<uint64_t> touched;
  for (const ctld::Effect& effect : out.effects) {
    if (const auto* reply = std::get_if<ctld::Reply>(&effect)) {
      if (reply->token == 0 || reply->token > token_job_.size()) continue;
      size_t traced = token_job_[reply->token - 1];
      if (!reply->ok) {  // by the reason, without the job's own numbers in parentheses
        ++result_
              .skipped["refused at submission: " + reply->error.substr(0, reply->error.find(" ("))];
        continue;
      }
      const TraceJob& submitted = trace_.jobs[traced];
      result_.fractional_gpu_jobs +=
          submitted.gpus > 0 && submitted.gpu_milli > 0 && submitted.gpu_milli < 1000;
      uint64_t id = reply->job_ids.front();
      trace_of_[id] = traced;
      record_of_[id] = result_.jobs.size();
      JobRecord& record = result_.jobs.emplace_back();
      record.trace_id = trace_.jobs[traced].id;
      record.user = trace_.jobs[traced].user;
      record.account = trace_.jobs[traced].account;
      record.submit = trace_.jobs[traced].submit_time;
    } else if (const auto* launch = std::get_if<ctld::Launch>(&effect)) {
      Launched(*launch, now);
    } else if (const auto* terminate = std::get_if<ctld::TerminateJob>(&effect)) {
      const ctld::Job* job = engine_->FindJob(terminate->job_id);
      auto run = running_.find(terminate->job_id);
      if (!job || run == running_.end()) continue;
      if (job->state == ctld::JobState::kRunning && job->restart_count == run->second.run) {
        // Cancelled or over its limit: the engine waits for the report, which comes at once.
        Later(now, Kind::kEnd, terminate->job_id, run->second.run);
      } else {  // requeued or ended already: the processes are gone now
        RunEnded(terminate->job_id, now);
        touched.push_back(terminate->job_id);
      }
    } else if (const auto* signal = std::get_if<ctld::SignalJob>(&effect)) {
      // A preemption notice: the engine ends the job when its grace time is over.
      const ctld::Job* job = engine_->FindJob(signal->job_id);
      if (job && job->preempted_at && signal->signal != SIGCONT)
        Later(job->preempt_deadline - kEpoch, Kind::kDeadline, signal->job_id, job->restart_count);
    }
  }
  for (uint64_t job : touched) Settle(job, now);
}

void Replay::AccountFragmentation(int64_t until) {
  if (head_blocked_ && until > measured_until_) {
    double seconds = static_cast<double>(until - measured_until_);
    result_.fragmented_gpu_seconds +=
        seconds * std::max(static_cast<double>(result_.total_gpus) - gpus_in_use_, 0.0);
    result_.fragmented_core_seconds +=
        seconds * static_cast<double>(result_.total_cores - cores_in_use_);
  }
  measured_until_ = std::max(measured_until_, until);
}

void Replay::Step(int64_t now, std::vector<ctld::Event>& events) {
  auto started = std::chrono::steady_clock::now();
  ctld::EngineOutput out = engine_->Apply(std::move(events));
  if (out.scheduled) {
    ++result_.cycles;
    if (options_.timing) {
      double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
              .count();
      result_.cycle_ms_total += ms;
      result_.cycle_ms_max = std::max(result_.cycle_ms_max, ms);
    }
  }
  CarryOut(out, now);
  // A cycle the engine put off (SchedulerParameters=sched_min_interval) runs when the interval
  // is over, whether or not anything else happens then.
  if (engine_->wants_cycle() && min_interval_ > 0)
    Later(std::max(engine_->earliest_cycle() - kEpoch, now + 1), Kind::kWake, 0, 0);
  // Whether the queue's head waits for resources now: what is free then is fragmentation.
  head_blocked_ = false;
  for (const sched::PriorityFactors& factors : *engine_->priorities()) {
    const ctld::Job* job = engine_->FindJob(factors.job_id);
    if (!job || job->state != ctld::JobState::kPending) continue;
    head_blocked_ = job->reason == sched::PendingReason::kResources;
    break;
  }
}

Result<SimResult> Replay::Run() {
  auto wall_started = std::chrono::steady_clock::now();
  const std::vector<TraceJob>& jobs = trace_.jobs;
  result_.first_submit = jobs.empty() ? 0 : jobs.front().submit_time;
  // The nodes register before the trace begins, far enough ahead that the first submission's
  // cycle is not put off by a minimum interval.
  int64_t registered = result_.first_submit - min_interval_ - 1;
  clock_.Set(kEpoch + registered);
  std::vector<ctld::Event> events;
  for (const NodeConfig& node : config_->nodes)
    events.push_back(ctld::NodeRegistered{node.name, {}});
  Step(registered, events);
  measured_until_ = result_.first_submit;
  size_t next = 0;
  token_job_.reserve(jobs.size());
  while (next < jobs.size() || !queue_.empty()) {
    int64_t now = INT64_MAX;
    if (next < jobs.size()) now = jobs[next].submit_time;
    if (!queue_.empty()) now = std::min(now, queue_.top().time);
    AccountFragmentation(now);
    clock_.Set(kEpoch + now);
    events.clear();
    bool tick = now - last_tick_ >= options_.tick_seconds;
    std::vector<uint64_t> ended;
    while (!queue_.empty() && queue_.top().time == now) {
      Pending due = queue_.top();
      queue_.pop();
      if (due.kind == Kind::kWake) continue;  // the engine runs its due cycle in this step
      auto run = running_.find(due.job);
      if (run == running_.end() || run->second.run != due.run) continue;  // that run is over
      if (due.kind == Kind::kDeadline) {
        tick = true;
        continue;
      }
      ctld::JobEnded end;
      end.job_id = due.job;
      end.node = run->second.first_node;
      end.restart_count = due.run;
      events.push_back(std::move(end));
      ended.push_back(due.job);
    }
    // Jobs that end now end before time passes: one whose run was exactly its limit completed
    // (as on a real node, where it exits before it is killed).
    if (tick) {
      events.push_back(ctld::Tick{});
      last_tick_ = now;
    }
    for (; next < jobs.size() && jobs[next].submit_time == now; ++next) {
      token_job_.push_back(next);
      events.push_back(ctld::SubmitJob{token_job_.size(), ctld::Caller{1000, 1000, false},
                                       SpecOf(jobs[next], *config_, options_.gpu_sharing), "", ""});
    }
    for (uint64_t job : ended) RunEnded(job, now);
    Step(now, events);
    for (uint64_t job : ended) Settle(job, now);
    result_.last_event = now;
  }
  result_.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_started).count();
  result_.timed = options_.timing;
  return std::move(result_);
}

}  // namespace

std::string GpuSharingMode::Name() const {
  switch (kind) {
    case Kind::kShard:
      return fmt::format("shard:{}", count);
    case Kind::kMig:
      return count ? fmt::format("mig:{}", count) : "mig";
    case Kind::kWhole:
      break;
  }
  return "whole";
}

Result<GpuSharingMode> ParseGpuSharing(std::string_view text) {
  GpuSharingMode mode;
  std::string_view name = text.substr(0, text.find(':'));
  std::optional<uint64_t> count;
  if (name.size() < text.size()) {
    count = ParseUint64(text.substr(name.size() + 1));
    if (!count || *count == 0 || *count > 1024) count = 0;
  }
  auto bad = [&] {
    return MakeError(fmt::format(
        "--gpu-sharing wants whole, shard[:SHARDS_PER_GPU] or mig[:MIG_GPUS_PER_NODE] (counts "
        "1 to 1024), not '{}'",
        text));
  };
  if (count && *count == 0) return bad();
  if (name == "whole" && !count) return mode;
  if (name == "shard") {
    mode.kind = GpuSharingMode::Kind::kShard;
    mode.count = static_cast<uint32_t>(count.value_or(kDefaultShardsPerGpu));
    return mode;
  }
  if (name == "mig") {
    mode.kind = GpuSharingMode::Kind::kMig;
    mode.count = static_cast<uint32_t>(count.value_or(0));  // 0: half of each node's, at least 1
    return mode;
  }
  return bad();
}

Result<SimResult> Simulate(const ClusterConfig& cluster, const Trace& trace,
                           const SimOptions& options) {
  if (cluster.nodes.empty()) return MakeError("the cluster has no nodes");
  if (cluster.DefaultPartition() < 0 && cluster.partitions.empty())
    return MakeError("the cluster has no partition to run the trace in");
  // Jobs the cluster can never run are left out and counted, as the trace's own bad lines are.
  Trace fitting;
  fitting.name = trace.name;
  fitting.skipped = trace.skipped;
  uint64_t total_cpus = 0;
  for (const NodeConfig& node : cluster.nodes) total_cpus += node.cpus;
  for (const TraceJob& job : trace.jobs) {
    if (job.cpus > total_cpus) {
      ++fitting.skipped["more processors than the cluster has"];
      continue;
    }
    fitting.jobs.push_back(job);
  }
  // The rest the controller itself refuses at submission, as it would a user's (the replay
  // counts them by its reason).
  Replay replay(cluster, fitting, options);
  return replay.Run();
}

}  // namespace drover::sim
