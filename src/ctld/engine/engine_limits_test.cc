// Accounting limits in the engine, end to end from sacctmgr's changes: GrpTRESMins budgets
// (and safe), submit limits, DenyOnLimit, MaxWall as the default time limit, usage decay and
// PriorityUsageResetPeriod, and the stored form of usage.
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "ctld/engine/engine_test_support.h"

namespace drover::ctld {
namespace {

const Caller kOperator{0, 0, true, "root"};

std::string Cluster(const std::string& extra) {
  return "ClusterName=t\nGresTypes=gpu\nDefMemPerCPU=100\nKillWait=30\nSlurmdTimeout=3000\n"
         "MinJobAge=300\n" +
         extra +
         "NodeName=n[1-2] CPUs=8 RealMemory=8000 Gres=gpu:2\n"
         "PartitionName=p Nodes=ALL Default=YES MaxTime=4:00:00\n";
}

class LimitsEngineTest : public EngineTest {
 protected:
  explicit LimitsEngineTest(const std::string& extra) : EngineTest(Cluster(extra)) {
    Admin(acct::Verb::kAdd, acct::Entity::kAccount, {"research"});
    Admin(acct::Verb::kAdd, acct::Entity::kUser, {"alice", "account=research"});
  }
  void Admin(acct::Verb verb, acct::Entity entity, std::vector<std::string> words) {
    Reply reply =
        AskEngine(engine_, token_, last_,
                  ChangeAccounting{0, kOperator, {verb, entity, std::move(words)}, false});
    ASSERT_TRUE(reply.ok) << reply.error;
  }
  // A submission as alice, with the reply (refusals included).
  Reply Try(JobSpec spec) {
    spec.user = "alice";
    spec.account = "research";
    EngineOutput out = Apply(SubmitJob{++token_, Caller{1000, 1000}, spec, "", "#!/bin/sh\n"});
    const Reply* reply = FindReply(out, token_);
    return reply ? *reply : Reply{};
  }
  static JobSpec GpuHours(uint32_t gpus, int64_t seconds) {
    JobSpec spec = Gpus(gpus);
    spec.time_limit_seconds = seconds;
    return spec;
  }
  const sched::Association& Alice() const {
    for (const sched::Association& association : engine_.associations())
      if (association.account == "research" && association.user == "alice") return association;
    ADD_FAILURE() << "no association for alice";
    return engine_.associations().front();
  }
  void End(uint64_t id) {
    const Job* job = engine_.FindJob(id);
    ASSERT_NE(job, nullptr);
    Apply(JobEnded{id, engine_.cluster().nodes[job->allocation.nodes.front().node].name, 0, 0});
  }
};

class BudgetTest : public LimitsEngineTest {
 protected:
  BudgetTest() : LimitsEngineTest("AccountingStorageEnforce=limits\nPriorityDecayHalfLife=0\n") {}
};

TEST_F(BudgetTest, AnAccountOverItsGrpTresMinsStopsStartingJobs) {
  Admin(acct::Verb::kModify, acct::Entity::kAccount,
        {"research", "set", "GrpTRESMins=gres/gpu=60"});
  uint64_t first = Submit(GpuHours(1, 7200));
  Pass(1);
  ASSERT_EQ(State(first), JobState::kRunning);
  // 30 GPU-minutes used: still within the budget, so a second job starts.
  for (int i = 0; i < 3; ++i) Pass(600);
  uint64_t second = Submit(GpuHours(1, 7200));
  Pass(10);
  EXPECT_EQ(State(second), JobState::kRunning);
  // Two GPUs for 15 more minutes: 60 GPU-minutes, the budget is spent. A new job waits, and
  // the running ones are timed out as Slurm's acct_policy_job_time_out does, their Reason
  // naming the limit (only safe would have kept them from starting).
  for (int i = 0; i < 3; ++i) Pass(300);
  EXPECT_GE(Alice().used.gpu, 3600.0 * 60 / 60);
  EXPECT_EQ(engine_.FindJob(first)->time_limit_signalled_at, 0);
  uint64_t third = Submit(GpuHours(1, 600));
  Pass(10);
  EXPECT_EQ(State(third), JobState::kPending);
  EXPECT_EQ(Reason(third), "AssocGrpGRESMinutes");
  for (uint64_t id : {first, second}) {
    EXPECT_NE(engine_.FindJob(id)->time_limit_signalled_at, 0) << id;
    EXPECT_EQ(Reason(id), "AssocGrpGRESMinutes");
    End(id);
    EXPECT_EQ(State(id), JobState::kTimeout);
  }
  // A raised budget starts the waiting one at the next cycle.
  Admin(acct::Verb::kModify, acct::Entity::kAccount,
        {"research", "set", "GrpTRESMins=gres/gpu=1000"});
  Pass(10);
  EXPECT_EQ(State(third), JobState::kRunning);
  EXPECT_EQ(engine_.FindJob(third)->time_limit_signalled_at, 0);
}

TEST_F(BudgetTest, ARunningJobPastAMaxTresMinsPerJobIsTimedOut) {
  uint64_t job = Submit(GpuHours(2, 3600));
  Pass(1);
  ASSERT_EQ(State(job), JobState::kRunning);
  Pass(600);  // 10 minutes on 2 GPUs: 20 GPU-minutes, 21 as Slurm counts (one more)
  EXPECT_EQ(engine_.FindJob(job)->time_limit_signalled_at, 0);
  Admin(acct::Verb::kModify, acct::Entity::kUser, {"alice", "set", "MaxTRESMins=gres/gpu=30"});
  Pass(60);  // 11 minutes: 23
  EXPECT_EQ(engine_.FindJob(job)->time_limit_signalled_at, 0);
  Pass(240);  // 15 minutes: 31
  EXPECT_NE(engine_.FindJob(job)->time_limit_signalled_at, 0);
  EXPECT_EQ(Reason(job), "AssocMaxGRESMinutesPerJob");
  End(job);
  EXPECT_EQ(State(job), JobState::kTimeout);
  EXPECT_EQ(Reason(job), "AssocMaxGRESMinutesPerJob");  // the ended job keeps it
}

class SafeTest : public LimitsEngineTest {
 protected:
  SafeTest() : LimitsEngineTest("AccountingStorageEnforce=safe\nPriorityDecayHalfLife=0\n") {}
};

TEST_F(SafeTest, ARunningJobIsNotTimedOutByABudgetLoweredAfterItStarted) {
  uint64_t job = Submit(GpuHours(2, 3600));
  Pass(1);
  ASSERT_EQ(State(job), JobState::kRunning);
  Admin(acct::Verb::kModify, acct::Entity::kUser, {"alice", "set", "MaxTRESMins=gres/gpu=10"});
  Admin(acct::Verb::kModify, acct::Entity::kAccount,
        {"research", "set", "GrpTRESMins=gres/gpu=10"});
  for (int i = 0; i < 3; ++i) Pass(600);
  EXPECT_EQ(engine_.FindJob(job)->time_limit_signalled_at, 0);
  EXPECT_EQ(State(job), JobState::kRunning);
}

TEST_F(SafeTest, AJobThatCouldNotFinishWithinTheBudgetIsRefusedOrWaits) {
  Admin(acct::Verb::kModify, acct::Entity::kAccount,
        {"research", "set", "GrpTRESMins=gres/gpu=100"});
  // 120 GPU-minutes asked of a 100-minute budget: it could never finish.
  Reply refused = Try(GpuHours(2, 3600));
  EXPECT_FALSE(refused.ok);
  EXPECT_EQ(refused.error.rfind("Job violates accounting/QOS policy (job submit limit, user's "
                                "size and/or time limits)",
                                0),
            0u)
      << refused.error;
  EXPECT_NE(refused.error.find("AssocGrpGRESMinutes"), std::string::npos) << refused.error;
  uint64_t first = Submit(GpuHours(1, 3600));
  uint64_t second = Submit(GpuHours(1, 3600));
  Pass(1);
  EXPECT_EQ(State(first), JobState::kRunning);
  // 60 minutes held by the first and 60 asked: more than the 100 left.
  EXPECT_EQ(State(second), JobState::kPending);
  EXPECT_EQ(Reason(second), "AssocGrpGRESMinutes");
  // Without safe the second would start (the budget is not spent): see BudgetTest.
}

class SubmitLimitTest : public LimitsEngineTest {
 protected:
  SubmitLimitTest() : LimitsEngineTest("AccountingStorageEnforce=limits\n") {}
};

TEST_F(SubmitLimitTest, MaxSubmitJobsRefusesTheNextJobUntilOneEnds) {
  Admin(acct::Verb::kModify, acct::Entity::kUser, {"alice", "set", "MaxSubmitJobs=2"});
  uint64_t first = Submit(Gpus(1));
  Submit(Gpus(1));
  Reply third = Try(Gpus(1));
  EXPECT_FALSE(third.ok);
  EXPECT_NE(third.error.find("MaxSubmitJobs of user alice under account research allows 2 jobs "
                             "pending or running and 2 are"),
            std::string::npos)
      << third.error;
  Pass(1);
  ASSERT_EQ(State(first), JobState::kRunning);
  End(first);
  EXPECT_TRUE(Try(Gpus(1)).ok);
  // An account's GrpSubmitJobs counts its users' jobs together.
  Admin(acct::Verb::kModify, acct::Entity::kUser, {"alice", "set", "MaxSubmitJobs=-1"});
  Admin(acct::Verb::kModify, acct::Entity::kAccount, {"research", "set", "GrpSubmitJobs=3"});
  EXPECT_TRUE(Try(Gpus(1)).ok);
  Reply over = Try(Gpus(1));
  EXPECT_FALSE(over.ok);
  EXPECT_NE(over.error.find("GrpSubmitJobs of account research allows 3"), std::string::npos)
      << over.error;
}

TEST_F(SubmitLimitTest, AJobMovedToAnotherQosLeavesItsCount) {
  Admin(acct::Verb::kAdd, acct::Entity::kQos, {"other"});
  Admin(acct::Verb::kModify, acct::Entity::kQos, {"normal", "set", "GrpSubmitJobs=1"});
  JobSpec held = Gpus(1);
  held.hold = HoldKind::kUser;
  uint64_t first = Submit(held);
  EXPECT_FALSE(Try(Gpus(1)).ok);
  JobFilter only;
  only.job_ids = {first};
  UpdateJob update{++token_, kOperator, only, {}, {}, {}, {}, std::string("other"), {}};
  Reply moved = AskEngine(engine_, token_, last_, update);
  ASSERT_TRUE(moved.ok) << moved.error;
  EXPECT_TRUE(Try(Gpus(1)).ok);  // normal's one job is the new one
  EXPECT_FALSE(Try(Gpus(1)).ok);
}

TEST_F(SubmitLimitTest, DenyOnLimitRefusesWhatWouldOtherwiseWait) {
  Admin(acct::Verb::kModify, acct::Entity::kQos, {"normal", "set", "MaxTRESPerJob=gres/gpu=1"});
  uint64_t waits = Submit(Gpus(2));
  Pass(1);
  EXPECT_EQ(State(waits), JobState::kPending);
  EXPECT_EQ(Reason(waits), "QOSMaxGRESPerJob");
  Admin(acct::Verb::kModify, acct::Entity::kQos, {"normal", "set", "Flags=DenyOnLimit"});
  Reply refused = Try(Gpus(2));
  EXPECT_FALSE(refused.ok);
  EXPECT_NE(refused.error.find("QOSMaxGRESPerJob"), std::string::npos) << refused.error;
  EXPECT_TRUE(Try(Gpus(1)).ok);
}

TEST_F(SubmitLimitTest, MaxWallIsTheTimeLimitOfAJobThatAsksForNone) {
  Admin(acct::Verb::kModify, acct::Entity::kUser, {"alice", "set", "MaxWall=30"});
  Reply accepted = Try(Gpus(1));
  ASSERT_TRUE(accepted.ok) << accepted.error;
  EXPECT_EQ(engine_.FindJob(accepted.job_ids.front())->spec.time_limit_seconds, 1800);
  uint64_t longer = Submit(GpuHours(1, 3600));
  Pass(1);
  EXPECT_EQ(Reason(longer), "AssocMaxWallDurationPerJobLimit");
}

class DecayTest : public LimitsEngineTest {
 protected:
  DecayTest() : LimitsEngineTest("PriorityDecayHalfLife=1:00:00\n") {}
};

TEST_F(DecayTest, UsageHalvesEachHalfLife) {
  uint64_t job = Submit(GpuHours(1, 7200));
  Pass(1);
  ASSERT_EQ(State(job), JobState::kRunning);
  Pass(60);
  End(job);
  double usage = Alice().usage, gpu = Alice().used.gpu;
  ASSERT_GT(usage, 0);
  ASSERT_GT(gpu, 0);
  Pass(3600);
  EXPECT_NEAR(Alice().usage, usage / 2, usage * 1e-9);
  EXPECT_NEAR(Alice().used.gpu, gpu / 2, gpu * 1e-9);
}

class ResetTest : public LimitsEngineTest {
 protected:
  ResetTest() : LimitsEngineTest("PriorityDecayHalfLife=0\nPriorityUsageResetPeriod=QUARTERLY\n") {}
  static void SetUpTestSuite() {
    // Quarters begin at local midnight: the test reads them in UTC.
    setenv("TZ", "UTC", 1);
    tzset();
  }
};

TEST_F(ResetTest, AQuarterlyResetClearsRawUsage) {
  clock_.Set(1775001600 - 7200);  // 2026-03-31 22:00 UTC
  Pass(1);
  uint64_t job = Submit(GpuHours(1, 3600));
  Pass(10);
  ASSERT_EQ(State(job), JobState::kRunning);
  Pass(1800);
  End(job);
  Pass(60);
  double usage = Alice().usage;
  EXPECT_GT(usage, 0);
  Pass(3600);  // 23:3x: the same quarter, no decay
  EXPECT_DOUBLE_EQ(Alice().usage, usage);
  Pass(3600);  // past midnight, April 1st: a new quarter
  EXPECT_EQ(Alice().usage, 0);
  EXPECT_EQ(Alice().used.gpu, 0);
  EXPECT_EQ(engine_.last_usage_reset(), 1775001600);
  EXPECT_TRUE(engine_.TakeUsageReset());
}

TEST(StoredUsage, RoundTripsAndReadsTheFirstLayout) {
  sched::TresSeconds used;
  used.cpu = 10.5;
  used.gpu = 7200;
  used.billing = 3;
  used.wall = 60;
  double usage = 0;
  sched::TresSeconds read;
  ParseUsage(FormatUsage(12.25, used), usage, read);
  EXPECT_DOUBLE_EQ(usage, 12.25);
  EXPECT_DOUBLE_EQ(read.cpu, 10.5);
  EXPECT_DOUBLE_EQ(read.gpu, 7200);
  EXPECT_DOUBLE_EQ(read.billing, 3);
  EXPECT_DOUBLE_EQ(read.wall, 60);
  // A value stored before TRES were counted: the billing usage alone.
  ParseUsage("42.000000", usage, read);
  EXPECT_DOUBLE_EQ(usage, 42);
  EXPECT_EQ(read.gpu, 0);
  // Damage reads as nothing used, never as a negative or endless amount.
  ParseUsage("-5 nan inf x", usage, read);
  EXPECT_EQ(usage, 0);
  EXPECT_EQ(read.cpu, 0);
}

}  // namespace
}  // namespace drover::ctld
