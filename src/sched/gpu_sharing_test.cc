// GPU sharing (gres/shard, gres/mps): a job's shares come from one GPU per node, packed onto
// GPUs already shared; a GPU is given whole or shared, never both; the plan waits for every
// job sharing a GPU before it promises the GPU whole.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sched/scheduler.h"
#include "testing/sched_scenario.h"

namespace drover::sched {
namespace {

using testing::Scenario;

// Two nodes of 2 GPUs, each GPU cut into 4 shards.
constexpr const char* kShardNodes =
    "GresTypes=gpu,shard\nDefMemPerCPU=100\n"
    "NodeName=s[1-2] CPUs=8 RealMemory=8000 Gres=gpu:2,shard:8\n"
    "PartitionName=p Nodes=ALL Default=YES MaxTime=1-00:00:00\n";

JobSpec& ShardJob(Scenario& s, uint64_t id, uint64_t shards, const std::string& name = "shard",
                  int64_t limit = 0) {
  JobSpec& job = s.Job(id);
  job.other_gres.push_back({name, "", shards, {}});
  if (limit) job.time_limit_seconds = limit;
  return job;
}

// One node `one` of `gpus` GPUs with `shards` shards in all.
std::string OneNode(int gpus, int shards) {
  return fmt::format(
      "GresTypes=gpu,shard\nDefMemPerCPU=100\n"
      "NodeName=one CPUs=8 RealMemory=8000 Gres=gpu:{},shard:{}\n"
      "PartitionName=p Nodes=ALL Default=YES MaxTime=1-00:00:00\n",
      gpus, shards);
}

// A running job sharing GPU `gpu` of node `one` until `end`.
void Sharing(Scenario& s, uint64_t id, int gpu, uint32_t shares, int64_t end) {
  RunningJob& job = s.Running(id, "one", {gpu});
  job.allocation.nodes[0].shares = shares;
  job.end_time = end;
}

// Job 1, one whole GPU for an hour.
void WholeGpuJob(Scenario& s) {
  JobSpec& whole = s.Job(1);
  whole.gpus_per_node = 1;
  whole.time_limit_seconds = 3600;
}

// Where the plan starts job 1 (-1: nowhere); it must not have started.
int64_t PlannedStartOfJob1(Scenario& s, const SchedulerResult& result) {
  EXPECT_EQ(s.Started(1), nullptr);
  for (const auto& plan : result.planned)
    if (plan.job_id == 1) return plan.start_time;
  return -1;
}

TEST(GpuSharing, SharesAreSplitOverTheGpusAndPackedOntoOne) {
  Scenario s(kShardNodes);
  ASSERT_EQ(s.cluster().nodes[0].gpu_sharing, "shard");
  ASSERT_EQ(s.cluster().nodes[0].gpus[1].shares, 4u);
  ShardJob(s, 1, 2);
  ShardJob(s, 2, 2);
  ShardJob(s, 3, 3);
  s.Run();
  const StartDecision* one = s.Started(1);
  const StartDecision* two = s.Started(2);
  const StartDecision* three = s.Started(3);
  ASSERT_TRUE(one && two && three);
  // Jobs 1 and 2 fill GPU 0 of s1; job 3 (3 shards) needs another GPU: s1's GPU 1.
  EXPECT_EQ(one->allocation.nodes[0].gpus, std::vector<int>{0});
  EXPECT_EQ(one->allocation.nodes[0].shares, 2u);
  EXPECT_EQ(two->allocation.nodes[0].gpus, std::vector<int>{0});
  EXPECT_EQ(two->allocation.nodes[0].node, one->allocation.nodes[0].node);
  EXPECT_EQ(three->allocation.nodes[0].gpus, std::vector<int>{1});
  EXPECT_EQ(three->allocation.nodes[0].shares, 3u);
}

TEST(GpuSharing, AGpuIsGivenWholeOrSharedNeverBoth) {
  Scenario s(kShardNodes);
  // s1: GPU 0 shared by a running job, GPU 1 held whole; s2: both GPUs held whole.
  RunningJob& shared = s.Running(100, "s1", {0});
  shared.allocation.nodes[0].shares = 1;
  s.Running(101, "s1", {1});
  s.Running(102, "s2", {0, 1});
  JobSpec& whole = s.Job(1);
  whole.gpus_per_node = 1;
  ShardJob(s, 2, 3);  // 3 shards left on s1's GPU 0
  ShardJob(s, 3, 1);  // none left anywhere
  s.Run();
  EXPECT_EQ(s.Outcome(1), "Resources");  // the shared GPU is not free whole
  ASSERT_NE(s.Started(2), nullptr);
  EXPECT_EQ(s.Started(2)->allocation.nodes[0].gpus, std::vector<int>{0});
  EXPECT_EQ(s.Started(3), nullptr);
}

TEST(GpuSharing, MoreSharesThanAnyGpuHasIsRefusedAtSubmission) {
  Scenario s(kShardNodes);
  JobSpec& job = ShardJob(s, 1, 5);  // a GPU has 4
  Status ok = CheckSatisfiable(s.cluster(), job);
  ASSERT_FALSE(ok);
  EXPECT_NE(ok.error().find("a GPU with 5 shards"), std::string::npos) << ok.error();
  EXPECT_TRUE(CheckSatisfiable(s.cluster(), ShardJob(s, 2, 4)));
  // Nodes sharing as shard do not give MPS units.
  EXPECT_FALSE(CheckSatisfiable(s.cluster(), ShardJob(s, 3, 1, "mps")));
}

TEST(GpuSharing, TheWholeGpuJobIsPlannedOnceEveryJobSharingItHasGone) {
  // One node, one GPU of 4 shards, two sharing jobs ending at 3600 and 7200: a whole-GPU job
  // is planned at 7200, and a later sharing job is not backfilled where it would delay it.
  Scenario s(OneNode(1, 4));
  Sharing(s, 100, 0, 1, 3600);
  Sharing(s, 101, 0, 1, 7200);
  WholeGpuJob(s);
  ShardJob(s, 2, 1, "shard", 20000);  // would hold the GPU past 7200
  ShardJob(s, 3, 1, "shard", 600);    // ends long before: backfilled
  const SchedulerResult& result = s.Run();
  EXPECT_EQ(PlannedStartOfJob1(s, result), 7200);
  EXPECT_EQ(s.Started(2), nullptr);
  EXPECT_NE(s.Started(3), nullptr);
}

// Two GPUs of 4 shards, each shared by a running job: A's on GPU 0 ends at 3600, B's on GPU 1
// runs long. A whole-GPU job is planned for 3600 on GPU 0's return. A sharing job that would
// keep GPU 0 shared past 3600 is not backfilled; one that ends before then is.
TEST(GpuSharing, ABackfilledSharingJobDoesNotKeepAPromisedGpuShared) {
  Scenario s(OneNode(2, 8));
  Sharing(s, 100, 0, 2, 3600);
  Sharing(s, 101, 1, 2, 50000);
  WholeGpuJob(s);
  ShardJob(s, 2, 1, "shard", 10000);
  ShardJob(s, 3, 1, "shard", 600);
  const SchedulerResult& result = s.Run();
  EXPECT_EQ(PlannedStartOfJob1(s, result), 3600);
  EXPECT_EQ(s.Started(2), nullptr);
  EXPECT_NE(s.Started(3), nullptr);
}

// gres/nvme: whole drives, the lowest free first; none left, the job waits; more than a node
// has, it is refused at submission.
TEST(NvmeDrives, DrivesAreTheJobsAlone) {
  Scenario s(
      "GresTypes=gpu,nvme\nDefMemPerCPU=100\n"
      "NodeName=d1 CPUs=8 RealMemory=8000 Gres=nvme:2\n"
      "PartitionName=p Nodes=ALL Default=YES MaxTime=1-00:00:00\n");
  auto drives = [&](uint64_t id, uint64_t count) -> JobSpec& {
    JobSpec& job = s.Job(id);
    job.other_gres.push_back({"nvme", "", count, {}});
    return job;
  };
  s.Running(100, "d1").allocation.nodes[0].nvme = {0};
  drives(1, 1);
  drives(2, 1);
  s.Run();
  ASSERT_NE(s.Started(1), nullptr);
  EXPECT_EQ(s.Started(1)->allocation.nodes[0].nvme, std::vector<int>{1});
  EXPECT_EQ(s.Started(2), nullptr);
  Status ok = CheckSatisfiable(s.cluster(), drives(3, 3));
  ASSERT_FALSE(ok);
  EXPECT_NE(ok.error().find("3 NVMe drives"), std::string::npos) << ok.error();
}

}  // namespace
}  // namespace drover::sched
