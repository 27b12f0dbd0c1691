// The accounting limits as the scheduler applies them: each kind of limit with Slurm's
// reason, a partition's QOS and OverPartQOS, the QOS flags that lift partition limits, and
// NoReserve.
#include "sched/limits.h"

#include <gtest/gtest.h>

#include <set>
#include <string_view>

#include "common/accounting.h"
#include "sched/scheduler.h"
#include "testing/sched_scenario.h"

namespace drover::sched {
namespace {

using testing::Scenario;

constexpr const char* kCluster =
    "DefMemPerCPU=100\n"
    "NodeName=n[1-2] CPUs=8 RealMemory=8000 Gres=gpu:4\n"
    "PartitionName=p Nodes=ALL Default=YES MaxTime=2:00:00 MaxNodes=1\n"
    "PartitionName=capped Nodes=ALL QOS=cap\n";

JobSpec& Gpus(Scenario& s, uint64_t id, uint32_t gpus, uint32_t nodes = 1) {
  JobSpec& job = s.Job(id);
  job.min_nodes = job.max_nodes = nodes;
  job.ntasks = nodes;
  job.gpus_per_node = gpus;
  return job;
}

Association Node(std::string account, std::string user, int parent) {
  Association association;
  association.account = std::move(account);
  association.user = std::move(user);
  association.parent = parent;
  return association;
}

Qos Named(std::string name) {
  Qos qos;
  qos.name = std::move(name);
  return qos;
}

// root > research > alice, and QOS normal and cap.
class LimitsScenario : public ::testing::Test {
 protected:
  LimitsScenario() : s(kCluster) {
    s.associations() = {Node("root", "", -1), Node("research", "", 0),
                        Node("research", "alice", 1)};
    s.qos() = {Named("normal"), Named("cap")};
  }
  Association& research() { return s.associations()[1]; }
  Association& alice() { return s.associations()[2]; }
  Qos& normal() { return s.qos()[0]; }
  Qos& cap() { return s.qos()[1]; }
  Scenario s;
};

TEST(LimitReasons, NamesAreSlurms) {
  EXPECT_EQ(
      PendingReasonName(LimitReason(LimitScope::kAssociation, LimitKind::kGrpMinutes, "gres/gpu")),
      "AssocGrpGRESMinutes");
  EXPECT_EQ(PendingReasonName(LimitReason(LimitScope::kQos, LimitKind::kGrpMinutes, "cpu")),
            "QOSGrpCPUMinutesLimit");
  EXPECT_EQ(PendingReasonName(LimitReason(LimitScope::kQos, LimitKind::kPerAccount, "gres/gpu")),
            "MaxGRESPerAccount");
  EXPECT_EQ(PendingReasonName(LimitReason(LimitScope::kQos, LimitKind::kMin, "cpu")),
            "QOSMinCpuNotSatisfied");
  EXPECT_EQ(PendingReasonName(LimitReason(LimitScope::kQos, LimitKind::kPerNode, "mem")),
            "QOSMaxMemoryPerNode");
  EXPECT_EQ(LimitReason(LimitScope::kQos, LimitKind::kPerNode, "node"), PendingReason::kNone);
  EXPECT_EQ(LimitReason(LimitScope::kQos, LimitKind::kGrp, "license/x"), PendingReason::kNone);
  EXPECT_EQ(PendingReasonName(kLastPendingReason), "QOSMinBilling");
  // Every reason has its own name: the metrics seed one series each.
  std::set<std::string_view> names;
  for (int r = 0; r <= static_cast<int>(kLastPendingReason); ++r)
    EXPECT_TRUE(names.insert(PendingReasonName(static_cast<PendingReason>(r))).second)
        << PendingReasonName(static_cast<PendingReason>(r));
}

TEST_F(LimitsScenario, PerJobLimitsOfTheQosAndTheAssociation) {
  normal().limits.max_tres_per_job = *ParseTres("gres/gpu=3");
  normal().min_tres_per_job = *ParseTres("cpu=2");
  alice().limits.max_tres_per_node = *ParseTres("gres/gpu=2");
  alice().limits.max_tres_mins_per_job = *ParseTres("gres/gpu=100");
  Gpus(s, 1, 4);                  // 4 GPUs: over MaxTRES
  Gpus(s, 2, 1).ntasks = 1;       // 1 CPU: under MinTRES
  Gpus(s, 3, 3).ntasks = 2;       // 3 on one node: over MaxTRESPerNode
  Gpus(s, 4, 2).ntasks = 2;       // 2 GPUs x 60 min: over MaxTRESMins
  JobSpec& fits = Gpus(s, 5, 2);  // 2 GPUs x 30 min
  fits.ntasks = 2;
  fits.time_limit_seconds = 1800;
  s.Run();
  EXPECT_EQ(s.Outcome(1), "QOSMaxGRESPerJob");
  EXPECT_EQ(s.Outcome(2), "QOSMinCpuNotSatisfied");
  EXPECT_EQ(s.Outcome(3), "AssocMaxGRESPerNode");
  EXPECT_EQ(s.Outcome(4), "AssocMaxGRESMinutesPerJob");
  EXPECT_NE(s.Started(5), nullptr);
}

TEST_F(LimitsScenario, GroupLimitsOverWhatRunsAndWhatWasUsed) {
  // bob's job in research holds 2 GPUs with 2600 s left (started at 0, ends at 3600; now 1000).
  s.associations().push_back(Node("research", "bob", 1));
  s.Running(100, "n1", {0, 1}).end_time = 3600;
  research().limits.grp_tres_run_mins = *ParseTres("gres/gpu=150");
  Gpus(s, 1, 1);  // 2 x 2600/60 = 86.7 running + 60 asked: within 150
  s.Run();
  EXPECT_NE(s.Started(1), nullptr);
  research().limits.grp_tres_run_mins = *ParseTres("gres/gpu=140");
  s.Run();
  EXPECT_EQ(s.Outcome(1), "AssocGrpGRESRunMinutes");
  research().limits.grp_tres_run_mins = TresList();
  research().limits.grp_jobs = 1;
  s.Run();
  EXPECT_EQ(s.Outcome(1), "AssocGrpJobsLimit");
  research().limits.grp_jobs = kNoLimit;
  // Usage is counted over the subtree: bob's GPU-seconds count against research's budget.
  s.associations()[3].used.gpu = 6000;  // 100 GPU-minutes
  research().limits.grp_tres_mins = *ParseTres("gres/gpu=100");
  s.Run();
  EXPECT_EQ(s.Outcome(1), "AssocGrpGRESMinutes");
  research().limits.grp_tres_mins = TresList();
  alice().used.wall = 7200;
  alice().limits.grp_wall_seconds = 3600;
  s.Run();
  EXPECT_EQ(s.Outcome(1), "AssocGrpWallLimit");
}

TEST_F(LimitsScenario, QosPerAccountAndGroupLimits) {
  s.Running(100, "n1", {0}).qos = "normal";  // bob, account research
  normal().max_jobs_per_account = 1;
  Gpus(s, 1, 1);
  s.Run();
  EXPECT_EQ(s.Outcome(1), "MaxJobsPerAccount");
  normal().max_jobs_per_account = kNoLimit;
  normal().max_tres_per_account = *ParseTres("gres/gpu=1");
  s.Run();
  EXPECT_EQ(s.Outcome(1), "MaxGRESPerAccount");
  normal().max_tres_per_account = TresList();
  normal().limits.grp_jobs = 1;
  s.Run();
  EXPECT_EQ(s.Outcome(1), "QOSGrpJobsLimit");
  normal().limits.grp_jobs = kNoLimit;
  normal().used.gpu = 60 * 60;
  normal().limits.grp_tres_mins = *ParseTres("gres/gpu=60");
  s.Run();
  EXPECT_EQ(s.Outcome(1), "QOSGrpGRESMinutes");
}

TEST_F(LimitsScenario, APartitionsQosAppliesUnlessTheJobsQosOverridesIt) {
  cap().limits.max_tres_per_job = *ParseTres("gres/gpu=1");
  JobSpec& job = Gpus(s, 1, 2);
  job.partitions = {"capped"};
  s.Run();
  EXPECT_EQ(s.Outcome(1), "QOSMaxGRESPerJob");
  s.qos().push_back(Named("big"));
  s.qos().back().flags = acct::kOverPartQos;
  job.qos = "big";
  s.Run();
  EXPECT_NE(s.Started(1), nullptr);
}

TEST_F(LimitsScenario, QosFlagsLiftPartitionLimits) {
  Gpus(s, 1, 1).time_limit_seconds = 3 * 3600;  // p has MaxTime=2:00:00
  Gpus(s, 2, 1, 2);                             // p has MaxNodes=1
  s.Run();
  EXPECT_EQ(s.Outcome(1), "PartitionTimeLimit");
  EXPECT_EQ(s.Outcome(2), "PartitionNodeLimit");
  normal().flags = acct::kPartitionTimeLimit | acct::kPartitionMaxNodes;
  s.Run();
  EXPECT_NE(s.Started(1), nullptr);
  EXPECT_NE(s.Started(2), nullptr);
}

TEST_F(LimitsScenario, UsageThresholdHoldsAnAssociationBelowIt) {
  s.associations().push_back(Node("research", "bob", 1));
  alice().usage = 1e6;  // far more than bob: alice's fair share is the lowest
  normal().flags = acct::kEnforceUsageThreshold;
  normal().usage_threshold = 0.9;
  Gpus(s, 1, 1);
  s.Run();
  EXPECT_EQ(s.Outcome(1), "QOSUsageThreshold");
}

TEST_F(LimitsScenario, RunningJobsAreTimedOutWhenABudgetIsUsedUpOrTheirOwnMinutesPassAMax) {
  JobUsage two_gpus{8, 2, 1, 800, 8};
  auto check = [&](int qos, int partition_qos, int64_t run_seconds) {
    LimitTracker tracker(s.associations(), s.qos());
    return std::string(
        PendingReasonName(tracker.CheckRunning(qos, partition_qos, 2, two_gpus, run_seconds)));
  };
  EXPECT_EQ(check(0, -1, 36000), "None");  // no limit
  // The account's budget, counted over its subtree: alice's usage spends it.
  research().limits.grp_tres_mins = *ParseTres("gres/gpu=100");
  alice().used.gpu = 99 * 60;
  EXPECT_EQ(check(0, -1, 60), "None");
  alice().used.gpu = 100 * 60;
  EXPECT_EQ(check(0, -1, 60), "AssocGrpGRESMinutes");
  research().limits.grp_tres_mins = TresList();
  // GrpWall of the QOS.
  normal().limits.grp_wall_seconds = 3600;
  normal().used.wall = 3600;
  EXPECT_EQ(check(0, -1, 60), "QOSGrpWallLimit");
  normal().limits.grp_wall_seconds = kNoLimit;
  // The job's own TRES-minutes as Slurm counts them, whole minutes run x TRES, plus one: with
  // 8 CPUs and a limit of 25, 3 minutes make 25 (not over), 4 make 33.
  alice().limits.max_tres_mins_per_job = *ParseTres("cpu=25");
  EXPECT_EQ(check(0, -1, 3 * 60 + 59), "None");
  EXPECT_EQ(check(0, -1, 4 * 60), "AssocMaxCpuMinutesPerJobLimit");
  alice().limits.max_tres_mins_per_job = TresList();
  // The root association's limits do not apply to running jobs.
  s.associations()[0].limits.grp_tres_mins = *ParseTres("gres/gpu=1");
  alice().used.gpu = 10 * 60;
  EXPECT_EQ(check(0, -1, 60), "None");
  s.associations()[0].limits.grp_tres_mins = TresList();
  alice().used.gpu = 0;
  // A partition's QOS counts, unless the job's QOS has OverPartQOS.
  cap().limits.max_tres_mins_per_job = *ParseTres("cpu=60");
  EXPECT_EQ(check(0, 1, 10 * 60), "QOSMaxCpuMinutesPerJobLimit");
  normal().flags |= acct::kOverPartQos;
  EXPECT_EQ(check(0, 1, 10 * 60), "None");
}

TEST_F(LimitsScenario, ANoReserveJobHoldsNothingForItsPlannedStart) {
  s.Running(100, "n[1-2]", {0, 1, 2, 3}, 8);  // everything busy until 3600
  Gpus(s, 1, 4);
  const SchedulerResult& held = s.Run();
  bool reserved = false;
  for (const PlannedStart& plan : held.planned)
    if (plan.job_id == 1) reserved = plan.reserved;
  EXPECT_TRUE(reserved);
  normal().flags = acct::kNoReserve;
  const SchedulerResult& free = s.Run();
  bool planned = false;
  for (const PlannedStart& plan : free.planned)
    if (plan.job_id == 1) {
      planned = true;
      EXPECT_FALSE(plan.reserved);
    }
  EXPECT_TRUE(planned);
}

}  // namespace
}  // namespace drover::sched
