// Records tests: every field survives engine -> proto -> bytes -> proto -> engine, every state
// and reason name reads back, and records from another configuration are refused by name.
#include "ctld/records.h"

#include <gtest/gtest.h>

#include <string>

namespace drover::ctld {
namespace {

constexpr const char* kCluster =
    "ClusterName=t\nGresTypes=gpu\nNodeName=n[1-2] CPUs=8 RealMemory=1000 Gres=gpu:2\n"
    "PartitionName=p Nodes=ALL Default=YES\n";

// Every field differs from JobSpec's default.
JobSpec FullSpec() {
  JobSpec spec;
  spec.job_id = 12;
  spec.array_job_id = 10;
  spec.array_task_id = 2;
  spec.name = "train";
  spec.user = "alice";
  spec.account = "ml";
  spec.qos = "high";
  spec.uid = 1001;
  spec.gid = 1002;
  spec.partitions = {"p", "q"};
  spec.min_nodes = 2;
  spec.max_nodes = 3;
  spec.ntasks = 4;
  spec.ntasks_per_node = 2;
  spec.cpus_per_task = 3;
  spec.mem_per_node_mb = 500;
  spec.mem_per_cpu_mb = 100;
  spec.mem_per_gpu_mb = 200;
  spec.gpu_type = "h100";
  spec.gpus = 4;
  spec.gpus_per_node = 2;
  spec.gpus_per_task = 1;
  spec.cpus_per_gpu = 2;
  spec.other_gres = {{"nic", "mlx", 2, {}}, {"mps", "", 100, {}}};
  spec.constraint = "a&b";
  spec.nodelist = {"n1"};
  spec.exclude = {"n2", "n3"};
  spec.exclusive = true;
  spec.time_limit_seconds = 3600;
  spec.time_min_seconds = 600;
  spec.submit_time = 1'700'000'000;
  spec.begin_time = 1'700'000'100;
  spec.dependency = {{{DependencyType::kAfterOk, 5, 0}, {DependencyType::kAfter, 6, 600}}, true};
  spec.hold = HoldKind::kAdmin;
  spec.nice = -5;
  spec.switches = 1;
  spec.switch_wait_seconds = 120;
  spec.segment = 2;
  spec.reservation = "maint";
  spec.signal_number = 10;
  spec.signal_seconds = 30;
  spec.signal_batch_only = true;
  spec.requeue = false;
  spec.array_max_running = 5;
  spec.work_dir = "/home/alice/proj";
  spec.stdout_path = "slurm-%j.out";
  spec.stderr_path = "slurm-%j.err";
  spec.stdin_path = "/dev/null";
  spec.environment = {"PATH=/usr/bin", "OMP_NUM_THREADS=8"};
  spec.script_args = {"--lr", "0.1", "two words", ""};
  spec.comment = "sweep 3";
  return spec;
}

std::string Bytes(const JobSpec& spec) {
  v1::JobSpec proto;
  ToProto(spec, &proto);
  return proto.SerializeAsString();
}

TEST(Records, JobSpecRoundTrip) {
  const std::string bytes = Bytes(FullSpec());
  v1::JobSpec parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  Result<JobSpec> back = FromProto(parsed);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(Bytes(*back), bytes);

  const JobSpec& s = *back;
  EXPECT_EQ(s.job_id, 12u);
  EXPECT_EQ(s.array_task_id, 2u);
  EXPECT_EQ(s.partitions, (std::vector<std::string>{"p", "q"}));
  EXPECT_EQ(s.mem_per_gpu_mb, 200u);
  EXPECT_EQ(s.other_gres, FullSpec().other_gres);
  EXPECT_EQ(s.exclude, (std::vector<std::string>{"n2", "n3"}));
  EXPECT_EQ(s.dependency, FullSpec().dependency);
  EXPECT_EQ(s.hold, HoldKind::kAdmin);
  EXPECT_EQ(s.nice, -5);
  EXPECT_EQ(s.switch_wait_seconds, 120);
  EXPECT_EQ(s.signal_number, 10);
  EXPECT_TRUE(s.signal_batch_only);
  EXPECT_FALSE(s.requeue);
  EXPECT_EQ(s.array_max_running, 5u);
  EXPECT_EQ(s.work_dir, "/home/alice/proj");
  EXPECT_EQ(s.stdout_path, "slurm-%j.out");
  EXPECT_EQ(s.environment, FullSpec().environment);
  EXPECT_EQ(s.script_args, FullSpec().script_args);
  EXPECT_EQ(s.comment, "sweep 3");
}

TEST(Records, NoArrayTaskIsAllOnes) {
  v1::JobSpec proto;
  ToProto(JobSpec{}, &proto);
  EXPECT_EQ(proto.array_task_id(), 4294967295u);
  EXPECT_EQ(FromProto(proto)->array_task_id, kNoArrayTask);
}

TEST(Records, JobSpecShapeRefused) {
  v1::JobSpec proto;
  ToProto(FullSpec(), &proto);
  proto.set_min_nodes(0);
  EXPECT_EQ(FromProto(proto).error(), "job 12: min_nodes is 0 in the store");
  proto.set_min_nodes(1);
  proto.set_ntasks(0);
  EXPECT_EQ(FromProto(proto).error(), "job 12: ntasks is 0 in the store");
}

TEST(Records, ScriptArgumentWithANulIsRefused) {
  v1::JobSpec proto;
  ToProto(FullSpec(), &proto);
  proto.set_script_args(1, std::string("a\0b", 3));
  EXPECT_EQ(FromProto(proto).error(), "script argument 2 contains a NUL character");
}

class JobRecordTest : public ::testing::Test {
 protected:
  JobRecordTest() : load_(LoadClusterConfigText(kCluster)) { EXPECT_TRUE(load_.ok()); }

  static Job RunningJob() {
    Job job;
    job.spec = FullSpec();
    job.state = JobState::kRunning;
    job.reason = sched::PendingReason::kNone;
    job.partition = 0;
    job.allocation.nodes = {{0, {0, 1}, 300, {0}}, {1, {2, 3}, 300, {1}}};
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

TEST(Records, EveryJobStateName) {
  for (int i = 0; i <= static_cast<int>(JobState::kRequeued); ++i) {
    const auto state = static_cast<JobState>(i);
    EXPECT_EQ(ParseJobState(JobStateName(state)), state) << JobStateName(state);
  }
  EXPECT_EQ(ParseJobState("OUT_OF_MEMORY"), JobState::kOutOfMemory);
  EXPECT_EQ(ParseJobState("pending"), std::nullopt);
  EXPECT_EQ(ParseJobState(""), std::nullopt);
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
  node.not_responding = true;
  node.reason = "bad disk";
  node.reason_time = 1'700'000'000;
  node.reason_uid = 7;
  node.last_heard = 1'700'000'050;
  node.jobs = {4, 9};
  v1::NodeStatus proto;
  ToProto(node, "n1", false, &proto);
  EXPECT_EQ(proto.name(), "n1");
  EXPECT_EQ(proto.state(), "DRAINING*");
  const NodeStatus back = FromProto(proto);
  EXPECT_TRUE(back.registered);
  EXPECT_FALSE(back.down);
  EXPECT_TRUE(back.drained_by_health);
  EXPECT_EQ(back.reason, "bad disk");
  EXPECT_EQ(back.reason_uid, 7u);
  EXPECT_EQ(back.last_heard, 1'700'000'050);
  EXPECT_EQ(back.jobs, (std::set<uint64_t>{4, 9}));
}

}  // namespace
}  // namespace drover::ctld
