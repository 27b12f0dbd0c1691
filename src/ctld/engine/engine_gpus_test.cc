// What the agents say of their GPUs: NVML's identity joins the configuration the scheduler
// places by, jobs record the UUIDs of the GPUs they got, and the built-in health probes drain
// nodes (held drained when the trouble was an event, until an operator resumes them).
#include <gtest/gtest.h>

#include "ctld/engine/engine.h"
#include "ctld/engine/engine_test_support.h"

namespace drover::ctld {
namespace {

GpuDevice Found(int index, std::string uuid, std::vector<int> cores, std::vector<int> links) {
  GpuDevice gpu;
  gpu.index = index;
  gpu.type = "nvidia_h100_80gb_hbm3";
  gpu.name = "NVIDIA H100 80GB HBM3";
  gpu.uuid = std::move(uuid);
  gpu.pci_bus_id = "00000000:18:00.0";
  gpu.memory_mb = 81559;
  gpu.cores = std::move(cores);
  gpu.links = std::move(links);
  return gpu;
}

NodeRegistered WithGpus(const std::string& node) {
  NodeRegistered event{node, {}};
  event.gpus = {Found(0, "GPU-" + node + "-0", {0, 1, 2, 3}, {-1, 4}),
                Found(1, "GPU-" + node + "-1", {4, 5, 6, 7}, {4, -1})};
  return event;
}

TEST_F(EngineTest, ReportedGpusJoinTheConfigurationAndJobsRecordTheirUuids) {
  Apply(WithGpus("n1"));
  EXPECT_TRUE(last_.reconfigured);
  const NodeConfig& n1 = engine_.cluster().nodes[0];
  ASSERT_EQ(n1.gpus.size(), 2u);
  EXPECT_EQ(n1.gpus[1].uuid, "GPU-n1-1");
  EXPECT_EQ(n1.gpus[1].type, "nvidia_h100_80gb_hbm3");  // slurm.conf's Gres=gpu:2 is untyped
  EXPECT_EQ(n1.gpus[1].cores, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(n1.gpus[1].links, (std::vector<int>{4, -1}));
  EXPECT_EQ(n1.gpus[1].pci_bus_id, "00000000:18:00.0");
  // The same report again copies nothing.
  Apply(WithGpus("n1"));
  EXPECT_FALSE(last_.reconfigured);

  JobSpec on_n1 = Gpus(2);
  on_n1.nodelist = {"n1"};
  uint64_t job = Submit(on_n1);
  ASSERT_EQ(State(job), JobState::kRunning);
  const Job* record = engine_.FindJob(job);
  ASSERT_EQ(record->allocation.nodes.size(), 1u);
  ASSERT_EQ(record->allocation.nodes[0].node, 0);
  EXPECT_EQ(record->gpu_uuids.at(0), (std::vector<std::string>{"GPU-n1-0", "GPU-n1-1"}));
  JobSpec on_n2 = Gpus(2);
  on_n2.nodelist = {"n2"};
  uint64_t other = Submit(on_n2);
  ASSERT_EQ(State(other), JobState::kRunning);
  EXPECT_TRUE(engine_.FindJob(other)->gpu_uuids.empty());  // n2 reported no UUIDs
  // A requeue forgets them with the allocation (requeuehold, so that it does not start again).
  RequeueJobs requeue{++token_, Caller{1000, 1000}, {}, true};
  requeue.filter.job_ids = {job};
  Apply(requeue);
  record = engine_.FindJob(job);
  ASSERT_EQ(record->state, JobState::kPending) << "held";
  EXPECT_TRUE(record->gpu_uuids.empty());
}

TEST_F(EngineTest, ReportedGpusMatchGresConfFilesByMinor) {
  NodeConfig node;
  node.sockets = 1;
  node.cores_per_socket = 8;
  for (int minor : {0, 1, 2}) {
    GpuDevice configured;
    configured.index = minor;
    configured.file = "/dev/nvidia" + std::to_string(minor);
    node.gpus.Mutable().push_back(configured);
  }
  // NVML's order is not the minors' (as on a DGX A100).
  std::vector<GpuDevice> found = {Found(0, "GPU-a", {}, {}), Found(1, "GPU-b", {}, {}),
                                  Found(2, "GPU-c", {}, {})};
  found[0].minor = 0;
  found[1].minor = 2;
  found[2].minor = 1;
  MergeReportedGpus(found, node);
  EXPECT_EQ(node.gpus[1].uuid, "GPU-c");
  EXPECT_EQ(node.gpus[2].uuid, "GPU-b");
}

TEST_F(EngineTest, AReportThatChangesNothingKeepsTheSharedGpuList) {
  NodeConfig first;
  first.sockets = 1;
  first.cores_per_socket = 8;
  first.gpus = {GpuDevice{}, GpuDevice{}};
  first.gpus.Mutable()[1].index = 1;
  NodeConfig second = first;  // declared alike: one list
  ASSERT_TRUE(second.gpus.SharedWith(first.gpus));
  std::vector<GpuDevice> same = first.gpus.all();
  MergeReportedGpus(same, second);
  EXPECT_TRUE(second.gpus.SharedWith(first.gpus));
  MergeReportedGpus({Found(0, "GPU-a", {}, {}), Found(1, "GPU-b", {}, {})}, second);
  EXPECT_FALSE(second.gpus.SharedWith(first.gpus));
  EXPECT_EQ(second.gpus[1].uuid, "GPU-b");
  EXPECT_EQ(first.gpus[1].uuid, "");
}

TEST_F(EngineTest, AReportThatDisagreesWithTheCountChangesNothing) {
  NodeRegistered event = WithGpus("n1");
  event.gpus.pop_back();
  Apply(event);
  EXPECT_TRUE(engine_.cluster().nodes[0].gpus[0].uuid.empty());
}

TEST_F(EngineTest, ConfiguredCoresWinOverNvmlsAffinity) {
  NodeConfig node;
  node.sockets = 2;
  node.cores_per_socket = 4;
  GpuDevice configured;
  configured.index = 0;
  configured.type = "h100";
  configured.cores = {4, 5};
  node.gpus = {configured};
  MergeReportedGpus({Found(0, "GPU-a", {0, 1}, {})}, node);
  EXPECT_EQ(node.gpus[0].type, "h100");
  EXPECT_EQ(node.gpus[0].cores, (std::vector<int>{4, 5}));
  EXPECT_EQ(node.gpus[0].uuid, "GPU-a");
  // Cores beyond the node's are a mistaken report: dropped.
  node.gpus = {GpuDevice{}};
  MergeReportedGpus({Found(0, "GPU-a", {0, 99}, {})}, node);
  EXPECT_TRUE(node.gpus[0].cores.empty());
}

TEST_F(EngineTest, AGpuEventHoldsTheNodeDrainedUntilAnOperatorResumesIt) {
  Heartbeat xid{"n2", false, "gpu 1 (GPU-8e6a...): XID 79", true, {}};
  GpuHealth reading;
  reading.index = 1;
  reading.uuid = "GPU-8e6a";
  reading.last_xid = 79;
  reading.xid_errors = 1;
  reading.problem = "XID 79";
  xid.gpus = {reading};
  Apply(xid);
  EXPECT_EQ(NodeStateName(engine_.node(1), false), "DRAINED");
  EXPECT_EQ(engine_.node(1).gpu_health.at(0).last_xid, 79u);
  Apply(Heartbeat{"n2", true, ""});
  EXPECT_EQ(NodeStateName(engine_.node(1), false), "DRAINED");
  EXPECT_EQ(engine_.node(1).reason, "gpu 1 (GPU-8e6a...): XID 79");
  UpdateNode resume{++token_, Caller{0, 0, true}, "n2", UpdateNode::Action::kResume, ""};
  Apply(resume);
  EXPECT_EQ(NodeStateName(engine_.node(1), false), "IDLE");
  // On a node an operator drained already, the GPU's trouble joins the reason.
  UpdateNode drain{++token_, Caller{0, 0, true}, "n2", UpdateNode::Action::kDrain, "maintenance"};
  Apply(drain);
  Apply(xid);
  EXPECT_EQ(engine_.node(1).reason, "maintenance; gpu 1 (GPU-8e6a...): XID 79");
  Apply(resume);
  // A condition that clears, with the site's DroverGpuHealthResume=yes: not latched.
  Apply(Heartbeat{"n2", false, "gpu 1 (GPU-8e6a...): throttled (thermal)", false, {}});
  EXPECT_EQ(NodeStateName(engine_.node(1), false), "DRAINED");
  Apply(Heartbeat{"n2", true, ""});
  EXPECT_EQ(NodeStateName(engine_.node(1), false), "IDLE");
}

// --gpus=N that no one node has spans as many nodes as it needs when -N does not fix the count,
// as Slurm spreads it; with -N1 it is refused as Slurm refuses it.
TEST_F(EngineTest, GpusBeyondOneNodeSpanNodesWithoutN) {
  JobSpec spread;
  spread.gpus = 4;
  uint64_t job = Submit(spread);
  ASSERT_EQ(State(job), JobState::kRunning);
  const Job* record = engine_.FindJob(job);
  ASSERT_EQ(record->allocation.nodes.size(), 2u);
  EXPECT_EQ(record->allocation.nodes[0].gpus.size(), 2u);
  EXPECT_EQ(record->allocation.nodes[1].gpus.size(), 2u);
  JobSpec pinned = spread;
  pinned.min_nodes = pinned.max_nodes = 1;
  pinned.user = "alice";
  pinned.account = "research";
  pinned.time_limit_seconds = 60;
  EngineOutput out = Apply(SubmitJob{++token_, Caller{1000, 1000}, pinned, "", "#!/bin/sh\n"});
  ASSERT_NE(FindReply(out, token_), nullptr);
  EXPECT_FALSE(FindReply(out, token_)->ok);
}

}  // namespace
}  // namespace drover::ctld
