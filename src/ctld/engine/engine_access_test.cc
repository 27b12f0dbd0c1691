// Authorization in the engine: roles (owner, other user, operator), the server-owned fields of
// a submission, and partition and reservation access with Slurm's refusals.
#include <gtest/gtest.h>

#include <csignal>

#include "ctld/engine/engine.h"
#include "ctld/engine/engine_test_support.h"

namespace drover::ctld {
namespace {

const Caller kAlice{1000, 1000, false, "alice", {1000, 2000}, {"alice", "physics"}};
const Caller kBob{1001, 1001, false, "bob", {1001}, {"bob"}};
const Caller kRoot{0, 0, true, "root", {0}, {"root"}};
const Caller kSlurm{64030, 64030, true, "slurm", {64030}, {"slurm"}};

std::string Conf(const std::string& extra = "") {
  return "ClusterName=t\n" + extra +
         "NodeName=n[1-2] CPUs=8 RealMemory=8000\n"
         "PartitionName=open Nodes=ALL Default=YES MaxTime=2:00:00\n"
         "PartitionName=grp Nodes=ALL AllowGroups=physics,chem\n"
         "PartitionName=acct Nodes=ALL AllowAccounts=a,b\n"
         "PartitionName=denyacct Nodes=ALL DenyAccounts=c\n"
         "PartitionName=qos Nodes=ALL AllowQos=high\n"
         "PartitionName=denyqos Nodes=ALL DenyQos=low\n"
         "PartitionName=rootonly Nodes=ALL RootOnly=YES\n"
         "PartitionName=noroot Nodes=ALL DisableRootJobs=YES\n";
}

class AccessTest : public ::testing::Test {
 protected:
  explicit AccessTest(const std::string& conf = Conf())
      : load_(LoadClusterConfigText(conf)), engine_(load_.config, clock_, CheckedEngineOptions()) {
    EXPECT_TRUE(load_.ok());
    Apply(NodeRegistered{"n1", {}});
    Apply(NodeRegistered{"n2", {}});
  }

  void Apply(Event event) {
    std::vector<Event> batch;
    batch.push_back(std::move(event));
    last_ = engine_.Apply(std::move(batch));
  }

  Reply Ask(Event event) { return AskEngine(engine_, token_, last_, std::move(event)); }

  static JobSpec Spec(std::vector<std::string> partitions = {}, std::string account = "",
                      std::string qos = "") {
    JobSpec spec;
    spec.partitions = std::move(partitions);
    spec.account = std::move(account);
    spec.qos = std::move(qos);
    spec.time_limit_seconds = 600;
    return spec;
  }

  Reply Submit(const Caller& caller, JobSpec spec = Spec(), std::string script = "#!/bin/sh\n") {
    return Ask(SubmitJob{0, caller, std::move(spec), "", std::move(script)});
  }

  uint64_t Job(const Caller& caller, JobSpec spec = Spec()) {
    Reply reply = Submit(caller, std::move(spec));
    EXPECT_TRUE(reply.ok) << reply.error;
    return reply.ok ? reply.job_ids.front() : 0;
  }

  // A job that stays pending: it may begin only tomorrow.
  uint64_t Pending(const Caller& caller) {
    JobSpec spec = Spec();
    spec.begin_time = clock_.Now() + 86400;
    return Job(caller, spec);
  }

  static JobFilter Only(uint64_t id) {
    JobFilter filter;
    filter.job_ids = {id};
    return filter;
  }

  const struct Job& Record(uint64_t id) const { return *engine_.FindJob(id); }

  ManualClock clock_;
  ConfigLoad load_;
  Engine engine_;
  EngineOutput last_;
  uint64_t token_ = 0;
};

// --- server-owned fields ---

TEST_F(AccessTest, APlainJobNamingAnotherJobsArrayIdGetsItsOwnScript) {
  JobSpec secret = Spec();
  secret.environment = {"SECRET=alice"};
  Reply a = Submit(kAlice, secret, "#!/bin/sh\necho alice's secret\n");
  ASSERT_TRUE(a.ok) << a.error;
  uint64_t alice_job = a.job_ids.front();
  JobSpec forged = Spec();
  forged.array_job_id = alice_job;
  forged.array_task_id = 0;
  forged.job_id = alice_job;
  Reply b = Submit(kBob, forged, "#!/bin/sh\necho bob\n");
  ASSERT_TRUE(b.ok) << b.error;
  uint64_t bob_job = b.job_ids.front();
  EXPECT_NE(bob_job, alice_job);
  EXPECT_EQ(Record(bob_job).spec.array_job_id, 0u);  // the launch reads the script by this
  EXPECT_EQ(Record(bob_job).spec.array_task_id, kNoArrayTask);
  ASSERT_EQ(last_.new_scripts.size(), 1u);
  EXPECT_EQ(last_.new_scripts[0].job_id, bob_job);
  EXPECT_EQ(last_.new_scripts[0].script, "#!/bin/sh\necho bob\n");
  EXPECT_EQ(Record(alice_job).spec.user, "alice");  // alice's job is untouched
}

TEST_F(AccessTest, OwnerAndGroupComeFromTheCallerNotTheSpec) {
  JobSpec forged = Spec();
  forged.uid = 0;
  forged.user = "root";
  forged.submit_time = 1;
  uint64_t id = Job(kAlice, forged);
  EXPECT_EQ(Record(id).spec.uid, 1000u);
  EXPECT_EQ(Record(id).spec.user, "alice");
  EXPECT_EQ(Record(id).spec.gid, 1000u);  // unset: the caller's group
  EXPECT_EQ(Record(id).spec.submit_time, clock_.Now());
  JobSpec secondary = Spec();
  secondary.gid = 2000;  // one of alice's groups
  EXPECT_EQ(Record(Job(kAlice, secondary)).spec.gid, 2000u);
}

TEST_F(AccessTest, AGroupTheCallerIsNotInIsRefusedExceptToOperators) {
  JobSpec foreign = Spec();
  foreign.gid = 1001;
  Reply refused = Submit(kAlice, foreign);
  EXPECT_FALSE(refused.ok);
  EXPECT_EQ(refused.error.rfind("Invalid group id", 0), 0u) << refused.error;
  JobSpec on_behalf = Spec();
  on_behalf.uid = 1001;
  on_behalf.gid = 1001;
  on_behalf.user = "bob";
  uint64_t id = Job(kRoot, on_behalf);  // root may submit for bob, as sbatch --uid
  EXPECT_EQ(Record(id).spec.uid, 1001u);
  EXPECT_EQ(Record(id).spec.user, "bob");
}

TEST_F(AccessTest, AUserCannotSubmitWithAnAdminHold) {
  JobSpec held = Spec();
  held.hold = HoldKind::kAdmin;
  EXPECT_EQ(Record(Job(kAlice, held)).spec.hold, HoldKind::kUser);
  EXPECT_EQ(Record(Job(kRoot, held)).spec.hold, HoldKind::kAdmin);
}

TEST_F(AccessTest, OnlyOperatorsSetAJobsPriority) {
  JobSpec spec = Spec();
  spec.priority = 500;
  Reply user = Submit(kAlice, spec);
  EXPECT_FALSE(user.ok);
  EXPECT_EQ(user.error, "Access/permission denied");
  EXPECT_EQ(Record(Job(kRoot, spec)).spec.priority, 500u);
  EXPECT_EQ(Record(Job(kSlurm, spec)).spec.priority, 500u);
}

// --- roles ---

TEST_F(AccessTest, OthersMayNotCancelHoldRequeueOrUpdateAnOwnersJob) {
  uint64_t id = Pending(kAlice);
  for (Event event : std::vector<Event>{
           CancelJobs{0, kBob, Only(id), 0},
           HoldJobs{0, kBob, Only(id), false},
           HoldJobs{0, kBob, Only(id), true},
           RequeueJobs{0, kBob, Only(id), false},
           UpdateJob{0, kBob, Only(id), 60, {}, {}, {}, {}, {}},
           CreateStep{0, kBob, id, "", 0, 0, 0, 0, {}},
           ReleaseJob{0, kBob, id, 0, 0},
       }) {
    Reply reply = Ask(event);
    EXPECT_FALSE(reply.ok) << event.index();
    EXPECT_EQ(reply.error.rfind("Access/permission denied", 0), 0u) << reply.error;
  }
  EXPECT_EQ(Record(id).state, JobState::kPending);
  EXPECT_EQ(Record(id).spec.time_limit_seconds, 600);
}

TEST_F(AccessTest, TheOwnerMayReleaseAUserHoldButNotAnAdminHold) {
  uint64_t id = Pending(kAlice);
  EXPECT_TRUE(Ask(HoldJobs{0, kAlice, Only(id), false}).ok);
  EXPECT_EQ(Record(id).spec.hold, HoldKind::kUser);
  EXPECT_TRUE(Ask(HoldJobs{0, kAlice, Only(id), true}).ok);  // her own hold
  EXPECT_TRUE(Ask(HoldJobs{0, kRoot, Only(id), false}).ok);  // an operator's hold
  EXPECT_EQ(Record(id).spec.hold, HoldKind::kAdmin);
  Reply refused = Ask(HoldJobs{0, kAlice, Only(id), true});
  EXPECT_FALSE(refused.ok);
  EXPECT_EQ(refused.error, "Access/permission denied");
  EXPECT_TRUE(Ask(HoldJobs{0, kSlurm, Only(id), true}).ok);  // SlurmUser is an operator
  EXPECT_EQ(Record(id).spec.hold, HoldKind::kNone);
}

TEST_F(AccessTest, OwnersLowerTheirJobsOperatorsRaiseThem) {
  uint64_t id = Pending(kAlice);
  EXPECT_TRUE(Ask(UpdateJob{0, kAlice, Only(id), 300, {}, {}, {}, {}, {}}).ok);
  EXPECT_TRUE(Ask(UpdateJob{0, kAlice, Only(id), {}, 10, {}, {}, {}, {}}).ok);
  Reply longer = Ask(UpdateJob{0, kAlice, Only(id), 900, {}, {}, {}, {}, {}});
  EXPECT_FALSE(longer.ok);
  EXPECT_EQ(longer.error.rfind("Access/permission denied", 0), 0u);
  Reply negative = Ask(UpdateJob{0, kAlice, Only(id), {}, -1, {}, {}, {}, {}});
  EXPECT_FALSE(negative.ok);
  EXPECT_TRUE(Ask(UpdateJob{0, kRoot, Only(id), 900, -5, {}, {}, {}, {}}).ok);
  EXPECT_EQ(Record(id).spec.time_limit_seconds, 900);
  EXPECT_EQ(Record(id).spec.nice, -5);
}

TEST_F(AccessTest, OnlyOperatorsChangeTheCluster) {
  uint64_t running = Job(kAlice);
  ASSERT_EQ(Record(running).state, JobState::kRunning);
  ReservationFields fields;
  fields.start_time = clock_.Now() + 3600;
  fields.duration_seconds = 600;
  fields.node_list = "n1";
  fields.users = "alice";
  for (const Caller& caller : {kAlice, kBob}) {
    for (Event event : std::vector<Event>{
             UpdateNode{0, caller, "n1", UpdateNode::Action::kDrain, "fan"},
             SuspendJobs{0, caller, Only(running), false},
             CreateReservation{0, caller, "r", fields},
             Reconfigure{0, caller, std::make_shared<ClusterConfig>(load_.config)},
         }) {
      Reply reply = Ask(event);
      EXPECT_FALSE(reply.ok) << caller.user << " " << event.index();
      EXPECT_EQ(reply.error.rfind("Access/permission denied", 0), 0u) << reply.error;
    }
  }
  EXPECT_TRUE(Ask(SuspendJobs{0, kSlurm, Only(running), false}).ok);
  EXPECT_TRUE(Ask(CreateReservation{0, kRoot, "r", fields}).ok);
  EXPECT_TRUE(Ask(UpdateNode{0, kSlurm, "n2", UpdateNode::Action::kDrain, "fan"}).ok);
}

TEST_F(AccessTest, AUserUidZeroWithoutTheOperatorRoleIsNoOperator) {
  // The role comes from Callers (uid 0 or SlurmUser), not from the number alone.
  const Caller not_operator{0, 0, false, "root", {0}, {"root"}};
  uint64_t id = Pending(kAlice);
  EXPECT_FALSE(Ask(CancelJobs{0, not_operator, Only(id), 0}).ok);
  EXPECT_TRUE(Ask(CancelJobs{0, kRoot, Only(id), 0}).ok);
}

// --- partition access ---

TEST_F(AccessTest, AllowGroupsAdmitsMembersAndOperators) {
  EXPECT_TRUE(Submit(kAlice, Spec({"grp"})).ok);  // alice is in physics
  Reply bob = Submit(kBob, Spec({"grp"}));
  EXPECT_FALSE(bob.ok);
  EXPECT_EQ(bob.error,
            "User's group not permitted to use this partition (grp allows physics,chem)");
  EXPECT_TRUE(Submit(kRoot, Spec({"grp"})).ok);
}

TEST_F(AccessTest, AccountListsUseSlurmsRefusal) {
  EXPECT_TRUE(Submit(kAlice, Spec({"acct"}, "a")).ok);
  Reply other = Submit(kAlice, Spec({"acct"}, "c"));
  EXPECT_EQ(other.error,
            "Invalid account or account/partition combination specified (partition acct allows "
            "accounts a,b, not c; choose one with --account)");
  EXPECT_FALSE(Submit(kRoot, Spec({"acct"}, "c")).ok);  // account lists bind operators too
  Reply denied = Submit(kAlice, Spec({"denyacct"}, "c"));
  EXPECT_EQ(denied.error,
            "Invalid account or account/partition combination specified (partition denyacct "
            "denies account c)");
  EXPECT_TRUE(Submit(kAlice, Spec({"denyacct"}, "a")).ok);
}

TEST_F(AccessTest, QosListsUseSlurmsRefusal) {
  EXPECT_TRUE(Submit(kAlice, Spec({"qos"}, "", "high")).ok);
  Reply none = Submit(kAlice, Spec({"qos"}));
  EXPECT_EQ(none.error,
            "Invalid qos specification (partition qos allows QOS high, not normal; choose one "
            "with --qos)");
  Reply denied = Submit(kAlice, Spec({"denyqos"}, "", "low"));
  EXPECT_EQ(denied.error, "Invalid qos specification (partition denyqos denies QOS low)");
  EXPECT_TRUE(Submit(kAlice, Spec({"denyqos"}, "", "high")).ok);
}

TEST_F(AccessTest, RootOnlyAndDisableRootJobs) {
  Reply user = Submit(kAlice, Spec({"rootonly"}));
  EXPECT_EQ(user.error, "Access/permission denied (partition rootonly is RootOnly)");
  EXPECT_TRUE(Submit(kRoot, Spec({"rootonly"})).ok);
  EXPECT_TRUE(Submit(kSlurm, Spec({"rootonly"})).ok);
  Reply root = Submit(kRoot, Spec({"noroot"}));
  EXPECT_EQ(root.error, "Invalid user id (DisableRootJobs: partition noroot runs no job as root)");
  EXPECT_TRUE(Submit(kAlice, Spec({"noroot"})).ok);
}

TEST_F(AccessTest, APartitionTheJobMayNotUseIsDroppedWhileAnotherRemains) {
  uint64_t id = Job(kBob, Spec({"grp", "open"}));
  EXPECT_EQ(Record(id).spec.partitions, (std::vector<std::string>{"open"}));
  Reply none = Submit(kBob, Spec({"grp", "rootonly"}));
  EXPECT_EQ(none.error,
            "User's group not permitted to use this partition (grp allows physics,chem)");
}

TEST_F(AccessTest, AnUpdateMayNotMoveAJobWhereItsOwnerMayNotSubmit) {
  uint64_t id = Pending(kBob);
  Reply moved = Ask(UpdateJob{0, kBob, Only(id), {}, {}, std::string("grp"), {}, {}, {}});
  EXPECT_EQ(moved.error,
            "User's group not permitted to use this partition (grp allows physics,chem)");
  EXPECT_TRUE(Record(id).spec.partitions.empty());
  EXPECT_TRUE(Ask(UpdateJob{0, kBob, Only(id), {}, {}, std::string("denyqos"), {}, {}, {}}).ok);
  Reply qos = Ask(UpdateJob{0, kBob, Only(id), {}, {}, {}, {}, std::string("low"), {}});
  EXPECT_EQ(qos.error, "Invalid qos specification (partition denyqos denies QOS low)");
}

TEST_F(AccessTest, AReservationsUsersListAdmitsAndExcludes) {
  ReservationFields fields;
  fields.start_time = clock_.Now();
  fields.duration_seconds = 3600;
  fields.node_list = "n1";
  fields.users = "-bob";
  ASSERT_TRUE(Ask(CreateReservation{0, kRoot, "notbob", fields}).ok);
  fields.users = "alice";
  fields.node_list = "n2";
  ASSERT_TRUE(Ask(CreateReservation{0, kRoot, "alice", fields}).ok);
  JobSpec spec = Spec();
  spec.reservation = "notbob";
  EXPECT_TRUE(Submit(kAlice, spec).ok);
  Reply bob = Submit(kBob, spec);
  EXPECT_EQ(bob.error.rfind("Access denied to requested reservation", 0), 0u) << bob.error;
  spec.reservation = "alice";
  EXPECT_TRUE(Submit(kAlice, spec).ok);
  EXPECT_FALSE(Submit(kBob, spec).ok);
}

class RootJobsAccessTest : public AccessTest {
 protected:
  RootJobsAccessTest() : AccessTest(Conf("DisableRootJobs=YES\n")) {}
};

TEST_F(RootJobsAccessTest, DisableRootJobsRefusesRootEverywhere) {
  Reply root = Submit(kRoot);
  EXPECT_EQ(root.error, "Invalid user id (DisableRootJobs: partition open runs no job as root)");
  EXPECT_TRUE(Submit(kSlurm).ok);  // SlurmUser is an operator, not root
}

class OwnTopAccessTest : public AccessTest {
 protected:
  OwnTopAccessTest()
      : AccessTest(
            Conf("PriorityType=priority/multifactor\nSchedulerParameters=enable_user_top\n")) {}
};

TEST_F(OwnTopAccessTest, EnableUserTopLetsOwnersReorderOnlyTheirOwnJobs) {
  uint64_t mine = Pending(kAlice);
  uint64_t theirs = Pending(kBob);
  EXPECT_TRUE(Ask(TopJobs{0, kAlice, {{mine, kNoArrayTask}}}).ok);
  Reply other = Ask(TopJobs{0, kAlice, {{theirs, kNoArrayTask}}});
  EXPECT_EQ(other.error, "Access/permission denied");
}

class OperatorTopAccessTest : public AccessTest {
 protected:
  OperatorTopAccessTest() : AccessTest(Conf("PriorityType=priority/multifactor\n")) {}
};

TEST_F(OperatorTopAccessTest, WithoutEnableUserTopOnlyOperatorsReorder) {
  uint64_t mine = Pending(kAlice);
  Reply reply = Ask(TopJobs{0, kAlice, {{mine, kNoArrayTask}}});
  EXPECT_FALSE(reply.ok);
  EXPECT_EQ(reply.error.rfind("Access/permission denied (scontrol top is for operators", 0), 0u)
      << reply.error;
  EXPECT_TRUE(Ask(TopJobs{0, kRoot, {{mine, kNoArrayTask}}}).ok);
}

}  // namespace
}  // namespace drover::ctld
