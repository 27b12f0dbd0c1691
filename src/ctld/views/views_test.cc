// The views over a real engine's snapshot: a manual clock, a small cluster, jobs submitted and
// nodes drained through events, then each view queried as the service and the metrics page do.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "ctld/engine/engine.h"
#include "ctld/views/history.h"
#include "ctld/views/jobs.h"
#include "ctld/views/node_usage.h"
#include "ctld/views/nodes.h"
#include "ctld/views/partitions.h"
#include "ctld/views/priorities.h"
#include "ctld/views/privacy.h"
#include "ctld/views/reservations.h"
#include "ctld/views/steps.h"

namespace drover::ctld::views {
namespace {

// n1 and n2 share partition gpu (two GPUs each); n3 is alone in cpu, with two threads per core.
constexpr const char* kCluster =
    "ClusterName=t\nGresTypes=gpu\nDefMemPerCPU=100\nMinJobAge=300\n"
    "PriorityType=priority/multifactor\nPriorityWeightAge=1000\nPriorityWeightFairshare=500\n"
    "NodeName=n[1-2] CPUs=8 RealMemory=8000 Gres=gpu:2\n"
    "NodeName=n3 CPUs=8 RealMemory=4000 CoresPerSocket=4 ThreadsPerCore=2\n"
    "PartitionName=gpu Nodes=n[1-2] Default=YES MaxTime=2:00:00 OverSubscribe=FORCE:4\n"
    "PartitionName=cpu Nodes=n3 MaxTime=UNLIMITED\n";

const Caller kOperator{0, 0, true, "root"};

// Each test user has a uid of their own, so PrivateData can tell them apart.
uint32_t UidOf(const std::string& user) {
  return user == "alice" ? 1000 : user == "bob" ? 1001 : 1002;
}

std::vector<uint64_t> Ids(const JobSelection& selection) {
  std::vector<uint64_t> ids;
  for (const JobPtr& job : selection.jobs) ids.push_back(job->spec.job_id);
  return ids;
}

class ViewsTest : public ::testing::Test {
 protected:
  explicit ViewsTest(const std::string& conf = kCluster)
      : load_(LoadClusterConfigText(conf)), engine_(load_.config, clock_) {
    EXPECT_TRUE(load_.ok()) << load_.ErrorText();
    Apply(NodeRegistered{"n1", {}}, NodeRegistered{"n2", {}}, NodeRegistered{"n3", {}});
  }

  template <typename... Events>
  void Apply(Events... events) {
    std::vector<Event> batch{Event(std::move(events))...};
    engine_.Apply(std::move(batch));
  }

  uint64_t Submit(uint32_t gpus, const std::string& user = "alice", HoldKind hold = {}) {
    JobSpec spec;
    spec.user = user;
    spec.account = "research";
    spec.time_limit_seconds = 3600;
    spec.gpus_per_node = gpus;
    spec.hold = hold;
    Apply(SubmitJob{++token_, Caller{UidOf(user), 100, false, user}, spec, "", "#!/bin/sh\n"});
    return engine_.next_job_id() - 1;
  }

  // Alice's array of tasks `tasks` (--array=), each asking for `gpus`: its first task's ID.
  uint64_t SubmitArray(uint32_t gpus, const std::string& tasks) {
    JobSpec spec;
    spec.user = "alice";
    spec.account = "research";
    spec.time_limit_seconds = 3600;
    spec.gpus_per_node = gpus;
    uint64_t first = engine_.next_job_id();
    Apply(SubmitJob{++token_, Caller{UidOf("alice"), 100, false, "alice"}, spec, tasks,
                    "#!/bin/sh\n"});
    return first;
  }

  void Drain(const std::string& node) {
    Apply(UpdateNode{++token_, Caller{0, 0, true}, node, UpdateNode::Action::kDrain, "fan"});
  }

  std::shared_ptr<const Snapshot> Snap() const { return engine_.Publish(); }

  ManualClock clock_;
  ConfigLoad load_;
  Engine engine_;
  uint64_t token_ = 0;
};

TEST_F(ViewsTest, NodesShowTheirStateJobsAndReason) {
  uint64_t job = Submit(2);  // both GPUs of n1
  Drain("n3");
  wire::NodeListing listing = ListNodes(*Snap());
  ASSERT_EQ(listing.nodes.size(), 3u);
  EXPECT_EQ(listing.time, clock_.Now());
  EXPECT_EQ(listing.nodes[0].name, "n1");
  EXPECT_EQ(listing.nodes[0].state, "MIXED");
  EXPECT_EQ(listing.nodes[0].jobs, std::vector<uint64_t>{job});
  EXPECT_EQ(listing.nodes[1].state, "IDLE");
  EXPECT_EQ(listing.nodes[2].state, "DRAINED");
  EXPECT_TRUE(listing.nodes[2].drain);
  EXPECT_EQ(listing.nodes[2].reason, "fan");
}

TEST_F(ViewsTest, NodesNamedAreTheOnlyOnesListed) {
  Drain("n3");
  const std::vector<std::string> names = {"n3", "nope", "n1", "n3"};
  wire::NodeListing listing = ListNodes(*Snap(), names);
  ASSERT_EQ(listing.nodes.size(), 2u);  // in configuration order, once each; unknown left out
  EXPECT_EQ(listing.nodes[0].name, "n1");
  EXPECT_EQ(listing.nodes[1].name, "n3");
  EXPECT_EQ(listing.nodes[1].state, "DRAINED");
  const std::vector<std::string> unknown = {"nope"};
  EXPECT_TRUE(ListNodes(*Snap(), unknown).nodes.empty());
}

TEST_F(ViewsTest, AnIdleNodeInAMaintenanceWindowShowsAsMaint) {
  ReservationFields fields;
  fields.start_time = clock_.Now();
  fields.duration_seconds = 3600;
  fields.node_list = "n2";
  fields.users = "root";
  fields.flags = "MAINT";
  Apply(CreateReservation{++token_, Caller{0, 0, true}, "fix", fields});
  wire::NodeListing listing = ListNodes(*Snap());
  EXPECT_EQ(listing.nodes[1].state, "MAINT");
  EXPECT_EQ(listing.nodes[1].reservation, "MAINT");
  EXPECT_EQ(listing.nodes[0].reservation, "");

  wire::ReservationListing all = ListReservations(*Snap(), kOperator, "");
  ASSERT_EQ(all.reservations.size(), 1u);
  EXPECT_EQ(all.reservations[0].nodes, std::vector<std::string>{"n2"});
  EXPECT_EQ(all.reservations[0].node_list, "n2");
  EXPECT_EQ(all.reservations[0].flags, std::vector<std::string>{"MAINT"});
  EXPECT_EQ(ListReservations(*Snap(), kOperator, "fix").reservations.size(), 1u);
  EXPECT_TRUE(ListReservations(*Snap(), kOperator, "other").reservations.empty());
}

TEST_F(ViewsTest, PartitionsSumTheirNodesAndCountTheirJobs) {
  Submit(2);
  Submit(2);
  Submit(2);  // waits: both gpu nodes are full
  Drain("n3");
  std::vector<wire::PartitionInfo> partitions = ListPartitions(*Snap());
  ASSERT_EQ(partitions.size(), 2u);
  const wire::PartitionInfo& gpu = partitions[0];
  EXPECT_EQ(gpu.name, "gpu");
  EXPECT_TRUE(gpu.is_default);
  EXPECT_EQ(gpu.state, "UP");
  EXPECT_EQ(gpu.node_list, "n[1-2]");
  EXPECT_EQ(gpu.total_nodes, 2u);
  EXPECT_EQ(gpu.total_cpus, 16u);
  EXPECT_EQ(gpu.total_gpus, 4u);
  EXPECT_EQ(gpu.gpus_allocated, 4u);
  EXPECT_EQ(gpu.nodes_allocated, 2u);
  EXPECT_EQ(gpu.running_jobs, 2u);
  EXPECT_EQ(gpu.pending_jobs, 1u);
  EXPECT_EQ(gpu.max_time_seconds, 7200);
  EXPECT_EQ(gpu.over_subscribe, "FORCE:4");
  const wire::PartitionInfo& cpu = partitions[1];
  EXPECT_EQ(cpu.max_time_seconds, -1);
  EXPECT_EQ(cpu.nodes_other, 1u);
  EXPECT_EQ(cpu.nodes_idle, 0u);
  EXPECT_EQ(cpu.over_subscribe, "NO");
}

TEST_F(ViewsTest, JobsHideFinishedOnesUnlessAskedAndCarryThePlan) {
  uint64_t running = Submit(2, "alice");
  Submit(2, "carol");
  uint64_t waiting = Submit(2, "alice");
  uint64_t other = Submit(2, "bob");  // waits, and is cancelled: it ends at once
  Apply(CancelJobs{++token_, Caller{0, 0, true}, JobFilter{{other}, {}, "", "", "", {}}, 0});
  JobFilter alice;
  alice.user = "alice";
  JobSelection selection = SelectJobs(*Snap(), kOperator, alice, false, true);
  ASSERT_EQ(selection.jobs.size(), 2u);
  EXPECT_EQ(selection.jobs[0]->spec.job_id, running);
  EXPECT_EQ(selection.jobs[1]->spec.job_id, waiting);
  ASSERT_EQ(selection.planned.size(), 1u);
  EXPECT_EQ(selection.planned[0].job_id, waiting);
  EXPECT_FALSE(selection.planned[0].node_list.empty());

  EXPECT_EQ(SelectJobs(*Snap(), kOperator, JobFilter{}, false, false).jobs.size(),
            3u);  // bob's ended
  EXPECT_EQ(SelectJobs(*Snap(), kOperator, JobFilter{}, true, false).jobs.size(), 4u);
  EXPECT_EQ(SelectJobs(*Snap(), kOperator, JobFilter{{other}, {}, "", "", "", {}}, false, false)
                .jobs.size(),
            1u);
  EXPECT_TRUE(SelectJobs(*Snap(), kOperator, alice, false, false).planned.empty());
  // sinfo asks only for the jobs holding nodes: the running ones, none of those waiting.
  JobSelection holding = SelectJobs(*Snap(), kOperator, JobFilter{}, true, false, true);
  ASSERT_EQ(holding.jobs.size(), 2u);
  for (const JobPtr& job : holding.jobs) EXPECT_EQ(job->state, JobState::kRunning);

  // The controller filters by every field a command may send: the nodes a job runs on, its
  // account, name (scontrol show node, squeue -A/-n), not only by ID, user and state.
  const Job* started = nullptr;
  auto snapshot = Snap();
  for (const JobPtr& job : snapshot->jobs)
    if (job->spec.job_id == running) started = job.get();
  ASSERT_NE(started, nullptr);
  const std::string node =
      load_.config.nodes[static_cast<size_t>(started->allocation.nodes[0].node)].name;
  JobFilter on_node;
  on_node.nodes = {node};
  JobSelection there = SelectJobs(*Snap(), kOperator, on_node, false, false);
  ASSERT_FALSE(there.jobs.empty());
  for (const JobPtr& job : there.jobs) EXPECT_EQ(job->state, JobState::kRunning);
  // Found through the node's own list of its jobs; the walk of the whole queue that a state
  // filter takes finds the same.
  JobFilter running_on_node = on_node;
  running_on_node.state = JobState::kRunning;
  EXPECT_EQ(Ids(there), Ids(SelectJobs(*Snap(), kOperator, running_on_node, false, false)));
  JobFilter nowhere;
  nowhere.account = "no-such-account";
  EXPECT_TRUE(SelectJobs(*Snap(), kOperator, nowhere, true, false).jobs.empty());
  JobFilter named;
  named.name = "no-such-name";
  EXPECT_TRUE(SelectJobs(*Snap(), kOperator, named, true, false).jobs.empty());
}

TEST_F(ViewsTest, PrioritiesListWaitingJobsButNotHeldOnes) {
  Submit(2);
  Submit(2);
  uint64_t waiting = Submit(2);
  Submit(2, "alice", HoldKind::kUser);
  wire::PriorityListing listing = ListPriorities(*Snap(), kOperator, JobFilter{});
  ASSERT_EQ(listing.jobs.size(), 1u);
  EXPECT_EQ(listing.jobs[0].job_id, waiting);
  EXPECT_EQ(listing.jobs[0].user, "alice");
  EXPECT_EQ(listing.jobs[0].partition, "gpu");
  EXPECT_GE(listing.jobs[0].priority, 1);
  ASSERT_EQ(listing.weights.size(), 6u);
  EXPECT_EQ(listing.weights[0], (std::pair<std::string, uint32_t>{"age", 1000}));
  EXPECT_EQ(listing.weights[1], (std::pair<std::string, uint32_t>{"fairshare", 500}));
  JobFilter bob;
  bob.user = "bob";
  EXPECT_TRUE(ListPriorities(*Snap(), kOperator, bob).jobs.empty());
}

TEST_F(ViewsTest, SharesNameEachUsersAccount) {
  Submit(1, "alice");
  Submit(1, "bob");
  std::vector<wire::ShareInfo> shares = ListShares(*Snap(), kOperator);
  std::vector<std::string> users;
  for (const wire::ShareInfo& share : shares)
    if (share.account == "research" && !share.user.empty()) {
      users.push_back(share.user);
      EXPECT_EQ(share.parent, "research");
      EXPECT_EQ(share.raw_shares, 1u);
    }
  EXPECT_EQ(users, (std::vector<std::string>{"alice", "bob"}));
}

TEST_F(ViewsTest, AnAccountsRawUsageIsItsSubtrees) {
  Submit(1, "alice");
  Submit(1, "bob");
  for (int i = 0; i < 2; ++i) {  // the jobs start, then run a while
    clock_.Advance(60);
    Apply(Heartbeat{"n1", true, ""}, Heartbeat{"n2", true, ""}, Heartbeat{"n3", true, ""}, Tick{});
  }
  double users = 0, account = -1;
  for (const wire::ShareInfo& share : ListShares(*Snap(), kOperator)) {
    if (share.account != "research") continue;
    if (share.user.empty())
      account = share.raw_usage;
    else
      users += share.raw_usage;
  }
  EXPECT_GT(users, 0);
  EXPECT_DOUBLE_EQ(account, users);
}

TEST_F(ViewsTest, HistorySelectsByWindowIdUserOwnerAndState) {
  HistoryKey job{7, 0, "alice", "COMPLETED", 1000, 2000};
  EXPECT_TRUE(Selects({}, job));
  EXPECT_FALSE(Selects({JobFilter{}, 2001, 0}, job));  // ended before the window
  EXPECT_TRUE(Selects({JobFilter{}, 0, 1000}, job));
  EXPECT_FALSE(Selects({JobFilter{}, 0, 999}, job));  // submitted after it
  HistoryKey running{8, 0, "alice", "RUNNING", 1000, 0};
  EXPECT_TRUE(Selects({JobFilter{}, 5000, 0}, running));  // no end yet: still in the window
  HistoryQuery by_id;
  by_id.filter.job_ids = {9};
  EXPECT_FALSE(Selects(by_id, job));
  EXPECT_TRUE(Selects(by_id, HistoryKey{10, 9, "alice", "PENDING", 0, 0}));  // its array
  HistoryQuery by_state;
  by_state.filter.state = JobState::kRunning;
  EXPECT_FALSE(Selects(by_state, job));
  EXPECT_TRUE(Selects(by_state, running));
  HistoryQuery by_owner;
  by_owner.uids = {3, 5};
  EXPECT_FALSE(Selects(by_owner, job));  // uid 0
  EXPECT_TRUE(Selects(by_owner, HistoryKey{7, 0, "carol", "COMPLETED", 1000, 2000, 5}));

  uint64_t live = Submit(1, "bob");
  HistoryQuery bob;
  bob.filter.user = "bob";
  std::vector<JobPtr> jobs = LiveHistory(*Snap(), bob);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0]->spec.job_id, live);
}

TEST_F(ViewsTest, StepsCarryEachNodesRanks) {
  auto job = std::make_shared<Job>();
  job->allocation.nodes = {{2, {0}, 100, {}, 0, {}}, {0, {0}, 100, {}, 0, {}}};
  Reply result;
  result.step_id = 3;
  result.step_nodes = {0, 2};
  result.step_ranks = {{0, 2}, {1}};
  result.job = job;
  wire::StepLayout layout =
      StepLayoutOf(result, load_.config, [](int node) { return "h" + std::to_string(node); });
  EXPECT_EQ(layout.step_id, 3u);
  EXPECT_EQ(layout.ntasks, 3u);
  EXPECT_EQ(layout.node_list, "n[1,3]");
  ASSERT_EQ(layout.nodes.size(), 2u);
  EXPECT_EQ(layout.nodes[0].name, "n1");
  EXPECT_EQ(layout.nodes[0].address, "h0");
  EXPECT_EQ(layout.nodes[0].node_index, 1u);  // second in the allocation
  EXPECT_EQ(layout.nodes[0].tasks, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(layout.nodes[1].node_index, 0u);
  EXPECT_EQ(layout.nodes[1].tasks, std::vector<uint32_t>{1});
}

TEST_F(ViewsTest, JobsComeInPagesThatEachStartWhereTheLastEnded) {
  uint64_t first = Submit(2);
  SubmitArray(2, "1-9:2");
  uint64_t last = Submit(2);
  ASSERT_EQ(last, first + 6);  // the five tasks took the IDs between
  std::vector<uint64_t> all, planned;
  int pages = 0;
  uint64_t after = 0;
  do {
    JobSelection page = SelectJobs(*Snap(), kOperator, JobFilter{}, true, true, false, {after, 3});
    ++pages;
    ASSERT_FALSE(page.jobs.empty());
    EXPECT_LE(page.jobs.size(), 3u);
    EXPECT_GT(page.jobs.front()->spec.job_id, after);
    for (const JobPtr& job : page.jobs) all.push_back(job->spec.job_id);
    for (const wire::PlannedStartInfo& plan : page.planned) {
      EXPECT_GT(plan.job_id, after);
      EXPECT_LE(plan.job_id, page.jobs.back()->spec.job_id);
      planned.push_back(plan.job_id);
    }
    after = page.more_after;
    if (after) {
      EXPECT_EQ(after, page.jobs.back()->spec.job_id);
    }
  } while (after && pages < 10);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(all, Ids(SelectJobs(*Snap(), kOperator, JobFilter{}, true, false)));
  EXPECT_EQ(all.size(), 7u);
  EXPECT_EQ(planned.size(), SelectJobs(*Snap(), kOperator, JobFilter{}, true, true).planned.size());
  // A page that holds the last matching job says that nothing follows.
  JobSelection whole = SelectJobs(*Snap(), kOperator, JobFilter{}, true, false, false, {0, 7});
  EXPECT_EQ(whole.jobs.size(), 7u);
  EXPECT_EQ(whole.more_after, 0u);
  JobFilter none_after;
  none_after.user = "nobody";
  EXPECT_EQ(SelectJobs(*Snap(), kOperator, none_after, true, false, false, {0, 1}).more_after, 0u);
}

TEST_F(ViewsTest, NamedJobsAreFoundWithTheirArraysTasks) {
  uint64_t plain = Submit(2);
  SubmitArray(2, "1-9:2");
  uint64_t array = plain + 1;  // tasks 1, 3, 5, 7, 9 as IDs array .. array + 4
  uint64_t after = Submit(2);
  JobFilter by_array;
  by_array.job_ids = {array};
  EXPECT_EQ(Ids(SelectJobs(*Snap(), kOperator, by_array, true, false)),
            (std::vector<uint64_t>{array, array + 1, array + 2, array + 3, array + 4}));
  JobFilter by_task;  // task 4 does not exist; task 5 is named twice
  by_task.array_tasks = {{array, 9}, {array, 4}, {array, 5}, {array, 5}, {after, 0}};
  EXPECT_EQ(Ids(SelectJobs(*Snap(), kOperator, by_task, true, false)),
            (std::vector<uint64_t>{array + 2, array + 4}));
  JobFilter by_id;  // a task's own ID is that task alone; 0 and unknown IDs name nothing
  by_id.job_ids = {array + 2, after, 0, after + 100, plain};
  EXPECT_EQ(Ids(SelectJobs(*Snap(), kOperator, by_id, true, false)),
            (std::vector<uint64_t>{plain, array + 2, after}));
  // Priorities are chosen the same way: only the named, waiting ones.
  auto prioritised = [this](const JobFilter& filter) {
    std::vector<uint64_t> ids;
    for (const wire::JobPriorityInfo& info : ListPriorities(*Snap(), kOperator, filter).jobs)
      ids.push_back(info.job_id);
    std::sort(ids.begin(), ids.end());
    return ids;
  };
  ASSERT_NE(Snap()->priority_by_id, nullptr);  // the cycle's index by ID answers these
  EXPECT_EQ(Snap()->priority_by_id->size(), Snap()->priorities->size());
  {
    auto snapshot = Snap();
    const auto& index = *snapshot->priority_by_id;
    for (size_t i = 1; i < index.size(); ++i)
      EXPECT_LT((*snapshot->priorities)[index[i - 1]].job_id,
                (*snapshot->priorities)[index[i]].job_id);
  }
  EXPECT_EQ(prioritised(by_task), (std::vector<uint64_t>{array + 2, array + 4}));
  EXPECT_EQ(prioritised(by_id), (std::vector<uint64_t>{array + 2, after}));  // plain runs
  JobFilter unknown;
  unknown.job_ids = {after + 100};
  EXPECT_TRUE(prioritised(unknown).empty());
  // The largest IDs name nothing (and a listing after the largest is empty).
  JobFilter largest;
  largest.job_ids = {UINT64_MAX};
  largest.array_tasks = {{UINT64_MAX, 0}, {UINT64_MAX, UINT32_MAX}, {array, 3}};
  EXPECT_EQ(Ids(SelectJobs(*Snap(), kOperator, largest, true, false)),
            std::vector<uint64_t>{array + 1});
  EXPECT_TRUE(SelectJobs(*Snap(), kOperator, JobFilter{}, true, false, false, {UINT64_MAX, 10})
                  .jobs.empty());
  JobFilter both;  // an array and one of its tasks: each job once
  both.job_ids = {array};
  both.array_tasks = {{array, 3}};
  EXPECT_EQ(SelectJobs(*Snap(), kOperator, both, true, false).jobs.size(), 5u);
  // Named jobs come in pages too.
  JobSelection page = SelectJobs(*Snap(), kOperator, by_array, true, false, false, {0, 2});
  EXPECT_EQ(Ids(page), (std::vector<uint64_t>{array, array + 1}));
  EXPECT_EQ(page.more_after, array + 1);
  page = SelectJobs(*Snap(), kOperator, by_array, true, false, false, {array + 1, 2});
  EXPECT_EQ(Ids(page), (std::vector<uint64_t>{array + 2, array + 3}));
  page = SelectJobs(*Snap(), kOperator, by_array, true, false, false, {array + 3, 2});
  EXPECT_EQ(Ids(page), (std::vector<uint64_t>{array + 4}));
  EXPECT_EQ(page.more_after, 0u);
}

TEST_F(ViewsTest, NodeUsageComesFromTheNodesJobsAsFromTheWholeQueue) {
  Submit(1);
  Submit(1, "bob");
  uint64_t suspended = Submit(2, "carol");
  Submit(2);  // waits
  Apply(SuspendJobs{++token_, kOperator, JobFilter{{suspended}, {}, "", "", "", {}}, false});
  auto snapshot = Snap();
  // What every job holding an allocation holds, read from the whole queue.
  std::vector<NodeUsage> expected(load_.config.nodes.size());
  for (const JobPtr& job : snapshot->jobs) {
    if (!HoldsAllocation(*job)) continue;
    for (const sched::NodeAllocation& share : job->allocation.nodes) {
      expected[share.node].cores.insert(share.cores.begin(), share.cores.end());
      expected[share.node].memory_mb += share.memory_mb;
      expected[share.node].gpus.insert(share.gpus.begin(), share.gpus.end());
    }
  }
  std::vector<NodeUsage> usage = UsageByNode(load_.config, *snapshot);
  int busy = 0;
  for (size_t node = 0; node < usage.size(); ++node) {
    EXPECT_EQ(usage[node].cores, expected[node].cores) << node;
    EXPECT_EQ(usage[node].memory_mb, expected[node].memory_mb) << node;
    EXPECT_EQ(usage[node].gpus, expected[node].gpus) << node;
    busy += !usage[node].cores.empty();
  }
  EXPECT_EQ(busy, 2);  // the first two share n1, the suspended job holds n2
  // One node's alone: the others stay empty.
  const std::vector<size_t> only = {1};
  std::vector<NodeUsage> one = UsageByNode(load_.config, *snapshot, only);
  EXPECT_EQ(one[1].gpus, expected[1].gpus);
  EXPECT_FALSE(one[1].gpus.empty());
  EXPECT_TRUE(one[0].cores.empty());
  // The partitions' settings without their load: the same names and limits, no counts.
  std::vector<wire::PartitionInfo> settings = ListPartitions(*snapshot, true);
  std::vector<wire::PartitionInfo> full = ListPartitions(*snapshot);
  ASSERT_EQ(settings.size(), full.size());
  EXPECT_EQ(settings[0].name, full[0].name);
  EXPECT_EQ(settings[0].max_time_seconds, full[0].max_time_seconds);
  EXPECT_EQ(full[0].running_jobs, 3u);
  EXPECT_EQ(settings[0].running_jobs, 0u);
  EXPECT_EQ(settings[0].gpus_allocated, 0u);
}

TEST_F(ViewsTest, WillRunCountsEachCoresThreads) {
  WillRun will_run;
  will_run.start_time = 5;
  will_run.partition = 1;
  will_run.allocation.nodes = {{2, {0, 1}, 100, {}, 0, {}}, {0, {0}, 100, {}, 0, {}}};
  wire::WillRunInfo info = WillRunOf(will_run, load_.config);
  EXPECT_EQ(info.processors, 5u);  // two cores of two threads on n3, one core on n1
  EXPECT_EQ(info.node_list, "n[3,1]");
  EXPECT_EQ(info.partition, "cpu");
  EXPECT_EQ(PartitionName(7, load_.config), "");
}

class PrivateViewsTest : public ViewsTest {
 protected:
  PrivateViewsTest() : ViewsTest(std::string(kCluster) + "PrivateData=jobs,usage,reservations\n") {}
};

const Caller kAlice{1000, 100, false, "alice"};
const Caller kBob{1001, 100, false, "bob"};

TEST_F(PrivateViewsTest, UsersSeeOnlyTheirOwnJobsOperatorsSeeAll) {
  uint64_t alices = Submit(2, "alice");
  uint64_t bobs = Submit(2, "bob");
  uint64_t bobs_waiting = Submit(2, "bob");
  Submit(2, "bob");
  EXPECT_EQ(Ids(SelectJobs(*Snap(), kAlice, JobFilter{}, true, false)),
            std::vector<uint64_t>{alices});
  JobFilter by_id;
  by_id.job_ids = {bobs};
  EXPECT_TRUE(SelectJobs(*Snap(), kAlice, by_id, true, false).jobs.empty());
  JobFilter by_user;
  by_user.user = "bob";
  EXPECT_TRUE(SelectJobs(*Snap(), kAlice, by_user, true, false).jobs.empty());
  EXPECT_EQ(SelectJobs(*Snap(), kBob, by_user, true, false).jobs.size(), 3u);
  EXPECT_EQ(SelectJobs(*Snap(), kOperator, JobFilter{}, true, false).jobs.size(), 4u);
  // sprio: bob's waiting jobs are his alone to see.
  EXPECT_TRUE(ListPriorities(*Snap(), kAlice, JobFilter{}).jobs.empty());
  ASSERT_FALSE(ListPriorities(*Snap(), kBob, JobFilter{}).jobs.empty());
  EXPECT_EQ(ListPriorities(*Snap(), kBob, JobFilter{}).jobs.front().job_id, bobs_waiting);
  // sacct over the live queue.
  HistoryQuery history;
  history.filter = VisibleJobs(history.filter, kAlice, Snap()->cluster->settings);
  EXPECT_EQ(LiveHistory(*Snap(), history).size(), 1u);
  EXPECT_FALSE(Selects(history, HistoryKey{9, 0, "bob", "COMPLETED", 1, 2, 1001}));
  EXPECT_TRUE(Selects(history, HistoryKey{9, 0, "alice", "COMPLETED", 1, 2, 1000}));
}

TEST_F(PrivateViewsTest, UsageShowsAccountsAndTheCallersOwnRows) {
  Submit(1, "alice");
  Submit(1, "bob");
  std::vector<std::string> users, accounts;
  for (const wire::ShareInfo& share : ListShares(*Snap(), kAlice))
    (share.user.empty() ? accounts : users)
        .push_back(share.user.empty() ? share.account : share.user);
  EXPECT_EQ(users, std::vector<std::string>{"alice"});
  EXPECT_FALSE(accounts.empty());
  size_t all = ListShares(*Snap(), kOperator).size();
  EXPECT_EQ(all, accounts.size() + 3);  // alice, bob, and root (accounting's own user)
}

TEST_F(PrivateViewsTest, ReservationsAreForOperatorsOnly) {
  ReservationFields fields;
  fields.start_time = clock_.Now() + 3600;
  fields.duration_seconds = 600;
  fields.node_list = "n1";
  fields.users = "alice";
  Apply(CreateReservation{++token_, kOperator, "fix", fields});
  EXPECT_EQ(ListReservations(*Snap(), kOperator, "").reservations.size(), 1u);
  EXPECT_TRUE(ListReservations(*Snap(), kAlice, "").reservations.empty());
  EXPECT_TRUE(ListReservations(*Snap(), kAlice, "fix").reservations.empty());
}

TEST_F(ViewsTest, WithoutPrivateDataEveryoneSeesEverything) {
  Submit(2, "alice");
  Submit(2, "bob");
  EXPECT_EQ(SelectJobs(*Snap(), kAlice, JobFilter{}, true, false).jobs.size(), 2u);
}

// scontrol show node's Gres=: the GPUs by type with the sockets of their local cores, once
// every GPU of the type has them (gres.conf Cores=, or the agent's NVML affinity).
TEST(NodeGresTest, GpusByTypeWithTheirSockets) {
  NodeConfig node;
  node.sockets = 2;
  node.cores_per_socket = 4;
  node.gres = {GresSpec{"gpu", "", 3, {}}, GresSpec{"nic", "", 1, {}}};
  GpuDevice gpu;
  gpu.type = "h100";
  gpu.cores = {0, 1};
  node.gpus = {gpu, gpu, gpu};
  node.gpus.Mutable()[1].index = 1;
  node.gpus.Mutable()[1].cores = {4, 5};
  node.gpus.Mutable()[2].index = 2;
  node.gpus.Mutable()[2].type = "l40s";
  node.gpus.Mutable()[2].cores.clear();
  EXPECT_EQ(NodeGres(node), "gpu:h100:2(S:0-1),gpu:l40s:1,nic:1");
  node.gpus.Mutable()[2].cores = {7};
  EXPECT_EQ(NodeGres(node), "gpu:h100:2(S:0-1),gpu:l40s:1(S:1),nic:1");
  node.gpus = {};
  EXPECT_EQ(NodeGres(node), "gpu:3,nic:1");
}

}  // namespace
}  // namespace drover::ctld::views
