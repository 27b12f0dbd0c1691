// The job options that steer placement: -L/--licenses against slurm.conf's Licenses=, --prefer,
// --spread-job, --batch, --gres-flags=enforce-binding and -s/--oversubscribe with the partition's
// OverSubscribe=. Each case is one pass over a cluster of a few lines.
#include <gtest/gtest.h>

#include "sched/scheduler.h"
#include "testing/sched_scenario.h"

namespace drover::sched {
namespace {

using testing::Scenario;

constexpr const char* kLicensed =
    "Licenses=fluent:3,ansys\nDefMemPerCPU=100\n"
    "NodeName=n[1-4] CPUs=8 RealMemory=8000\nPartitionName=p Nodes=ALL Default=YES\n";

TEST(Licenses, JobsWaitWithLicensesUntilEnoughAreFree) {
  Scenario s(kLicensed);
  s.Running(100, "n1").licenses = "fluent:2";
  s.Job(1).licenses = "fluent:2";        // 1 of 3 free: waits
  s.Job(2).licenses = "fluent";          // takes the last one
  s.Job(3).licenses = "fluent:1,ansys";  // none left
  s.Job(4).licenses = "ansys:1";         // another license: starts
  s.Job(5);                              // no licenses: starts
  s.Run();
  EXPECT_EQ(s.Outcome(1), "Licenses");
  EXPECT_EQ(s.Outcome(2), "n1");
  EXPECT_EQ(s.Outcome(3), "Licenses");
  EXPECT_EQ(s.Outcome(4), "n1");
  EXPECT_EQ(s.Outcome(5), "n1");
}

TEST(Licenses, FreedLicensesStartTheWaitingJob) {
  Scenario s(kLicensed);
  s.Job(1).licenses = "fluent:3";
  s.Job(2).licenses = "fluent:1";
  s.Run();
  EXPECT_EQ(s.Outcome(1), "n1");
  EXPECT_EQ(s.Outcome(2), "Licenses");
}

TEST(Licenses, SubmissionRefusesUnknownLicensesAndMoreThanTheClusterHas) {
  Scenario s(kLicensed);
  JobSpec unknown = s.Job(1);
  unknown.licenses = "matlab:1";
  EXPECT_EQ(CheckSatisfiable(s.cluster(), unknown).error(),
            "Invalid license specification (no license matlab; scontrol show licenses lists "
            "them)");
  JobSpec too_many = s.Job(2);
  too_many.licenses = "fluent:4";
  EXPECT_EQ(CheckSatisfiable(s.cluster(), too_many).error(),
            "Invalid license specification (fluent has 3 in all, the job asks for 4)");
  JobSpec malformed = s.Job(3);
  malformed.licenses = "fluent:x";
  EXPECT_TRUE(CheckSatisfiable(s.cluster(), malformed)
                  .error()
                  .starts_with("Invalid license specification ("));
  JobSpec fits = s.Job(4);
  fits.licenses = "fluent:3,ansys";
  EXPECT_TRUE(CheckSatisfiable(s.cluster(), fits).ok());
  Scenario none("NodeName=n1 CPUs=8 RealMemory=8000\nPartitionName=p Nodes=ALL Default=YES\n");
  EXPECT_TRUE(
      CheckSatisfiable(none.cluster(), fits).error().starts_with("Invalid license specification"));
}

constexpr const char* kTwoKinds =
    "DefMemPerCPU=100\n"
    "NodeName=fast[1-2] CPUs=8 RealMemory=8000 Feature=fast Weight=10\n"
    "NodeName=slow[1-2] CPUs=8 RealMemory=8000 Feature=slow Weight=1\n"
    "PartitionName=p Nodes=ALL Default=YES\n";

TEST(Prefer, PreferredFeaturesFirstThenTheConstraint) {
  Scenario s(kTwoKinds);
  s.Job(1).prefer = "fast";  // heavier nodes, but preferred
  JobSpec& both = s.Job(2);  // --prefer overrides --constraint while it can
  both.constraint = "fast|slow";
  both.prefer = "slow";
  s.Run();
  EXPECT_EQ(s.Outcome(1), "fast1");
  EXPECT_EQ(s.Outcome(2), "slow1");
}

TEST(Prefer, DroppedWhenTheJobCannotStartWithIt) {
  Scenario s(kTwoKinds);
  s.Running(100, "fast[1-2]", {}, 8);  // the preferred nodes are full
  JobSpec& job = s.Job(1);
  job.prefer = "fast";
  JobSpec& unknown = s.Job(2);  // a feature no node has: only ever a preference
  unknown.prefer = "quantum";
  s.Run();
  EXPECT_EQ(s.Outcome(1), "slow1");
  EXPECT_EQ(s.Outcome(2), "slow1");
}

TEST(SpreadJob, OneTaskPerNodeOverAsManyNodesAsItMay) {
  Scenario s(kLicensed);
  JobSpec& spread = s.Job(1);
  spread.ntasks = 4;
  spread.spread_job = true;
  JobSpec& capped = s.Job(2);  // -N 1-3
  capped.ntasks = 4;
  capped.max_nodes = 3;
  capped.spread_job = true;
  JobSpec& packed = s.Job(3);  // without it the four tasks share one node
  packed.ntasks = 4;
  s.Run();
  EXPECT_EQ(s.Outcome(1), "n[1-4]");
  for (const NodeAllocation& part : s.Started(1)->allocation.nodes)
    EXPECT_EQ(part.cores.size(), 1u);
  EXPECT_EQ(s.Outcome(2), "n[1-3]");
  EXPECT_EQ(s.Started(2)->allocation.nodes[0].cores.size(), 2u);
  EXPECT_EQ(s.Outcome(3), "n1");
}

TEST(SpreadJob, StartsOnTheNodesFreeNowWhenNotAllAre) {
  Scenario s(kLicensed);
  s.Running(100, "n[1-2]", {}, 8);
  JobSpec& spread = s.Job(1);
  spread.ntasks = 4;
  spread.spread_job = true;
  s.Run();
  EXPECT_EQ(s.Outcome(1), "n[3-4]");
  EXPECT_EQ(s.Started(1)->allocation.nodes[0].cores.size(), 2u);
}

TEST(SpreadJob, FewerMatchingNodesAreNoReasonToRefuse) {
  Scenario s(kTwoKinds);  // two fast nodes of four
  JobSpec& spread = s.Job(1);
  spread.ntasks = 4;
  spread.constraint = "fast";
  spread.spread_job = true;
  EXPECT_TRUE(CheckSatisfiable(s.cluster(), spread).ok());
  s.Run();
  EXPECT_EQ(s.Outcome(1), "fast[1-2]");
}

TEST(SpreadJob, IgnoresTheTreeTopology) {
  // Two leaves of three nodes; the m nodes weigh more.
  constexpr const char* kTree =
      "SwitchName=leaf1 Nodes=n[1-2],m1\nSwitchName=leaf2 Nodes=n[3-4],m2\n"
      "SwitchName=spine Switches=leaf[1-2]\n";
  constexpr const char* kNodes =
      "TopologyPlugin=topology/tree\nDefMemPerCPU=100\n"
      "NodeName=n[1-4] CPUs=8 RealMemory=8000 Weight=1\n"
      "NodeName=m[1-2] CPUs=8 RealMemory=8000 Weight=5\n"
      "PartitionName=p Nodes=ALL Default=YES\n";
  for (bool spread : {false, true}) {
    Scenario s(kNodes, std::nullopt, kTree);
    JobSpec& job = s.Job(1);
    job.ntasks = 3;
    job.min_nodes = spread ? 1 : 3;
    job.spread_job = spread;
    s.Run();
    // One leaf, heavier node and all; spread: the three lightest nodes, across both leaves.
    EXPECT_EQ(s.Outcome(1), spread ? "n[1-3]" : "n[1-2],m1") << spread;
  }
}

TEST(Batch, TheAllocationHoldsANodeWithTheBatchFeatures) {
  Scenario s(
      "DefMemPerCPU=100\nNodeName=a[1-3] CPUs=8 RealMemory=8000 Weight=1\n"
      "NodeName=big1 CPUs=8 RealMemory=8000 Feature=big Weight=5\n"
      "PartitionName=p Nodes=ALL Default=YES\n");
  JobSpec& two = s.Job(1);
  two.min_nodes = two.max_nodes = two.ntasks = 2;
  two.batch_features = "big";
  JobSpec& one = s.Job(2);
  one.batch_features = "big";
  JobSpec& none = s.Job(3);  // no node has it: the script runs on the first node (sbatch(1))
  none.batch_features = "huge";
  s.Job(4);
  s.Run();
  EXPECT_EQ(s.Outcome(1), "a1,big1");
  EXPECT_EQ(s.Started(1)->batch_node, s.cluster().FindNode("big1"));
  EXPECT_EQ(s.Outcome(2), "big1");
  EXPECT_EQ(s.Started(2)->batch_node, s.cluster().FindNode("big1"));
  EXPECT_EQ(s.Outcome(3), "a1");
  EXPECT_EQ(s.Started(3)->batch_node, -1);
  EXPECT_EQ(s.Started(4)->batch_node, -1);
}

// GPUs 0-3 are local to socket 0 (cores 0-7), 4-7 to socket 1 (cores 8-15).
constexpr const char* kBoundGres =
    "NodeName=g1 Name=gpu File=/dev/nvidia[0-3] Cores=0-7\n"
    "NodeName=g1 Name=gpu File=/dev/nvidia[4-7] Cores=8-15\n";
constexpr const char* kGpuNode =
    "DefMemPerCPU=100\nNodeName=g1 Sockets=2 CoresPerSocket=8 RealMemory=64000 Gres=gpu:8\n"
    "PartitionName=p Nodes=ALL Default=YES\n";

JobSpec& GpuJob(Scenario& s, uint64_t id, uint32_t gpus, uint32_t cpus, bool enforce) {
  JobSpec& job = s.Job(id);
  job.gpus_per_node = gpus;
  job.cpus_per_task = cpus;
  job.gres_flags = enforce ? "enforce-binding" : "";
  return job;
}

TEST(GresFlags, EnforceBindingTakesOnlyTheGpusLocalCores) {
  for (bool enforce : {false, true}) {
    Scenario s(kGpuNode, kBoundGres);
    s.Running(100, "g1", {4, 5, 6}, 4);  // cores 0-3 busy; GPUs 0-3 and 7 free
    GpuJob(s, 1, 1, 6, enforce);
    s.Run();
    ASSERT_NE(s.Started(1), nullptr) << enforce;
    if (!enforce) continue;
    for (int core : s.Cores(1)) {
      bool local = s.Gpus(1)[0] < 4 ? core < 8 : core >= 8;
      EXPECT_TRUE(local) << "core " << core << " is not local to GPU " << s.Gpus(1)[0];
    }
  }
}

TEST(GresFlags, EnforceBindingWaitsWhereOnlyRemoteCoresAreFree) {
  for (bool enforce : {false, true}) {
    Scenario s(kGpuNode, kBoundGres);
    // GPU 7 is free, but its socket's cores are all busy; GPUs 0-6 are taken.
    s.Running(100, "g1", {0, 1, 2, 3, 4, 5, 6}, 0).allocation.nodes[0].cores = {8,  9,  10, 11,
                                                                                12, 13, 14, 15};
    GpuJob(s, 1, 1, 2, enforce);
    s.Run();
    EXPECT_EQ(s.Outcome(1), enforce ? "Resources" : "g1") << enforce;
  }
}

TEST(GresFlags, EnforceBindingGivesEachGpuSomeOfItsCores) {
  // sbatch(1): two GPUs and one CPU wait for two GPUs on one socket rather than take GPUs
  // bound to different sockets.
  for (bool enforce : {false, true}) {
    Scenario s(kGpuNode, kBoundGres);
    s.Running(100, "g1", {0, 1, 2, 4, 5, 6}, 0);  // free: GPU 3 (socket 0), GPU 7 (socket 1)
    GpuJob(s, 1, 2, 1, enforce);
    s.Run();
    EXPECT_EQ(s.Outcome(1), enforce ? "Resources" : "g1") << enforce;
  }
  Scenario s(kGpuNode, kBoundGres);
  s.Running(100, "g1", {0, 1, 4, 5}, 0);  // free: GPUs 2, 3 (socket 0) and 6, 7 (socket 1)
  GpuJob(s, 1, 2, 2, true);
  s.Run();
  ASSERT_NE(s.Started(1), nullptr);
  EXPECT_EQ(s.Gpus(1), (std::vector<int>{2, 3}));
}

std::string OneNode(const std::string& over_subscribe) {
  return "DefMemPerCPU=100\nNodeName=n1 CPUs=4 RealMemory=8000\n"
         "PartitionName=p Nodes=ALL Default=YES OverSubscribe=" +
         over_subscribe + "\n";
}

JobSpec& CpuJob(Scenario& s, uint64_t id, uint32_t cpus, bool oversubscribe) {
  JobSpec& job = s.Job(id);
  job.ntasks = cpus;
  job.oversubscribe = oversubscribe;
  return job;
}

TEST(OverSubscribe, ForceSharesEveryJobsCoresUpToN) {
  Scenario s(OneNode("FORCE:2"));
  s.Running(100, "n1", {}, 4).partition = 0;  // all four cores, once
  CpuJob(s, 1, 4, false);                     // FORCE: shares without asking
  CpuJob(s, 2, 1, true);                      // every core is now held twice
  s.Run();
  EXPECT_EQ(s.Outcome(1), "n1");
  EXPECT_EQ(s.Cores(1), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(s.Outcome(2), "Resources");
}

TEST(OverSubscribe, IdleCoresFirstThenTheLeastShared) {
  Scenario s(OneNode("FORCE:2"));
  s.Running(100, "n1", {}, 2).partition = 0;  // cores 0 and 1
  CpuJob(s, 1, 3, false);
  s.Run();
  EXPECT_EQ(s.Cores(1), (std::vector<int>{0, 2, 3}));
}

TEST(OverSubscribe, YesSharesOnlyBetweenJobsThatAskForIt) {
  Scenario s(OneNode("YES:2"));
  RunningJob& sharing = s.Running(100, "n1", {}, 4);
  sharing.partition = 0;
  sharing.oversubscribe = true;
  CpuJob(s, 1, 1, false);  // did not ask: needs an idle core
  CpuJob(s, 2, 2, true);
  s.Run();
  EXPECT_EQ(s.Outcome(1), "Resources");
  EXPECT_EQ(s.Outcome(2), "n1");
  // A job that does not share keeps its cores to itself, even from jobs that ask.
  Scenario alone(OneNode("YES:2"));
  alone.Running(100, "n1", {}, 4).partition = 0;
  CpuJob(alone, 1, 1, true);
  alone.Run();
  EXPECT_EQ(alone.Outcome(1), "Resources");
}

TEST(OverSubscribe, NoAndExclusiveNeverShare) {
  for (const char* mode : {"NO", "FORCE:1"}) {
    Scenario s(OneNode(mode));
    RunningJob& running = s.Running(100, "n1", {}, 4);
    running.partition = 0;
    running.oversubscribe = true;
    CpuJob(s, 1, 1, true);
    s.Run();
    EXPECT_EQ(s.Outcome(1), "Resources") << mode;
  }
  Scenario s(OneNode("FORCE:4"));
  s.Running(100, "n1", {}, 1).partition = 0;
  CpuJob(s, 1, 1, false).exclusive = true;  // --exclusive: the whole node, idle
  s.Run();
  EXPECT_EQ(s.Outcome(1), "Resources");
}

}  // namespace
}  // namespace drover::sched
