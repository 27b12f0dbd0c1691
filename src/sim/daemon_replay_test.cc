// The same trace through the daemon's path — droverctld's EngineLoop with its engine thread,
// group commit to a store and committed snapshots, on a manual clock — and through drover sim
// gives the same schedule: the simulator is the controller, not a model of it.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
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

TEST(DaemonReplay, TheDaemonPathSchedulesTheTraceAsDroverSimDoes) {
  ClusterConfig cluster = FourNodes();
  Trace trace = EightJobs();
  SimOptions options;
  options.timing = false;
  auto simulated = Simulate(cluster, trace, options);
  ASSERT_TRUE(simulated) << simulated.error();

  // The daemon's engine loop, fed the same events at the same (manual) times.
  constexpr int64_t kEpoch = 1'700'000'000;
  auto config = std::make_shared<ClusterConfig>(cluster);
  config->settings.slurmd_timeout_seconds = 0;
  ctld::ManualClock clock(kEpoch);
  NoAgents agents;
  ctld::EngineLoop loop(config, std::make_unique<ctld::MemoryStore>(), clock, agents);
  ASSERT_TRUE(loop.Restore());
  loop.Start();
  for (const NodeConfig& node : config->nodes)
    loop.Submit(ctld::NodeRegistered{node.name, {}}).get();

  std::map<uint64_t, uint64_t> trace_id;      // engine job ID -> trace job
  std::map<uint64_t, int64_t> started, ends;  // by engine job ID
  std::map<uint64_t, std::string> first_node;
  size_t next = 0;
  while (next < trace.jobs.size() || !ends.empty()) {
    int64_t now = next < trace.jobs.size() ? trace.jobs[next].submit_time : INT64_MAX;
    for (const auto& [id, end] : ends) now = std::min(now, end);
    clock.Set(kEpoch + now);
    uint64_t cycles = loop.snapshot()->cycles;
    std::vector<std::future<ctld::Reply>> replies;
    for (auto it = ends.begin(); it != ends.end();) {
      if (it->second != now) {
        ++it;
        continue;
      }
      ctld::JobEnded end;
      end.job_id = it->first;
      end.node = first_node[it->first];
      replies.push_back(loop.Submit(end));
      it = ends.erase(it);
    }
    std::vector<size_t> submitted;
    for (; next < trace.jobs.size() && trace.jobs[next].submit_time == now; ++next) {
      const TraceJob& job = trace.jobs[next];
      JobSpec spec;
      spec.name = "job" + std::to_string(job.id);
      spec.user = job.user;
      spec.account = job.account;
      spec.ntasks = job.cpus;
      spec.time_limit_seconds = job.limit_seconds;
      replies.push_back(loop.Submit(ctld::SubmitJob{0, {1000, 1000, false}, spec, "", ""}));
      submitted.push_back(next);
    }
    for (size_t i = 0; i < replies.size(); ++i) {
      ctld::Reply reply = replies[i].get();
      ASSERT_TRUE(reply.ok) << reply.error;
      size_t k = i - (replies.size() - submitted.size());
      if (i >= replies.size() - submitted.size())
        trace_id[reply.job_ids.front()] = trace.jobs[submitted[k]].id;
    }
    // The cycle these events asked for (the loop may defer it by a few milliseconds).
    for (int i = 0; i < 500 && loop.snapshot()->cycles == cycles; ++i)
      std::this_thread::sleep_for(2ms);
    ASSERT_GT(loop.snapshot()->cycles, cycles) << "no scheduling cycle at " << now;
    for (const ctld::JobPtr& job : loop.snapshot()->jobs)
      if (job->state == ctld::JobState::kRunning && !started.count(job->spec.job_id)) {
        uint64_t id = job->spec.job_id;
        started[id] = now;
        first_node[id] = config->nodes[job->allocation.nodes.front().node].name;
        for (const TraceJob& traced : trace.jobs)
          if (traced.id == trace_id[id]) ends[id] = now + traced.run_seconds;
      }
  }
  loop.Stop();

  ASSERT_EQ(simulated->jobs.size(), started.size());
  for (const JobRecord& job : simulated->jobs) {
    uint64_t id = 0;
    for (const auto& [engine_id, traced] : trace_id)
      if (traced == job.trace_id) id = engine_id;
    EXPECT_EQ(started[id], job.start) << "trace job " << job.trace_id;
  }
}

}  // namespace
}  // namespace drover::sim
