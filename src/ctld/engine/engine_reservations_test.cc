// Suspend/resume and reservations through the engine, with a manual clock.
#include <gtest/gtest.h>

#include <csignal>

#include "ctld/engine/engine.h"

namespace drover::ctld {
namespace {

constexpr const char* kCluster =
    "ClusterName=t\nGresTypes=gpu\nDefMemPerCPU=100\nKillWait=30\nSlurmdTimeout=300\n"
    "OverTimeLimit=0\nNodeName=n[1-4] CPUs=8 RealMemory=8000 Gres=gpu:2\n"
    "NodeName=c1 CPUs=8 RealMemory=8000\n"
    "PartitionName=p Nodes=n[1-4] Default=YES MaxTime=2:00:00\nPartitionName=cpu Nodes=c1\n";

const Caller kAdmin{0, 0, true};
const Caller kUser{1000, 1000, false};

class OperatorTest : public ::testing::Test {
 protected:
  OperatorTest()
      : load_(LoadClusterConfigText(kCluster)),
        engine_(
            load_.config, clock_,
            EngineOptions{
                .min_cycle_interval_seconds = 0, .policy = std::nullopt, .check_kept_pool = true}) {
    EXPECT_TRUE(load_.ok());
    Apply(NodeRegistered{"n1", {}}, NodeRegistered{"n2", {}}, NodeRegistered{"n3", {}},
          NodeRegistered{"n4", {}}, NodeRegistered{"c1", {}});
  }

  template <typename... Events>
  const Reply* Apply(Events... events) {
    std::vector<Event> batch{Event(std::move(events))...};
    last_ = engine_.Apply(std::move(batch));
    for (const Effect& effect : last_.effects)
      if (auto* reply = std::get_if<Reply>(&effect); reply && reply->token == token_) return reply;
    return nullptr;
  }

  uint64_t Submit(int64_t limit = 600) {
    JobSpec spec;
    spec.user = "alice";
    spec.account = "research";
    spec.gpus_per_node = 1;
    spec.time_limit_seconds = limit;
    const Reply* reply = Apply(SubmitJob{++token_, kUser, spec, "", "#!/bin/sh\n"});
    return reply && reply->ok ? reply->job_ids.front() : 0;
  }

  std::vector<int> SignalsSent() const {
    std::vector<int> signals;
    for (const Effect& effect : last_.effects)
      if (auto* signal = std::get_if<SignalJob>(&effect)) signals.push_back(signal->signal);
    return signals;
  }

  const Reply* Suspend(uint64_t id, bool resume, Caller caller = kAdmin) {
    SuspendJobs event{++token_, caller, {}, resume};
    event.filter.job_ids = {id};
    return Apply(event);
  }

  const Reply* Create(std::string name, ReservationFields fields, Caller caller = kAdmin) {
    return Apply(CreateReservation{++token_, caller, std::move(name), std::move(fields)});
  }

  ManualClock clock_;
  ConfigLoad load_;
  Engine engine_;
  EngineOutput last_;
  uint64_t token_ = 0;
};

TEST_F(OperatorTest, SuspendStopsTheJobAndItsClock) {
  uint64_t id = Submit(600);
  ASSERT_EQ(engine_.FindJob(id)->state, JobState::kRunning);
  int64_t end = engine_.FindJob(id)->end_time;

  EXPECT_EQ(Suspend(id, false, kUser)->error, "Access/permission denied");
  EXPECT_EQ(Suspend(id, true)->error, "Job is not suspended");
  ASSERT_TRUE(Suspend(id, false)->ok);
  EXPECT_EQ(engine_.FindJob(id)->state, JobState::kSuspended);
  EXPECT_EQ(SignalsSent(), std::vector<int>{SIGSTOP});
  EXPECT_EQ(last_.changed_jobs, std::vector<uint64_t>{id});

  clock_.Advance(1000);  // past the time limit, but suspended time does not count
  Apply(Heartbeat{"n1", true, ""}, Tick{});
  EXPECT_EQ(engine_.FindJob(id)->state, JobState::kSuspended);
  EXPECT_TRUE(SignalsSent().empty());

  ASSERT_TRUE(Suspend(id, true)->ok);
  EXPECT_EQ(SignalsSent(), std::vector<int>{SIGCONT});
  EXPECT_EQ(engine_.FindJob(id)->state, JobState::kRunning);
  EXPECT_EQ(engine_.FindJob(id)->end_time, end + 1000);
  EXPECT_EQ(engine_.FindJob(id)->suspended_seconds, 1000);

  // The job still ends at its (moved) limit; its GPUs stayed allocated throughout.
  clock_.Advance(599);
  Apply(Heartbeat{"n1", true, ""}, Tick{});
  EXPECT_TRUE(SignalsSent().empty());
  Apply(JobEnded{id, "n1", 0, 0});
  EXPECT_EQ(engine_.FindJob(id)->state, JobState::kCompleted);
}

TEST_F(OperatorTest, SuspendRefusesJobsThatDoNotRun) {
  uint64_t id = Submit();
  Apply(JobEnded{id, "n1", 0, 0});
  EXPECT_EQ(Suspend(id, false)->error, "Job is not running");
  for (int i = 0; i < 8; ++i) Submit();  // 8 GPUs: the ninth waits
  uint64_t pending = Submit();
  ASSERT_EQ(engine_.FindJob(pending)->state, JobState::kPending);
  EXPECT_EQ(Suspend(pending, false)->error, "Job is pending execution");
}

TEST_F(OperatorTest, ACancelledSuspendedJobIsTerminated) {
  uint64_t id = Submit();
  Suspend(id, false);
  CancelJobs cancel{++token_, kUser, {}, 0};
  cancel.filter.job_ids = {id};
  ASSERT_TRUE(Apply(cancel)->ok);
  bool terminated = false;
  for (const Effect& effect : last_.effects)
    if (auto* terminate = std::get_if<TerminateJob>(&effect)) terminated = terminate->job_id == id;
  EXPECT_TRUE(terminated);
  Apply(JobEnded{id, "n1", 0, SIGTERM});
  EXPECT_EQ(engine_.FindJob(id)->state, JobState::kCancelled);
}

TEST_F(OperatorTest, CreateReservationValidatesLikeSlurm) {
  int64_t now = clock_.Now();
  ReservationFields fields;
  fields.start_time = now + 3600;
  fields.duration_seconds = 7200;
  fields.node_list = "n[3-4]";
  EXPECT_EQ(Create("maint", fields, kUser)->error, "Access/permission denied");
  EXPECT_EQ(Create("maint", fields)->error, "Reservation request lacks users, groups or accounts");
  fields.users = "alice,bob";
  fields.flags = "MAINTENANCE";
  EXPECT_NE(Create("maint", fields)->error.find("Invalid reservation flag \"MAINTENANCE\""),
            std::string::npos);
  fields.flags = "MAINT,IGNORE_JOBS";
  const Reply* created = Create("maint", fields);
  ASSERT_TRUE(created->ok) << created->error;
  EXPECT_EQ(created->name, "maint");
  EXPECT_EQ(last_.changed_reservations, std::vector<std::string>{"maint"});
  EXPECT_EQ(Create("maint", fields)->error, "Duplicate reservation name");

  const Reservation* maint = engine_.FindReservation("maint");
  ASSERT_NE(maint, nullptr);
  EXPECT_EQ(maint->nodes, (std::vector<int>{2, 3}));
  EXPECT_EQ(maint->end_time, now + 3600 + 7200);
  EXPECT_TRUE(maint->Has("MAINT"));

  ReservationFields bad = fields;
  bad.node_list = "n9";
  EXPECT_EQ(Create("", bad)->error, "Invalid node name specified: n9");
  bad = fields;
  bad.end_time = now;
  bad.duration_seconds.reset();
  EXPECT_NE(Create("", bad)->error.find("Invalid time specified"), std::string::npos);
  bad = fields;
  bad.start_time.reset();
  EXPECT_NE(Create("", bad)->error.find("Invalid time specified"), std::string::npos);
}

TEST_F(OperatorTest, OverlapsAreRefusedUnlessAllowedAndCountsPickFreeNodes) {
  int64_t now = clock_.Now();
  ReservationFields team;
  team.start_time = now + 100;
  team.end_time = now + 10000;
  team.node_list = "n[1-2]";
  team.accounts = "research";
  ASSERT_TRUE(Create("team", team)->ok);

  ReservationFields clash = team;
  clash.node_list = "n2";
  EXPECT_NE(Create("clash", clash)->error.find("overlaps with another reservation (team)"),
            std::string::npos);
  clash.flags = "OVERLAP";
  EXPECT_TRUE(Create("clash", clash)->ok);

  // By count: nodes no overlapping reservation holds, in the partition asked for.
  ReservationFields counted;
  counted.start_time = now + 100;
  counted.duration_seconds = 600;
  counted.users = "bob";
  counted.node_count = 2;
  counted.partition = "p";
  const Reply* reply = Create("", counted);
  ASSERT_TRUE(reply->ok) << reply->error;
  EXPECT_EQ(reply->name, "bob_1");
  EXPECT_EQ(engine_.FindReservation("bob_1")->nodes, (std::vector<int>{2, 3}));
  counted.node_count = 1;
  EXPECT_NE(Create("", counted)->error.find("Requested nodes are busy"), std::string::npos);

  // By GPUs: two per node here, so 3 GPUs take two nodes; the CPU-only node never counts.
  ReservationFields gpus;
  gpus.start_time = now + 20000;
  gpus.duration_seconds = 600;
  gpus.users = "carol";
  gpus.tres = "gres/gpu=3";
  reply = Create("gpus", gpus);
  ASSERT_TRUE(reply->ok) << reply->error;
  EXPECT_EQ(engine_.FindReservation("gpus")->nodes, (std::vector<int>{0, 1}));
  gpus.tres = "license/x=1";
  EXPECT_NE(Create("x", gpus)->error.find("Invalid Trackable RESource"), std::string::npos);
}

TEST_F(OperatorTest, ANodeRunningJobsIsBusyForAReservationStartingNow) {
  uint64_t id = Submit();  // lands on n1
  ASSERT_EQ(engine_.FindJob(id)->allocation.nodes.front().node, 0);
  ReservationFields now;
  now.start_time = clock_.Now();
  now.duration_seconds = 600;
  now.users = "alice";
  now.node_list = "n1";
  EXPECT_NE(Create("now", now)->error.find("n1 runs jobs"), std::string::npos);
  now.flags = "IGNORE_JOBS";
  EXPECT_TRUE(Create("now", now)->ok);
}

TEST_F(OperatorTest, UpdateDeleteAndExpiry) {
  int64_t now = clock_.Now();
  ReservationFields fields;
  fields.start_time = now + 100;
  fields.duration_seconds = 100;
  fields.users = "alice";
  fields.node_list = "n1";
  ASSERT_TRUE(Create("once", fields)->ok);
  fields.flags = "DAILY";
  EXPECT_FALSE(Create("daily", fields)->ok);  // DAILY does not let it overlap "once"
  EXPECT_FALSE(engine_.FindReservation("daily"));
  fields.node_list = "n2";
  ASSERT_TRUE(Create("daily", fields)->ok);

  ReservationFields change;
  change.start_time = now + 50;  // moved: keeps its length
  change.flags = "+IGNORE_JOBS";
  ASSERT_TRUE(Apply(UpdateReservation{++token_, kAdmin, "once", change})->ok);
  EXPECT_EQ(engine_.FindReservation("once")->end_time, now + 150);
  EXPECT_TRUE(engine_.FindReservation("once")->Has("IGNORE_JOBS"));
  EXPECT_EQ(Apply(UpdateReservation{++token_, kAdmin, "nope", change})->error,
            "Requested reservation is invalid");

  clock_.Advance(300);
  Apply(Tick{});
  EXPECT_EQ(engine_.FindReservation("once"), nullptr);
  EXPECT_EQ(last_.deleted_reservations, std::vector<std::string>{"once"});
  ASSERT_NE(engine_.FindReservation("daily"), nullptr);
  EXPECT_EQ(engine_.FindReservation("daily")->start_time, now + 100 + 86400);

  JobSpec spec;
  spec.user = "alice";
  spec.account = "research";
  spec.reservation = "daily";
  spec.time_limit_seconds = 60;
  Apply(SubmitJob{++token_, kUser, spec, "", "#!/bin/sh\n"});
  EXPECT_NE(Apply(DeleteReservation{++token_, kAdmin, "daily"})
                ->error.find("Requested reservation is in use"),
            std::string::npos);
  EXPECT_EQ(Apply(DeleteReservation{++token_, kAdmin, "nope"})->error,
            "Requested reservation is invalid");
}

TEST_F(OperatorTest, SnapshotsKeepTheReservationsTheySaw) {
  ReservationFields fields;
  fields.start_time = clock_.Now() + 100;
  fields.duration_seconds = 100;
  fields.users = "alice";
  fields.node_list = "n1";
  ASSERT_TRUE(Create("a", fields)->ok);
  auto before = engine_.Publish();
  ASSERT_TRUE(Apply(DeleteReservation{++token_, kAdmin, "a"})->ok);
  EXPECT_EQ(before->reservations->count("a"), 1u);
  EXPECT_EQ(engine_.Publish()->reservations->count("a"), 0u);
}

}  // namespace
}  // namespace drover::ctld

namespace drover::ctld {
namespace {

// The scheduler honours the reservations the engine keeps: with every node but n4 busy, a
// maintenance window on n4 in an hour keeps a two-hour job off it while a short one backfills;
// the plan in the snapshot says when the long job will start. A job may ask only for a
// reservation it may use.
TEST_F(OperatorTest, MaintenanceReservationsKeepLongJobsOffTheirNodes) {
  for (int i = 0; i < 3; ++i) Submit(7200);  // n1-n3, one GPU each: 1 GPU left on each
  for (int i = 0; i < 3; ++i) Submit(7200);  // n1-n3 full
  int64_t now = clock_.Now();
  ReservationFields fields;
  fields.start_time = now + 3600;
  fields.duration_seconds = 3600;
  fields.node_list = "n4";
  fields.users = "root";
  fields.flags = "MAINT";
  ASSERT_TRUE(Create("maint", fields)->ok);
  uint64_t long_job = Submit(7200);  // would still run when the maintenance starts
  uint64_t short_job = Submit(1800);
  EXPECT_EQ(engine_.FindJob(long_job)->state, JobState::kPending);
  EXPECT_EQ(engine_.FindJob(short_job)->state, JobState::kRunning);
  EXPECT_EQ(engine_.FindJob(short_job)->allocation.nodes.front().node, 3);  // n4
  auto snapshot = engine_.Publish();
  ASSERT_EQ(snapshot->plan->size(), 1u);
  EXPECT_EQ(snapshot->plan->front().job_id, long_job);
  EXPECT_EQ(snapshot->plan->front().start_time, now + 7200);  // n1-n3's jobs end then

  JobSpec spec;
  spec.user = "alice";
  spec.reservation = "maint";
  const Reply* refused = Apply(SubmitJob{++token_, kUser, spec, "", ""});
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->error, "Access denied to requested reservation");
  spec.reservation = "nope";
  refused = Apply(SubmitJob{++token_, kUser, spec, "", ""});
  EXPECT_NE(refused->error.find("Requested reservation is invalid"), std::string::npos);
}

}  // namespace
}  // namespace drover::ctld
