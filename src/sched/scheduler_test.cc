// Scheduler scenarios: a few lines of cluster, a queue, and the decisions expected of one pass.
#include "sched/scheduler.h"

#include <gtest/gtest.h>

#include <set>

#include "testing/sched_scenario.h"

namespace drover::sched {
namespace {

using testing::Scenario;

// Four nodes, 2 sockets x 8 cores, 8 GPUs, 64 GB; one partition.
constexpr const char* kFourNodes =
    "DefMemPerCPU=1000\n"
    "NodeName=n[1-4] Sockets=2 CoresPerSocket=8 RealMemory=64000 Gres=gpu:8\n"
    "PartitionName=gpu Nodes=ALL Default=YES MaxTime=1-00:00:00 MaxNodes=3\n";

JobSpec& GpuJob(Scenario& s, uint64_t id, uint32_t nodes, uint32_t gpus_per_node) {
  JobSpec& job = s.Job(id);
  job.min_nodes = job.max_nodes = nodes;
  job.ntasks = nodes;
  job.gpus_per_node = gpus_per_node;
  return job;
}

const std::vector<int> kAllGpus = {0, 1, 2, 3, 4, 5, 6, 7};

TEST(Gang, TwoJobsFacingRoomForOneGetItAllOrNothing) {
  // The deadlock pair: two 16-GPU jobs, 16 free GPUs on two nodes. Exactly one starts; the
  // other waits for Resources and holds nothing.
  Scenario s(kFourNodes);
  s.Running(100, "n[3-4]", kAllGpus);
  GpuJob(s, 1, 2, 8);
  GpuJob(s, 2, 2, 8);
  const SchedulerResult& result = s.Run();
  EXPECT_EQ(s.Outcome(1), "n[1-2]");
  EXPECT_EQ(s.Outcome(2), "Resources");
  ASSERT_EQ(result.started.size(), 1u);
  for (const NodeAllocation& part : result.started[0].allocation.nodes)
    EXPECT_EQ(part.gpus, kAllGpus);
}

TEST(Gang, BlockedJobBlocksLowerPriorityInItsPartitionUnderFifo) {
  Scenario s(std::string("SchedulerType=sched/builtin\n") + kFourNodes);
  GpuJob(s, 1, 3, 8);
  GpuJob(s, 2, 2, 8);  // cannot fit after job 1 and blocks the partition
  GpuJob(s, 3, 1, 1);  // would fit on n4, but waits behind job 2
  s.Run();
  EXPECT_EQ(s.Outcome(1), "n[1-3]");
  EXPECT_EQ(s.Outcome(2), "Resources");
  EXPECT_EQ(s.Outcome(3), "Priority");
}

TEST(Gang, ExactCoresMemoryAndGpus) {
  Scenario s(kFourNodes);
  JobSpec& job = GpuJob(s, 1, 1, 2);
  job.ntasks = 2;
  job.cpus_per_task = 3;
  s.Run();
  const StartDecision* start = s.Started(1);
  ASSERT_NE(start, nullptr);
  const NodeAllocation& part = start->allocation.nodes[0];
  EXPECT_EQ(part.cores.size(), 6u);
  EXPECT_EQ(part.memory_mb, 6000u);  // DefMemPerCPU x CPUs
  EXPECT_EQ(part.gpus.size(), 2u);
  EXPECT_EQ(start->end_time, 1000 + 3600);
}

TEST(Gang, GpusOverSeveralNodesAreWhatTheJobAskedFor) {
  // --gpus=13 on 8-GPU nodes: two nodes, placed with 7 each, holding 7 and 6.
  Scenario s(kFourNodes);
  JobSpec& job = s.Job(1);
  job.gpus = 13;
  s.Run();
  const StartDecision* start = s.Started(1);
  ASSERT_NE(start, nullptr);
  ASSERT_EQ(start->allocation.nodes.size(), 2u);
  EXPECT_EQ(start->allocation.nodes[0].gpus.size(), 7u);
  EXPECT_EQ(start->allocation.nodes[1].gpus.size(), 6u);
}

TEST(Gang, TasksOverSeveralNodesHoldTheirCpusOnly) {
  // -n 5 -N 2: three tasks' CPUs (and DefMemPerCPU) on the first node, two on the second.
  Scenario s(kFourNodes);
  JobSpec& job = s.Job(1);
  job.min_nodes = job.max_nodes = 2;
  job.ntasks = 5;
  job.ntasks_given = true;
  s.Run();
  const StartDecision* start = s.Started(1);
  ASSERT_NE(start, nullptr);
  ASSERT_EQ(start->allocation.nodes.size(), 2u);
  EXPECT_EQ(start->allocation.nodes[0].cores.size(), 3u);
  EXPECT_EQ(start->allocation.nodes[1].cores.size(), 2u);
  EXPECT_EQ(start->allocation.nodes[0].memory_mb, 3000u);
  EXPECT_EQ(start->allocation.nodes[1].memory_mb, 2000u);
  // CPUs a job asked for by its GPUs are not the tasks' to trim.
  JobSpec& by_gpu = s.Job(2);
  by_gpu.min_nodes = by_gpu.max_nodes = 2;
  by_gpu.ntasks = 3;
  by_gpu.ntasks_given = true;
  by_gpu.gpus_per_node = 1;
  by_gpu.cpus_per_gpu = 4;
  s.Run();
  ASSERT_NE(s.Started(2), nullptr);
  for (const NodeAllocation& part : s.Started(2)->allocation.nodes)
    EXPECT_EQ(part.cores.size(), 4u);
}

TEST(Selection, BestFitNodeKeepsWholeNodesFree) {
  Scenario s(kFourNodes);
  s.Running(100, "n2", {0, 1, 2, 3, 4, 5});  // n2 has 2 GPUs left
  GpuJob(s, 1, 1, 2);
  GpuJob(s, 2, 1, 8);
  s.Run();
  EXPECT_EQ(s.Outcome(1), "n2");
  EXPECT_EQ(s.Outcome(2), "n1");
}

TEST(Selection, MemoryDefaultsAndExplicitRequests) {
  Scenario s("NodeName=n1 CPUs=8 RealMemory=8000\nPartitionName=p Nodes=ALL Default=YES\n");
  s.Job(1);  // no --mem and no DefMemPerCPU: the whole node's memory, as Slurm does
  s.Job(2).mem_per_node_mb = 100;
  s.Run();
  EXPECT_EQ(s.Started(1)->allocation.nodes[0].memory_mb, 8000u);
  EXPECT_EQ(s.Outcome(2), "Resources");
}

TEST(Selection, ExclusiveTakesTheWholeNodeAndNeedsAnIdleOne) {
  Scenario s(kFourNodes);
  s.Running(100, "n[1-3]", {0});
  s.Job(1).exclusive = true;
  s.Job(2).exclusive = true;
  s.Run();
  EXPECT_EQ(s.Outcome(1), "n4");
  EXPECT_EQ(s.Started(1)->allocation.nodes[0].cores.size(), 16u);
  EXPECT_EQ(s.Started(1)->allocation.nodes[0].gpus, kAllGpus);
  EXPECT_EQ(s.Outcome(2), "Resources");
}

TEST(Selection, FeaturesNodelistExcludeAndWeight) {
  Scenario s(
      "NodeName=a[1-2] CPUs=4 RealMemory=1000 Feature=a100,ib Weight=5\n"
      "NodeName=b[1-2] CPUs=4 RealMemory=1000 Feature=h100,ib Weight=1\n"
      "PartitionName=p Nodes=ALL Default=YES\n");
  s.Job(1).constraint = "a100";
  s.Job(2).exclude = {"b1"};
  s.Job(3).nodelist = {"a2"};
  s.Job(4).constraint = "h100|a100";
  JobSpec& counted = s.Job(5);
  counted.min_nodes = counted.max_nodes = 2;
  counted.constraint = "gpu_x*1";
  s.Run();
  EXPECT_EQ(s.Outcome(1), "a1");
  EXPECT_EQ(s.Outcome(2), "b2");  // lowest weight first
  EXPECT_EQ(s.Outcome(3), "a2");
  EXPECT_EQ(s.Outcome(4), "b1");
  EXPECT_EQ(s.Outcome(5), "BadConstraints");
}

// A partition much smaller than the cluster is searched through its own nodes, in the order
// the cluster-wide search would take: lowest weight, then fewest free GPUs that suffice.
TEST(Selection, ASmallPartitionOfABigClusterPlacesAsTheWholeClusterWould) {
  Scenario s(
      "DefMemPerCPU=100\n"
      "NodeName=n[01-40] CPUs=8 RealMemory=8000 Gres=gpu:4 Weight=3\n"
      "NodeName=s1 CPUs=8 RealMemory=8000 Gres=gpu:4 Weight=5\n"
      "NodeName=s[2-3] CPUs=8 RealMemory=8000 Gres=gpu:4 Weight=1\n"
      "PartitionName=big Nodes=n[01-40] Default=YES\n"
      "PartitionName=small Nodes=s[1-3],n40\n");
  s.Running(100, "s3", {0, 1});  // s3 has 2 GPUs left: the best fit for 2
  for (uint64_t id : {1, 2, 3, 4}) GpuJob(s, id, 1, 2).partitions = {"small"};
  GpuJob(s, 5, 2, 4).partitions = {"small"};
  s.Run();
  EXPECT_EQ(s.Outcome(1), "s3");
  EXPECT_EQ(s.Outcome(2), "s2");
  EXPECT_EQ(s.Outcome(3), "s2");
  EXPECT_EQ(s.Outcome(4), "n40") << "weight 3 before s1's 5";
  EXPECT_EQ(s.Outcome(5), "Resources") << "only s1 has 4 GPUs free";
}

// Two node shapes: n[1-2] one socket of 4 cores; n[3-4] two of 8 cores, 2 threads each, with
// TmpDisk.
constexpr const char* kTwoShapes =
    "DefMemPerCPU=100\n"
    "NodeName=n[1-2] Sockets=1 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=8000\n"
    "NodeName=n[3-4] Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=64000 "
    "TmpDisk=100000\n"
    "PartitionName=all Nodes=ALL Default=YES\n";

TEST(Selection, NodeMinimumsLeaveSmallerNodesOut) {
  Scenario s(kTwoShapes);
  s.Job(1);  // no minimum: the best fit is a small node
  s.Job(2).min_tmp_disk_mb = 50000;
  s.Job(3).min_sockets = 2;
  s.Job(4).min_cores_per_socket = 5;
  s.Job(5).min_threads_per_core = 2;
  s.Run();
  EXPECT_EQ(s.Outcome(1), "n1");
  for (uint64_t id : {2, 3, 4, 5}) {
    std::string node = s.Outcome(id);
    EXPECT_TRUE(node == "n3" || node == "n4") << id << " ran on " << node;
  }
  JobSpec too_much_disk = s.Job(6);
  too_much_disk.min_tmp_disk_mb = 200000;
  EXPECT_FALSE(CheckSatisfiable(s.cluster(), too_much_disk).ok());
}

TEST(Selection, MincpusIsTheLeastCpusTakenOnANode) {
  Scenario s(kTwoShapes);
  s.Job(1).min_cpus_per_node = 6;  // more than n1 has
  s.Run();
  const StartDecision* start = s.Started(1);
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(s.Outcome(1), "n3");
  EXPECT_EQ(start->allocation.nodes[0].cores.size(), 3u);  // 6 CPUs, two threads a core
}

TEST(Selection, OvercommitTakesCpusPerTaskOncePerNode) {
  Scenario s(kTwoShapes);
  JobSpec& job = s.Job(1);
  job.ntasks = 8;  // more tasks than n1 has CPUs
  job.overcommit = true;
  s.Run();
  const StartDecision* start = s.Started(1);
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(s.Outcome(1), "n1");
  EXPECT_EQ(start->allocation.nodes[0].cores.size(), 1u);
}

TEST(Selection, ContiguousTakesConsecutiveNodes) {
  Scenario s(kFourNodes);
  s.Running(100, "n2", {}, 16);  // n2 is full: n1 and n3 are not consecutive
  JobSpec& job = s.Job(1);
  job.min_nodes = job.max_nodes = job.ntasks = 2;
  job.contiguous = true;
  s.Run();
  EXPECT_EQ(s.Outcome(1), "n[3-4]");
}

TEST(Selection, FirstPartitionThatCanStartTheJob) {
  Scenario s(
      "NodeName=c1 CPUs=4 RealMemory=1000\nNodeName=g1 CPUs=4 RealMemory=1000\n"
      "PartitionName=cpu Nodes=c1 Default=YES\nPartitionName=gpu Nodes=g1\n");
  s.Running(100, "c1", {}, 4);
  s.Job(1).partitions = {"cpu", "gpu"};
  s.Run();
  EXPECT_EQ(s.Outcome(1), "g1");
  EXPECT_EQ(s.Started(1)->partition, 1);
}

// GPUs 0-3 are NVLinked to each other on socket 0 (cores 0-7), 4-7 likewise on socket 1.
constexpr const char* kNvlinkGres =
    "NodeName=g1 Name=gpu File=/dev/nvidia0 Cores=0-7 Links=-1,4,4,4,0,0,0,0\n"
    "NodeName=g1 Name=gpu File=/dev/nvidia1 Cores=0-7 Links=4,-1,4,4,0,0,0,0\n"
    "NodeName=g1 Name=gpu File=/dev/nvidia2 Cores=0-7 Links=4,4,-1,4,0,0,0,0\n"
    "NodeName=g1 Name=gpu File=/dev/nvidia3 Cores=0-7 Links=4,4,4,-1,0,0,0,0\n"
    "NodeName=g1 Name=gpu File=/dev/nvidia4 Cores=8-15 Links=0,0,0,0,-1,4,4,4\n"
    "NodeName=g1 Name=gpu File=/dev/nvidia5 Cores=8-15 Links=0,0,0,0,4,-1,4,4\n"
    "NodeName=g1 Name=gpu File=/dev/nvidia6 Cores=8-15 Links=0,0,0,0,4,4,-1,4\n"
    "NodeName=g1 Name=gpu File=/dev/nvidia7 Cores=8-15 Links=0,0,0,0,4,4,4,-1\n";

TEST(Selection, GpusByNvlinkAndCoresByTheirSocket) {
  Scenario s(
      "NodeName=g1 Sockets=2 CoresPerSocket=8 RealMemory=64000 Gres=gpu:8\n"
      "PartitionName=p Nodes=ALL Default=YES\nDefMemPerCPU=100\n",
      kNvlinkGres);
  s.Running(100, "g1", {0, 1, 2, 6});  // free: 3 (alone on socket 0), 4, 5, 7
  JobSpec& job = s.Job(1);
  job.ntasks = 2;
  job.gpus_per_task = 1;
  job.cpus_per_task = 2;
  s.Run();
  EXPECT_EQ(s.Gpus(1), (std::vector<int>{4, 5}));  // linked, not 3 and 4 by index
  for (int core : s.Cores(1)) EXPECT_GE(core, 8) << "cores follow the GPUs to socket 1";
  EXPECT_EQ(s.Cores(1).size(), 4u);
}

// 24 nodes under three leaves of 8, one spine.
constexpr const char* kTreeNodes =
    "TopologyPlugin=topology/tree\nDefMemPerCPU=100\n"
    "NodeName=n[01-24] CPUs=8 RealMemory=8000 Gres=gpu:8\n"
    "PartitionName=p Nodes=ALL Default=YES\n";
constexpr const char* kTree =
    "SwitchName=leaf1 Nodes=n[01-08]\nSwitchName=leaf2 Nodes=n[09-16]\n"
    "SwitchName=leaf3 Nodes=n[17-24]\nSwitchName=spine Switches=leaf[1-3]\n";

std::set<std::string> Leaves(const Scenario& s, uint64_t id) {
  std::set<std::string> leaves;
  for (const NodeAllocation& part : s.Started(id)->allocation.nodes)
    leaves.insert(s.cluster().topology.switches[s.cluster().topology.node_leaf[part.node]].name);
  return leaves;
}

TEST(Topology, EightNodeJobUnderOneLeafWhenOneCanHoldIt) {
  Scenario s(kTreeNodes, std::nullopt, kTree);
  s.Running(100, "n[01-03]", kAllGpus);  // leaf1: 5 free
  s.Running(101, "n17", kAllGpus);       // leaf3: 7 free; leaf2: 8 free
  GpuJob(s, 1, 8, 8);
  s.Run();
  EXPECT_EQ(s.Outcome(1), "n[09-16]");
}

TEST(Topology, TwoLeavesRatherThanThreeBestFit) {
  Scenario s(kTreeNodes, std::nullopt, kTree);
  s.Running(100, "n[01-02]", kAllGpus);  // leaf1: 6 free
  s.Running(101, "n[09-11]", kAllGpus);  // leaf2: 5 free
  s.Running(102, "n[17-20]", kAllGpus);  // leaf3: 4 free
  GpuJob(s, 1, 10, 8);
  s.Run();
  // 6 from leaf1, and the remaining 4 from the leaf that fits them tightest: leaf3, not leaf2.
  EXPECT_EQ(s.Outcome(1), "n[03-08,21-24]");
  EXPECT_EQ(Leaves(s, 1), (std::set<std::string>{"leaf1", "leaf3"}));
}

TEST(Topology, BestFitLeafKeepsAWholeLeafFreeForTheNextBigJob) {
  Scenario s(kTreeNodes, std::nullopt, kTree);
  s.Running(100, "n[09-13]", kAllGpus);  // leaf2: 3 free
  s.Running(101, "n[17-24]", kAllGpus);  // leaf3: full
  GpuJob(s, 1, 2, 8);
  GpuJob(s, 2, 8, 8);
  s.Run();
  EXPECT_EQ(s.Outcome(1), "n[14-15]");
  EXPECT_EQ(s.Outcome(2), "n[01-08]");
}

TEST(Topology, SwitchesLimitWaitsThenTakesAnyPlacement) {
  Scenario s(kTreeNodes, std::nullopt, kTree);
  s.Running(100, "n[01-04]", kAllGpus);
  s.Running(101, "n[09-12]", kAllGpus);
  s.Running(102, "n[17-24]", kAllGpus);
  JobSpec& job = GpuJob(s, 1, 6, 8);
  job.switches = 1;
  job.switch_wait_seconds = 600;
  job.submit_time = 900;
  s.Run(1000);  // waited 100 s of 600: no single leaf has 6 free
  EXPECT_EQ(s.Outcome(1), "Resources");
  s.Run(1500);  // waited 600 s: any placement
  EXPECT_EQ(Leaves(s, 1).size(), 2u);
}

TEST(Topology, BlocksFewestAndSegments) {
  Scenario s(
      "TopologyPlugin=topology/block\nDefMemPerCPU=100\n"
      "NodeName=b[01-16] CPUs=8 RealMemory=8000 Gres=gpu:4\n"
      "PartitionName=p Nodes=ALL Default=YES\n",
      std::nullopt,
      "BlockName=x1 Nodes=b[01-04]\nBlockName=x2 Nodes=b[05-08]\n"
      "BlockName=x3 Nodes=b[09-12]\nBlockName=x4 Nodes=b[13-16]\n");
  s.Running(100, "b[01-03]", {0, 1, 2, 3});  // x1: 1 free
  s.Running(101, "b[05-06]", {0, 1, 2, 3});  // x2: 2 free; x3, x4: 4 free
  GpuJob(s, 1, 2, 4);                        // the tightest block that holds it: x2
  JobSpec& segmented = GpuJob(s, 2, 4, 4);
  segmented.segment = 2;
  s.Run();
  EXPECT_EQ(s.Outcome(1), "b[07-08]");
  EXPECT_EQ(s.Outcome(2), "b[09-12]");
}

TEST(Priority, FairShareOrdersUsersByUsageAndShares) {
  Scenario s(
      "PriorityType=priority/multifactor\nPriorityWeightFairshare=10000\n"
      "DefMemPerCPU=100\nNodeName=n1 CPUs=8 RealMemory=8000 Gres=gpu:8\n"
      "PartitionName=p Nodes=ALL Default=YES\n");
  auto& tree = s.associations();
  tree.push_back({"root", "", -1, 1, 0, {}, 0});
  tree.push_back({"busy", "", 0, 1, 0, {}, 0});
  tree.push_back({"idle", "", 0, 1, 0, {}, 0});
  tree.push_back({"busy", "alice", 1, 1, 5000, {}, 0});
  tree.push_back({"idle", "bob", 2, 1, 10, {}, 0});
  JobSpec& alice = GpuJob(s, 1, 1, 8);
  alice.account = "busy";
  JobSpec& bob = GpuJob(s, 2, 1, 8);
  bob.user = "bob";
  bob.account = "idle";
  const SchedulerResult& result = s.Run();
  EXPECT_EQ(s.Outcome(2), "n1");
  EXPECT_EQ(s.Outcome(1), "Resources");
  ASSERT_EQ(result.priorities.size(), 2u);
  EXPECT_EQ(result.priorities[0].job_id, 2u);
  EXPECT_GT(result.priorities[0].fairshare, result.priorities[1].fairshare);
  // Where each input job's factors went: alice (input 0) second, bob (input 1) first.
  EXPECT_EQ(result.priority_of_input, (std::vector<uint32_t>{1, 0}));
}

TEST(Priority, BasicIsFifoBySubmitTimeThenId) {
  Scenario s(kFourNodes);
  GpuJob(s, 5, 3, 8).submit_time = 10;
  GpuJob(s, 3, 3, 8).submit_time = 20;
  GpuJob(s, 4, 3, 8).submit_time = 10;
  s.Run();
  EXPECT_EQ(s.Outcome(4), "n[1-3]");
  EXPECT_EQ(s.Outcome(5), "Resources");
  EXPECT_EQ(s.Outcome(3), "Priority");
}

TEST(Priority, AnOperatorsPriorityOrdersTheQueue) {
  for (std::string type : {"", "PriorityType=priority/multifactor\nPriorityWeightAge=1000\n"}) {
    Scenario s(type + kFourNodes);
    GpuJob(s, 1, 3, 8).submit_time = 10;
    JobSpec& second = GpuJob(s, 2, 3, 8);
    second.submit_time = 20;
    second.priority = 4000000000u;  // --priority: above any computed priority
    const SchedulerResult& result = s.Run();
    EXPECT_EQ(s.Outcome(2), "n[1-3]") << type;
    EXPECT_EQ(s.Outcome(1), "Resources") << type;
    EXPECT_EQ(result.priorities[0].priority, 4000000000) << type;
  }
}

TEST(Dependencies, WaitStartOrNever) {
  Scenario s(kFourNodes);
  s.Outcome(50, JobOutcome::State::kRunning, 900);
  s.Outcome(51, JobOutcome::State::kFailed, 100, 200);
  s.Outcome(52, JobOutcome::State::kCompleted, 100, 200);
  s.Job(1).dependency = *ParseDependency("afterok:50");
  s.Job(2).dependency = *ParseDependency("afterok:51");
  s.Job(3).dependency = *ParseDependency("afterany:52");
  s.Job(4).dependency = *ParseDependency("afternotok:51,after:50");
  s.Job(5).dependency = *ParseDependency("afterany:52+20");  // ended at 200, +20 min = 1400
  JobSpec& first = s.Job(6);
  first.name = "train";
  first.dependency = *ParseDependency("singleton");
  JobSpec& second = s.Job(7);
  second.name = "train";
  second.dependency = *ParseDependency("singleton");
  s.Run(1000);
  EXPECT_EQ(s.Outcome(1), "Dependency");
  EXPECT_EQ(s.Outcome(2), "DependencyNeverSatisfied");
  EXPECT_EQ(s.Outcome(3), "n1");
  EXPECT_EQ(s.Outcome(4), "n1");
  EXPECT_EQ(s.Outcome(5), "Dependency");
  EXPECT_EQ(s.Outcome(6), "n1");
  EXPECT_EQ(s.Outcome(7), "Dependency");
}

TEST(Reasons, EveryReasonAJobCanWaitFor) {
  Scenario s(
      "SchedulerType=sched/builtin\n"
      "DefMemPerCPU=100\nNodeName=n[1-4] CPUs=8 RealMemory=8000 Gres=gpu:8\n"
      "NodeName=d1 CPUs=8 RealMemory=8000\n"
      "PartitionName=p Nodes=n[1-4],d1 Default=YES MaxTime=1:00:00 MaxNodes=4\n"
      "PartitionName=off Nodes=n[1-4] State=DOWN\n");
  s.Down("d1");
  auto& tree = s.associations();
  auto node = [](std::string account, std::string user, int parent) {
    Association association;
    association.account = std::move(account);
    association.user = std::move(user);
    association.parent = parent;
    return association;
  };
  tree.push_back(node("root", "", -1));
  tree.push_back(node("small", "", 0));
  tree.back().limits.grp_tres = *ParseTres("gres/gpu=2");
  tree.push_back(node("small", "carol", 1));
  tree.push_back(node("one", "", 0));
  tree.back().limits.max_jobs = 1;
  tree.push_back(node("one", "dave", 3));
  tree.back().limits.max_jobs = 1;  // inherited from its account, as the controller passes it
  Qos normal;
  normal.name = "normal";
  normal.max_tres_per_user = *ParseTres("gres/gpu=4");
  Qos single;
  single.name = "single";
  single.limits.max_jobs = 1;
  Qos big;
  big.name = "big";
  s.qos() = {normal, single, big};
  s.Running(100, "n1", {}, 1).user = "erin";
  s.running_job(0).qos = "single";
  s.running_job(0).user = "erin";
  s.Job(1).hold = HoldKind::kUser;
  s.Job(2).hold = HoldKind::kAdmin;
  s.Job(3).begin_time = 5000;
  s.Job(4).time_limit_seconds = 7200;
  GpuJob(s, 5, 5, 0);
  s.Job(6).partitions = {"off"};
  s.Job(7).nodelist = {"d1"};
  GpuJob(s, 8, 1, 6);  // over the normal QOS's 4 GPUs per user
  JobSpec& over_jobs = s.Job(9);
  over_jobs.user = "erin";
  over_jobs.qos = "single";
  JobSpec& assoc_gres = GpuJob(s, 10, 1, 3);
  assoc_gres.user = "carol";
  assoc_gres.account = "small";
  JobSpec& dave1 = s.Job(11);
  dave1.user = "dave";
  dave1.account = "one";
  JobSpec& dave2 = s.Job(12);
  dave2.user = "dave";
  dave2.account = "one";
  s.Job(13).constraint = "nosuchfeature";
  GpuJob(s, 14, 4, 4).qos = "big";  // takes half of every GPU node
  GpuJob(s, 15, 1, 8).qos = "big";  // then nothing has 8 GPUs free
  GpuJob(s, 16, 1, 1).qos = "big";  // behind job 15 in the partition
  s.Run();
  EXPECT_EQ(s.Outcome(1), "JobHeldUser");
  EXPECT_EQ(s.Outcome(2), "JobHeldAdmin");
  EXPECT_EQ(s.Outcome(3), "BeginTime");
  EXPECT_EQ(s.Outcome(4), "PartitionTimeLimit");
  EXPECT_EQ(s.Outcome(5), "PartitionNodeLimit");
  EXPECT_EQ(s.Outcome(6), "PartitionDown");
  EXPECT_EQ(s.Outcome(7), "ReqNodeNotAvail");
  EXPECT_EQ(s.Outcome(8), "QOSMaxGRESPerUser");
  EXPECT_EQ(s.Outcome(9), "QOSMaxJobsPerUserLimit");
  EXPECT_EQ(s.Outcome(10), "AssocGrpGRES");
  EXPECT_NE(s.Started(11), nullptr);
  EXPECT_EQ(s.Outcome(12), "AssocMaxJobsLimit");
  EXPECT_EQ(s.Outcome(13), "BadConstraints");
  EXPECT_NE(s.Started(14), nullptr);
  EXPECT_EQ(s.Outcome(15), "Resources");
  EXPECT_EQ(s.Outcome(16), "Priority");
}

TEST(Reasons, ArrayTaskLimit) {
  Scenario s(kFourNodes);
  for (uint64_t id = 1; id <= 3; ++id) {
    JobSpec& task = s.Job(id);
    task.array_job_id = 1;
    task.array_task_id = static_cast<uint32_t>(id - 1);
    task.array_max_running = 2;
  }
  s.Run();
  EXPECT_NE(s.Started(1), nullptr);
  EXPECT_NE(s.Started(2), nullptr);
  EXPECT_EQ(s.Outcome(3), "JobArrayTaskLimit");
}

TEST(Submission, RefusesWhatNoNodeCouldEverHold) {
  Scenario s(kFourNodes);
  JobSpec fits = GpuJob(s, 1, 2, 8);
  EXPECT_TRUE(CheckSatisfiable(s.cluster(), fits).ok());
  JobSpec too_many_gpus = GpuJob(s, 2, 1, 9);
  EXPECT_EQ(CheckSatisfiable(s.cluster(), too_many_gpus).error(),
            "Requested node configuration is not available (partition gpu has 0 nodes with 1 "
            "CPUs, 9 GPUs, 1000M memory; the job needs 1)");
  JobSpec too_many_nodes = GpuJob(s, 3, 5, 1);
  EXPECT_EQ(CheckSatisfiable(s.cluster(), too_many_nodes).error(),
            "Node count specification invalid (partition gpu has 4 nodes, the job asks for 5)");
  JobSpec bad_partition = s.Job(4);
  bad_partition.partitions = {"nope"};
  EXPECT_EQ(CheckSatisfiable(s.cluster(), bad_partition).error(),
            "invalid partition name specified (nope)");
}

}  // namespace
}  // namespace drover::sched
