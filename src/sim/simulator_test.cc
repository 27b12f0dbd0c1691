// Replays whose outcomes were worked out by hand: FCFS, EASY and conservative on a five-job
// trace where all three differ; fair share reordering; preemption with grace; topology
// placement; and reports that are byte-identical from one run to the next.
#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <sstream>

#include "sim/cluster_source.h"
#include "sim/report.h"

namespace drover::sim {
namespace {

ClusterConfig Cluster(int nodes, int leaf = 0, const std::string& extra = "",
                      const std::string& main = "", const std::string& partitions = "") {
  GeneratedCluster spec;
  spec.nodes = nodes;
  spec.cores_per_node = 1;
  spec.leaf = leaf;
  spec.extra = extra;
  spec.main_partition = main;
  spec.partitions = partitions;
  auto cluster = GenerateCluster(spec);
  EXPECT_TRUE(cluster) << cluster.error();
  return cluster ? std::move(*cluster) : ClusterConfig{};
}

// SWF lines: id submit run processors (limits are the run times), one user.
Trace Swf(const std::string& jobs) {
  std::istringstream in(jobs);
  std::ostringstream swf;
  uint64_t id, submit, run, processors;
  while (in >> id >> submit >> run >> processors)
    swf << fmt::format("{} {} -1 {} {} -1 -1 {} {} -1 1 1 1 -1 -1 -1 -1 -1\n", id, submit, run,
                       processors, processors, run);
  std::istringstream text(swf.str());
  auto trace = ReadSwf(text, "test.swf", {});
  EXPECT_TRUE(trace) << trace.error();
  return trace ? std::move(*trace) : Trace{};
}

std::vector<int64_t> Starts(const SimResult& result) {
  std::vector<int64_t> starts;
  for (const JobRecord& job : result.jobs) starts.push_back(job.start);
  return starts;
}

SimResult Replay(const ClusterConfig& cluster, const Trace& trace, SimOptions options) {
  options.timing = false;
  options.check_kept_pool = true;
  auto result = Simulate(cluster, trace, options);
  EXPECT_TRUE(result) << result.error();
  return result ? std::move(*result) : SimResult{};
}

// Four one-core nodes. Job 1 holds two until 100, job 2 one until 30. Job 3 needs all four (at
// 100, the top job). Job 4 needs two for 40 s: from 30 it fits before job 3 (n3 and n4). Job 5
// needs one for 50 s and could start at once on n4 — delaying job 4 but not job 3.
//   FCFS: 3 at 100; 4 and 5 wait behind it, both at 110.
//   EASY: only job 3 is reserved: 5 starts at 3 on n4, so 4 waits for n4, until 53.
//   conservative: job 4 is reserved at 30, so 5 may not take n4; 5 then fits nowhere before
//   job 3 (it would run into it) and starts at 110.
constexpr const char* kFiveJobs = "1 0 100 2  2 0 30 1  3 1 10 4  4 2 40 2  5 3 50 1";

TEST(Simulate, FcfsEasyAndConservativeAsWorkedOutByHand) {
  ClusterConfig cluster = Cluster(4);
  Trace trace = Swf(kFiveJobs);
  SimOptions options;
  options.priority = PriorityType::kBasic;  // submission order
  options.policy = sched::PolicyKind::kFifo;
  EXPECT_EQ(Starts(Replay(cluster, trace, options)), (std::vector<int64_t>{0, 0, 100, 110, 110}));
  options.policy = sched::PolicyKind::kEasy;
  EXPECT_EQ(Starts(Replay(cluster, trace, options)), (std::vector<int64_t>{0, 0, 100, 53, 3}));
  options.policy = sched::PolicyKind::kConservative;
  SimResult conservative = Replay(cluster, trace, options);
  EXPECT_EQ(Starts(conservative), (std::vector<int64_t>{0, 0, 100, 30, 110}));
  EXPECT_EQ(conservative.policy, "conservative");
  for (const JobRecord& job : conservative.jobs) EXPECT_EQ(job.state, ctld::JobState::kCompleted);
}

TEST(Simulate, FairShareLetsTheLessServedAccountGoFirst) {
  // One core. Account a has run for 1000 s when its second job and b's first both wait.
  Trace trace;
  trace.name = "fairshare";
  auto job = [&](uint64_t id, int64_t submit, int64_t run, const std::string& account) {
    TraceJob& j = trace.jobs.emplace_back();
    j.id = id;
    j.submit_time = submit;
    j.run_seconds = j.limit_seconds = run;
    j.user = "u" + account;
    j.account = account;
  };
  job(1, 0, 1000, "a");
  job(2, 10, 10, "a");
  job(3, 20, 10, "b");
  ClusterConfig cluster = Cluster(1);
  SimOptions options;
  options.priority = PriorityType::kBasic;
  EXPECT_EQ(Starts(Replay(cluster, trace, options)), (std::vector<int64_t>{0, 1000, 1010}));
  options.priority = PriorityType::kMultifactor;  // PriorityWeightFairshare=10000 dominates
  EXPECT_EQ(Starts(Replay(cluster, trace, options)), (std::vector<int64_t>{0, 1010, 1000}));
}

TEST(Simulate, PreemptionWithGraceRequeuesTheVictimWhichRunsAgainLater) {
  ClusterConfig cluster =
      Cluster(1, 0, "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE", "PriorityTier=10",
              "PartitionName=low Nodes=ALL PriorityTier=1 GraceTime=30 MaxTime=UNLIMITED");
  Trace trace;
  TraceJob low;
  low.id = 1;
  low.run_seconds = 1000;
  low.limit_seconds = 2000;
  low.partition = "low";
  low.user = low.account = "x";
  TraceJob high = low;
  high.id = 2;
  high.submit_time = 100;
  high.run_seconds = high.limit_seconds = 50;
  high.partition = "";  // the default partition, main, of the higher tier
  trace.jobs = {low, high};
  SimResult result = Replay(cluster, trace, {});
  ASSERT_EQ(result.jobs.size(), 2u);
  const JobRecord& victim = result.jobs[0];
  const JobRecord& preemptor = result.jobs[1];
  EXPECT_EQ(preemptor.start, 130);  // when the victim's 30 s of grace are over
  EXPECT_EQ(preemptor.end, 180);
  EXPECT_EQ(victim.start, 0);         // its first start
  EXPECT_EQ(victim.end, 180 + 1000);  // it ran again, in full, after the preemptor
  EXPECT_EQ(victim.state, ctld::JobState::kCompleted);
  EXPECT_EQ(victim.restarts, 1u);
  EXPECT_EQ(victim.preemptions, 1u);
  EXPECT_EQ(ReportJson(result)["preemptions"], 1);
}

TEST(Simulate, MultiNodeJobsLandUnderOneLeafSwitch) {
  ClusterConfig cluster = Cluster(4, 2);  // n1 n2 | n3 n4
  Trace trace = Swf("1 0 1000 1  2 1 100 2");
  SimOptions options;
  options.priority = PriorityType::kBasic;
  SimResult result = Replay(cluster, trace, options);
  EXPECT_EQ(result.jobs[0].node_list, "n00001");
  EXPECT_EQ(result.jobs[1].node_list, "n[00003-00004]");  // not n2 and n3, across the top switch
}

TEST(Simulate, CyclesPutOffByAMinimumIntervalStillRun) {
  // sched_min_interval=30 s: job 2 is submitted 5 s after job 1's cycle; its cycle comes at 30.
  ClusterConfig cluster = Cluster(2, 0, "SchedulerParameters=sched_min_interval=30000000");
  Trace trace = Swf("1 0 100 1  2 5 100 1");
  SimOptions options;
  options.priority = PriorityType::kBasic;
  EXPECT_EQ(Starts(Replay(cluster, trace, options)), (std::vector<int64_t>{0, 30}));
}

TEST(Simulate, LimitsEndJobsThatRunLongerAsTimeouts) {
  Trace trace = Swf("1 0 100 1");
  trace.jobs[0].limit_seconds = 60;
  SimResult result = Replay(Cluster(1), trace, {});
  EXPECT_EQ(result.jobs[0].state, ctld::JobState::kTimeout);
  EXPECT_EQ(result.jobs[0].end, 60);
}

TEST(Simulate, JobsTheClusterCannotRunAreSkippedAndCounted) {
  Trace trace = Swf("1 0 10 1  2 0 10 8");   // job 2 wants 8 processors of 4
  trace.jobs.push_back(trace.jobs.front());  // and one asking for GPUs no node has
  trace.jobs.back().id = 3;
  trace.jobs.back().gpus = 2;
  SimResult result = Replay(Cluster(4), trace, {});
  EXPECT_EQ(result.jobs.size(), 1u);
  EXPECT_EQ(result.skipped.at("more processors than the cluster has"), 1u);
  EXPECT_EQ(
      result.skipped.at("refused at submission: Requested node configuration is not available"),
      1u);
}

TEST(Report, FiguresOfAWorkedExample) {
  SimOptions options;
  options.priority = PriorityType::kBasic;
  options.policy = sched::PolicyKind::kEasy;
  SimResult result = Replay(Cluster(4), Swf(kFiveJobs), options);
  nlohmann::ordered_json report = ReportJson(result);
  // Ends: 100, 30, 110, 93, 53 -> makespan 110. Core-seconds 200+30+40+80+50 = 400 of 440.
  EXPECT_EQ(report["jobs"], 5);
  EXPECT_EQ(report["makespan_s"], 110);
  EXPECT_DOUBLE_EQ(report["utilization"]["cores"].get<double>(), 0.9091);
  EXPECT_TRUE(report["utilization"]["gpus"].is_null());
  // Waits 0, 0, 99, 51, 0: mean 30, median 0, p95 and p99 99.
  EXPECT_DOUBLE_EQ(report["mean_wait_s"].get<double>(), 30);
  EXPECT_EQ(report["median_wait_s"], 0);
  EXPECT_EQ(report["p95_wait_s"], 99);
  // Bounded slowdowns: 1, 1, (99 + 10) / 10 = 10.9, (51 + 40) / 40 = 2.275, 1: mean 3.235.
  EXPECT_DOUBLE_EQ(report["mean_bounded_slowdown"].get<double>(), 3.235);
  EXPECT_TRUE(report["mean_cycle_ms"].is_null());  // not timed
  for (const char* key :
       {"jobs", "makespan_s", "utilization", "mean_wait_s", "median_wait_s", "p95_wait_s",
        "mean_bounded_slowdown", "cycles", "mean_cycle_ms", "max_cycle_ms"})
    EXPECT_TRUE(report.contains(key)) << key;
}

TEST(Report, TheSameInputsGiveByteIdenticalReports) {
  ClusterConfig cluster = Cluster(4, 2);
  Trace trace = Swf("1 0 100 2  2 0 30 1  3 1 10 4  4 2 40 2  5 3 50 1  6 5 70 3  7 9 5 1");
  std::string first =
      ReportJson(Replay(cluster, trace, {})).dump(2) + JobsCsv(Replay(cluster, trace, {}));
  std::string second =
      ReportJson(Replay(cluster, trace, {})).dump(2) + JobsCsv(Replay(cluster, trace, {}));
  EXPECT_EQ(first, second);
  EXPECT_NE(ReportText(Replay(cluster, trace, {})).find("bounded slowdown"), std::string::npos);
}

}  // namespace
}  // namespace drover::sim

namespace drover::sim {
namespace {

// Four jobs that each use a tenth of a GPU for 100 s, on one node with one GPU: whole GPUs run
// them one after another; eight shards a GPU run them together (one shard each); a GPU in MIG
// mode gives each a 1g slice (seven of them), so all four run at once too.
TEST(SimGpuSharing, FractionalJobsShareTheGpuAsTheModeCutsIt) {
  GeneratedCluster spec;
  spec.nodes = 1;
  spec.cores_per_node = 8;
  spec.gpus_per_node = 1;
  auto cluster = GenerateCluster(spec);
  ASSERT_TRUE(cluster) << cluster.error();
  Trace trace;
  trace.name = "fractional";
  for (uint64_t id = 1; id <= 4; ++id) {
    TraceJob job;
    job.id = id;
    job.run_seconds = job.limit_seconds = 100;
    job.cpus = 1;
    job.gpus = 1;
    job.gpu_milli = 100;
    trace.jobs.push_back(job);
  }
  auto makespan = [&](const std::string& mode) {
    SimOptions options;
    auto parsed = ParseGpuSharing(mode);
    EXPECT_TRUE(parsed) << parsed.error();
    options.gpu_sharing = *parsed;
    SimResult result = Replay(*cluster, trace, options);
    EXPECT_EQ(result.gpu_sharing, parsed->Name());
    EXPECT_EQ(result.jobs.size(), 4u);
    int64_t last = 0;
    double gpu_seconds = 0;
    for (const JobRecord& job : result.jobs) {
      last = std::max(last, job.end);
      gpu_seconds += job.gpu_seconds;
    }
    return std::pair(last, gpu_seconds);
  };
  auto [whole_end, whole_seconds] = makespan("whole");
  EXPECT_EQ(whole_end, 400);
  EXPECT_DOUBLE_EQ(whole_seconds, 400);
  auto [shard_end, shard_seconds] = makespan("shard:8");
  EXPECT_EQ(shard_end, 100);
  EXPECT_DOUBLE_EQ(shard_seconds, 4 * 100 / 8.0);  // one shard of eight each
  auto [mig_end, mig_seconds] = makespan("mig");
  EXPECT_EQ(mig_end, 100);
  EXPECT_DOUBLE_EQ(mig_seconds, 4 * 100 / 7.0);
  for (const char* bad : {"shard:0", "mig:x", "half", "whole:2"})
    EXPECT_FALSE(ParseGpuSharing(bad)) << bad;
}

}  // namespace
}  // namespace drover::sim
