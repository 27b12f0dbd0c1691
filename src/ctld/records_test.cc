// Records tests: every field survives engine -> proto -> bytes -> proto -> engine, every reason
// name reads back, and records from another configuration are refused by name. A job's spec
// alone is the wire codec's (wire/job_spec_codec_test.cc).
#include "ctld/records.h"

#include <gtest/gtest.h>

#include <string>

#include "testing/full_job_spec.h"

namespace drover::ctld {
namespace {

constexpr const char* kCluster =
    "ClusterName=t\nGresTypes=gpu\nNodeName=n[1-2] CPUs=8 RealMemory=1000 Gres=gpu:2\n"
    "PartitionName=p Nodes=ALL Default=YES\n";

class JobRecordTest : public ::testing::Test {
 protected:
  JobRecordTest() : load_(LoadClusterConfigText(kCluster)) { EXPECT_TRUE(load_.ok()); }

  static Job RunningJob() {
    Job job;
    job.spec = testing::FullSpec();
    job.state = JobState::kRunning;
    job.reason = sched::PendingReason::kNone;
    job.partition = 0;
    job.allocation.nodes = {{0, {0, 1}, 300, {0}, 0, {}}, {1, {2, 3}, 300, {1}, 0, {}}};
    job.allocation.exclusive = true;
    job.start_time = 1'700'000'200;
    job.end_time = 1'700'003'800;
    job.time_limit_seconds = 3600;
    job.exit_code = 1;
    job.exit_signal = 9;
    job.restart_count = 1;
    job.cancel_requested_at = 1'700'000'300;
    job.cancelled_by = 1001;
    job.time_limit_signalled_at = 1'700'000'400;
    job.user_signal_sent = true;
    job.history = {{1'700'000'000, 1'700'000'100, JobState::kNodeFail, 0, 9, {1}, 0}};
    Step step;  // a running step and its share of the job
    step.step_id = 2;
    step.name = "train";
    step.start_time = 1'700'000'250;
    step.ntasks = 1;
    step.nodes = {1};
    step.cpus = 2;
    step.usage = {{1, {2, 3}, 200, {1}, 0, {}}};
    step.gpus_given = true;
    job.steps = {step};
    return job;
  }

  v1::Job Proto(const Job& job) const {
    v1::Job proto;
    ToProto(job, load_.config, &proto);
    return proto;
  }

  ConfigLoad load_;
};

TEST_F(JobRecordTest, RunningJobRoundTrip) {
  const v1::Job proto = Proto(RunningJob());
  EXPECT_EQ(proto.state(), "RUNNING");
  EXPECT_EQ(proto.reason(), "None");
  EXPECT_EQ(proto.partition_name(), "p");
  EXPECT_EQ(proto.node_list(), "n[1-2]");
  EXPECT_EQ(proto.history(0).state(), "NODE_FAIL");

  v1::Job parsed;
  ASSERT_TRUE(parsed.ParseFromString(proto.SerializeAsString()));
  Result<Job> back = FromProto(parsed, load_.config);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(Proto(*back).SerializeAsString(), proto.SerializeAsString());

  const Job& job = *back;
  EXPECT_EQ(job.state, JobState::kRunning);
  EXPECT_EQ(job.partition, 0);
  EXPECT_EQ(job.allocation, RunningJob().allocation);
  EXPECT_EQ(job.end_time, 1'700'003'800);
  EXPECT_EQ(job.cancelled_by, 1001u);
  EXPECT_TRUE(job.user_signal_sent);
  ASSERT_EQ(job.history.size(), 1u);
  EXPECT_EQ(job.history[0].state, JobState::kNodeFail);
  EXPECT_EQ(job.history[0].exit_signal, 9);
  EXPECT_EQ(job.history[0].nodes, std::vector<int>{1});
  ASSERT_EQ(job.steps.size(), 1u);
  EXPECT_EQ(job.steps[0].usage, RunningJob().steps[0].usage);
  EXPECT_TRUE(job.steps[0].gpus_given);
  EXPECT_FALSE(job.steps[0].overlap);
}

TEST_F(JobRecordTest, PendingJobWithoutPartition) {
  Job job;
  job.spec.job_id = 3;
  job.reason = sched::PendingReason::kResources;
  const v1::Job proto = Proto(job);
  EXPECT_EQ(proto.partition(), -1);
  EXPECT_EQ(proto.partition_name(), "");
  EXPECT_EQ(proto.node_list(), "");
  Result<Job> back = FromProto(proto, load_.config);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->partition, -1);
  EXPECT_EQ(back->reason, sched::PendingReason::kResources);
}

TEST_F(JobRecordTest, UnknownReasonIsNone) {
  Job job;
  job.reason = sched::PendingReason::kPriority;
  v1::Job proto = Proto(job);
  proto.set_reason("NoSuchReason");
  EXPECT_EQ(FromProto(proto, load_.config)->reason, sched::PendingReason::kNone);
}

TEST_F(JobRecordTest, UnknownState) {
  v1::Job proto = Proto(RunningJob());
  proto.set_state("RUNNNING");
  EXPECT_EQ(FromProto(proto, load_.config).error(),
            "job 12: unknown state 'RUNNNING' in the store");
}

TEST_F(JobRecordTest, PartitionOutOfRange) {
  v1::Job proto = Proto(RunningJob());
  proto.set_partition(1);
  EXPECT_EQ(FromProto(proto, load_.config).error(),
            "job 12: partition index 1 in the store is out of range (1 partitions configured): "
            "the store does not match this configuration");
}

TEST_F(JobRecordTest, NodeOutOfRange) {
  v1::Job proto = Proto(RunningJob());
  proto.mutable_allocation(1)->set_node(2);
  EXPECT_EQ(FromProto(proto, load_.config).error(),
            "job 12: node index 2 in the store is out of range (2 nodes configured): the store "
            "does not match this configuration");
}

TEST(Records, EveryPendingReasonName) {
  for (int i = 0; i <= static_cast<int>(sched::kLastPendingReason); ++i) {
    Job job;
    job.reason = static_cast<sched::PendingReason>(i);
    v1::Job proto;
    ToProto(job, ClusterConfig{}, &proto);
    EXPECT_EQ(FromProto(proto, ClusterConfig{})->reason, job.reason) << proto.reason();
  }
}

TEST(Records, NodeStatusRoundTrip) {
  NodeStatus node;
  node.registered = true;
  node.drain = true;
  node.drained_by_health = true;
  node.health_latched = true;  // an XID: held until an operator resumes, across restarts
  node.not_responding = true;
  node.reason = "bad disk";
  node.reason_time = 1'700'000'000;
  node.reason_uid = 7;
  node.last_heard = 1'700'000'050;
  node.jobs = {4, 9};
  v1::NodeStatus proto;
  ToProto(node, "n1", &proto);
  EXPECT_EQ(proto.name(), "n1");
  EXPECT_EQ(proto.state(), "DRAINING*");
  const NodeStatus back = FromProto(proto);
  EXPECT_TRUE(back.registered);
  EXPECT_FALSE(back.down);
  EXPECT_TRUE(back.drained_by_health);
  EXPECT_TRUE(back.health_latched);
  EXPECT_EQ(back.reason, "bad disk");
  EXPECT_EQ(back.reason_uid, 7u);
  EXPECT_EQ(back.last_heard, 1'700'000'050);
  EXPECT_EQ(back.jobs, (std::set<uint64_t>{4, 9}));
}

// A reboot in progress survives a controller restart: requested, or issued (its state flag).
TEST(Records, NodeRebootRoundTrip) {
  NodeStatus node;
  node.registered = true;
  node.reboot_requested = true;
  node.next_state = "DOWN";
  node.boot_time = 1'700'000'000;
  v1::NodeStatus proto;
  ToProto(node, "n1", &proto);
  EXPECT_EQ(proto.state(), "IDLE+REBOOT_REQUESTED");
  NodeStatus back = FromProto(proto);
  EXPECT_TRUE(back.reboot_requested);
  EXPECT_FALSE(back.reboot_issued);
  EXPECT_EQ(back.next_state, "DOWN");
  EXPECT_EQ(back.boot_time, 1'700'000'000);
  node.reboot_requested = false;
  node.reboot_issued = true;
  ToProto(node, "n1", &proto);
  back = FromProto(proto);
  EXPECT_TRUE(back.reboot_issued);
  EXPECT_FALSE(back.reboot_requested);
}

// The history index's keys sort as their numbers do and end with the job's ID.
TEST(HistoryIndexTest, KeysSortByNumberAndEndWithTheJob) {
  std::vector<std::string> task = HistoryIndexKeys(1234, 1200, 1000, 1'700'000'000);
  EXPECT_EQ(task, (std::vector<std::string>{"a/00000000000000001200/00000000000000001234",
                                            "u/0000001000/001700000000/00000000000000001234",
                                            "t/001700000000/00000000000000001234"}));
  for (const std::string& key : task) EXPECT_EQ(HistoryIndexJobId(key), 1234u);
  EXPECT_EQ(HistoryIndexKeys(9, 0, 0, 0)[0].substr(0, 23), HistoryGroupPrefix(9));
  EXPECT_EQ(HistoryIndexKeys(9, 0, 0, 0)[2], "t/999999999999/00000000000000000009");
  EXPECT_LT(HistoryIndexKeys(9, 0, 7, 99)[1], HistoryIndexKeys(8, 0, 7, 100)[1]);
  EXPECT_LT(HistoryTimeKey(HistoryUserPrefix(7), 100), HistoryIndexKeys(8, 0, 7, 100)[1]);
  EXPECT_EQ(HistoryIndexJobId("t/12"), 0u);
  EXPECT_EQ(HistoryIndexJobId("t/001700000000/0000000000000000123x"), 0u);
}

}  // namespace
}  // namespace drover::ctld
