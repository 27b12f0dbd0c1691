// Engine tests: a manual clock, the demo-like cluster, and agents played by the test (they
// register, heartbeat and report job ends; launches and signals are read from the effects).
#include "ctld/engine/engine.h"
#include "ctld/engine/engine_test_support.h"

#include <gtest/gtest.h>

#include <cmath>

#include <fmt/format.h>

#include <csignal>
#include <memory>
#include <string>
#include <utility>

namespace drover::ctld {
namespace {

TEST_F(EngineTest, SubmitLaunchCompleteWithSlurmExitCodes) {
  uint64_t ok = Submit({});
  uint64_t bad = Submit({});
  EXPECT_EQ(ok, 1u);
  EXPECT_EQ(State(ok), JobState::kRunning);
  ASSERT_EQ(Effects<Launch>().size(), 1u);  // the second submit's batch launched job 2
  EXPECT_EQ(State(bad), JobState::kRunning);
  Apply(JobEnded{ok, "n1", 0, 0}, JobEnded{bad, "n1", 1, 0});
  EXPECT_EQ(State(ok), JobState::kCompleted);
  EXPECT_EQ(engine_.FindJob(ok)->ExitCodeText(), "0:0");
  EXPECT_EQ(State(bad), JobState::kFailed);
  EXPECT_EQ(engine_.FindJob(bad)->ExitCodeText(), "1:0");
  EXPECT_EQ(last_.changed_jobs, (std::vector<uint64_t>{ok, bad}));
  Apply(JobEnded{ok, "n1", 0, 0});  // a resent report changes nothing
  EXPECT_TRUE(last_.changed_jobs.empty());
}

// MaxStepCount (5 here) bounds the steps one job may create, ended ones included, as Slurm's
// step IDs do.
// Only GPUs and their shares are scheduled: a job asking for another GRES, or for shares no
// node gives, is refused, not run without it.
TEST_F(EngineTest, AGresTheClusterCannotGiveIsRefusedNotDropped) {
  const std::pair<GresSpec, std::string> cases[] = {
      {GresSpec{"nic", "", 2, {}},
       "Invalid generic resource (gres) specification: nic: Drover schedules gres/gpu, "
       "gres/shard, gres/mps and gres/nvme only"},
      {GresSpec{"shard", "", 2, {}},
       "Invalid generic resource (gres) specification: shard: no node shares its GPUs as "
       "shard"},
  };
  for (const auto& [gres, error] : cases) {
    JobSpec spec = Gpus(1);
    spec.user = "alice";
    spec.account = "research";
    spec.time_limit_seconds = 60;
    spec.other_gres.push_back(gres);
    EngineOutput out = Apply(SubmitJob{++token_, Caller{1000, 1000}, spec, "", "#!/bin/sh\n"});
    const Reply* reply = FindReply(out, token_);
    ASSERT_NE(reply, nullptr);
    EXPECT_FALSE(reply->ok);
    EXPECT_NE(reply->error.find(error), std::string::npos) << reply->error;
    EXPECT_TRUE(reply->job_ids.empty());
  }
}

TEST_F(EngineTest, StepsStopAtMaxStepCount) {
  uint64_t id = Submit(JobSpec{});
  ASSERT_EQ(State(id), JobState::kRunning);
  for (int i = 0; i < 6; ++i) {
    CreateStep step;
    step.token = ++token_;
    step.caller = Caller{1000, 1000};
    step.job_id = id;
    Apply(step);
    const Reply* reply = FindReply(last_, token_);
    ASSERT_NE(reply, nullptr);
    if (i < 5) {
      EXPECT_TRUE(reply->ok) << reply->error;
      Apply(StepEnded{++token_, Caller{1000, 1000}, id, reply->step_id, 0, 0, false, 0, 0});
    } else {
      EXPECT_EQ(reply->error, "Step limit reached for this job (MaxStepCount=5)");
    }
  }
  EXPECT_EQ(engine_.FindJob(id)->steps.size(), 5u);
}

TEST_F(EngineTest, StepsAreLaidOutRecordedAndClosedWithTheirJob) {
  JobSpec spec;
  spec.min_nodes = spec.max_nodes = 2;
  spec.ntasks_per_node = 2;
  spec.ntasks = 4;
  uint64_t id = Submit(spec);
  ASSERT_EQ(State(id), JobState::kRunning);
  auto step = [&](CreateStep event) { return CreateStepOf(id, event); };
  Reply inherited = step({});  // srun with no options inherits -N2 --ntasks-per-node=2
  ASSERT_TRUE(inherited.ok) << inherited.error;
  EXPECT_EQ(inherited.step_id, 0u);
  EXPECT_EQ(inherited.step_nodes, (std::vector<int>{0, 1}));
  EXPECT_EQ(inherited.step_ranks, (std::vector<std::vector<uint32_t>>{{0, 1}, {2, 3}}));
  // The steps below overlap the first, which holds every CPU of the job (StepShares).
  CreateStep three;
  three.ntasks = 3;
  three.overlap = true;
  Reply uneven = step(three);
  EXPECT_EQ(uneven.step_id, 1u);
  EXPECT_EQ(uneven.step_ranks, (std::vector<std::vector<uint32_t>>{{0, 1}, {2}}));
  CreateStep one;
  one.ntasks = 1;
  one.overlap = true;
  EXPECT_EQ(step(one).step_nodes.size(), 1u);
  CreateStep too_many;
  too_many.nodes = 3;
  EXPECT_EQ(step(too_many).error, "Only allocated 2 nodes asked for 3");
  CreateStep elsewhere;
  elsewhere.nodelist = {"n9"};
  EXPECT_FALSE(step(elsewhere).ok);

  // What srun relays of the nodes' measurements is kept when it could be true of the step.
  TaskUsage measured;
  for (uint32_t task = 0; task < 4; ++task)
    Merge(measured, OneTask(task < 2 ? "n1" : "n2", task, 0.25 * task, 0.125, 1024 + task));
  Apply(StepEnded{++token_, Caller{1000, 1000}, id, 0, 0, 0, false, 1.5, 10, 0, measured});
  TaskUsage elsewhere_usage = OneTask("n9", 0, 1, 1, 1);  // a node the step never had
  Apply(StepEnded{++token_, Caller{1000, 1000}, id, 1, 3, 0, false, 0, 0, 0, elsewhere_usage});
  Apply(StepEnded{++token_, Caller{2000, 2000}, id, 2, 0, 0, false, 0, 0});
  EXPECT_EQ(FindReply(last_, token_)->error, "Access/permission denied");
  // The end of a step of an earlier run (restart count 1 was never this job's) changes nothing.
  Apply(StepEnded{++token_, Caller{1000, 1000}, id, 2, 9, 0, false, 0, 0, 1});
  EXPECT_TRUE(last_.changed_jobs.empty());
  const Job* job = engine_.FindJob(id);
  ASSERT_EQ(job->steps.size(), 3u);
  EXPECT_EQ(job->steps[0].state, JobState::kCompleted);
  EXPECT_EQ(job->steps[1].state, JobState::kFailed);
  EXPECT_EQ(job->steps[1].exit_code, 3);
  EXPECT_EQ(job->steps[0].task_usage.tasks, 4u);
  EXPECT_EQ(job->steps[0].task_usage.rss.max_task, 3u);
  EXPECT_EQ(job->steps[0].task_usage.cpu.max_node, "n2");
  EXPECT_FALSE(job->steps[1].task_usage.measured());
  EXPECT_EQ(job->steps[2].end_time, 0);
  Apply(JobEnded{id, "n2", 0, SIGTERM});  // a holder's end on the second node says nothing
  EXPECT_EQ(State(id), JobState::kRunning);
  JobEnded batch{id, "n1", 0, 0};
  batch.batch_usage = OneTask("n1", 0, 0.5, 0.25, 4096);
  Apply(batch);
  EXPECT_EQ(engine_.FindJob(id)->batch_usage.rss.max, 4096);
  EXPECT_EQ(engine_.FindJob(id)->steps[2].state, JobState::kCompleted);
  EXPECT_NE(engine_.FindJob(id)->steps[2].end_time, 0);
  EXPECT_FALSE(step({}).ok);  // no steps in a finished job
}

TEST(PlausibleUsageTest, WhatSrunSaysIsKeptOnlyWhenItCouldBeTrue) {
  const std::vector<std::string> nodes = {"n1", "n2"};
  TaskUsage two;
  Merge(two, OneTask("n1", 0, 1.0, 0.5, 1024));
  Merge(two, OneTask("n2", 1, 2.0, 0.25, 2048));
  EXPECT_TRUE(PlausibleUsage(two, 2, nodes));
  EXPECT_FALSE(PlausibleUsage(TaskUsage{}, 2, nodes));  // nothing measured
  EXPECT_FALSE(PlausibleUsage(two, 1, nodes));          // more tasks than the step has
  EXPECT_FALSE(PlausibleUsage(two, 2, {"n1"}));         // a node the step does not have
  auto broken = [&](auto change) {
    TaskUsage usage = two;
    change(usage);
    return PlausibleUsage(usage, 2, nodes);
  };
  EXPECT_FALSE(broken([](TaskUsage& u) { u.user_cpu_seconds = std::nan(""); }));
  EXPECT_FALSE(broken([](TaskUsage& u) { u.system_cpu_seconds = -1; }));
  EXPECT_FALSE(broken([](TaskUsage& u) { u.user_cpu_seconds = 1e300; }));
  EXPECT_FALSE(broken([](TaskUsage& u) { u.user_cpu_seconds += 100; }));  // does not add up
  EXPECT_FALSE(broken([](TaskUsage& u) { u.rss.max = 1e20; }));
  EXPECT_FALSE(broken([](TaskUsage& u) { u.rss.min = u.rss.max + 1; }));
  EXPECT_FALSE(broken([](TaskUsage& u) { u.cpu.max_task = 2; }));  // no such rank
  EXPECT_FALSE(broken([](TaskUsage& u) { u.rss.min_node = "n3"; }));
}

// -m cyclic deals the ranks over the nodes in turn; -m arbitrary puts task t where
// SLURM_HOSTFILE's line t says; --ntasks-per-core caps each node at its cores.
TEST_F(EngineTest, StepsAreLaidOutByTheirDistribution) {
  JobSpec spec;
  spec.min_nodes = spec.max_nodes = 2;
  spec.ntasks_per_node = 2;
  spec.ntasks = 4;
  uint64_t id = Submit(spec);
  ASSERT_EQ(State(id), JobState::kRunning);
  auto step = [&](CreateStep event) {
    event.overlap = true;
    return CreateStepOf(id, event);
  };
  using Ranks = std::vector<std::vector<uint32_t>>;
  CreateStep cyclic;
  cyclic.ntasks = 4;
  cyclic.distribution.nodes = NodeDistribution::kCyclic;
  EXPECT_EQ(step(cyclic).step_ranks, (Ranks{{0, 2}, {1, 3}}));
  CreateStep plane;
  plane.ntasks = 3;
  plane.distribution.nodes = NodeDistribution::kPlane;
  plane.distribution.plane_size = 4;
  Reply one_node = step(plane);  // a plane of 4 holds all 3: the second node is not the step's
  EXPECT_EQ(one_node.step_ranks, (Ranks{{0, 1, 2}}));
  EXPECT_EQ(one_node.step_nodes.size(), 1u);
  CreateStep arbitrary;
  arbitrary.distribution.nodes = NodeDistribution::kArbitrary;
  arbitrary.arbitrary_nodes = {"n2", "n2", "n1"};
  EXPECT_EQ(step(arbitrary).step_ranks, (Ranks{{2}, {0, 1}}));
  arbitrary.arbitrary_nodes = {"n2", "n9"};
  EXPECT_FALSE(step(arbitrary).ok);
  CreateStep per_core;
  per_core.ntasks = 5;
  per_core.ntasks_per_core = 1;
  EXPECT_NE(step(per_core).error.find("Requested node configuration is not available"),
            std::string::npos);
  per_core.ntasks = 4;
  EXPECT_EQ(step(per_core).step_ranks, (Ranks{{0, 1}, {2, 3}}));
}

// A step's share of its job, as Slurm 22.05's steps: every CPU of the job on its nodes unless
// --exact (or -c, --exclusive), the memory and GPUs it asks for, none held by another running
// step unless --overlap; "Requested nodes are busy" (srun retries) while others hold them.
TEST_F(EngineTest, StepShares) {
  JobSpec spec;
  spec.ntasks = 4;
  spec.gpus_per_node = 2;
  spec.mem_per_node_mb = 4000;
  uint64_t id = Submit(spec);
  ASSERT_EQ(State(id), JobState::kRunning);
  auto step = [&](CreateStep event) { return CreateStepOf(id, event); };
  auto end = [&](uint32_t step_id) {
    Apply(StepEnded{++token_, Caller{1000, 1000}, id, step_id, 0, 0, false, 0, 0});
  };
  auto usage = [&](uint32_t step_id) { return engine_.FindJob(id)->steps[step_id].usage.at(0); };

  CreateStep one_gpu;
  one_gpu.ntasks = 1;
  one_gpu.exact = true;
  one_gpu.gpus = 1;
  one_gpu.gpus_given = true;
  one_gpu.mem_per_node_mb = 1000;
  Reply first = step(one_gpu);
  ASSERT_TRUE(first.ok) << first.error;
  Reply second = step(one_gpu);
  ASSERT_TRUE(second.ok) << second.error;
  EXPECT_EQ(usage(0).gpus.size(), 1u);
  EXPECT_EQ(usage(1).gpus.size(), 1u);
  EXPECT_NE(usage(0).gpus, usage(1).gpus);  // each its own GPU
  EXPECT_EQ(usage(0).cores.size(), 1u);     // --exact: its one task's CPU
  EXPECT_EQ(usage(0).memory_mb, 1000u);
  EXPECT_EQ(step(one_gpu).error, "Requested nodes are busy");  // both GPUs held
  CreateStep shared = one_gpu;
  shared.overlap = true;
  EXPECT_TRUE(step(shared).ok);
  end(0);
  Reply third = step(one_gpu);  // the first's GPU is free again
  ASSERT_TRUE(third.ok) << third.error;
  EXPECT_EQ(usage(third.step_id).gpus, usage(0).gpus);

  CreateStep whole;  // no --exact: every CPU of the job on the node, which steps 1 and 3 hold
  whole.ntasks = 1;
  whole.gpus_given = true;
  EXPECT_EQ(step(whole).error, "Requested nodes are busy");
  CreateStep too_much = one_gpu;
  too_much.mem_per_node_mb = 5000;
  EXPECT_EQ(step(too_much).error, "Memory required by task is not available");
  CreateStep three_gpus = one_gpu;
  three_gpus.gpus = 3;
  EXPECT_EQ(step(three_gpus).error, "Invalid generic resource (gres) specification");
  end(1);
  end(third.step_id);
  EXPECT_TRUE(step(whole).ok);  // the overlapping step 2 holds nothing
}

TEST_F(EngineTest, AnInteractiveAllocationEndsWithItsCommandsStatus) {
  JobSpec spec;
  spec.interactive = true;
  uint64_t id = Submit(spec);
  ASSERT_EQ(State(id), JobState::kRunning);
  Apply(ReleaseJob{++token_, Caller{1000, 1000}, id, 2, 0});
  EXPECT_TRUE(FindReply(last_, token_)->ok);
  EXPECT_EQ(Effects<TerminateJob>().size(), 1u);
  EXPECT_EQ(State(id), JobState::kRunning);  // until its node has stopped what ran there
  Apply(JobEnded{id, "n1", 0, SIGTERM});
  EXPECT_EQ(State(id), JobState::kFailed);
  EXPECT_EQ(engine_.FindJob(id)->ExitCodeText(), "2:0");

  uint64_t batch = Submit({});
  Apply(ReleaseJob{++token_, Caller{1000, 1000}, batch, 0, 0});
  EXPECT_FALSE(FindReply(last_, token_)->ok);
}

TEST_F(EngineTest, SignalledAndOutOfMemoryEnds) {
  uint64_t killed = Submit({});
  uint64_t oom = Submit({});
  Apply(JobEnded{killed, "n1", 0, 9}, JobEnded{oom, "n1", 0, 9, true});
  EXPECT_EQ(State(killed), JobState::kFailed);
  EXPECT_EQ(engine_.FindJob(killed)->ExitCodeText(), "0:9");
  EXPECT_EQ(State(oom), JobState::kOutOfMemory);
}

TEST_F(EngineTest, PendingThenStartsWhenResourcesFree) {
  uint64_t first = Submit(Gpus(2));
  uint64_t second = Submit(Gpus(2));
  uint64_t third = Submit(Gpus(2));
  EXPECT_EQ(State(third), JobState::kPending);
  EXPECT_EQ(Reason(third), "Resources");
  Apply(JobEnded{first, "n1", 0, 0});
  EXPECT_EQ(State(third), JobState::kRunning);
  (void)second;
}

TEST_F(EngineTest, CancelPendingAndRunning) {
  uint64_t running = Submit(Gpus(2));
  Submit(Gpus(2));
  uint64_t pending = Submit(Gpus(2));
  CancelJobs cancel{++token_, Caller{1000, 1000}, {}, 0};
  cancel.filter.job_ids = {pending, running};
  Apply(cancel);
  EXPECT_EQ(State(pending), JobState::kCancelled);
  EXPECT_EQ(State(running), JobState::kRunning);  // until its agent reports the end
  ASSERT_EQ(Effects<TerminateJob>().size(), 1u);
  EXPECT_EQ(Effects<TerminateJob>()[0].grace_seconds, 30);
  Apply(JobEnded{running, "n1", 0, 15});
  EXPECT_EQ(State(running), JobState::kCancelled);
  EXPECT_EQ(engine_.FindJob(running)->cancelled_by, 1000u);

  CancelJobs other{++token_, Caller{2000, 2000}, {}, 0};
  other.filter.job_ids = {2};
  EXPECT_EQ(FindReply(Apply(other), token_)->error, "Access/permission denied");
  CancelJobs missing{++token_, Caller{1000, 1000}, {}, 0};
  missing.filter.job_ids = {999};
  EXPECT_EQ(FindReply(Apply(missing), token_)->error, "Invalid job id specified");
}

// scancel --signal reaches the steps only, -b the batch shell, -f all of the job; SIGKILL
// without -b cancels the job, as Slurm's does.
TEST_F(EngineTest, SignalScopesAndKill) {
  uint64_t job = Submit(Gpus(2));
  for (SignalScope scope : {SignalScope::kSteps, SignalScope::kBatch, SignalScope::kFull}) {
    CancelJobs signal{++token_, Caller{1000, 1000}, {}, SIGUSR1, scope};
    signal.filter.job_ids = {job};
    Apply(signal);
    ASSERT_EQ(Effects<SignalJob>().size(), 1u);
    EXPECT_EQ(Effects<SignalJob>()[0].scope, scope);
    EXPECT_TRUE(Effects<TerminateJob>().empty());
  }
  CancelJobs batch_kill{++token_, Caller{1000, 1000}, {}, SIGKILL, SignalScope::kBatch};
  batch_kill.filter.job_ids = {job};
  Apply(batch_kill);
  EXPECT_TRUE(Effects<TerminateJob>().empty());
  EXPECT_EQ(engine_.FindJob(job)->cancelled_by, 0u);
  CancelJobs kill{++token_, Caller{1000, 1000}, {}, SIGKILL, SignalScope::kSteps};
  kill.filter.job_ids = {job};
  Apply(kill);
  ASSERT_EQ(Effects<SignalJob>().size(), 1u);
  EXPECT_EQ(Effects<SignalJob>()[0].scope, SignalScope::kFull);
  ASSERT_EQ(Effects<TerminateJob>().size(), 1u);
  Apply(JobEnded{job, "n1", 0, SIGKILL});
  EXPECT_EQ(State(job), JobState::kCancelled);
}

TEST_F(EngineTest, TimeLimitSignalGoesWhereTheJobSays) {
  for (bool batch : {false, true}) {
    JobSpec spec;
    spec.time_limit_seconds = 600;
    spec.signal_number = SIGUSR1;
    spec.signal_seconds = 120;
    spec.signal_batch_only = batch;
    uint64_t job = Submit(spec);
    Pass(480);
    ASSERT_EQ(Effects<SignalJob>().size(), 1u);
    EXPECT_EQ(Effects<SignalJob>()[0].scope, batch ? SignalScope::kBatch : SignalScope::kSteps);
    Apply(JobEnded{job, "n1", 0, 0});
  }
}

TEST_F(EngineTest, HoldAndRelease) {
  Submit(Gpus(2));
  Submit(Gpus(2));
  uint64_t job = Submit(Gpus(2));
  HoldJobs hold{++token_, Caller{1000, 1000}, {}, false};
  hold.filter.job_ids = {job};
  Apply(hold);
  EXPECT_EQ(Reason(job), "JobHeldUser");
  HoldJobs admin{++token_, Caller{0, 0, true}, {}, false};
  admin.filter.job_ids = {job};
  Apply(admin);
  EXPECT_EQ(Reason(job), "JobHeldAdmin");
  HoldJobs release{++token_, Caller{1000, 1000}, {}, true};
  release.filter.job_ids = {job};
  EXPECT_EQ(FindReply(Apply(release), token_)->error, "Access/permission denied");
  release.caller = Caller{0, 0, true};
  Apply(release);
  EXPECT_EQ(engine_.FindJob(job)->spec.hold, HoldKind::kNone);
}

TEST_F(EngineTest, TimeLimitSignalsThenTimesOut) {
  JobSpec spec;
  spec.time_limit_seconds = 600;
  spec.signal_number = SIGUSR1;
  spec.signal_seconds = 120;
  uint64_t job = Submit(spec);
  Pass(479);
  EXPECT_TRUE(Effects<SignalJob>().empty());
  Pass(1);
  ASSERT_EQ(Effects<SignalJob>().size(), 1u);
  EXPECT_EQ(Effects<SignalJob>()[0].signal, SIGUSR1);
  Pass(120);
  ASSERT_EQ(Effects<TerminateJob>().size(), 1u);
  EXPECT_EQ(Effects<TerminateJob>()[0].grace_seconds, 30);
  Apply(JobEnded{job, "n1", 0, 15});
  EXPECT_EQ(State(job), JobState::kTimeout);
}

TEST_F(EngineTest, SilentNodeGoesDownAndItsJobsRequeueOrFail) {
  uint64_t again = Submit(Gpus(2));  // n1; may be requeued (JobRequeue=1)
  JobSpec no_requeue = Gpus(2);
  no_requeue.requeue = false;
  uint64_t lost = Submit(no_requeue);  // n2
  ASSERT_EQ(engine_.FindJob(again)->allocation.nodes[0].node, 0);
  ASSERT_EQ(engine_.FindJob(lost)->allocation.nodes[0].node, 1);
  clock_.Advance(200);
  Apply(Heartbeat{"n2", true, ""});
  clock_.Advance(200);  // n1 silent for 400 s > SlurmdTimeout=300
  Apply(Tick{});
  EXPECT_EQ(NodeStateName(engine_.node(0), false), "DOWN*");
  EXPECT_EQ(engine_.node(0).reason, "Not responding");
  // Requeued: same ID, a restart counted, the lost run kept in the history, waiting again.
  const Job* requeued = engine_.FindJob(again);
  EXPECT_EQ(requeued->state, JobState::kPending);
  EXPECT_EQ(Reason(again), "Resources");
  EXPECT_EQ(requeued->restart_count, 1u);
  ASSERT_EQ(requeued->history.size(), 1u);
  EXPECT_EQ(requeued->history[0].state, JobState::kNodeFail);
  clock_.Advance(400);  // now n2 is silent too; its job may not be requeued
  Apply(Tick{});
  EXPECT_EQ(State(lost), JobState::kNodeFail);
  // ReturnToService=1: a node that went DOWN for not responding returns when it registers.
  Apply(NodeRegistered{"n1", {}});
  EXPECT_EQ(NodeStateName(engine_.node(0), true), "ALLOCATED");
  EXPECT_EQ(State(again), JobState::kRunning);
}

TEST_F(EngineTest, ArraysWithConcurrencyLimit) {
  uint64_t array = Submit({}, "0-5%2");
  int running = 0;
  for (uint64_t id = array; id < array + 6; ++id) {
    const Job* task = engine_.FindJob(id);
    ASSERT_NE(task, nullptr);
    EXPECT_EQ(task->spec.array_job_id, array);
    EXPECT_EQ(task->spec.array_task_id, id - array);
    running += task->state == JobState::kRunning;
    if (task->state == JobState::kPending) {
      EXPECT_EQ(Reason(id), "JobArrayTaskLimit");
    }
  }
  EXPECT_EQ(running, 2);
  Apply(JobEnded{array, "n1", 0, 0});
  EXPECT_EQ(State(array + 2), JobState::kRunning);
  CancelJobs cancel{++token_, Caller{1000, 1000}, {}, 0};
  cancel.filter.job_ids = {array};  // the array's ID names every task
  Apply(cancel);
  EXPECT_EQ(State(array + 5), JobState::kCancelled);
}

TEST_F(EngineTest, SubmissionErrorsAreSlurms) {
  JobSpec too_big = Gpus(3);
  EngineOutput out = Apply(SubmitJob{++token_, Caller{1000, 1000}, too_big, "", ""});
  EXPECT_EQ(FindReply(out, token_)->error,
            "Requested node configuration is not available (partition p has 0 nodes with 1 CPUs, "
            "3 GPUs, 100M memory; the job needs 1)");
  out = Apply(SubmitJob{++token_, Caller{1000, 1000}, JobSpec{}, "0-200", ""});
  EXPECT_EQ(FindReply(out, token_)->error,
            "Invalid job array specification: index 200 is at or above MaxArraySize=100");
  out = Apply(SubmitJob{++token_, Caller{1000, 1000}, JobSpec{}, "0-60", ""});
  EXPECT_EQ(FindReply(out, token_)->error,
            "Slurm temporarily unable to accept job (MaxJobCount=50 reached); try again later");
}

TEST_F(EngineTest, HealthDrainAndResume) {
  Apply(Heartbeat{"n2", false, "GPU 1 has fallen off the bus"});
  EXPECT_EQ(NodeStateName(engine_.node(1), false), "DRAINED");
  EXPECT_EQ(engine_.node(1).reason, "GPU 1 has fallen off the bus");
  Submit(Gpus(2));
  uint64_t waits = Submit(Gpus(2));
  EXPECT_EQ(State(waits), JobState::kPending);
  Apply(Heartbeat{"n2", true, ""});
  EXPECT_EQ(NodeStateName(engine_.node(1), true), "ALLOCATED");
  EXPECT_EQ(State(waits), JobState::kRunning);
}

TEST_F(EngineTest, AdminDrainNeedsAReasonAndRequeueKeepsTheId) {
  UpdateNode drain{++token_, Caller{0, 0, true}, "n[1-2]", UpdateNode::Action::kDrain, ""};
  EXPECT_EQ(FindReply(Apply(drain), token_)->error,
            "You must specify a reason when DOWNING or DRAINING a node");
  uint64_t job = Submit({});
  RequeueJobs requeue{++token_, Caller{1000, 1000}, {}, false};
  requeue.filter.job_ids = {job};
  Apply(requeue);
  const Job* again = engine_.FindJob(job);
  EXPECT_EQ(again->restart_count, 1u);
  EXPECT_EQ(again->history.at(0).state, JobState::kRequeued);
  EXPECT_EQ(again->state, JobState::kRunning);  // started again in the same batch
}

TEST_F(EngineTest, FinishedJobsLeaveTheLiveQueueAfterMinJobAge) {
  uint64_t job = Submit({});
  Apply(JobEnded{job, "n1", 0, 0});
  Pass(299);
  EXPECT_NE(engine_.FindJob(job), nullptr);
  Pass(1);
  EXPECT_EQ(engine_.FindJob(job), nullptr);
  EXPECT_EQ(last_.purged_jobs, (std::vector<uint64_t>{job}));
  JobSpec after;
  after.dependency = *ParseDependency(fmt::format("afterok:{}", job));
  EXPECT_EQ(State(Submit(after)), JobState::kRunning) << "the outcome outlives the record";
}

// DependencyParameters=kill_invalid_depend: a dependency that can never be satisfied cancels
// the job (without it, the job waits with DependencyNeverSatisfied).
class KillInvalidDependTest : public EngineTest {
 protected:
  KillInvalidDependTest()
      : EngineTest(std::string(kEngineTestCluster) + "DependencyParameters=kill_invalid_depend\n") {
  }
};

TEST_F(EngineTest, AnUnsatisfiableDependencyWaits) {
  uint64_t job = Submit({});
  Apply(JobEnded{job, "n1", 1, 0});
  JobSpec after;
  after.dependency = *ParseDependency(fmt::format("afterok:{}", job));
  uint64_t waiting = Submit(after);
  EXPECT_EQ(State(waiting), JobState::kPending);
  EXPECT_EQ(Reason(waiting), "DependencyNeverSatisfied");
}

TEST_F(KillInvalidDependTest, AnUnsatisfiableDependencyCancelsTheJob) {
  uint64_t job = Submit({});
  Apply(JobEnded{job, "n1", 1, 0});
  JobSpec after;
  after.dependency = *ParseDependency(fmt::format("afterok:{}", job));
  uint64_t doomed = Submit(after);
  EXPECT_EQ(State(doomed), JobState::kCancelled);
  EXPECT_EQ(Reason(doomed), "DependencyNeverSatisfied");
}

TEST_F(EngineTest, ANodeWithLessThanConfiguredIsDrainedWithSlurmsReason) {
  Apply(NodeRegistered{"n1", {}, NodeResources{8, 8000, 2}});
  EXPECT_FALSE(engine_.node(0).drain) << "as configured";
  Apply(NodeRegistered{"n2", {}, NodeResources{8, 4000, 2}});
  EXPECT_TRUE(engine_.node(1).drain);
  EXPECT_EQ(engine_.node(1).reason, "Low RealMemory (reported:4000 < 100.00% of configured:8000)");
  Apply(NodeRegistered{"n1", {}, NodeResources{8, 8000, 1}});
  EXPECT_EQ(engine_.node(0).reason, "gres/gpu count reported lower than configured (1 < 2)");
}

TEST_F(EngineTest, TheRunsCpuTimeAndPeakMemoryAreKept) {
  uint64_t job = Submit({});
  JobEnded ended{job, "n1", 0, 0};
  ended.cpu_seconds = 12.5;
  ended.max_rss_mib = 300;
  Apply(ended);
  EXPECT_EQ(engine_.FindJob(job)->cpu_seconds, 12.5);
  EXPECT_EQ(engine_.FindJob(job)->max_rss_mib, 300u);
}

TEST_F(EngineTest, ScriptsAndEnvironmentsLiveInTheStoreUntilTheLastTaskGoes) {
  JobSpec spec = Gpus(2);
  spec.environment = {"HOME=/home/alice", "PATH=/usr/bin"};
  uint64_t array = Submit(spec, "0-1");
  ASSERT_EQ(last_.new_scripts.size(), 1u);
  EXPECT_EQ(last_.new_scripts[0].job_id, array);
  EXPECT_EQ(last_.new_scripts[0].environment, spec.environment);
  EXPECT_TRUE(engine_.FindJob(array)->spec.environment.empty()) << "not kept in memory";
  Apply(JobEnded{array, "n1", 0, 0});
  Pass(300);
  EXPECT_EQ(last_.purged_jobs, (std::vector<uint64_t>{array}));
  EXPECT_TRUE(last_.dropped_scripts.empty()) << "task 1 still needs the array's script";
  Apply(JobEnded{array + 1, "n2", 0, 0});
  Pass(300);
  EXPECT_EQ(last_.dropped_scripts, (std::vector<uint64_t>{array}));
  EXPECT_EQ(last_.dropped_environments, (std::vector<uint64_t>{array}));
}

TEST(EngineHistory, AccountingStoreFlagsKeepScriptsAndEnvironmentsOfFinishedJobs) {
  for (const char* flags : {"job_script", "job_env"}) {
    ConfigLoad load = LoadClusterConfigText(
        fmt::format("{}AccountingStoreFlags={}\n", kEngineTestCluster, flags));
    ASSERT_TRUE(load.ok());
    ManualClock clock;
    Engine engine(load.config, clock);
    engine.Apply({NodeRegistered{"n1", {}}});
    JobSpec spec;
    spec.user = "alice";
    spec.account = "research";
    spec.time_limit_seconds = 60;
    EngineOutput out = engine.Apply({SubmitJob{1, Caller{1000, 1000}, spec, "", "#!/bin/sh\n"}});
    ASSERT_EQ(out.new_scripts.size(), 1u);
    uint64_t job = out.new_scripts[0].job_id;
    engine.Apply({JobEnded{job, "n1", 0, 0}});
    clock.Advance(300);
    out = engine.Apply({Heartbeat{"n1", true, ""}, Tick{}});
    EXPECT_EQ(out.purged_jobs, (std::vector<uint64_t>{job})) << flags;
    bool script = std::string(flags) == "job_script";
    EXPECT_EQ(out.dropped_scripts.empty(), script) << flags;
    EXPECT_EQ(out.dropped_environments.empty(), !script) << flags;
  }
}

TEST_F(EngineTest, UpdateJobFieldsWithSlurmsPermissions) {
  uint64_t job = Submit({});  // running, time limit 3600
  UpdateJob shorter{++token_, Caller{1000, 1000}, {}, 600, {}, {}, std::string("renamed"), {}, {}};
  shorter.filter.job_ids = {job};
  ASSERT_TRUE(FindReply(Apply(shorter), token_)->ok);
  EXPECT_EQ(engine_.FindJob(job)->end_time, engine_.FindJob(job)->start_time + 600);
  EXPECT_EQ(engine_.FindJob(job)->spec.name, "renamed");
  UpdateJob longer{++token_, Caller{1000, 1000}, {}, 7200, {}, {}, {}, {}, {}};
  longer.filter.job_ids = {job};
  EXPECT_EQ(FindReply(Apply(longer), token_)->error,
            "Access/permission denied (only an operator may lengthen a time limit)");
  longer.caller = Caller{0, 0, true};
  EXPECT_TRUE(FindReply(Apply(longer), token_)->ok);
  UpdateJob nicer{++token_, Caller{1000, 1000}, {}, {}, -5, {}, {}, {}, {}};
  nicer.filter.job_ids = {job};
  EXPECT_EQ(FindReply(Apply(nicer), token_)->error, "Access/permission denied (negative nice)");
  UpdateJob move{++token_, Caller{1000, 1000}, {}, {}, {}, std::string("p"), {}, {}, {}};
  move.filter.job_ids = {job};
  EXPECT_EQ(FindReply(Apply(move), token_)->error, "Job is no longer pending execution");
}

// scontrol update job's other keys: applied to a pending job and checked as a submission is;
// refused for a started job where Slurm refuses them.
TEST_F(EngineTest, UpdateJobKeysPendingOnlyAndChecked) {
  JobSpec later;
  later.begin_time = clock_.Now() + 7200;
  uint64_t pending = Submit(later);
  uint64_t running = Submit({});
  auto update = [&](uint64_t job, std::string_view key, std::string_view value) {
    UpdateJob event{++token_, Caller{1000, 1000}, {}, {}, {}, {}, {}, {}, {}};
    event.filter.job_ids = {job};
    EXPECT_TRUE(ParseJobUpdateKey(key, value, clock_.Now(), event.update));
    return *FindReply(Apply(event), token_);
  };
  EXPECT_TRUE(update(pending, "NumTasks", "4").ok);
  EXPECT_TRUE(update(pending, "ExcNodeList", "n2").ok);
  EXPECT_EQ(engine_.FindJob(pending)->spec.ntasks, 4u);
  EXPECT_EQ(engine_.FindJob(pending)->spec.exclude, (std::vector<std::string>{"n2"}));
  Reply too_big = update(pending, "NumNodes", "3");
  EXPECT_FALSE(too_big.ok);
  EXPECT_EQ(too_big.error.rfind("Node count specification invalid", 0), 0u) << too_big.error;
  EXPECT_EQ(engine_.FindJob(pending)->spec.min_nodes, 1u) << "a refused update changes nothing";
  EXPECT_EQ(update(running, "NumTasks", "2").error, "Job is no longer pending execution");
  EXPECT_TRUE(update(running, "Comment", "still running").ok);
  EXPECT_EQ(engine_.FindJob(running)->spec.comment, "still running");
}

// Priority=: only an operator raises it, 0 holds the job (the administrator's hold when an
// operator sets it), a set priority clears nice, and a release computes it again; MailType=
// alone names the job's user as --mail-type does at submission.
TEST_F(EngineTest, UpdateJobPriorityAndMailAsSlurmDoes) {
  JobSpec later;
  later.begin_time = clock_.Now() + 7200;
  later.nice = 10;
  uint64_t job = Submit(later);
  auto update = [&](Caller caller, std::string_view key, std::string_view value) {
    UpdateJob event{++token_, caller, {}, {}, {}, {}, {}, {}, {}};
    event.filter.job_ids = {job};
    EXPECT_TRUE(ParseJobUpdateKey(key, value, clock_.Now(), event.update));
    return *FindReply(Apply(event), token_);
  };
  const Caller alice{1000, 1000}, root{0, 0, true};
  EXPECT_EQ(update(alice, "Priority", "50").error,
            "Access/permission denied (only an operator may raise a priority)");
  ASSERT_TRUE(update(root, "Priority", "50").ok);
  EXPECT_EQ(engine_.FindJob(job)->spec.priority, 50u);
  EXPECT_EQ(engine_.FindJob(job)->spec.nice, 0);
  ASSERT_TRUE(update(alice, "Priority", "20").ok) << "lowering is the owner's right";
  EXPECT_EQ(engine_.FindJob(job)->spec.priority, 20u);
  ASSERT_TRUE(update(root, "Priority", "0").ok);
  EXPECT_EQ(engine_.FindJob(job)->spec.hold, HoldKind::kAdmin);
  HoldJobs release{++token_, root, {}, true};
  release.filter.job_ids = {job};
  ASSERT_TRUE(FindReply(Apply(release), token_)->ok);
  EXPECT_EQ(engine_.FindJob(job)->spec.hold, HoldKind::kNone);
  EXPECT_EQ(engine_.FindJob(job)->spec.priority, 0u) << "computed again after the release";

  EXPECT_EQ(update(alice, "AdminComment", "mine").error, "Access/permission denied");
  ASSERT_TRUE(update(root, "AdminComment", "checked").ok);
  EXPECT_EQ(engine_.FindJob(job)->spec.admin_comment, "checked");
  ASSERT_TRUE(update(alice, "MailType", "END").ok);
  EXPECT_EQ(engine_.FindJob(job)->spec.mail_type, "END");
  EXPECT_EQ(engine_.FindJob(job)->spec.mail_user, engine_.FindJob(job)->spec.user);
}

TEST_F(EngineTest, FairShareUsageAccruesInBillingSeconds) {
  JobSpec spec;
  spec.ntasks = 4;
  Submit(spec);
  Pass(100);
  double usage = 0;
  for (const auto& association : engine_.associations())
    if (association.user == "alice") usage = association.usage;
  EXPECT_NEAR(usage, 4 * 100, 1);
}

// sbatch --test-only: the answer comes from the running jobs' limits; nothing is queued, stored
// or numbered.
TEST_F(EngineTest, WillRunAnswersWithoutQueuingOrNumbering) {
  auto will_run = [&](JobSpec spec) {
    spec.user = "alice";
    spec.time_limit_seconds = 600;
    auto result = std::make_shared<WillRun>();
    EngineOutput out = Apply(WillRunJob{++token_, Caller{1000, 1000}, spec, result});
    EXPECT_TRUE(out.changed_jobs.empty());
    EXPECT_TRUE(out.new_scripts.empty());
    const Reply* reply = FindReply(out, token_);
    return std::pair(reply ? *reply : Reply{}, *result);
  };
  const int64_t now = clock_.Now();
  auto [idle, at_once] = will_run(Gpus(2));
  ASSERT_TRUE(idle.ok) << idle.error;
  EXPECT_EQ(at_once.start_time, now);
  EXPECT_EQ(at_once.partition, 0);
  EXPECT_EQ(at_once.allocation.nodes.size(), 1u);
  EXPECT_EQ(at_once.next_job_id, 1u);
  EXPECT_EQ(engine_.FindJob(1), nullptr);

  JobSpec longer = Gpus(2), shorter = Gpus(2);
  longer.time_limit_seconds = 3600;
  shorter.time_limit_seconds = 1800;
  EXPECT_EQ(Submit(longer), 1u);  // the test-only job took no ID
  uint64_t second = Submit(shorter);
  auto [busy, later] = will_run(Gpus(2));
  ASSERT_TRUE(busy.ok) << busy.error;
  EXPECT_EQ(later.start_time, now + 1800);
  EXPECT_EQ(later.allocation.nodes, engine_.FindJob(second)->allocation.nodes);
  EXPECT_EQ(later.next_job_id, 3u);

  JobSpec begin = Gpus(1);
  begin.begin_time = now + 7200;
  EXPECT_EQ(will_run(begin).second.start_time, now + 7200);

  EXPECT_EQ(will_run(Gpus(3)).first.error.rfind(
                "Requested node configuration is not available (partition p has 0 nodes", 0),
            0u);
  Apply(UpdateNode{++token_, Caller{0, 0, true}, "n[1-2]", UpdateNode::Action::kDown, "gone"});
  EXPECT_EQ(will_run(Gpus(1)).first.error, "Requested node configuration is not available");
}

}  // namespace
}  // namespace drover::ctld
