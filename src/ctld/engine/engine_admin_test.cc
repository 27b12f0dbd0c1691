// Engine tests for the operators' verbs that reorder or reshape the queue: scontrol top (nice
// adjusted so listed jobs lead their group) and scontrol reconfigure (a new configuration taken
// live, or refused with the reason).
#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <set>

#include "ctld/engine/engine.h"
#include "ctld/engine/engine_test_support.h"

namespace drover::ctld {
namespace {

constexpr const char* kCluster =
    "ClusterName=t\nGresTypes=gpu\nDefMemPerCPU=100\nMinJobAge=300\nSlurmdTimeout=0\n"
    "PriorityType=priority/multifactor\nPriorityWeightAge=1000\nPriorityMaxAge=1000\n"
    "{}"
    "NodeName=n[1-2] CPUs=8 RealMemory=8000\n"
    "PartitionName=p Nodes=ALL Default=YES MaxTime=2:00:00\n"
    "{}";

std::string Conf(const std::string& settings = "", const std::string& partitions = "") {
  std::string text = kCluster;
  text.replace(text.find("{}"), 2, settings);
  text.replace(text.find("{}"), 2, partitions);
  return text;
}

const Caller kAlice{1000, 1000, false};
const Caller kRoot{0, 0, true};

class AdminTest : public EngineTest {
 protected:
  explicit AdminTest(const std::string& conf = Conf()) : EngineTest(conf) {}

  Reply Ask(Event event) { return AskEngine(engine_, token_, last_, std::move(event)); }

  uint64_t Submit(const std::string& user, uint32_t cpus, std::vector<std::string> partitions = {},
                  Caller caller = kAlice) {
    JobSpec spec;
    spec.user = user;
    spec.account = "research";
    spec.ntasks = cpus;
    spec.time_limit_seconds = 600;
    spec.partitions = std::move(partitions);
    Reply reply = Ask(SubmitJob{0, caller, spec, "", "#!/bin/sh\n"});
    EXPECT_TRUE(reply.ok) << reply.error;
    return reply.ok ? reply.job_ids.front() : 0;
  }

  // Pending jobs in the order the last cycle ranked them.
  std::vector<uint64_t> QueueOrder() {
    clock_.Advance(1);
    Apply(Tick{});
    std::vector<uint64_t> order;
    for (const sched::PriorityFactors& factors : *engine_.Publish()->priorities)
      order.push_back(factors.job_id);
    return order;
  }
};

// The cluster is full; alice queues 2, 3, 4 (oldest first, so highest first) and bob 5.
class TopTest : public AdminTest {
 protected:
  explicit TopTest(const std::string& conf = Conf()) : AdminTest(conf) {
    Submit("carol", 16);
    EXPECT_EQ(engine_.FindJob(1)->state, JobState::kRunning)
        << sched::PendingReasonName(engine_.FindJob(1)->reason);
    for (uint64_t id : {2, 3, 4}) {
      clock_.Advance(100);
      EXPECT_EQ(Submit("alice", 4), id);
    }
    clock_.Advance(100);
    EXPECT_EQ(Submit("bob", 4, {}, Caller{1001, 1001, false}), 5u);
  }

  Reply Top(std::vector<uint64_t> ids, Caller caller = kRoot) {
    TopJobs event{0, caller, {}};
    for (uint64_t id : ids) event.jobs.emplace_back(id, kNoArrayTask);
    return Ask(event);
  }
  int32_t Nice(uint64_t id) const { return engine_.FindJob(id)->spec.nice; }
};

TEST_F(TopTest, ListedJobsLeadTheirOwnersGroupInTheOrderGiven) {
  EXPECT_EQ(QueueOrder(), (std::vector<uint64_t>{2, 3, 4, 5}));
  Reply reply = Top({4, 3});
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(reply.job_ids, (std::vector<uint64_t>{4, 3}));
  // Alice's jobs now run 4, 3, 2; bob's job keeps its place, behind all of hers by age.
  EXPECT_EQ(QueueOrder(), (std::vector<uint64_t>{4, 3, 2, 5}));
  // Her priorities were only dealt out again: the nice adjustments cancel out.
  EXPECT_EQ(Nice(2) + Nice(3) + Nice(4), 0);
  ASSERT_TRUE(Top({2}).ok);  // and back
  EXPECT_EQ(QueueOrder(), (std::vector<uint64_t>{2, 4, 3, 5}));
  EXPECT_EQ(Nice(5), 0);
  EXPECT_LT(Nice(4), 0);
}

TEST_F(AdminTest, TopOrdersJobsWhosePrioritiesTie) {
  Submit("carol", 16);
  for (int i = 0; i < 3; ++i) Submit("alice", 4);  // 2, 3, 4: submitted together, equal ages
  EXPECT_EQ(QueueOrder(), (std::vector<uint64_t>{2, 3, 4}));
  ASSERT_TRUE(Ask(TopJobs{0, kRoot, {{4, kNoArrayTask}}}).ok);
  EXPECT_EQ(QueueOrder(), (std::vector<uint64_t>{4, 2, 3}));
}

TEST_F(TopTest, UsersNeedEnableUserTopAndOwnTheJobs) {
  Reply refused = Top({4}, kAlice);
  EXPECT_FALSE(refused.ok);
  EXPECT_NE(refused.error.find("enable_user_top"), std::string::npos) << refused.error;
  EXPECT_EQ(Nice(4), 0);
}

TEST_F(TopTest, RefusesWhatIsNotPendingOrNotKnown) {
  EXPECT_EQ(Top({1}).error, "Job is no longer pending execution");  // carol's job runs
  EXPECT_EQ(Top({99}).error, "Invalid job id specified");
}

TEST_F(TopTest, JobsOfOtherUsersThanTheFirstListedAreLeftAlone) {
  Reply reply = Top({4, 5});
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(reply.job_ids, (std::vector<uint64_t>{4}));
  EXPECT_EQ(Nice(5), 0);
}

class UserTopTest : public TopTest {
 protected:
  UserTopTest() : TopTest(Conf("SchedulerParameters=enable_user_top\n")) {}
};

TEST_F(UserTopTest, OwnersMayTopTheirJobsButNotOthers) {
  EXPECT_TRUE(Top({4}, kAlice).ok);
  EXPECT_EQ(QueueOrder(), (std::vector<uint64_t>{4, 2, 3, 5}));
  EXPECT_EQ(Top({5}, kAlice).error, "Access/permission denied");
}

TEST(TopBasicTest, PriorityBasicRefusesWithTheReason) {
  ManualClock clock;
  ConfigLoad load = LoadClusterConfigText(
      "ClusterName=t\nNodeName=n1 CPUs=2 RealMemory=100\nPartitionName=p Nodes=ALL Default=YES\n");
  ASSERT_TRUE(load.ok());
  Engine engine(load.config, clock);
  EngineOutput out = engine.Apply({TopJobs{7, kRoot, {{1, kNoArrayTask}}}});
  const Reply& reply = std::get<Reply>(out.effects.front());
  EXPECT_FALSE(reply.ok);
  EXPECT_NE(reply.error.find("priority/multifactor"), std::string::npos) << reply.error;
}

// --- reconfigure ---

class ReconfigureTest : public AdminTest {
 protected:
  Reply Reconfigure(const std::string& conf, Caller caller = kRoot) {
    ConfigLoad next = LoadClusterConfigText(conf);
    EXPECT_TRUE(next.ok());
    return Ask(drover::ctld::Reconfigure{
        0, caller, std::make_shared<const ClusterConfig>(std::move(next.config))});
  }
};

TEST_F(ReconfigureTest, NewPartitionsAndLimitsTakeEffectLive) {
  JobSpec spec;
  spec.user = "alice";
  spec.partitions = {"debug"};
  EXPECT_FALSE(Ask(SubmitJob{0, kAlice, spec, "", ""}).ok);  // no such partition yet
  Reply reply = Reconfigure(Conf("", "PartitionName=debug Nodes=n1 MaxTime=10 PriorityTier=5\n"));
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_TRUE(reply.message.empty()) << reply.message;
  EXPECT_TRUE(last_.reconfigured);
  EXPECT_EQ(engine_.cluster().FindPartition("debug"), 1);
  EXPECT_EQ(engine_.Publish()->cluster->partitions.size(), 2u);
  uint64_t id = Submit("alice", 1, {"debug"});
  EXPECT_EQ(engine_.FindJob(id)->state, JobState::kRunning);
  EXPECT_EQ(engine_.cluster().partitions[engine_.FindJob(id)->partition].name, "debug");
}

TEST_F(ReconfigureTest, RunningJobsFollowTheirPartitionWhenPartitionsMove) {
  ASSERT_TRUE(Reconfigure(Conf("", "PartitionName=debug Nodes=n1\n")).ok);
  uint64_t id = Submit("alice", 1, {"debug"});
  ASSERT_EQ(engine_.FindJob(id)->partition, 1);
  // debug now comes first.
  std::string moved = Conf();
  moved.replace(moved.find("PartitionName=p"), 0, "PartitionName=debug Nodes=n1\n");
  ASSERT_TRUE(Reconfigure(moved).ok);
  EXPECT_EQ(engine_.FindJob(id)->partition, 0);
  EXPECT_EQ(engine_.cluster().partitions[0].name, "debug");
}

TEST_F(ReconfigureTest, ChangedNodesAndPartitionsWithJobsAreRefused) {
  std::string bigger = Conf();
  bigger.replace(bigger.find("CPUs=8"), 6, "CPUs=16");
  Reply reply = Reconfigure(bigger);
  EXPECT_FALSE(reply.ok);
  EXPECT_NE(reply.error.find("node n1: CPUs 8 -> 16"), std::string::npos) << reply.error;
  ASSERT_TRUE(Reconfigure(Conf("", "PartitionName=debug Nodes=n1\n")).ok);
  Submit("alice", 1, {"debug"});
  reply = Reconfigure(Conf());
  EXPECT_FALSE(reply.ok);
  EXPECT_NE(reply.error.find("partition debug still has jobs"), std::string::npos) << reply.error;
  EXPECT_EQ(engine_.cluster().partitions.size(), 2u);  // nothing changed
  EXPECT_FALSE(Reconfigure(Conf("", "PartitionName=debug Nodes=n1\n"), kAlice).ok);
}

TEST_F(ReconfigureTest, RestartOnlyKeysKeepTheirValueAndAreNamed) {
  Reply reply = Reconfigure(Conf("SlurmctldPort=9999\nMinJobAge=60\n"));
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_NE(reply.message.find("SlurmctldPort"), std::string::npos) << reply.message;
  EXPECT_EQ(engine_.cluster().settings.controller_port, 7817);
  EXPECT_EQ(engine_.cluster().settings.min_job_age_seconds, 60);
}

// --- scontrol create|update|delete partition ---

using PartitionTest = ReconfigureTest;

TEST_F(PartitionTest, CreateUpdateAndDeleteTakeEffectLive) {
  using Kind = ChangePartition::Kind;
  Reply reply = Ask(ChangePartition{0, kRoot, "debug", Kind::kCreate, {"Nodes=n1", "MaxTime=10"}});
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_TRUE(last_.reconfigured);
  ASSERT_EQ(last_.changed_partitions, std::vector<std::string>{"debug"});
  int debug = engine_.cluster().FindPartition("debug");
  ASSERT_GE(debug, 0);
  EXPECT_EQ(engine_.cluster().partitions[debug].max_time_seconds, 600);
  EXPECT_EQ(engine_.cluster().partitions[debug].nodes, std::vector<int>{0});
  uint64_t id = Submit("alice", 1, {"debug"});
  EXPECT_EQ(engine_.FindJob(id)->state, JobState::kRunning);
  // State=DRAIN refuses new jobs; DOWN keeps them pending; UP lets them run.
  ASSERT_TRUE(Ask(ChangePartition{0, kRoot, "p", Kind::kUpdate, {"State=DRAIN"}}).ok);
  JobSpec spec;
  spec.user = "alice";
  spec.partitions = {"p"};
  EXPECT_FALSE(Ask(SubmitJob{0, kAlice, spec, "", ""}).ok);
  ASSERT_TRUE(Ask(ChangePartition{0, kRoot, "p", Kind::kUpdate, {"State=DOWN"}}).ok);
  uint64_t waiting = Submit("alice", 1, {"p"});
  clock_.Advance(5);
  Apply(Tick{});
  EXPECT_EQ(engine_.FindJob(waiting)->state, JobState::kPending);
  ASSERT_TRUE(Ask(ChangePartition{0, kRoot, "p", Kind::kUpdate, {"State=UP"}}).ok);
  clock_.Advance(5);
  Apply(Tick{});
  EXPECT_EQ(engine_.FindJob(waiting)->state, JobState::kRunning);
  // A partition with jobs is in use; one without goes.
  EXPECT_EQ(Ask(ChangePartition{0, kRoot, "debug", Kind::kDelete, {}}).error,
            "Partition is in use");
  ASSERT_TRUE(Ask(ChangePartition{0, kRoot, "idle", Kind::kCreate, {"Nodes=n2"}}).ok);
  ASSERT_TRUE(Ask(ChangePartition{0, kRoot, "idle", Kind::kDelete, {}}).ok);
  EXPECT_LT(engine_.cluster().FindPartition("idle"), 0);
  EXPECT_EQ(engine_.FindPartitionOverride("idle"), nullptr);  // nothing left to keep
}

TEST_F(PartitionTest, RefusalsAreSlurmsAndChangeNothing) {
  using Kind = ChangePartition::Kind;
  EXPECT_EQ(Ask(ChangePartition{0, kAlice, "p", Kind::kUpdate, {"MaxTime=5"}}).error,
            "Access/permission denied");
  EXPECT_EQ(Ask(ChangePartition{0, kRoot, "nope", Kind::kUpdate, {"MaxTime=5"}}).error,
            "Invalid partition name specified");
  EXPECT_EQ(Ask(ChangePartition{0, kRoot, "p", Kind::kCreate, {}}).error,
            "Invalid partition name specified");
  EXPECT_EQ(Ask(ChangePartition{0, kRoot, "nope", Kind::kDelete, {}}).error,
            "Invalid partition name specified");
  Reply reply = Ask(ChangePartition{0, kRoot, "p", Kind::kUpdate, {"MaxTime=5", "State=SIDEWAYS"}});
  EXPECT_NE(reply.error.find("Invalid input: State=SIDEWAYS"), std::string::npos) << reply.error;
  EXPECT_EQ(Ask(ChangePartition{0, kRoot, "p", Kind::kUpdate, {"Bogus=1"}}).error,
            "Update of this parameter is not supported: Bogus=1");
  EXPECT_EQ(engine_.cluster().partitions[0].max_time_seconds, 7200);  // nothing changed
  EXPECT_EQ(engine_.FindPartitionOverride("p"), nullptr);
}

TEST_F(PartitionTest, ChangesAreKeptForARestartAndDroppedByReconfigure) {
  using Kind = ChangePartition::Kind;
  ASSERT_TRUE(Ask(ChangePartition{0, kRoot, "p", Kind::kUpdate, {"MaxTime=30"}}).ok);
  ASSERT_TRUE(
      Ask(ChangePartition{0, kRoot, "debug", Kind::kCreate, {"Nodes=n2", "Default=YES"}}).ok);
  // Default moved: p's change says so, so the changes apply in any order after a restart.
  const PartitionOverride* p = engine_.FindPartitionOverride("p");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->settings, (std::vector<std::string>{"MaxTime=30", "Default=NO"}));
  const PartitionOverride* debug = engine_.FindPartitionOverride("debug");
  ASSERT_NE(debug, nullptr);
  EXPECT_TRUE(debug->created);
  // A restarted controller applies the kept changes over slurm.conf's partitions.
  ManualClock clock;
  Engine restarted(load_.config, clock);
  std::vector<std::string> problems = restarted.RestorePartitions(
      {{"p", *p}, {"debug", *debug}, {"gone", PartitionOverride{{"Nodes=n9"}, false, false}}});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("partition gone"), std::string::npos) << problems[0];
  ASSERT_EQ(restarted.cluster().partitions.size(), 2u);
  EXPECT_EQ(restarted.cluster().partitions[0].max_time_seconds, 1800);
  EXPECT_EQ(restarted.cluster().DefaultPartition(), restarted.cluster().FindPartition("debug"));
  // scontrol reconfigure reads slurm.conf alone, as Slurm's does.
  ASSERT_TRUE(Reconfigure(Conf()).ok);
  EXPECT_EQ(engine_.cluster().partitions.size(), 1u);
  EXPECT_EQ(engine_.cluster().partitions[0].max_time_seconds, 7200);
  EXPECT_EQ(engine_.FindPartitionOverride("p"), nullptr);
  EXPECT_EQ(last_.changed_partitions.size(), 2u);  // both deleted from the store
}

TEST_F(AdminTest, ARestartListsRunningAndSuspendedJobsOnTheirNodes) {
  ManualClock clock;
  Engine restarted(load_.config, clock);
  std::vector<Job> jobs(3);
  const JobState states[] = {JobState::kRunning, JobState::kSuspended, JobState::kCompleted};
  for (size_t i = 0; i < jobs.size(); ++i) {
    jobs[i].spec.job_id = 10 + i;
    jobs[i].spec.user = "alice";
    jobs[i].spec.account = "research";
    jobs[i].state = states[i];
    jobs[i].allocation.nodes = {{0, {static_cast<int>(i)}, 100, {}, 0, {}}};
  }
  restarted.Restore(std::move(jobs), 13);
  // A suspended job keeps its allocation, so its node lists it as a running one's does; a
  // finished one is on no node.
  EXPECT_EQ(restarted.node(0).jobs, (std::set<uint64_t>{10, 11}));
}

// --- scontrol update node ---

TEST_F(AdminTest, NodeWeightAndFeaturesReachTheSchedulerUntilReconfigure) {
  UpdateNode update{0, kRoot, "n1", UpdateNode::Action::kNone, ""};
  update.weight = 50;
  update.features = "big,fast";
  update.comment = "new disks";
  Reply reply = Ask(update);
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(engine_.cluster().nodes[0].weight, 50u);
  EXPECT_EQ(engine_.cluster().nodes[0].features, (std::vector<std::string>{"big", "fast"}));
  EXPECT_EQ(engine_.node(0).comment, "new disks");
  // A job that asks for the feature runs on n1 only.
  JobSpec spec;
  spec.user = "alice";
  spec.constraint = "fast";
  spec.ntasks = 1;
  reply = Ask(SubmitJob{0, kAlice, spec, "", "#!/bin/sh\n"});
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(engine_.FindJob(reply.job_ids[0])->NodeIndexes(), std::vector<int>{0});
  // ActiveFeatures must be among the available ones.
  UpdateNode active{0, kRoot, "n1", UpdateNode::Action::kNone, ""};
  active.active_features = "slow";
  EXPECT_EQ(Ask(active).error, "Active features not subset of available features");
  active.active_features = "big";
  ASSERT_TRUE(Ask(active).ok);
  EXPECT_EQ(engine_.cluster().nodes[0].features, std::vector<std::string>{"big"});
  EXPECT_EQ(*engine_.node(0).features, (std::vector<std::string>{"big", "fast"}));
  ConfigLoad conf = LoadClusterConfigText(Conf());
  ASSERT_TRUE(Ask(Reconfigure{0, kRoot, std::make_shared<const ClusterConfig>(conf.config)}).ok);
  EXPECT_EQ(engine_.cluster().nodes[0].weight, 1u);
  EXPECT_TRUE(engine_.cluster().nodes[0].features.empty());
}

TEST_F(AdminTest, NodeStatesFailNoRespAndDownEndingJobs) {
  using Action = UpdateNode::Action;
  uint64_t id = Submit("alice", 8);
  ASSERT_EQ(engine_.FindJob(id)->state, JobState::kRunning);
  int node = engine_.FindJob(id)->NodeIndexes()[0];
  std::string name = engine_.cluster().nodes[node].name;
  ASSERT_TRUE(Ask(UpdateNode{0, kRoot, name, Action::kFail, "bad dimm"}).ok);
  EXPECT_EQ(NodeStateName(engine_.node(node), true), "FAILING");
  EXPECT_EQ(engine_.node(node).reason, "bad dimm");
  ASSERT_TRUE(Ask(UpdateNode{0, kRoot, name, Action::kNoResp, ""}).ok);
  EXPECT_EQ(NodeStateName(engine_.node(node), true), "FAILING*");
  EXPECT_EQ(Ask(UpdateNode{0, kRoot, name, Action::kDown, ""}).error,
            "You must specify a reason when DOWNING or DRAINING a node");
  Reply down = Ask(UpdateNode{0, kRoot, name, Action::kDown, "replace"});
  ASSERT_TRUE(down.ok) << down.error;
  // Its job stops there: requeued (or ended NODE_FAIL), its processes terminated.
  bool terminated = false;
  for (const Effect& effect : last_.effects)
    if (const auto* stop = std::get_if<TerminateJob>(&effect))
      terminated |= stop->job_id == id && stop->nodes == std::vector<int>{node};
  EXPECT_TRUE(terminated);
  EXPECT_TRUE(engine_.node(node).jobs.empty());
  ASSERT_TRUE(Ask(UpdateNode{0, kRoot, name, Action::kResume, ""}).ok);
  EXPECT_FALSE(engine_.node(node).fail);
  EXPECT_FALSE(engine_.node(node).down);
}

// --- scontrol reboot ---

class RebootTest : public AdminTest {
 protected:
  RebootTest() : AdminTest(Conf("RebootProgram=/usr/sbin/reboot-node\nResumeTimeout=120\n")) {}

  Reply Reboot(const std::string& nodes, bool asap = false, std::string next = "",
               std::string reason = "") {
    return Ask(RebootNodes{0, kRoot, nodes, asap, std::move(next), std::move(reason), false});
  }
  Reply Cancel(const std::string& nodes) {
    return Ask(RebootNodes{0, kRoot, nodes, false, "", "", true});
  }
  // The nodes the last batch told an agent to reboot.
  std::vector<int> Rebooted() const {
    std::vector<int> nodes;
    for (const Effect& effect : last_.effects)
      if (const auto* reboot = std::get_if<RebootNode>(&effect)) {
        EXPECT_EQ(reboot->program, "/usr/sbin/reboot-node");
        nodes.push_back(reboot->node);
      }
    return nodes;
  }
  std::string State(int node) const { return NodeStateName(engine_.node(node), true); }
};

TEST_F(AdminTest, RebootNeedsRebootProgram) {
  EXPECT_EQ(Ask(RebootNodes{0, kRoot, "n1", false, "", "", false}).error,
            "RebootProgram isn't defined");
}

TEST_F(RebootTest, IdleNodeIsIssuedAtOnceAndResumesWhenItsAgentRegisters) {
  EXPECT_EQ(Ask(RebootNodes{0, kAlice, "n1", false, "", "", false}).error,
            "Access/permission denied");
  ASSERT_TRUE(Reboot("n1").ok);
  EXPECT_EQ(Rebooted(), std::vector<int>{0});
  EXPECT_EQ(State(0), "IDLE+REBOOT_ISSUED");
  EXPECT_EQ(engine_.node(0).reason, "reboot requested : reboot issued");
  // No job starts there while it reboots.
  uint64_t id = Submit("alice", 16);
  EXPECT_EQ(engine_.FindJob(id)->state, JobState::kPending);
  EXPECT_EQ(Cancel("n1").error, "Reboot already in progress");
  clock_.Advance(30);
  Apply(NodeRegistered{"n1", {}});
  EXPECT_EQ(engine_.node(0).boot_time, clock_.Now());
  EXPECT_FALSE(engine_.node(0).reboot_issued);
  EXPECT_EQ(engine_.node(0).reason, "");
  clock_.Advance(1);
  Apply(Tick{});
  EXPECT_EQ(engine_.FindJob(id)->state, JobState::kRunning);
}

TEST_F(RebootTest, BusyNodeRebootsWhenIdleAndAsapDrainsItMeanwhile) {
  uint64_t id = Submit("alice", 8);
  int node = engine_.FindJob(id)->NodeIndexes()[0];
  std::string name = engine_.cluster().nodes[node].name;
  ASSERT_TRUE(Reboot(name, true).ok);
  EXPECT_TRUE(Rebooted().empty());
  EXPECT_EQ(State(node), "DRAINING+REBOOT_REQUESTED");
  EXPECT_EQ(engine_.node(node).reason, "Reboot ASAP");
  Apply(JobEnded{id, name, 0, 0});
  clock_.Advance(1);
  Apply(Tick{});
  EXPECT_EQ(Rebooted(), std::vector<int>{node});
  EXPECT_EQ(State(node), "DRAINED+REBOOT_ISSUED");
  Apply(NodeRegistered{name, {}});
  EXPECT_EQ(State(node), "IDLE");  // nextstate RESUME: the ASAP drain goes too
}

TEST_F(RebootTest, CancelClearsAPendingRequestAndItsDrain) {
  uint64_t id = Submit("alice", 8);
  int node = engine_.FindJob(id)->NodeIndexes()[0];
  std::string name = engine_.cluster().nodes[node].name;
  ASSERT_TRUE(Reboot(name, true).ok);
  ASSERT_TRUE(Cancel(name).ok);
  EXPECT_EQ(State(node), "ALLOCATED");
  EXPECT_EQ(engine_.node(node).reason, "");
  // As scontrol update State=CANCEL_REBOOT; a non-ASAP request keeps the node open to jobs.
  ASSERT_TRUE(Reboot(name, false, "", "new firmware").ok);
  EXPECT_EQ(State(node), "ALLOCATED+REBOOT_REQUESTED");
  ASSERT_TRUE(Ask(UpdateNode{0, kRoot, name, UpdateNode::Action::kCancelReboot, ""}).ok);
  EXPECT_FALSE(engine_.node(node).reboot_requested);
  Apply(JobEnded{id, name, 0, 0});
  clock_.Advance(1);
  Apply(Tick{});
  EXPECT_TRUE(Rebooted().empty());
}

TEST_F(RebootTest, NextStateDownKeepsTheNodeDownWithTheReason) {
  ASSERT_TRUE(Reboot("n2", false, "DOWN", "bios").ok);
  EXPECT_EQ(Rebooted(), std::vector<int>{1});
  Apply(NodeRegistered{"n2", {}});
  EXPECT_EQ(State(1), "DOWN");
  EXPECT_EQ(engine_.node(1).reason, "bios : reboot issued : reboot complete");
}

TEST_F(RebootTest, ANodeThatDoesNotComeBackWithinResumeTimeoutIsDown) {
  ASSERT_TRUE(Reboot("ALL").ok);
  EXPECT_EQ(Rebooted(), (std::vector<int>{0, 1}));
  clock_.Advance(60);
  Apply(NodeRegistered{"n1", {}});
  clock_.Advance(60);
  Apply(Tick{});
  EXPECT_EQ(State(0), "IDLE");
  EXPECT_EQ(State(1), "DOWN");
  EXPECT_EQ(engine_.node(1).reason, "reboot requested : reboot issued : reboot timed out");
}

}  // namespace
}  // namespace drover::ctld
