// The same trace through the daemon's path — droverctld's EngineLoop with its engine thread,
// group commit to a store and committed snapshots, on a manual clock — and through drover sim
// gives the same schedule: the simulator is the controller, not a model of it.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "ctld/daemon/engine_loop.h"
#include "ctld/store/store.h"
#include "sim/cluster_source.h"
#include "sim/simulator.h"

namespace drover::sim {
namespace {

using namespace std::chrono_literals;

class NoAgents : public ctld::EffectSink {
 public:
  void Launch(const ctld::Launch&, std::string, std::vector<std::string>) override {}
  void Signal(const ctld::SignalJob&) override {}
  void Terminate(const ctld::TerminateJob&) override {}
  void Reboot(const ctld::RebootNode&) override {}
};

ClusterConfig FourNodes() {
  GeneratedCluster spec;
  spec.nodes = 4;
  spec.cores_per_node = 1;
  spec.leaf = 2;
  spec.extra = "PriorityType=priority/basic";
  auto cluster = GenerateCluster(spec);
  EXPECT_TRUE(cluster) << cluster.error();
  return std::move(*cluster);
}

Trace EightJobs() {
  // id submit run processors: a mix that backfills, waits for whole leaves and reorders.
  std::istringstream in(
      "1 0 -1 100 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1\n"
      "2 0 -1 30 1 -1 -1 1 30 -1 1 1 1 -1 -1 -1 -1 -1\n"
      "3 1 -1 10 4 -1 -1 4 10 -1 1 1 1 -1 -1 -1 -1 -1\n"
      "4 2 -1 40 2 -1 -1 2 40 -1 1 1 1 -1 -1 -1 -1 -1\n"
      "5 3 -1 50 1 -1 -1 1 50 -1 1 1 1 -1 -1 -1 -1 -1\n"
      "6 5 -1 70 3 -1 -1 3 90 -1 1 1 1 -1 -1 -1 -1 -1\n"
      "7 9 -1 5 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1\n"
      "8 200 -1 20 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1\n");
  auto trace = ReadSwf(in, "eight.swf", {});
  EXPECT_TRUE(trace) << trace.error();
  return std::move(*trace);
}

// The trace through droverctld's EngineLoop on a manual clock, instant by instant as drover sim
// replays it: the jobs ending at an instant end, the jobs submitted then are submitted, the
// cycle they asked for runs, and every job that started is given its end.
class DaemonReplay {
 public:
  static constexpr int64_t kEpoch = 1'700'000'000;

  DaemonReplay(const ClusterConfig& cluster, const Trace& trace)
      : trace_(trace), config_(std::make_shared<ClusterConfig>(cluster)), clock_(kEpoch) {
    config_->settings.slurmd_timeout_seconds = 0;
    loop_ = std::make_unique<ctld::EngineLoop>(config_, std::make_unique<ctld::MemoryStore>(),
                                               clock_, agents_);
  }

  // Each trace job's start, in seconds after the trace's beginning, by trace job ID.
  std::map<uint64_t, int64_t> Run() {
    EXPECT_TRUE(loop_->Restore());
    loop_->Start();
    for (const NodeConfig& node : config_->nodes)
      loop_->Submit(ctld::NodeRegistered{node.name, {}}).get();
    while (next_ < trace_.jobs.size() || !ends_.empty()) {
      int64_t now = NextInstant();
      clock_.Set(kEpoch + now);
      uint64_t cycles = loop_->snapshot()->cycles;
      std::vector<std::future<ctld::Reply>> replies = EndJobsAt(now);
      size_t ended = replies.size();
      std::vector<size_t> submitted = SubmitJobsAt(now, replies);
      for (size_t i = 0; i < replies.size(); ++i) {
        ctld::Reply reply = replies[i].get();
        EXPECT_TRUE(reply.ok) << reply.error;
        if (i >= ended && reply.ok)
          trace_id_[reply.job_ids.front()] = trace_.jobs[submitted[i - ended]].id;
      }
      if (!AwaitCycle(cycles)) {
        ADD_FAILURE() << "no scheduling cycle at " << now;
        break;
      }
      RecordStarts(now);
    }
    loop_->Stop();
    std::map<uint64_t, int64_t> by_trace_id;
    for (const auto& [id, start] : started_) by_trace_id[trace_id_[id]] = start;
    return by_trace_id;
  }

 private:
  int64_t NextInstant() const {
    int64_t now = next_ < trace_.jobs.size() ? trace_.jobs[next_].submit_time : INT64_MAX;
    for (const auto& [id, end] : ends_) now = std::min(now, end);
    return now;
  }

  std::vector<std::future<ctld::Reply>> EndJobsAt(int64_t now) {
    std::vector<std::future<ctld::Reply>> replies;
    for (auto it = ends_.begin(); it != ends_.end();) {
      if (it->second != now) {
        ++it;
        continue;
      }
      ctld::JobEnded end;
      end.job_id = it->first;
      end.node = first_node_[it->first];
      replies.push_back(loop_->Submit(end));
      it = ends_.erase(it);
    }
    return replies;
  }

  // The trace's jobs submitted at `now`, their replies appended to `replies`; their indexes.
  std::vector<size_t> SubmitJobsAt(int64_t now, std::vector<std::future<ctld::Reply>>& replies) {
    std::vector<size_t> submitted;
    for (; next_ < trace_.jobs.size() && trace_.jobs[next_].submit_time == now; ++next_) {
      const TraceJob& job = trace_.jobs[next_];
      JobSpec spec;
      spec.name = "job" + std::to_string(job.id);
      spec.user = job.user;
      spec.account = job.account;
      spec.ntasks = job.cpus;
      spec.time_limit_seconds = job.limit_seconds;
      replies.push_back(loop_->Submit(ctld::SubmitJob{0, {1000, 1000, false}, spec, "", ""}));
      submitted.push_back(next_);
    }
    return submitted;
  }

  // The cycle these events asked for (the loop may defer it by a few milliseconds). The events
  // may be applied in more than one batch, and a cycle may run between two of them (the first
  // job of an instant considered without the second): so the loop is waited for until no cycle
  // has run for 100 ms, five times what it defers a requested one by.
  bool AwaitCycle(uint64_t cycles) const {
    for (int i = 0; i < 500 && loop_->snapshot()->cycles == cycles; ++i)
      std::this_thread::sleep_for(2ms);
    if (loop_->snapshot()->cycles == cycles) return false;
    // At most 10 s: a loop that never rests is as done as it will get.
    for (uint64_t seen = 0, i = 0; seen != loop_->snapshot()->cycles && i < 100; ++i) {
      seen = loop_->snapshot()->cycles;
      std::this_thread::sleep_for(100ms);
    }
    return true;
  }

  void RecordStarts(int64_t now) {
    for (const ctld::JobPtr& job : loop_->snapshot()->jobs) {
      uint64_t id = job->spec.job_id;
      if (job->state != ctld::JobState::kRunning || started_.count(id)) continue;
      started_[id] = now;
      first_node_[id] = config_->nodes[job->allocation.nodes.front().node].name;
      for (const TraceJob& traced : trace_.jobs)
        if (traced.id == trace_id_[id]) ends_[id] = now + traced.run_seconds;
    }
  }

  const Trace& trace_;
  std::shared_ptr<ClusterConfig> config_;
  ctld::ManualClock clock_;
  NoAgents agents_;
  std::unique_ptr<ctld::EngineLoop> loop_;
  std::map<uint64_t, uint64_t> trace_id_;       // engine job ID -> trace job
  std::map<uint64_t, int64_t> started_, ends_;  // by engine job ID
  std::map<uint64_t, std::string> first_node_;
  size_t next_ = 0;
};

TEST(DaemonReplay, TheDaemonPathSchedulesTheTraceAsDroverSimDoes) {
  ClusterConfig cluster = FourNodes();
  Trace trace = EightJobs();
  SimOptions options;
  options.timing = false;
  auto simulated = Simulate(cluster, trace, options);
  ASSERT_TRUE(simulated) << simulated.error();

  std::map<uint64_t, int64_t> started = DaemonReplay(cluster, trace).Run();
  ASSERT_EQ(simulated->jobs.size(), started.size());
  for (const JobRecord& job : simulated->jobs)
    EXPECT_EQ(started[job.trace_id], job.start) << "trace job " << job.trace_id;
}

}  // namespace
}  // namespace drover::sim
