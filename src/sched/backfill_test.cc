// Scheduler scenarios for planning ahead: EASY backfill around the top job's reservation,
// conservative backfill, expected starts, advance reservations, and preemption. Each cluster
// is a few lines of slurm.conf; "now" is 1000 unless a test says otherwise.
#include <gtest/gtest.h>

#include "testing/sched_scenario.h"

namespace drover::sched {
namespace {

using testing::Scenario;

constexpr const char* kNodes =
    "DefMemPerCPU=1000\n"
    "NodeName=n[1-4] Sockets=2 CoresPerSocket=8 RealMemory=64000 Gres=gpu:8\n"
    "PartitionName=gpu Nodes=ALL Default=YES MaxTime=7-00:00:00\n";

const std::vector<int> kAllGpus{0, 1, 2, 3, 4, 5, 6, 7};

// A running job holding the whole of each node in `nodes` until `end`.
RunningJob& Whole(Scenario& s, uint64_t id, const std::string& nodes, int64_t end) {
  RunningJob& job = s.Running(id, nodes, kAllGpus, 16);
  job.allocation.exclusive = true;
  job.end_time = end;
  return job;
}

JobSpec& Job(Scenario& s, uint64_t id, uint32_t nodes, uint32_t gpus_per_node, int64_t limit) {
  JobSpec& job = s.Job(id);
  job.min_nodes = job.max_nodes = nodes;
  job.ntasks = nodes;
  job.gpus_per_node = gpus_per_node;
  job.time_limit_seconds = limit;
  return job;
}

TEST(Easy, SmallJobsBackfillOnlyWhereTheyDelayNoReservation) {
  Scenario s(kNodes);
  Whole(s, 100, "n[1-3]", 3600);
  Job(s, 1, 4, 8, 3600);  // the whole cluster: blocked until 3600
  Job(s, 2, 1, 1, 2000);  // 1000 + 2000 <= 3600: fits in front of it on n4
  Job(s, 3, 1, 1, 3000);  // would run until 4000 and delay job 1
  s.Run();
  EXPECT_EQ(s.Outcome(1), "Resources");
  EXPECT_EQ(s.Plan(1), "3600 n[1-4] reserved");
  EXPECT_EQ(s.Outcome(2), "n4");
  EXPECT_EQ(s.Outcome(3), "Priority");
  // Job 3 has an expected start too (after job 1), but no reservation under EASY.
  EXPECT_EQ(s.Plan(3), "7200 n1");
}

TEST(Easy, TheReservedJobStartsAtItsPlannedTimeOnItsPlannedNodes) {
  const char* cluster = kNodes;
  Scenario before(cluster);
  Whole(before, 100, "n[1-2]", 3600);
  Whole(before, 101, "n3", 7200);
  Job(before, 1, 2, 8, 3600);
  Job(before, 2, 1, 8, 5000);  // n4 is not in job 1's plan: it may run there
  before.Run();
  EXPECT_EQ(before.Plan(1), "3600 n[1-2] reserved");
  EXPECT_EQ(before.Outcome(2), "n4");

  Scenario at(cluster);  // at 3600: job 100 has ended, the others still run
  Whole(at, 101, "n3", 7200);
  Whole(at, 102, "n4", 6000);  // job 2
  Job(at, 1, 2, 8, 3600);
  at.Run(3600);
  EXPECT_EQ(at.Outcome(1), "n[1-2]");
}

TEST(Easy, ConservativeReservesEveryBlockedJobWhereEasyDoesNot) {
  auto queue = [](Scenario& s) {
    Whole(s, 100, "n[1-2]", 5000);
    Whole(s, 101, "n3", 2000);
    Job(s, 1, 3, 8, 1000);  // the first three nodes free together: n[1-3] at 5000
    Job(s, 2, 2, 8, 2000);  // fits before that, on n3 and n4 from 2000 to 4000
    Job(s, 3, 1, 8, 2500);  // n4 until 3500: in job 2's way, not in job 1's
  };
  Scenario easy(kNodes);
  queue(easy);
  easy.Run();
  EXPECT_EQ(easy.Plan(1), "5000 n[1-3] reserved");
  EXPECT_EQ(easy.Plan(2), "2000 n[3-4]");
  EXPECT_EQ(easy.Outcome(3), "n4");

  Scenario conservative(std::string("SchedulerParameters=bf_conservative\n") + kNodes);
  queue(conservative);
  conservative.Run();
  EXPECT_EQ(conservative.Plan(1), "5000 n[1-3] reserved");
  EXPECT_EQ(conservative.Plan(2), "2000 n[3-4] reserved");
  EXPECT_EQ(conservative.Outcome(3), "Priority");
  EXPECT_EQ(conservative.Plan(3), "4000 n4 reserved");

  Scenario overridden(kNodes);  // drover sim --policy conservative
  queue(overridden);
  overridden.Policy(PolicyKind::kConservative);
  overridden.Run();
  EXPECT_EQ(overridden.Outcome(3), "Priority");
}

TEST(Easy, EveryWaitingJobGetsAnExpectedStart) {
  auto queue = [](Scenario& s) {
    Whole(s, 100, "n[1-4]", 5000);
    for (uint64_t id = 1; id <= 5; ++id) Job(s, id, 1, 8, 1000);
    Job(s, 6, 5, 8, 1000);  // more nodes than the cluster has: never
  };
  Scenario easy(kNodes);
  queue(easy);
  easy.Run();
  EXPECT_EQ(easy.Plan(1), "5000 n1 reserved");
  // Not reserved: each is told the earliest it could start behind job 1 alone.
  for (uint64_t id = 2; id <= 5; ++id) EXPECT_EQ(easy.Plan(id), "5000 n2") << id;
  EXPECT_EQ(easy.Plan(6), "none");
  EXPECT_EQ(easy.Outcome(6), "PartitionNodeLimit");

  Scenario conservative(kNodes);
  queue(conservative);
  conservative.Policy(PolicyKind::kConservative);
  conservative.Run();
  EXPECT_EQ(conservative.Plan(4), "5000 n4 reserved");
  EXPECT_EQ(conservative.Plan(5), "6000 n1 reserved");
}

TEST(Easy, MultiPartitionJobsTakeTheEarliestOfTheirPartitions) {
  Scenario s(
      "DefMemPerCPU=1000\n"
      "NodeName=n[1-4] Sockets=2 CoresPerSocket=8 RealMemory=64000 Gres=gpu:8\n"
      "PartitionName=a Nodes=n[1-2] Default=YES\nPartitionName=b Nodes=n[3-4]\n");
  Whole(s, 100, "n[1-2]", 9000);
  Whole(s, 101, "n[3-4]", 4000);
  Job(s, 1, 2, 8, 1000).partitions = {"a", "b"};
  s.Run();
  EXPECT_EQ(s.Plan(1), "4000 n[3-4] reserved");
  EXPECT_EQ(s.Planned(1)->partition, 1);
}

TEST(Easy, SwitchesWaitHoldsInThePlanUntilItsDeadline) {
  auto queue = [](Scenario& s, int64_t wait) {
    Whole(s, 100, "n1", 2000);
    Whole(s, 101, "n2", 3000);
    Whole(s, 102, "n4", 5000);
    JobSpec& job = Job(s, 1, 2, 8, 1000);  // one leaf: n[1-2] at 3000; any two: n1, n3 at 2000
    job.switches = 1;
    job.switch_wait_seconds = wait;
  };
  const char* topology =
      "SwitchName=a Nodes=n[1-2]\nSwitchName=b Nodes=n[3-4]\nSwitchName=top Switches=a,b\n";
  std::string slurm = std::string(
                          "TopologyPlugin=topology/tree\n"
                          "SchedulerParameters=max_switch_wait=100000\n") +
                      kNodes;
  Scenario patient(slurm, std::nullopt, topology);
  queue(patient, 10000);
  patient.Run();
  EXPECT_EQ(patient.Plan(1), "3000 n[1-2] reserved");
  Scenario hurried(slurm, std::nullopt, topology);
  queue(hurried, 500);  // waits for one leaf only until 501
  hurried.Run();
  EXPECT_EQ(hurried.Outcome(1), "Resources");
  EXPECT_EQ(hurried.Plan(1), "2000 n[1,3] reserved");
}

TEST(Easy, TypedGpuJobsArePlannedOnlyWhereTheirTypeIs) {
  Scenario s(
      "DefMemPerCPU=1000\n"
      "NodeName=a1 Sockets=2 CoresPerSocket=8 RealMemory=64000 Gres=gpu:a100:8\n"
      "NodeName=v1 Sockets=2 CoresPerSocket=8 RealMemory=64000 Gres=gpu:v100:8\n"
      "PartitionName=gpu Nodes=ALL Default=YES\n",
      "NodeName=a1 Name=gpu Type=a100 Count=8\nNodeName=v1 Name=gpu Type=v100 Count=8\n");
  Whole(s, 100, "a1", 5000);
  JobSpec& typed = Job(s, 1, 1, 8, 1000);
  typed.gpu_type = "a100";
  Job(s, 2, 1, 8, 9000);  // any type: v1 is free and not promised to job 1
  s.Run();
  EXPECT_EQ(s.Plan(1), "5000 a1 reserved");
  EXPECT_EQ(s.Outcome(2), "v1");
}

// --- advance reservations ---

TEST(Reservations, MaintenanceKeepsLongJobsOffItsNodesWhileShortOnesBackfill) {
  Scenario s(kNodes);
  Whole(s, 100, "n[3-4]", 100000);
  s.Reservation("maint", "n2", 8200, 11800).maint = true;  // in 2 hours, for 1
  Job(s, 1, 1, 8, 86400);                                  // takes n1
  Job(s, 2, 1, 8, 86400);  // n2 would run into the maintenance: after it
  Job(s, 3, 1, 8, 3600);   // ends at 4600, before it: backfills on n2
  s.Run();
  EXPECT_EQ(s.Outcome(1), "n1");
  EXPECT_EQ(s.Outcome(2), "Resources");
  EXPECT_EQ(s.Plan(2), "11800 n2 reserved");
  EXPECT_EQ(s.Outcome(3), "n2");
}

TEST(Reservations, OnlyTheirUsersRunInThemAndOnlyInsideTheirWindow) {
  Scenario s(kNodes);
  Whole(s, 100, "n[1-2]", 100000);
  s.Reservation("team", "n3", 0, 10000).users = {"alice"};
  s.Reservation("later", "n4", 5000, 9000).users = {"alice"};
  s.Job(1).reservation = "team";              // alice's, in its window: runs on n3
  JobSpec& outsider = Job(s, 2, 1, 1, 1000);  // bob, no reservation: n3 is not his
  outsider.user = "bob";
  outsider.partitions = {"gpu"};
  outsider.exclude = {"n4"};
  JobSpec& intruder = s.Job(3);
  intruder.user = "bob";
  intruder.reservation = "team";
  s.Job(4).reservation = "later";  // waits for 5000
  s.Job(5).reservation = "gone";
  s.Run();
  EXPECT_EQ(s.Outcome(1), "n3");
  EXPECT_EQ(s.Outcome(2), "Resources");
  EXPECT_EQ(s.Outcome(3), "Reservation");
  EXPECT_EQ(s.Outcome(4), "Reservation");
  EXPECT_EQ(s.Plan(4), "5000 n4 reserved");
  EXPECT_EQ(s.Outcome(5), "ReservationDeleted");
}

TEST(Reservations, RepeatingWindowsBlockTheirNextOccurrence) {
  Scenario s(kNodes);
  Whole(s, 100, "n[2-4]", kUnlimitedSeconds);
  // Daily, the first window already past: the next is 86400 later, 86800 to 87300.
  AdvanceReservation& daily = s.Reservation("nightly", "n1", 400, 900);
  daily.repeat_seconds = 86400;
  daily.maint = true;
  Job(s, 1, 1, 8, 86400);  // a day never fits between two windows: no start foreseen
  Job(s, 2, 1, 8, 80000);  // ends at 81000, before tomorrow's window
  s.Run();
  EXPECT_EQ(s.Outcome(1), "Resources");
  EXPECT_EQ(s.Plan(1), "none");
  EXPECT_EQ(s.Outcome(2), "n1");
}

// --- preemption ---

constexpr const char* kTiers =
    "DefMemPerCPU=1000\nPreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\n"
    "NodeName=n[1-2] Sockets=2 CoresPerSocket=8 RealMemory=64000 Gres=gpu:8\n"
    "PartitionName=high Nodes=ALL PriorityTier=10 Default=YES\n"
    "PartitionName=low Nodes=ALL PriorityTier=1 GraceTime=180\n";

TEST(Preemption, TheCheapestVictimGoesAndItsNodesWaitForThePreemptor) {
  Scenario s(kTiers);
  Whole(s, 100, "n1", 100000).start_time = 0;    // 8 GPUs x 1000 s done
  Whole(s, 101, "n2", 100000).start_time = 900;  // 8 GPUs x 100 s: cheaper
  s.running_job(0).partition = s.running_job(1).partition = 1;
  Job(s, 1, 1, 8, 3600);
  Job(s, 2, 1, 1, 60).partitions = {"low"};  // the same tier as the victims: never preempts
  s.Run();
  EXPECT_EQ(s.Victims(), (std::vector<uint64_t>{101}));
  EXPECT_EQ(s.Plan(1), "1180 n2 reserved");  // when job 101's grace time ends
  EXPECT_EQ(s.result().preempted.front().release_time, 1180);
  EXPECT_EQ(s.Outcome(2), "Resources");
}

TEST(Preemption, ExemptTimeProtectsYoungJobs) {
  Scenario s(std::string("PreemptExemptTime=00:05:00\n") + kTiers);
  Whole(s, 100, "n1", 100000).start_time = 0;
  Whole(s, 101, "n2", 100000).start_time = 900;  // has run 100 s of its 300 s
  s.running_job(0).partition = s.running_job(1).partition = 1;
  Job(s, 1, 1, 8, 3600);
  s.Run();
  EXPECT_EQ(s.Victims(), (std::vector<uint64_t>{100}));
}

TEST(Preemption, JobsInTheirGraceTimeAreNotChosenTwice) {
  Scenario s(kTiers);
  RunningJob& going = Whole(s, 100, "n1", 1180);
  going.preempted = true;  // preempted for job 1 in the last cycle
  Whole(s, 101, "n2", 100000);
  s.running_job(0).partition = s.running_job(1).partition = 1;
  Job(s, 1, 1, 8, 3600);
  s.Run();
  EXPECT_TRUE(s.Victims().empty());
  EXPECT_EQ(s.Plan(1), "1180 n1 reserved");
}

TEST(Preemption, EqualOrHigherTiersAndModeOffAreNeverVictims) {
  Scenario s(kTiers);
  Whole(s, 100, "n[1-2]", 100000).partition = 0;  // high, like the preemptor
  Job(s, 1, 1, 8, 3600);
  s.Run();
  EXPECT_TRUE(s.Victims().empty());
  Scenario off(std::string(kTiers) +
               "PartitionName=keep Nodes=ALL PriorityTier=1 "
               "PreemptMode=OFF\n");
  Whole(off, 100, "n[1-2]", 100000).partition = 2;
  Job(off, 1, 1, 8, 3600);
  off.Run();
  EXPECT_TRUE(off.Victims().empty());
}

TEST(Preemption, MultiNodeJobsTakeTheCheapestNodes) {
  std::string four = kTiers;
  four.replace(four.find("n[1-2]"), 6, "n[1-4]");
  Scenario s(four);
  Whole(s, 100, "n1", 100000).start_time = 0;
  Whole(s, 101, "n2", 100000).start_time = 500;
  Whole(s, 102, "n3", 100000).start_time = 990;
  Whole(s, 103, "n4", 100000).start_time = 980;
  for (size_t i = 0; i < 4; ++i) s.running_job(i).partition = 1;
  Job(s, 1, 2, 8, 3600);
  s.Run();
  EXPECT_EQ(s.Victims(), (std::vector<uint64_t>{102, 103}));
  EXPECT_EQ(s.Plan(1), "1180 n[3-4] reserved");
}

}  // namespace
}  // namespace drover::sched
