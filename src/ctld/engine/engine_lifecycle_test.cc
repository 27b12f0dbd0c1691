// A job's lifecycle options: --deadline, --kill-on-invalid-dep, -k/--no-kill, --mail-type, the
// pass that started a job (sacct's Flags), and afterok:N_T on one array task.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <csignal>
#include <string>
#include <utility>
#include <vector>

#include "ctld/engine/engine.h"
#include "ctld/engine/engine_test_support.h"

namespace drover::ctld {
namespace {

// EngineTest (engine_test_support.h) with named jobs, their mails and their ends.
class LifecycleTest : public EngineTest {
 protected:
  using EngineTest::EngineTest;

  uint64_t Submit(JobSpec spec, const std::string& array = "") {
    spec.name = spec.name.empty() ? "job" : spec.name;
    return EngineTest::Submit(std::move(spec), array);
  }
  std::vector<MailJob> Mails() const { return Effects<MailJob>(); }
  std::vector<std::string> Subjects() const {
    std::vector<std::string> subjects;
    for (const MailJob& mail : Mails()) subjects.push_back(mail.subject);
    return subjects;
  }
  const Job& Find(uint64_t id) const { return *engine_.FindJob(id); }
  // The job's batch shell, on its first node, ends with `exit_code`.
  void End(uint64_t id, int32_t exit_code = 0) {
    const std::string& node = load_.config.nodes[Find(id).allocation.nodes.at(0).node].name;
    Apply(JobEnded{id, node, exit_code, 0});
  }
};

// Slurm's deadline_ok: once now + (time-min or time limit) passes the deadline, the waiting job
// ends DEADLINE with reason DeadLine; a job that starts in time runs until its deadline at most.
TEST_F(LifecycleTest, DeadlineRemovesAJobThatCanNoLongerEndInTime) {
  const int64_t now = clock_.Now();
  uint64_t a = Submit(Gpus(2)), b = Submit(Gpus(2));  // the cluster's GPUs, for an hour
  JobSpec hopeless = Gpus(2);
  hopeless.deadline = now + 1800;  // an hour's limit cannot end in half an hour
  uint64_t late = Submit(hopeless);
  EXPECT_EQ(Find(late).state, JobState::kDeadline);
  EXPECT_EQ(Reason(late), "DeadLine");
  EXPECT_EQ(Find(late).ExitCodeText(), "0:1");
  JobSpec waiting = Gpus(2);
  waiting.deadline = now + 4000;
  uint64_t wait = Submit(waiting);
  Pass(300);
  EXPECT_EQ(Find(wait).state, JobState::kPending) << "it may still end in time";
  Pass(301);  // now + 3600 > deadline
  EXPECT_EQ(Find(wait).state, JobState::kDeadline);
  // --time-min is what must fit; the limit then ends at the deadline.
  JobSpec shortened = Gpus(2);
  shortened.time_min_seconds = 600;
  shortened.deadline = clock_.Now() + 1200;
  uint64_t fits = Submit(shortened);
  EXPECT_EQ(Find(fits).state, JobState::kPending);
  End(a, 0);
  ASSERT_EQ(Find(fits).state, JobState::kRunning);
  EXPECT_EQ(Find(fits).end_time, shortened.deadline);
  EXPECT_EQ(Find(fits).time_limit_seconds, 1200);
  EXPECT_EQ(Find(b).state, JobState::kRunning);
}

// --kill-on-invalid-dep overrides DependencyParameters either way.
TEST_F(LifecycleTest, KillOnInvalidDepYesCancelsTheJob) {
  uint64_t job = Submit({});
  End(job, 1);
  JobSpec after, kept;
  after.dependency = kept.dependency = *ParseDependency(fmt::format("afterok:{}", job));
  after.kill_on_invalid_dep = 1;
  uint64_t doomed = Submit(after);
  EXPECT_EQ(Find(doomed).state, JobState::kCancelled);
  EXPECT_EQ(Reason(doomed), "DependencyNeverSatisfied");
  EXPECT_EQ(Find(Submit(kept)).state, JobState::kPending) << "the cluster's default: wait";
}

class KillInvalidDependLifecycleTest : public LifecycleTest {
 protected:
  KillInvalidDependLifecycleTest()
      : LifecycleTest(std::string(kEngineTestCluster) +
                      "DependencyParameters=kill_invalid_depend\n") {}
};

TEST_F(KillInvalidDependLifecycleTest, KillOnInvalidDepNoKeepsTheJobWaiting) {
  uint64_t job = Submit({});
  End(job, 1);
  JobSpec after;
  after.dependency = *ParseDependency(fmt::format("afterok:{}", job));
  after.kill_on_invalid_dep = 2;
  uint64_t waiting = Submit(after);
  Pass(1);
  EXPECT_EQ(Find(waiting).state, JobState::kPending);
  EXPECT_EQ(Reason(waiting), "DependencyNeverSatisfied");
}

// sacct's Flags: the pass that started the run.
TEST_F(LifecycleTest, TheStartingPassIsRecorded) {
  uint64_t first = Submit(Gpus(2)), second = Submit(Gpus(2));
  EXPECT_EQ(Find(first).sched_by, "SchedSubmit");
  JobSpec wide = Gpus(2);
  wide.min_nodes = 2;
  uint64_t blocked = Submit(wide);  // needs both nodes' GPUs: waits for both jobs
  JobSpec short_job = Gpus(2);
  short_job.time_limit_seconds = 60;  // ends before the blocked job could start: backfilled
  uint64_t later = Submit(short_job);
  End(first, 0);
  EXPECT_EQ(Find(blocked).state, JobState::kPending);
  EXPECT_EQ(Find(later).state, JobState::kRunning);
  EXPECT_EQ(Find(later).sched_by, "SchedBackfill") << "started ahead of the blocked job";
  End(second);
  End(later);
  EXPECT_EQ(Find(blocked).sched_by, "SchedMain");
}

// A task on each of the two nodes.
JobSpec OnBothNodes() {
  JobSpec spec;
  spec.min_nodes = spec.max_nodes = 2;
  spec.ntasks = 2;
  return spec;
}

// -k/--no-kill: the job goes on without its failed node; without it the job is requeued.
TEST_F(LifecycleTest, NoKillKeepsAJobRunningWithoutItsFailedNode) {
  JobSpec spec = OnBothNodes();
  spec.no_kill = true;
  uint64_t kept = Submit(spec);
  ASSERT_EQ(Find(kept).allocation.nodes.size(), 2u);
  clock_.Advance(200);
  Apply(Heartbeat{"n1", true, ""});
  clock_.Advance(200);  // n2 silent for 400 s > SlurmdTimeout
  Apply(Heartbeat{"n1", true, ""}, Tick{});
  EXPECT_EQ(NodeStateName(engine_.node(1), false), "DOWN*");
  EXPECT_EQ(Find(kept).state, JobState::kRunning);
  // What of it still runs on the lost node is stopped there, should the node come back.
  std::vector<TerminateJob> stops = Effects<TerminateJob>();
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_EQ(stops[0].job_id, kept);
  EXPECT_EQ(stops[0].nodes, std::vector<int>{1});
  ASSERT_EQ(Find(kept).allocation.nodes.size(), 1u);
  EXPECT_EQ(Find(kept).allocation.nodes[0].node, 0);
  EXPECT_TRUE(engine_.node(1).jobs.empty());
  End(kept, 0);
  EXPECT_EQ(Find(kept).state, JobState::kCompleted);
}

// MailProg takes the recipient as an argument: nothing it could read as an option or an address
// of a pipe or a file is accepted.
TEST_F(LifecycleTest, MailUserThatAMailProgramCouldMisreadIsRefused) {
  for (std::string user : {"-Ssendmail=/tmp/x", "|/bin/sh", "/etc/passwd", "a b@c", "a\nb"}) {
    JobSpec spec;
    spec.user = "alice";
    spec.account = "research";
    spec.time_limit_seconds = 60;
    spec.mail_type = "END";
    spec.mail_user = user;
    EngineOutput out = Apply(SubmitJob{++token_, Caller{1000, 1000}, spec, "", "#!/bin/sh\n"});
    const Reply* reply = FindReply(out, token_);
    ASSERT_NE(reply, nullptr);
    EXPECT_FALSE(reply->ok) << user;
    EXPECT_EQ(reply->error, "Invalid --mail-user: use a mail address or a user name");
  }
  JobSpec spec;
  spec.mail_type = "END";
  spec.mail_user = "alice.b+jobs@example.org";
  EXPECT_NE(Submit(spec), 0u);
}

TEST_F(LifecycleTest, WithoutNoKillAFailedNodeEndsTheJob) {
  JobSpec spec = OnBothNodes();
  spec.requeue = false;
  uint64_t lost = Submit(spec);
  clock_.Advance(400);
  Apply(Heartbeat{"n1", true, ""}, Tick{});
  EXPECT_EQ(Find(lost).state, JobState::kNodeFail);
}

// Slurm's _purge_missing_jobs: a batch job that the agent of its batch node does not report when
// it registers (its spool lost, the node rebooted under it) was lost there, once it is older
// than BatchStartTimeout (10 s); a younger launch may still be on its way.
TEST_F(LifecycleTest, ABatchJobItsAgentNoLongerHasIsRequeuedWhenItRegisters) {
  uint64_t young = Submit(JobSpec{});
  ASSERT_EQ(Find(young).state, JobState::kRunning);
  const std::string node = load_.config.nodes[Find(young).BatchNode()].name;
  Apply(NodeRegistered{node, {}});
  EXPECT_EQ(Find(young).state, JobState::kRunning) << "launched under BatchStartTimeout ago";
  // The node is asked to register again once the launch is BatchStartTimeout old.
  const int index = Find(young).BatchNode();
  int64_t recheck = engine_.node(index).recheck_jobs_at;
  EXPECT_GT(recheck, Find(young).start_time + 9);
  EXPECT_LE(recheck, Find(young).start_time + 11);
  Pass(11);
  Apply(NodeRegistered{node, {young}});
  EXPECT_EQ(Find(young).state, JobState::kRunning) << "its agent runs it";
  NodeRegistered ended{node, {}};
  ended.ended_jobs = {young};
  Apply(ended);
  EXPECT_EQ(Find(young).state, JobState::kRunning) << "its end is reported next";
  Apply(NodeRegistered{node, {}});
  EXPECT_EQ(Find(young).restart_count, 1u) << "requeued";
  ASSERT_EQ(Find(young).history.size(), 1u);
  EXPECT_EQ(Find(young).history[0].state, JobState::kNodeFail);
  EXPECT_EQ(Find(young).history[0].exit_code, 1);
}

TEST_F(LifecycleTest, AMissingJobThatMayNotBeRequeuedEndsNodeFail) {
  JobSpec spec = OnBothNodes();
  spec.requeue = false;
  uint64_t lost = Submit(spec);
  Pass(11);
  Apply(NodeRegistered{"n2", {}});  // not its batch node: Slurm leaves it (steps only)
  EXPECT_EQ(Find(lost).state, JobState::kRunning);
  Apply(NodeRegistered{"n1", {}});
  EXPECT_EQ(Find(lost).state, JobState::kNodeFail);
  EXPECT_EQ(Find(lost).exit_code, 1);
  std::vector<TerminateJob> stops = Effects<TerminateJob>();
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_EQ(stops[0].nodes, (std::vector<int>{0, 1}));
}

// --mail-type: what Slurm mails, to the job's user when no --mail-user is given.
TEST_F(LifecycleTest, MailsOnBeginEndAndFailAsSlurmWordsThem) {
  JobSpec spec;
  spec.name = "train";
  spec.mail_type = "BEGIN,END,FAIL";
  uint64_t job = Submit(spec);
  ASSERT_EQ(Mails().size(), 1u);
  EXPECT_EQ(Mails()[0].subject, fmt::format("Slurm Job_id={} Name=train Began, Queued time "
                                            "00:00:00",
                                            job));
  EXPECT_EQ(Mails()[0].user, "alice");
  EXPECT_EQ(Find(job).spec.mail_user, "alice");
  const std::vector<std::string> env = Mails()[0].environment;
  for (std::string expected :
       {fmt::format("SLURM_JOB_ID={}", job), std::string("SLURM_JOB_USER=alice"),
        std::string("SLURM_JOB_MAIL_TYPE=Began"), std::string("SLURM_JOB_STATE=RUNNING"),
        std::string("SLURM_JOB_QUEUED_TIME=00:00:00"), std::string("SLURM_JOB_NODELIST=n1"),
        std::string("SLURM_CLUSTER_NAME=t")})
    EXPECT_NE(std::find(env.begin(), env.end(), expected), env.end()) << expected;
  Pass(65);
  End(job, 3);
  EXPECT_EQ(Subjects(), std::vector<std::string>{fmt::format(
                            "Slurm Job_id={} Name=train Failed, Run time 00:01:05, FAILED, "
                            "ExitCode 3",
                            job)});
  spec.mail_type = "END";  // a failure mails END when FAIL is not asked for
  spec.mail_user = "bob@example.org";
  uint64_t other = Submit(spec);
  EXPECT_TRUE(Mails().empty());
  End(other, 0);
  ASSERT_EQ(Mails().size(), 1u);
  EXPECT_EQ(Mails()[0].user, "bob@example.org");
  EXPECT_EQ(Mails()[0].subject, fmt::format("Slurm Job_id={} Name=train Ended, Run time 00:00:00, "
                                            "COMPLETED, ExitCode 0",
                                            other));
}

TEST_F(LifecycleTest, MailsAtTimeLimitMarksOnce) {
  JobSpec spec;
  spec.time_limit_seconds = 600;
  spec.mail_type = "TIME_LIMIT_50,TIME_LIMIT_80";
  uint64_t job = Submit(spec);
  EXPECT_TRUE(Mails().empty());
  Pass(299);
  EXPECT_TRUE(Mails().empty());
  Pass(1);
  EXPECT_EQ(Subjects(), std::vector<std::string>{fmt::format(
                            "Slurm Job_id={} Name=job Reached 50% of time limit, Run time "
                            "00:05:00",
                            job)});
  // As in Slurm, the mailed mark leaves the job's stored MailType: no restart mails it again.
  EXPECT_EQ(engine_.FindJob(job)->spec.mail_type, "TIME_LIMIT_80");
  Pass(1);
  EXPECT_TRUE(Mails().empty()) << "once";
  Pass(180);
  EXPECT_EQ(Mails().size(), 1u);
  EXPECT_EQ(engine_.FindJob(job)->spec.mail_type, "");
}

TEST_F(LifecycleTest, AnArrayMailsAsOneUnlessArrayTasksIsAsked) {
  JobSpec spec;
  spec.mail_type = "BEGIN,END";
  uint64_t array = Submit(spec, "0-1");
  EXPECT_EQ(Subjects(), std::vector<std::string>{fmt::format(
                            "Slurm Array Summary Job_id={}_* ({}) Name=job Began", array, array)});
  End(array, 0);
  EXPECT_TRUE(Mails().empty()) << "a task is still running";
  End(array + 1, 2);
  EXPECT_EQ(Subjects(),
            std::vector<std::string>{fmt::format(
                "Slurm Array Summary Job_id={}_* ({}) Name=job Ended, Mixed, ExitCode [0-2]", array,
                array)});
  spec.mail_type = "END,ARRAY_TASKS";
  uint64_t tasks = Submit(spec, "3");
  End(tasks, 0);
  EXPECT_EQ(Subjects(), std::vector<std::string>{fmt::format(
                            "Slurm Array Task Job_id={}_3 ({}) Name=job Ended, Run time "
                            "00:00:00, COMPLETED, ExitCode 0",
                            tasks, tasks)});
}

// scancel N.S: SIGCONT and SIGTERM to the step, SIGKILL KillWait (30 s) later if it still runs.
TEST_F(LifecycleTest, ACancelledStepGetsSigkillAfterKillWait) {
  uint64_t job = Submit({});
  auto step = [&] {
    CreateStep create;
    create.caller = Caller{1000, 1000};
    create.job_id = job;
    create.overlap = true;  // both at once on the job's one CPU
    return AskEngine(engine_, token_, last_, create).step_id;
  };
  uint32_t stubborn = step(), quick = step();
  auto cancel = [&](uint32_t id) {
    CancelJobs event;
    event.caller = Caller{1000, 1000};
    event.steps = {{job, kNoArrayTask, id}};
    AskEngine(engine_, token_, last_, event);
  };
  auto signals = [&] {
    std::vector<std::pair<int, uint32_t>> sent;
    for (const Effect& effect : last_.effects)
      if (auto* signal = std::get_if<SignalJob>(&effect))
        sent.emplace_back(signal->signal, signal->step_ids.at(0));
    return sent;
  };
  cancel(stubborn);
  EXPECT_EQ(signals(),
            (std::vector<std::pair<int, uint32_t>>{{SIGCONT, stubborn}, {SIGTERM, stubborn}}));
  cancel(quick);
  Apply(StepEnded{++token_, Caller{1000, 1000}, job, quick, 0, 15, true, 0, 0});
  Pass(29);
  EXPECT_TRUE(signals().empty());
  Pass(1);
  EXPECT_EQ(signals(), (std::vector<std::pair<int, uint32_t>>{{SIGKILL, stubborn}}))
      << "the step that ended gets none";
  Pass(30);
  EXPECT_TRUE(signals().empty()) << "once";
}

// afterok:N_T waits for task T alone, not for the rest of the array.
TEST_F(LifecycleTest, AfterOkOnOneArrayTask) {
  uint64_t array = Submit(Gpus(1), "0-2");
  JobSpec after;
  after.dependency = *ParseDependency(fmt::format("afterok:{}_1", array));
  uint64_t waiting = Submit(after);
  EXPECT_EQ(Reason(waiting), "Dependency");
  End(array + 1);
  EXPECT_EQ(Find(waiting).state, JobState::kRunning);
  EXPECT_EQ(Find(array).state, JobState::kRunning) << "task 0 still runs";
  JobSpec unknown;
  unknown.dependency = *ParseDependency(fmt::format("afterok:{}_7", array));
  Reply refused = AskEngine(engine_, token_, last_,
                            SubmitJob{0, Caller{1000, 1000}, unknown, "", "#!/bin/sh\n"});
  EXPECT_EQ(refused.error,
            fmt::format("Job dependency problem: job {}_7 is not known to this controller", array));
}

}  // namespace
}  // namespace drover::ctld
