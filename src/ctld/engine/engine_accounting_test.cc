// Accounting in the engine: sacctmgr's changes (operators only), QOS limits and preemption by
// QOS from the database, AccountingStorageEnforce at submission, and the tree the scheduler
// reads surviving a rebuild with its usage.
#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <vector>

#include "ctld/engine/engine_test_support.h"

namespace drover::ctld {
namespace {

const Caller kOperator{0, 0, true, "root"};
const Caller kAlice{1000, 1000, false, "alice"};

class AccountingEngineTest : public EngineTest {
 protected:
  explicit AccountingEngineTest(const std::string& conf = kEngineTestCluster) : EngineTest(conf) {}

  Reply Change(const Caller& caller, acct::Verb verb, acct::Entity entity,
               std::vector<std::string> words, bool dry_run = false) {
    return AskEngine(engine_, token_, last_,
                     ChangeAccounting{0, caller, {verb, entity, std::move(words)}, dry_run});
  }
  void Admin(acct::Verb verb, acct::Entity entity, std::vector<std::string> words) {
    Reply reply = Change(kOperator, verb, entity, std::move(words));
    ASSERT_TRUE(reply.ok) << reply.error;
  }
  Reply SubmitAs(const Caller& caller, JobSpec spec) {
    spec.time_limit_seconds = spec.time_limit_seconds ? spec.time_limit_seconds : 3600;
    return AskEngine(engine_, token_, last_, SubmitJob{0, caller, spec, "", "#!/bin/sh\n"});
  }
};

TEST_F(AccountingEngineTest, ChangesNeedAnOperatorAndADryRunChangesNothing) {
  Reply refused = Change(kAlice, acct::Verb::kAdd, acct::Entity::kAccount, {"ml"});
  EXPECT_FALSE(refused.ok);
  EXPECT_EQ(refused.error, "Access/permission denied");
  Reply asked = Change(kOperator, acct::Verb::kAdd, acct::Entity::kAccount, {"ml"}, true);
  ASSERT_TRUE(asked.ok) << asked.error;
  EXPECT_TRUE(asked.changed);
  EXPECT_NE(asked.message.find(" Adding Account(s)\n  ml\n"), std::string::npos);
  EXPECT_FALSE(last_.changed_accounting);
  EXPECT_EQ(engine_.accounting().FindAccount("ml"), nullptr);
  Reply added = Change(kOperator, acct::Verb::kAdd, acct::Entity::kAccount, {"ml", "fairshare=30"});
  ASSERT_TRUE(added.ok) << added.error;
  EXPECT_TRUE(last_.changed_accounting);
  ASSERT_NE(engine_.accounting().FindAccount("ml"), nullptr);
  // The scheduler's tree has the account with its shares, under root.
  bool found = false;
  for (const sched::Association& association : engine_.associations())
    if (association.account == "ml" && association.user.empty()) {
      found = true;
      EXPECT_EQ(association.shares, 30u);
      EXPECT_EQ(association.parent, 0);
    }
  EXPECT_TRUE(found);
  EXPECT_NE(engine_.Publish()->accounting->FindAccount("ml"), nullptr);
}

constexpr const char* kLimitsCluster =
    "ClusterName=t\nGresTypes=gpu\nDefMemPerCPU=100\nKillWait=30\nSlurmdTimeout=300\n"
    "AccountingStorageEnforce=limits\n"
    "NodeName=n[1-2] CPUs=8 RealMemory=8000 Gres=gpu:2\n"
    "PartitionName=p Nodes=ALL Default=YES MaxTime=2:00:00\n";

class LimitsTest : public AccountingEngineTest {
 protected:
  LimitsTest() : AccountingEngineTest(kLimitsCluster) {}
};

TEST_F(AccountingEngineTest, LimitsHoldOnlyWithAccountingStorageEnforceLimits) {
  Admin(acct::Verb::kModify, acct::Entity::kQos, {"normal", "set", "MaxTRESPerUser=gres/gpu=1"});
  uint64_t first = Submit(Gpus(1));
  uint64_t second = Submit(Gpus(1));
  Pass(1);
  EXPECT_EQ(State(first), JobState::kRunning);
  EXPECT_EQ(State(second), JobState::kRunning);
}

TEST_F(LimitsTest, QosMaxTresPerUserKeepsTheNextGpuPendingUntilRaised) {
  // Alice's association: enforcing limits implies associations.
  Admin(acct::Verb::kAdd, acct::Entity::kAccount, {"research"});
  Admin(acct::Verb::kAdd, acct::Entity::kUser, {"alice", "account=research"});
  Admin(acct::Verb::kModify, acct::Entity::kQos, {"normal", "set", "MaxTRESPerUser=gres/gpu=2"});
  uint64_t first = Submit(Gpus(1));
  uint64_t second = Submit(Gpus(1));
  uint64_t third = Submit(Gpus(1));
  Pass(1);
  EXPECT_EQ(engine_.FindJob(first)->spec.qos, "normal");
  EXPECT_EQ(State(first), JobState::kRunning);
  EXPECT_EQ(State(second), JobState::kRunning);
  EXPECT_EQ(State(third), JobState::kPending);
  EXPECT_EQ(Reason(third), "QOSMaxGRESPerUser");
  // Raised: the next cycle starts it, no restart.
  Admin(acct::Verb::kModify, acct::Entity::kQos, {"normal", "set", "MaxTRESPerUser=gres/gpu=3"});
  Pass(1);
  EXPECT_EQ(State(third), JobState::kRunning);
}

TEST_F(AccountingEngineTest, UsageStaysWithItsAssociationWhenTheTreeIsRebuilt) {
  uint64_t job = Submit(Gpus(1));
  Pass(1);
  ASSERT_EQ(State(job), JobState::kRunning);
  Pass(100);
  double before = 0;
  for (const sched::Association& association : engine_.associations())
    if (association.account == "research" && association.user == "alice")
      before = association.usage;
  EXPECT_GT(before, 0);
  Admin(acct::Verb::kAdd, acct::Entity::kAccount, {"research"});
  Admin(acct::Verb::kAdd, acct::Entity::kUser, {"alice", "account=research"});
  double after = -1;
  for (const sched::Association& association : engine_.associations())
    if (association.account == "research" && association.user == "alice") after = association.usage;
  EXPECT_DOUBLE_EQ(after, before);
}

constexpr const char* kEnforcedCluster =
    "ClusterName=t\nGresTypes=gpu\nDefMemPerCPU=100\nKillWait=30\nSlurmdTimeout=300\n"
    "AccountingStorageEnforce=associations,qos\n"
    "NodeName=n[1-2] CPUs=8 RealMemory=8000 Gres=gpu:2\n"
    "PartitionName=p Nodes=ALL Default=YES MaxTime=2:00:00\n";

class EnforcedAccountingTest : public AccountingEngineTest {
 protected:
  EnforcedAccountingTest() : AccountingEngineTest(kEnforcedCluster) {}
};

TEST_F(EnforcedAccountingTest, AJobNeedsAnAssociationAndOneOfItsQos) {
  JobSpec spec;
  spec.account = "ml";
  Reply refused = SubmitAs(kAlice, spec);
  EXPECT_FALSE(refused.ok);
  EXPECT_EQ(refused.error.rfind("Invalid account or account/partition combination specified", 0),
            0u)
      << refused.error;
  Admin(acct::Verb::kAdd, acct::Entity::kAccount, {"ml"});
  Admin(acct::Verb::kAdd, acct::Entity::kUser, {"alice", "account=ml"});
  Admin(acct::Verb::kAdd, acct::Entity::kQos, {"urgent", "priority=100"});
  Reply accepted = SubmitAs(kAlice, spec);
  ASSERT_TRUE(accepted.ok) << accepted.error;
  // No account given: the user's default; no QOS: the association's default.
  Reply defaulted = SubmitAs(kAlice, JobSpec{});
  ASSERT_TRUE(defaulted.ok) << defaulted.error;
  EXPECT_EQ(engine_.FindJob(defaulted.job_ids.front())->spec.account, "ml");
  EXPECT_EQ(engine_.FindJob(defaulted.job_ids.front())->spec.qos, "normal");
  spec.qos = "urgent";
  Reply qos = SubmitAs(kAlice, spec);
  EXPECT_FALSE(qos.ok);
  EXPECT_EQ(qos.error.rfind("Invalid qos specification", 0), 0u) << qos.error;
  Admin(acct::Verb::kModify, acct::Entity::kAccount, {"ml", "set", "qos+=urgent"});
  EXPECT_TRUE(SubmitAs(kAlice, spec).ok);
}

constexpr const char* kQosPreemptCluster =
    "ClusterName=t\nGresTypes=gpu\nDefMemPerCPU=100\nKillWait=30\nSlurmdTimeout=300\n"
    "PreemptType=preempt/qos\nPreemptMode=REQUEUE\nPriorityType=priority/multifactor\n"
    "PriorityWeightQOS=10000\n"
    "NodeName=n[1-2] CPUs=8 RealMemory=8000 Gres=gpu:2\n"
    "PartitionName=p Nodes=ALL Default=YES MaxTime=2:00:00\n";

class QosPreemptionTest : public AccountingEngineTest {
 protected:
  QosPreemptionTest() : AccountingEngineTest(kQosPreemptCluster) {}
};

TEST_F(QosPreemptionTest, UrgentPreemptsScavengerAfterItsGraceTime) {
  // GraceTime is the preempted job's QOS's, as Slurm's.
  Admin(acct::Verb::kAdd, acct::Entity::kQos, {"scavenger", "priority=0", "gracetime=120"});
  Admin(acct::Verb::kAdd, acct::Entity::kQos, {"urgent", "priority=1000", "preempt=scavenger"});
  std::vector<uint64_t> scavengers;
  for (int i = 0; i < 2; ++i) {
    JobSpec spec = Gpus(2);
    spec.qos = "scavenger";
    spec.requeue = true;
    scavengers.push_back(Submit(spec));
  }
  Pass(1);
  for (uint64_t id : scavengers) ASSERT_EQ(State(id), JobState::kRunning);
  JobSpec urgent = Gpus(2);
  urgent.qos = "urgent";
  uint64_t high = Submit(urgent);
  Pass(10);  // past the shortest time between cycles
  int noticed = 0;
  for (uint64_t id : scavengers)
    if (engine_.FindJob(id)->preempted_at) ++noticed;
  EXPECT_EQ(noticed, 1);
  EXPECT_EQ(State(high), JobState::kPending);
  // Only after its grace time is the preempted job requeued and the urgent one started.
  Pass(60);
  EXPECT_EQ(State(high), JobState::kPending);
  Pass(61);
  for (int i = 0; i < 3 && State(high) != JobState::kRunning; ++i) {
    for (uint64_t id : scavengers)
      if (engine_.FindJob(id)->preempted_at && State(id) != JobState::kPending)
        for (int node : engine_.FindJob(id)->NodeIndexes())
          Apply(JobEnded{id, engine_.cluster().nodes[node].name, 0, SIGKILL});
    Pass(10);
  }
  EXPECT_EQ(State(high), JobState::kRunning);
}

TEST_F(QosPreemptionTest, SuspendStopsTheVictimAndResumesItWhenItsGpusAreFree) {
  Admin(acct::Verb::kAdd, acct::Entity::kQos, {"scavenger", "priority=0", "preemptmode=suspend"});
  Admin(acct::Verb::kAdd, acct::Entity::kQos, {"urgent", "priority=1000", "preempt=scavenger"});
  std::vector<uint64_t> scavengers;
  for (int i = 0; i < 2; ++i) {
    JobSpec spec = Gpus(2);
    spec.qos = "scavenger";
    scavengers.push_back(Submit(spec));
  }
  Pass(1);
  for (uint64_t id : scavengers) ASSERT_EQ(State(id), JobState::kRunning);
  JobSpec urgent = Gpus(2);
  urgent.qos = "urgent";
  uint64_t high = Submit(urgent);
  std::vector<SignalJob> signals = Effects<SignalJob>();  // a cycle may run at submission
  Pass(10);
  for (const SignalJob& signal : Effects<SignalJob>()) signals.push_back(signal);
  uint64_t victim = 0;
  for (uint64_t id : scavengers)
    if (State(id) == JobState::kSuspended) victim = id;
  ASSERT_NE(victim, 0u);
  // Stopped at once, not signalled to end.
  bool stopped = false;
  for (const SignalJob& signal : signals) {
    EXPECT_NE(signal.signal, SIGTERM);
    stopped = stopped || (signal.job_id == victim && signal.signal == SIGSTOP);
  }
  EXPECT_TRUE(stopped);
  int64_t limit = engine_.FindJob(victim)->end_time;
  int64_t stopped_at = engine_.FindJob(victim)->suspend_time;
  Pass(10);
  EXPECT_EQ(State(high), JobState::kRunning) << Reason(high);
  EXPECT_EQ(State(victim), JobState::kSuspended);
  EXPECT_EQ(engine_.FindJob(high)->NodeIndexes(), engine_.FindJob(victim)->NodeIndexes());
  // The urgent job ends: the victim runs on, its limit moved by the time it was stopped.
  Pass(100);
  EXPECT_EQ(State(victim), JobState::kSuspended);  // its GPUs are still the urgent job's
  signals.clear();
  for (int node : engine_.FindJob(high)->NodeIndexes())
    Apply(JobEnded{high, engine_.cluster().nodes[node].name, 0, 0});
  for (const SignalJob& signal : Effects<SignalJob>()) signals.push_back(signal);
  Pass(10);
  for (const SignalJob& signal : Effects<SignalJob>()) signals.push_back(signal);
  EXPECT_EQ(State(victim), JobState::kRunning);
  EXPECT_EQ(engine_.FindJob(victim)->preempted_at, 0);
  int64_t resumed_at = engine_.FindJob(victim)->suspend_time;
  EXPECT_GE(resumed_at - stopped_at, 110);
  EXPECT_EQ(engine_.FindJob(victim)->end_time, limit + (resumed_at - stopped_at));
  bool continued = false;
  for (const SignalJob& signal : signals)
    continued = continued || (signal.job_id == victim && signal.signal == SIGCONT);
  EXPECT_TRUE(continued);
}

}  // namespace
}  // namespace drover::ctld
