// Preemption carried out by the engine, on a manual clock: a low-tier job preempted for a
// high-tier one gets its notice at once, is killed only when its GraceTime is over, and is
// requeued with the same ID and one more restart (or ends PREEMPTED with PreemptMode=CANCEL).
#include <gtest/gtest.h>

#include <csignal>

#include "ctld/engine/engine.h"

namespace drover::ctld {
namespace {

constexpr const char* kCluster =
    "ClusterName=t\nGresTypes=gpu\nDefMemPerCPU=100\nSlurmdTimeout=0\nKillWait=30\n"
    "PreemptType=preempt/partition_prio\nPreemptMode={}\n"
    "NodeName=n1 CPUs=8 RealMemory=8000 Gres=gpu:2\n"
    "PartitionName=high Nodes=n1 PriorityTier=10 Default=YES\n"
    "PartitionName=low Nodes=n1 PriorityTier=1 GraceTime=180\n";

std::string Conf(const std::string& mode) {
  std::string text = kCluster;
  return text.replace(text.find("{}"), 2, mode);
}

class PreemptTest : public ::testing::Test {
 protected:
  explicit PreemptTest(const std::string& mode = "REQUEUE")
      : load_(LoadClusterConfigText(Conf(mode))),
        engine_(
            load_.config, clock_,
            EngineOptions{
                .min_cycle_interval_seconds = 0, .policy = std::nullopt, .check_kept_pool = true}) {
    EXPECT_TRUE(load_.ok());
    Apply(NodeRegistered{"n1", {}});
  }

  EngineOutput Apply(Event event) {
    std::vector<Event> batch;
    batch.push_back(std::move(event));
    last_ = engine_.Apply(std::move(batch));
    return last_;
  }
  void Pass(int64_t seconds) {
    clock_.Advance(seconds);
    Apply(Tick{});
  }

  uint64_t Submit(const std::string& partition, int signal = 0, int64_t signal_seconds = 60) {
    JobSpec spec;
    spec.user = "alice";
    spec.account = "research";
    spec.ntasks = 8;  // the whole node
    spec.time_limit_seconds = 86400;
    spec.partitions = {partition};
    spec.signal_number = signal;
    spec.signal_seconds = signal_seconds;
    Apply(SubmitJob{++token_, Caller{1000, 1000}, spec, "", "#!/bin/sh\n"});
    for (const Effect& effect : last_.effects)
      if (auto* reply = std::get_if<Reply>(&effect); reply && reply->token == token_) {
        EXPECT_TRUE(reply->ok) << reply->error;
        return reply->ok ? reply->job_ids.front() : 0;
      }
    return 0;
  }

  // The signals the last batch sent to `job`, in order (TerminateJob counts as SIGKILL's
  // announcement: "kill").
  std::vector<std::string> Sent(uint64_t job) const {
    std::vector<std::string> sent;
    for (const Effect& effect : last_.effects) {
      if (auto* signal = std::get_if<SignalJob>(&effect); signal && signal->job_id == job)
        sent.push_back(signal->signal == SIGCONT   ? "CONT"
                       : signal->signal == SIGTERM ? "TERM"
                                                   : "other");
      if (auto* kill = std::get_if<TerminateJob>(&effect); kill && kill->job_id == job)
        sent.push_back("kill");
    }
    return sent;
  }
  bool Launched(uint64_t job) const {
    for (const Effect& effect : last_.effects)
      if (auto* launch = std::get_if<Launch>(&effect); launch && launch->job_id == job) return true;
    return false;
  }
  const Job& Of(uint64_t id) const { return *engine_.FindJob(id); }

  ManualClock clock_;
  ConfigLoad load_;
  Engine engine_;
  EngineOutput last_;
  uint64_t token_ = 0;
};

TEST_F(PreemptTest, TheVictimIsWarnedAtOnceKilledAfterItsGraceAndRequeued) {
  uint64_t low = Submit("low", SIGTERM, 180);  // --signal=TERM@180
  ASSERT_EQ(Of(low).state, JobState::kRunning);
  Pass(1000);
  int64_t preempted_at = clock_.Now();
  uint64_t high = Submit("high");
  EXPECT_EQ(Sent(low), (std::vector<std::string>{"CONT", "TERM"}));
  EXPECT_EQ(Of(low).state, JobState::kRunning);
  EXPECT_EQ(Of(low).end_time, preempted_at + 180);  // its end is now + GraceTime
  EXPECT_EQ(Of(high).state, JobState::kPending);
  for (int i = 0; i < 179; ++i) {  // the grace time: no kill, no second signal
    Pass(1);
    EXPECT_TRUE(Sent(low).empty()) << "at +" << clock_.Now() - preempted_at;
  }
  Pass(1);
  EXPECT_EQ(clock_.Now() - preempted_at, 180);
  EXPECT_EQ(Sent(low), (std::vector<std::string>{"kill"}));
  const Job& requeued = Of(low);
  EXPECT_EQ(requeued.state, JobState::kPending);
  EXPECT_EQ(requeued.restart_count, 1u);
  ASSERT_EQ(requeued.history.size(), 1u);
  EXPECT_EQ(requeued.history.back().state, JobState::kPreempted);
  EXPECT_EQ(Of(high).state, JobState::kRunning);  // on the victim's resources, at once
  EXPECT_TRUE(Launched(high));
  // When the high-tier job is done, the victim runs again: same ID, SLURM_RESTART_COUNT=1.
  Apply(JobEnded{high, "n1", 0, 0});
  EXPECT_EQ(Of(low).state, JobState::kRunning);
  EXPECT_TRUE(Launched(low));
  EXPECT_EQ(Of(low).restart_count, 1u);
}

TEST_F(PreemptTest, AVictimThatEndsInItsGraceTimeIsRequeuedThen) {
  uint64_t low = Submit("low");
  Pass(10);
  uint64_t high = Submit("high");
  EXPECT_EQ(Sent(low), (std::vector<std::string>{"CONT", "TERM"}));
  Pass(30);
  Apply(JobEnded{low, "n1", 0, 0, false, false, false, 0});  // checkpointed and exited 0
  EXPECT_EQ(Of(low).state, JobState::kPending);
  EXPECT_EQ(Of(low).history.back().state, JobState::kPreempted);
  EXPECT_EQ(Of(high).state, JobState::kRunning);  // no need to wait out the grace time
}

TEST_F(PreemptTest, AVictimItsUserCancelsInItsGraceTimeStaysCancelled) {
  uint64_t low = Submit("low");
  Pass(10);
  Submit("high");
  CancelJobs cancel{++token_, Caller{1000, 1000}, {}, 0};
  cancel.filter.job_ids = {low};
  Apply(cancel);
  Apply(JobEnded{low, "n1", 0, 15, false, false, false, 0});  // the SIGTERM ended it
  EXPECT_EQ(Of(low).state, JobState::kCancelled);
  EXPECT_EQ(Of(low).restart_count, 0u);
}

class PreemptCancelTest : public PreemptTest {
 protected:
  PreemptCancelTest() : PreemptTest("CANCEL") {}
};

TEST_F(PreemptCancelTest, CancelModeEndsTheVictimPreempted) {
  uint64_t low = Submit("low");
  Pass(10);
  Submit("high");
  Pass(180);
  EXPECT_EQ(Of(low).state, JobState::kPreempted);
  EXPECT_EQ(Of(low).restart_count, 0u);
}

}  // namespace
}  // namespace drover::ctld
