// squeue, sinfo and sacct output against what Slurm 22.05 printed for the same cluster and jobs
// (the reference capture: 4 nodes n[1-4], 8 CPUs and 2 GPUs each, partition debug), plus the
// edge cases a script would trip on.
#include "cli/formats/formats.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <deque>

namespace drover::cli {
namespace {

// 2026-11-29T15:10:55Z: the reference's running jobs started then; times print in UTC here.
constexpr int64_t kStart = 1795965055;
constexpr uint32_t kNoTask = UINT32_MAX;

class UtcEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
};
[[maybe_unused]] const auto* const kUtc = ::testing::AddGlobalTestEnvironment(new UtcEnvironment);

const ClusterConfig& Cluster() {
  static const ClusterConfig cluster = [] {
    ConfigLoad load = LoadClusterConfigText(
        "ClusterName=anchor\nSlurmctldHost=localhost(127.0.0.1)\nGresTypes=gpu\n"
        "DefMemPerCPU=100\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core_Memory\n"
        "NodeName=n[1-4] NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=8 Boards=1 "
        "SocketsPerBoard=1 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=4000 Gres=gpu:2 "
        "State=UNKNOWN\n"
        "PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=INFINITE State=UP\n",
        "NodeName=n[1-4] Name=gpu File=/dev/fakegpu[0-1]\n");
    EXPECT_TRUE(load.ok());
    return load.config;
  }();
  return cluster;
}

v1::Partition Debug() {
  v1::Partition p;
  p.set_name("debug");
  p.set_state("UP");
  p.set_is_default(true);
  p.set_node_list("n[1-4]");
  p.set_total_nodes(4);
  p.set_total_cpus(32);
  p.set_max_time_seconds(-1);
  p.set_default_time_seconds(-1);
  p.set_over_subscribe("NO");
  p.set_preempt_mode("OFF");
  return p;
}

v1::Job Job(uint64_t id, const std::string& name, const std::string& state) {
  v1::Job job;
  v1::JobSpec* spec = job.mutable_spec();
  spec->set_job_id(id);
  spec->set_array_task_id(kNoTask);
  spec->set_name(name);
  spec->set_user("root");
  spec->set_account("root");
  spec->set_submit_time(kStart - 4);
  job.set_state(state);
  job.set_partition_name(state == "PENDING" ? "" : "debug");
  return job;
}

v1::Job Pending(uint64_t id, const std::string& name, const std::string& reason) {
  v1::Job job = Job(id, name, "PENDING");
  job.set_reason(reason);
  return job;
}

// `cores` per node index of the allocation; 100 MB per core, as DefMemPerCPU=100 gives.
v1::Job Ran(uint64_t id, const std::string& name, const std::string& state,
            const std::string& node_list, const std::vector<std::pair<int, int>>& cores,
            int gpus_per_node = 0) {
  v1::Job job = Job(id, name, state);
  job.set_node_list(node_list);
  job.set_start_time(kStart);
  job.set_time_limit_seconds(INT64_MAX);
  for (auto [node, count] : cores) {
    v1::NodeAllocation* alloc = job.add_allocation();
    alloc->set_node(node);
    for (int c = 0; c < count; ++c) alloc->add_cores(c);
    alloc->set_memory_mb(100 * count);
    for (int g = 0; g < gpus_per_node; ++g) alloc->add_gpus(g);
  }
  return job;
}

// The reference's queue: three pending jobs and two running ones.
std::vector<v1::Job> Queue() {
  v1::Job later = Pending(26520, "later", "BeginTime");
  later.mutable_spec()->set_begin_time(kStart + 3599);  // 16:10:54
  v1::Job bigwait = Pending(26521, "bigwait", "Resources");
  bigwait.mutable_spec()->set_min_nodes(4);
  bigwait.set_start_time(1827501055);  // the planner's estimate: 2027-11-29T15:10:55
  v1::Job held = Pending(26519, "held", "JobHeldUser");
  held.mutable_spec()->set_hold(v1::JobSpec::USER);
  return {Ran(26517, "runner", "RUNNING", "n[1-2]", {{0, 1}, {1, 1}}),
          Ran(26518, "runner2", "RUNNING", "n1", {{0, 4}}), later, bigwait, held};
}

SqueueOptions QueueOptions() {
  SqueueOptions options;
  options.partitions = {Debug()};
  return options;
}

TEST(Squeue, DefaultTableMatchesSlurm) {
  EXPECT_EQ(FormatSqueue(Queue(), QueueOptions(), kStart + 2),
            R"(             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)
             26520     debug    later     root PD       0:00      1 (BeginTime)
             26521     debug  bigwait     root PD       0:00      4 (Resources)
             26519     debug     held     root PD       0:00      1 (JobHeldUser)
             26517     debug   runner     root  R       0:02      2 n[1-2]
             26518     debug  runner2     root  R       0:02      1 n1
)");
}

TEST(Squeue, ExplicitDefaultFormatIsTheDefault) {
  SqueueOptions options = QueueOptions();
  options.format = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
  EXPECT_EQ(FormatSqueue(Queue(), options, kStart + 3),
            FormatSqueue(Queue(), QueueOptions(), kStart + 3));
  EXPECT_NE(FormatSqueue(Queue(), options, kStart + 3).find("      0:03      2 n[1-2]"),
            std::string::npos);
}

TEST(Squeue, LongFormatHasDateLineStateAndLimit) {
  SqueueOptions options = QueueOptions();
  options.long_format = true;
  EXPECT_EQ(FormatSqueue(Queue(), options, kStart + 2),
            R"(Sun Nov 29 15:10:57 2026
             JOBID PARTITION     NAME     USER    STATE       TIME TIME_LIMI  NODES NODELIST(REASON)
             26520     debug    later     root  PENDING       0:00 UNLIMITED      1 (BeginTime)
             26521     debug  bigwait     root  PENDING       0:00 UNLIMITED      4 (Resources)
             26519     debug     held     root  PENDING       0:00 UNLIMITED      1 (JobHeldUser)
             26517     debug   runner     root  RUNNING       0:02 UNLIMITED      2 n[1-2]
             26518     debug  runner2     root  RUNNING       0:02 UNLIMITED      1 n1
)");
}

TEST(Squeue, StartShowsPendingJobsByExpectedStart) {
  SqueueOptions options = QueueOptions();
  options.start = true;
  EXPECT_EQ(
      FormatSqueue(Queue(), options, kStart + 2),
      R"(             JOBID PARTITION     NAME     USER ST          START_TIME  NODES SCHEDNODES           NODELIST(REASON)
             26520     debug    later     root PD 2026-11-29T16:10:54      1 (null)               (BeginTime)
             26521     debug  bigwait     root PD 2027-11-29T15:10:55      4 (null)               (Resources)
             26519     debug     held     root PD                 N/A      1 (null)               (JobHeldUser)
)");
}

TEST(Squeue, NoHeaderCustomFormat) {
  SqueueOptions options = QueueOptions();
  options.no_header = true;
  options.format = "%i|%T|%r|%N";
  EXPECT_EQ(FormatSqueue(Queue(), options, kStart + 2), R"(26520|PENDING|BeginTime|
26521|PENDING|Resources|
26519|PENDING|JobHeldUser|
26517|RUNNING|None|n[1-2]
26518|RUNNING|None|n1
)");
  options.long_format = true;  // -h drops -l's date line too
  EXPECT_EQ(FormatSqueue(Queue(), options, kStart + 2).substr(0, 6), "26520|");
}

TEST(Squeue, EmptyQueueStillPrintsHeader) {
  EXPECT_EQ(
      FormatSqueue({}, QueueOptions(), kStart),
      "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n");
}

TEST(Squeue, LongValuesAreCutToTheColumnButNodeListsAreNot) {
  v1::Job job = Ran(7, "averyverylongname", "RUNNING", "node[001-100],gpu[01-64]", {{0, 1}});
  job.mutable_spec()->set_user("someoneverylong");
  EXPECT_EQ(FormatSqueue({job}, QueueOptions(), kStart + 61),
            "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"
            "                 7     debug averyver someonev  R       1:01      1 "
            "node[001-100],gpu[01-64]\n");
  SqueueOptions left = QueueOptions();
  left.format = "%5j|%-3u|%3N";  // without '.', left-justified and cut; '-' is no flag
  EXPECT_EQ(FormatSqueue({job}, left, kStart), "NAME |%-3u|NOD\navery|%-3u|nod\n");
}

TEST(Squeue, UnknownFieldIsPrintedLiterallyAndReported) {
  SqueueOptions options = QueueOptions();
  options.format = "%.6i %!x %t";
  EXPECT_EQ(FormatSqueue({Queue()[0]}, options, kStart), " JOBID %!x ST\n 26517 %!x R\n");
  EXPECT_EQ(SqueueFormatErrors(options.format),
            std::vector<std::string>{"Invalid job format specification: !"});
  EXPECT_TRUE(SqueueFormatErrors("%.18i %.9P %j %R").empty());
}

TEST(Squeue, TimesAndLimits) {
  v1::Job hour = Ran(1, "a", "RUNNING", "n1", {{0, 1}});
  hour.set_time_limit_seconds(30 * 60);
  v1::Job days = Ran(2, "b", "RUNNING", "n2", {{1, 1}});
  days.set_start_time(kStart - 2 * 86400 + 1);
  days.set_time_limit_seconds(3 * 86400);
  SqueueOptions options = QueueOptions();
  options.format = "%i %M %l %L";
  options.no_header = true;
  EXPECT_EQ(FormatSqueue({hour, days}, options, kStart + 3600),
            "1 1:00:00 30:00 INVALID\n2 2-00:59:59 3-00:00:00 23:00:01\n");
}

TEST(Squeue, StateCodesAndTheDefaultStateFilter) {
  std::vector<v1::Job> jobs;
  uint64_t id = 100;
  for (const char* state : {"COMPLETING", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT",
                            "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY", "SUSPENDED"})
    jobs.push_back(Ran(id++, "x", state, "n1", {{0, 1}}));
  SqueueOptions options = QueueOptions();
  options.format = "%i %t";
  options.no_header = true;
  EXPECT_EQ(FormatSqueue(jobs, options, kStart), "100 CG\n108 S\n");
  options.states = {"all"};
  options.sort = "i";
  EXPECT_EQ(FormatSqueue(jobs, options, kStart),
            "100 CG\n101 CD\n102 F\n103 CA\n104 TO\n105 NF\n106 PR\n107 OOM\n108 S\n");
  options.states = {"to", "Failed"};
  EXPECT_EQ(FormatSqueue(jobs, options, kStart), "102 F\n104 TO\n");
}

// An array 300_[0-9] with at most 2 running: task 4 runs, the rest wait.
std::vector<v1::Job> Array() {
  std::vector<v1::Job> jobs;
  for (uint32_t task = 0; task < 10; ++task) {
    v1::Job job = task == 4
                      ? Ran(300 + task, "arr", "RUNNING", "n3", {{2, 1}})
                      : Pending(300 + task, "arr", task < 6 ? "Priority" : "JobArrayTaskLimit");
    job.mutable_spec()->set_array_job_id(300);
    job.mutable_spec()->set_array_task_id(task);
    job.mutable_spec()->set_array_max_running(2);
    jobs.push_back(job);
  }
  return jobs;
}

TEST(Squeue, PendingArrayTasksFoldIntoOneLine) {
  SqueueOptions options = QueueOptions();
  options.format = "%.18i %.2t %r";
  EXPECT_EQ(FormatSqueue(Array(), options, kStart),
            "             JOBID ST REASON\n"
            "   300_[0-3,5-9%2] PD Priority,JobArrayTaskLimit\n"
            "             300_4  R None\n");
  options.array_unfold = true;
  options.no_header = true;
  std::string unfolded = FormatSqueue(Array(), options, kStart);
  EXPECT_EQ(unfolded.substr(0, 31), "             300_0 PD Priority\n");
  EXPECT_NE(unfolded.find("300_9 PD JobArrayTaskLimit\n             300_4  R None\n"),
            std::string::npos);
}

// squeue's streaming use: each job parsed into one message in turn, kept only when it has a
// line of its own. The same lines as the whole list, from 2 kept records of 10.
TEST(Squeue, LinesTakenOneJobAtATimeKeepOnlyTheJobsThatPrint) {
  SqueueOptions options = QueueOptions();
  options.format = "%.18i %.2t %r %Q";
  options.priorities = {{300, 7}};
  std::string whole = FormatSqueue(Array(), options, kStart);
  SqueueOptions streamed = QueueOptions();
  streamed.format = options.format;
  SqueueLines lines(streamed, kStart);
  std::deque<v1::Job> kept;
  v1::Job scratch;
  for (const v1::Job& job : Array()) {
    scratch.ParseFromString(job.SerializeAsString());
    if (lines.NeedsLine(scratch)) lines.Add(kept.emplace_back(std::move(scratch)));
  }
  ASSERT_EQ(kept.size(), 2u);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines.Jobs()[0]->spec().job_id(), 300u);  // the head of the folded tasks
  EXPECT_EQ(lines.Jobs()[1]->spec().job_id(), 304u);
  streamed.priorities = {{300, 7}};  // filled in after the jobs, as squeue asks for them then
  EXPECT_EQ(lines.Format(), whole);
  EXPECT_NE(whole.find("300_[0-3,5-9%2] PD Priority,JobArrayTaskLimit 7\n"), std::string::npos);
}

TEST(Squeue, PrioritiesFromTheControllerOrderPendingJobs) {
  SqueueOptions options = QueueOptions();
  options.format = "%i %Q";
  options.no_header = true;
  options.priorities = {{26520, 10}, {26521, 500}, {26519, 0}};
  std::string out = FormatSqueue(Queue(), options, kStart);
  EXPECT_EQ(out.substr(0, out.find("26517")), "26521 500\n26520 10\n26519 0\n");
}

// ---------- sinfo ----------

std::vector<v1::NodeStatus> Nodes(std::vector<std::string> states) {
  std::vector<v1::NodeStatus> nodes;
  for (size_t i = 0; i < states.size(); ++i) {
    v1::NodeStatus node;
    node.set_name("n" + std::to_string(i + 1));
    node.set_state(states[i]);
    node.set_registered(true);
    nodes.push_back(node);
  }
  return nodes;
}

std::string Sinfo(const SinfoOptions& options,
                  std::vector<std::string> states = {"MIXED", "MIXED", "IDLE", "IDLE"}) {
  std::vector<v1::Job> jobs = Queue();
  return FormatSinfo({Debug()}, Nodes(states), &Cluster(), options, jobs);
}

TEST(Squeue, LongFormatFieldsByNameWithWidthsAndRightJustify) {
  SqueueOptions options = QueueOptions();
  options.long_fields = "jobid:8,name:.10,state:9,numtasks:6,batchflag:3,restartcnt";
  options.no_header = false;
  std::string out = FormatSqueue({Queue()[0]}, options, kStart + 2);
  EXPECT_EQ(out,
            "JOBID         NAMESTATE    TASKS BATRESTARTCNT          \n"
            "26517       runnerRUNNING  2     1  0                   \n");
}

TEST(Squeue, UnknownLongFieldIsReportedAndLeftOut) {
  EXPECT_EQ(SqueueLongFormatErrors("jobid,bogus:5", false),
            std::vector<std::string>{"Invalid job format specification: bogus"});
  EXPECT_EQ(SqueueLongFormatErrors("stepid,stepname", true), std::vector<std::string>{});
  EXPECT_EQ(SqueueLongFormatErrors("stepid", false),
            std::vector<std::string>{"Invalid job format specification: stepid"});
}

TEST(Squeue, TresPerNodeGroupAndMemoryLetters) {
  v1::Job job = Queue()[0];
  job.mutable_spec()->set_gpus_per_node(2);
  job.mutable_spec()->set_gid(0);
  job.mutable_spec()->set_mem_per_node_mb(2048);
  SqueueOptions options = QueueOptions();
  options.format = "%b|%g|%G|%m";
  options.no_header = true;
  options.group_name = [](uint32_t) { return std::string("wheel"); };
  EXPECT_EQ(FormatSqueue({job}, options, kStart), "gres:gpu:2|wheel|0|2G\n");
  options.noconvert = true;
  EXPECT_EQ(FormatSqueue({job}, options, kStart), "gres:gpu:2|wheel|0|2048M\n");
  job.mutable_spec()->clear_gpus_per_node();
  EXPECT_EQ(FormatSqueue({job}, options, kStart), "N/A|wheel|0|2048M\n");
}

TEST(Squeue, NodeMinimumsContiguityAndShapeLetters) {
  v1::Job job = Queue()[0];
  SqueueOptions options = QueueOptions();
  options.format = "%d|%O|%z";
  options.no_header = true;
  EXPECT_EQ(FormatSqueue({job}, options, kStart), "0|0|*:*:*\n");
  job.mutable_spec()->set_min_tmp_disk_mb(2048);
  job.mutable_spec()->set_contiguous(true);
  job.mutable_spec()->set_min_sockets(2);
  job.mutable_spec()->set_min_threads_per_core(1);
  EXPECT_EQ(FormatSqueue({job}, options, kStart), "2G|1|2:*:1\n");
}

TEST(Squeue, StepsListRunningStepsThenTheBatchStep) {
  v1::Job job = Queue()[0];
  v1::Step* step = job.add_steps();
  step->set_step_id(0);
  step->set_name("hostname");
  step->set_state("RUNNING");
  step->set_start_time(kStart + 1);
  step->set_node_list("n[1-2]");
  step->set_ntasks(2);
  v1::Step* done = job.add_steps();
  done->set_step_id(1);
  done->set_state("COMPLETED");
  SqueueOptions options = QueueOptions();
  options.steps = true;
  EXPECT_EQ(FormatSqueue({job, Queue()[2]}, options, kStart + 61),
            "         STEPID     NAME PARTITION     USER      TIME NODELIST\n"
            "        26517.0 hostname     debug     root      1:00 n[1-2]\n"
            "    26517.batch    batch     debug     root      1:01 n1\n");
  options.step_ids = {"26517.batch"};
  options.long_fields = "stepid:12,numtasks:3,stepstate";
  EXPECT_EQ(FormatSqueue({job}, options, kStart + 61),
            "STEPID      TASSTATE               \n"
            "26517.batch 1  RUNNING             \n");
}

TEST(Squeue, PriorityListsAPendingJobOncePerPartition) {
  v1::Job job = Pending(7, "multi", "Priority");
  job.mutable_spec()->add_partitions("a");
  job.mutable_spec()->add_partitions("b");
  SqueueOptions options = QueueOptions();
  options.format = "%i %P";
  options.no_header = true;
  EXPECT_EQ(FormatSqueue({job}, options, kStart), "7 a,b\n");
  options.per_partition = true;
  EXPECT_EQ(FormatSqueue({job}, options, kStart), "7 a\n7 b\n");
}

// %E (and scontrol's Dependency=): one array task as N_T, the whole array as N.
TEST(Squeue, DependencyNamesOneArrayTaskAsSlurmDoes) {
  v1::Dependency dependency;
  EXPECT_EQ(DependencyText(dependency), "(null)");
  auto* task = dependency.add_terms();
  task->set_type(v1::Dependency::AFTER_OK);
  task->set_job_id(12);
  task->set_array_task_id(3);
  auto* whole = dependency.add_terms();
  whole->set_type(v1::Dependency::AFTER_ANY);
  whole->set_job_id(12);
  EXPECT_EQ(DependencyText(dependency), "afterok:12_3,afterany:12");
  dependency.set_any(true);
  EXPECT_EQ(DependencyText(dependency), "afterok:12_3?afterany:12");
}

TEST(Squeue, ClusterLineFollowsTheDateLine) {
  SqueueOptions options = QueueOptions();
  options.cluster_line = "CLUSTER: anchor";
  options.dated = true;
  options.format = "%i";
  std::string out = FormatSqueue({Queue()[0]}, options, kStart);
  EXPECT_EQ(out.substr(out.find('\n') + 1), "CLUSTER: anchor\nJOBID\n26517\n");
}

TEST(Squeue, TimeFormatRelativeAndStrftime) {
  SqueueOptions options = QueueOptions();
  options.format = "%V";
  options.no_header = true;
  columns::SetTimeFormat("%Y/%m/%d", kStart);
  EXPECT_EQ(FormatSqueue({Queue()[0]}, options, kStart), "2026/11/29\n");
  columns::SetTimeFormat("relative", kStart);
  EXPECT_EQ(FormatSqueue({Queue()[0]}, options, kStart), "15:10\n");
  columns::SetTimeFormat("relative", kStart + 86400);
  EXPECT_EQ(FormatSqueue({Queue()[0]}, options, kStart), "Ystday 15:10\n");
  columns::SetTimeFormat("standard", kStart);
  EXPECT_EQ(FormatSqueue({Queue()[0]}, options, kStart), "2026-11-29T15:10:51\n");
}

TEST(Formats, JsonToYamlWritesBlockStyle) {
  EXPECT_EQ(columns::JsonToYaml(R"({"meta": {"a": 1, "s": "x y"}, "errors": [], )"
                                R"("jobs": [{"id": 2, "n": "", "l": [1, "true"], "z": null}]})"),
            "---\n"
            "meta:\n"
            "  a: 1\n"
            "  s: x y\n"
            "errors: []\n"
            "jobs:\n"
            "- id: 2\n"
            "  n: ''\n"
            "  l:\n"
            "  - 1\n"
            "  - 'true'\n"
            "  z: null\n");
}

TEST(Sinfo, DefaultGroupsNodesByState) {
  EXPECT_EQ(Sinfo({}), R"(PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST
debug*       up   infinite      2    mix n[1-2]
debug*       up   infinite      2   idle n[3-4]
)");
}

TEST(Sinfo, NodeOrientedLong) {
  SinfoOptions options;
  options.node_oriented = options.long_format = true;
  options.now = kStart + 8;
  EXPECT_EQ(Sinfo(options), R"(Sun Nov 29 15:11:03 2026
NODELIST   NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT AVAIL_FE REASON              
n1             1    debug*       mixed 8       1:8:1   4000        0      1   (null) none                
n2             1    debug*       mixed 8       1:8:1   4000        0      1   (null) none                
n3             1    debug*        idle 8       1:8:1   4000        0      1   (null) none                
n4             1    debug*        idle 8       1:8:1   4000        0      1   (null) none                
)");
}

TEST(Sinfo, Summarize) {
  SinfoOptions options;
  options.summarize = true;
  EXPECT_EQ(Sinfo(options), R"(PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST
debug*       up   infinite          2/2/0/4 n[1-4]
)");
}

TEST(Sinfo, CustomFormats) {
  SinfoOptions options;
  options.format = "%P %a %l %D %t %N %G";
  EXPECT_EQ(Sinfo(options), R"(PARTITION AVAIL TIMELIMIT NODES STATE NODELIST GRES
debug* up infinite 2 mix n[1-2] gpu:2
debug* up infinite 2 idle n[3-4] gpu:2
)");
  // The reference printed CPU_LOAD 16.05; Drover does not collect load, so %O is N/A.
  options.node_oriented = true;
  options.format = "%N %T %c %m %G %C %O %E";
  EXPECT_EQ(Sinfo(options), R"(NODELIST STATE CPUS MEMORY GRES CPUS(A/I/O/T) CPU_LOAD REASON
n1 mixed 8 4000 gpu:2 5/3/0/8 N/A none
n2 mixed 8 4000 gpu:2 1/7/0/8 N/A none
n3 idle 8 4000 gpu:2 0/8/0/8 N/A none
n4 idle 8 4000 gpu:2 0/8/0/8 N/A none
)");
}

TEST(Sinfo, PartitionLong) {
  SinfoOptions options;
  options.long_format = true;
  options.now = kStart;
  EXPECT_EQ(Sinfo(options, {"MIXED", "DRAINING", "DRAINED", "DOWN*"}),
            R"(Sun Nov 29 15:10:55 2026
PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE NODELIST
debug*       up   infinite 1-infinite   no       NO        all      1       down* n4
debug*       up   infinite 1-infinite   no       NO        all      1    draining n2
debug*       up   infinite 1-infinite   no       NO        all      1     drained n3
debug*       up   infinite 1-infinite   no       NO        all      1       mixed n1
)");
}

TEST(Sinfo, ReasonsListOnlyTroubledNodes) {
  std::vector<v1::NodeStatus> nodes = Nodes({"IDLE", "DRAINED", "DRAINED", "DOWN*"});
  for (int i : {1, 2}) {
    nodes[i].set_reason("disk full");
    nodes[i].set_reason_time(kStart);
    nodes[i].set_reason_uid(1000);
  }
  nodes[3].set_reason("Not responding");
  nodes[3].set_reason_time(kStart + 60);
  SinfoOptions options;
  options.list_reasons = true;
  options.user_name = [](uint32_t uid) { return uid == 1000 ? std::string("alice") : "root"; };
  EXPECT_EQ(FormatSinfo({Debug()}, nodes, &Cluster(), options),
            R"(REASON               USER      TIMESTAMP           NODELIST
Not responding       root      2026-11-29T15:11:55 n4
disk full            alice     2026-11-29T15:10:55 n[2-3]
)");
  options.long_format = true;
  options.no_header = true;
  EXPECT_EQ(FormatSinfo({Debug()}, nodes, &Cluster(), options),
            "Not responding       root(0)      2026-11-29T15:11:55 down*  n4\n"
            "disk full            alice(1000)  2026-11-29T15:10:55 drain  n[2-3]\n");
}

TEST(Sinfo, EmptyAndHiddenPartitions) {
  v1::Partition empty = Debug();
  empty.set_name("longpartitionname");
  empty.set_is_default(false);
  empty.set_node_list("");
  empty.set_max_time_seconds(2 * 86400);
  v1::Partition hidden = Debug();
  hidden.set_name("secret");
  hidden.set_hidden(true);
  EXPECT_EQ(FormatSinfo({Debug(), empty, hidden}, Nodes({"IDLE", "IDLE", "IDLE", "IDLE"}),
                        &Cluster(), {}),
            R"(PARTITION         AVAIL  TIMELIMIT  NODES  STATE NODELIST
debug*               up   infinite      4   idle n[1-4]
longpartitionname    up 2-00:00:00      0    n/a 
)");
  SinfoOptions all;
  all.all = true;
  all.format = "%R";
  EXPECT_EQ(FormatSinfo({Debug(), hidden}, Nodes({"IDLE"}), &Cluster(), all),
            "PARTITION\ndebug\nsecret\n");
}

TEST(Sinfo, NodesInTwoPartitions) {
  v1::Partition gpu = Debug();
  gpu.set_name("gpu");
  gpu.set_is_default(false);
  gpu.set_node_list("n[3-4]");
  std::vector<v1::NodeStatus> nodes = Nodes({"MIXED", "MIXED", "IDLE", "IDLE"});
  SinfoOptions merged;  // no partition field: one line per state, each node once
  merged.format = "%D %t %N";
  EXPECT_EQ(FormatSinfo({Debug(), gpu}, nodes, &Cluster(), merged),
            "NODES STATE NODELIST\n2 mix n[1-2]\n2 idle n[3-4]\n");
  SinfoOptions per_node;  // -N: a line per node and partition
  per_node.node_oriented = true;
  EXPECT_EQ(FormatSinfo({Debug(), gpu}, nodes, &Cluster(), per_node),
            "NODELIST   NODES PARTITION STATE \n"
            "n1             1    debug* mix   \n"
            "n2             1    debug* mix   \n"
            "n3             1    debug* idle  \n"
            "n3             1       gpu idle  \n"
            "n4             1    debug* idle  \n"
            "n4             1       gpu idle  \n");
}

TEST(Sinfo, WithoutConfigurationHardwareIsNotAvailable) {
  SinfoOptions options;
  options.node_oriented = true;
  options.format = "%N %c %m %C";
  EXPECT_EQ(FormatSinfo({Debug()}, Nodes({"IDLE"}), nullptr, options),
            "NODELIST CPUS MEMORY CPUS(A/I/O/T)\nn1 N/A N/A 0/0/0/0\n");
}

TEST(Sinfo, UnknownFieldIsPrintedLiterally) {
  SinfoOptions options;
  options.format = "%P %k";
  EXPECT_EQ(Sinfo(options), "PARTITION %k\ndebug* %k\n");
  EXPECT_EQ(SinfoFormatErrors("%P %k"),
            std::vector<std::string>{"Invalid node format specification: k"});
}

TEST(Sinfo, StatesFilterTakesNamesAliasesAndAllOf) {
  SinfoOptions options;
  options.format = "%N %t";
  options.no_header = true;
  options.states = {"idle", "mix"};
  EXPECT_EQ(Sinfo(options, {"MIXED", "DRAINED", "IDLE", "DOWN*"}), "n1 mix\nn3 idle\n");
  options.states = {"drain"};
  EXPECT_EQ(Sinfo(options, {"MIXED", "DRAINED", "IDLE", "DOWN*"}), "n2 drain\n");
  options.states = {"down&no_respond"};
  EXPECT_EQ(Sinfo(options, {"MIXED", "DRAINED", "IDLE", "DOWN*"}), "n4 down*\n");
  options.states = {};
  options.dead = true;
  EXPECT_EQ(Sinfo(options, {"MIXED", "DRAINED", "IDLE", "DOWN*"}), "n4 down*\n");
  EXPECT_EQ(SinfoStatesError({"idle", "mix", "resv&maint", "power_down"}), std::nullopt);
  EXPECT_EQ(SinfoStatesError({"idle", "bogus"}), "Bad state string: \"bogus\"");
}

TEST(Sinfo, LongFormatNamesWidthsAndSort) {
  SinfoOptions options;
  options.node_oriented = true;
  options.long_fields = "nodelist:5,statelong:.8,cpusstate:12,allocmem";
  options.sort = "-N";
  EXPECT_EQ(Sinfo(options),
            "NODEL   STATECPUS(A/I/O/TALLOCMEM            \n"
            "n4       idle0/8/0/8     0                   \n"
            "n3       idle0/8/0/8     0                   \n"
            "n2      mixed1/7/0/8     100                 \n"
            "n1      mixed5/3/0/8     500                 \n");
  EXPECT_EQ(SinfoLongFormatErrors("nodelist,bogus:4"),
            std::vector<std::string>{"Invalid node format specification: bogus"});
}

TEST(Sinfo, ReservationsAsSlurmPrintsThem) {
  v1::Reservation resv;
  resv.set_name("fri");
  resv.set_start_time(kStart);
  resv.set_end_time(kStart + 365 * 86400);
  resv.set_node_list("n[1-2]");
  SinfoOptions options;
  options.now = kStart + 10;
  EXPECT_EQ(
      FormatSinfoReservations({resv}, options),
      "RESV_NAME     STATE           START_TIME             END_TIME     DURATION  NODELIST\n"
      "fri          ACTIVE  2026-11-29T15:10:55  2027-11-29T15:10:55  365-00:00:00  n[1-2]\n");
}

// ---------- sacct ----------

v1::Job Finished(uint64_t id, const std::string& name, const std::string& state,
                 const std::string& node_list, const std::vector<std::pair<int, int>>& cores,
                 int gpus_per_node = 0, int64_t start = 1795965052) {
  v1::Job job = Ran(id, name, state, node_list, cores, gpus_per_node);
  job.mutable_spec()->set_submit_time(start - 1);
  job.set_start_time(start);
  job.set_end_time(start + 1);
  return job;
}

std::vector<v1::Job> History() {
  v1::Job failed = Finished(26514, "wrap", "FAILED", "n1", {{0, 1}});
  failed.set_exit_code(3);
  failed.mutable_spec()->set_work_dir("/home/alice/proj");
  std::vector<v1::Job> jobs = {
      Finished(26510, "envdump", "COMPLETED", "n1", {{0, 2}}, 1),
      Finished(26513, "wrap", "COMPLETED", "n[2-4]", {{1, 2}, {2, 2}, {3, 2}}, 2), failed};
  for (uint32_t task = 1; task <= 3; ++task) {
    v1::Job job = Finished(task == 1 ? 26512 : 26513 + task, "wrap", "COMPLETED", "n1", {{0, 1}});
    job.mutable_spec()->set_array_job_id(26512);
    job.mutable_spec()->set_array_task_id(task);
    jobs.push_back(job);
  }
  v1::Job runner = Finished(26517, "runner", "CANCELLED", "n[1-2]", {{0, 1}, {1, 1}}, 1, kStart);
  runner.mutable_spec()->set_submit_time(kStart - 2);
  runner.set_end_time(kStart + 8);
  runner.set_exit_signal(15);  // the batch script's status; the job's own reads 0:0
  v1::Job held = Pending(26519, "held", "JobHeldUser");
  held.set_state("CANCELLED");
  held.mutable_spec()->set_submit_time(kStart - 1);
  held.set_end_time(kStart + 8);
  jobs.push_back(runner);
  jobs.push_back(held);
  return jobs;
}

SacctOptions AcctOptions() {
  SacctOptions options;
  options.cluster = &Cluster();
  options.cluster_name = "anchor";
  return options;
}

std::string Sacct(const SacctOptions& options, const std::vector<v1::Job>& jobs = History()) {
  Result<std::string> out = FormatSacct(jobs, options);
  EXPECT_TRUE(out.ok());
  return out.ok() ? out.value() : "";
}

TEST(Sacct, Parsable2MatchesSlurm) {
  SacctOptions options = AcctOptions();
  options.parsable2 = true;
  // Slurm also printed "26513.0|hostname||root|6|COMPLETED|0:0": Drover records no srun steps.
  EXPECT_EQ(Sacct(options), R"(JobID|JobName|Partition|Account|AllocCPUS|State|ExitCode
26510|envdump|debug|root|2|COMPLETED|0:0
26510.batch|batch||root|2|COMPLETED|0:0
26513|wrap|debug|root|6|COMPLETED|0:0
26513.batch|batch||root|2|COMPLETED|0:0
26514|wrap|debug|root|1|FAILED|3:0
26514.batch|batch||root|1|FAILED|3:0
26512_1|wrap|debug|root|1|COMPLETED|0:0
26512_1.batch|batch||root|1|COMPLETED|0:0
26512_2|wrap|debug|root|1|COMPLETED|0:0
26512_2.batch|batch||root|1|COMPLETED|0:0
26512_3|wrap|debug|root|1|COMPLETED|0:0
26512_3.batch|batch||root|1|COMPLETED|0:0
26517|runner|debug|root|2|CANCELLED by 0|0:0
26517.batch|batch||root|1|CANCELLED|0:15
26519|held|debug|root|1|CANCELLED by 0|0:0
)");
}

TEST(Sacct, DefaultTableMatchesSlurm) {
  std::vector<v1::Job> jobs = History();
  jobs = {jobs[0], jobs[1], jobs[2], jobs[6]};
  EXPECT_EQ(Sacct(AcctOptions(), jobs),
            R"(JobID           JobName  Partition    Account  AllocCPUS      State ExitCode 
------------ ---------- ---------- ---------- ---------- ---------- -------- 
26510           envdump      debug       root          2  COMPLETED      0:0 
26510.batch       batch                  root          2  COMPLETED      0:0 
26513              wrap      debug       root          6  COMPLETED      0:0 
26513.batch       batch                  root          2  COMPLETED      0:0 
26514              wrap      debug       root          1     FAILED      3:0 
26514.batch       batch                  root          1     FAILED      3:0 
26517            runner      debug       root          2 CANCELLED+      0:0 
26517.batch       batch                  root          1  CANCELLED     0:15 
)");
}

TEST(Sacct, AllocationsWithTimesNodesAndTres) {
  std::vector<v1::Job> jobs = History();
  jobs = {jobs[0], jobs[1], jobs[2], jobs[6], jobs[7]};
  SacctOptions options = AcctOptions();
  options.parsable2 = options.no_header = options.allocations = true;
  options.fields =
      "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode,Submit,Start,End,"
      "Elapsed,NodeList,AllocTRES,ReqTRES";
  EXPECT_EQ(
      Sacct(options, jobs),
      R"(26510|envdump|debug|root|2|COMPLETED|0:0|2026-11-29T15:10:51|2026-11-29T15:10:52|2026-11-29T15:10:53|00:00:01|n1|billing=2,cpu=2,gres/gpu=1,mem=200M,node=1|billing=2,cpu=2,gres/gpu=1,mem=200M,node=1
26513|wrap|debug|root|6|COMPLETED|0:0|2026-11-29T15:10:51|2026-11-29T15:10:52|2026-11-29T15:10:53|00:00:01|n[2-4]|billing=6,cpu=6,gres/gpu=6,mem=600M,node=3|billing=6,cpu=6,gres/gpu=6,mem=600M,node=3
26514|wrap|debug|root|1|FAILED|3:0|2026-11-29T15:10:51|2026-11-29T15:10:52|2026-11-29T15:10:53|00:00:01|n1|billing=1,cpu=1,mem=100M,node=1|billing=1,cpu=1,mem=100M,node=1
26517|runner|debug|root|2|CANCELLED by 0|0:0|2026-11-29T15:10:53|2026-11-29T15:10:55|2026-11-29T15:11:03|00:00:08|n[1-2]|billing=2,cpu=2,gres/gpu=2,mem=200M,node=2|billing=2,cpu=2,gres/gpu=2,mem=200M,node=2
26519|held|debug|root|1|CANCELLED by 0|0:0|2026-11-29T15:10:54|None|2026-11-29T15:11:03|00:00:00|None assigned||billing=1,cpu=1,mem=100M,node=1
)");
}

TEST(Sacct, FieldNamesWidthsAndErrors) {
  SacctOptions options = AcctOptions();
  options.fields = "jobid%-8,JOBN%4,state%-12,elapsed";
  std::vector<v1::Job> jobs = {History()[6]};
  options.allocations = true;
  EXPECT_EQ(Sacct(options, jobs),
            "JobID    JobN State           Elapsed \n"
            "-------- ---- ------------ ---------- \n"
            "26517    run+ CANCELLED b+   00:00:08 \n");
  options.fields = "JobID,Bogus";
  Result<std::string> bad = FormatSacct(jobs, options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(std::move(bad).take_error().message, "Invalid field requested: \"Bogus\"");
}

// Drover's AllocGPUs: each GPU by node, index and UUID (the index alone without one).
TEST(Sacct, AllocGpusTracesAJobsGpus) {
  SacctOptions options = AcctOptions();
  options.parsable2 = true;
  options.allocations = true;
  options.fields = "JobID,AllocG";
  v1::Job job = History()[1];  // n[2-4], two GPUs each
  for (v1::NodeAllocation& node : *job.mutable_allocation()) node.clear_gpus();
  job.mutable_allocation(0)->add_gpus(0);
  job.mutable_allocation(0)->add_gpus(1);
  job.mutable_allocation(0)->add_gpu_uuids("GPU-aa");
  job.mutable_allocation(0)->add_gpu_uuids("GPU-bb");
  job.mutable_allocation(1)->add_gpus(3);
  EXPECT_EQ(Sacct(options, {job}), "JobID|AllocGPUs\n26513|n2:0=GPU-aa,n2:1=GPU-bb,n3:3\n");
  options.fields = "JobID,AllocGPUs";
  options.allocations = false;
  EXPECT_EQ(Sacct(options, {History()[0]}), "JobID|AllocGPUs\n26510|n1:0\n26510.batch|\n");
}

TEST(Sacct, AllFieldsMatchSlurmButWhatIsNotRecorded) {
  SacctOptions options = AcctOptions();
  options.parsable2 = true;
  options.fields = "ALL";
  // Slurm also printed AssocID 2, DBIndex 27458, Flags SchedMain,StartRecieved, Priority
  // 4294895508, QOSRAW 1 and the SubmitLine: the records do not hold them.
  EXPECT_EQ(
      Sacct(options, {History()[2]}),
      "Account|AdminComment|AllocCPUS|AllocNodes|AllocTRES|AssocID|AveCPU|AveCPUFreq|AveDiskRead|"
      "AveDiskWrite|AvePages|AveRSS|AveVMSize|BlockID|Cluster|Comment|Constraints|ConsumedEnergy|"
      "ConsumedEnergyRaw|Container|CPUTime|CPUTimeRAW|DBIndex|DerivedExitCode|Elapsed|ElapsedRaw|"
      "Eligible|End|ExitCode|Flags|GID|Group|JobID|JobIDRaw|JobName|Layout|MaxDiskRead|"
      "MaxDiskReadNode|MaxDiskReadTask|MaxDiskWrite|MaxDiskWriteNode|MaxDiskWriteTask|MaxPages|"
      "MaxPagesNode|MaxPagesTask|MaxRSS|MaxRSSNode|MaxRSSTask|MaxVMSize|MaxVMSizeNode|"
      "MaxVMSizeTask|McsLabel|MinCPU|MinCPUNode|MinCPUTask|NCPUS|NNodes|NodeList|NTasks|Partition|"
      "Priority|QOS|QOSRAW|Reason|ReqCPUFreq|ReqCPUFreqGov|ReqCPUFreqMax|ReqCPUFreqMin|ReqCPUS|"
      "ReqMem|ReqNodes|ReqTRES|Reservation|ReservationId|Reserved|ResvCPU|ResvCPURAW|Start|State|"
      "Submit|SubmitLine|Suspended|SystemComment|SystemCPU|Timelimit|TimelimitRaw|TotalCPU|"
      "TRESUsageInAve|TRESUsageInMax|TRESUsageInMaxNode|TRESUsageInMaxTask|TRESUsageInMin|"
      "TRESUsageInMinNode|TRESUsageInMinTask|TRESUsageInTot|TRESUsageOutAve|TRESUsageOutMax|"
      "TRESUsageOutMaxNode|TRESUsageOutMaxTask|TRESUsageOutMin|TRESUsageOutMinNode|"
      "TRESUsageOutMinTask|TRESUsageOutTot|UID|User|UserCPU|WCKey|WCKeyID|WorkDir\n"
      "root||1|1|billing=1,cpu=1,mem=100M,node=1||||||||||anchor||||||00:00:01|1||0:0|00:00:01|1|"
      "2026-11-29T15:10:51|2026-11-29T15:10:53|3:0||0|root|26514|26514|wrap|||||||||||||||||||||1|"
      "1|n1||debug||normal||None|Unknown|Unknown|Unknown|Unknown|1|100M|1|billing=1,cpu=1,mem=100M,"
      "node=1|||00:00:01|00:00:01|1|2026-11-29T15:10:52|FAILED|2026-11-29T15:10:51||00:00:00||00:"
      "00:00|UNLIMITED|UNLIMITED|00:00:00|||||||||||||||||0|root|00:00:00||0|/home/alice/proj\n"
      "root||1|1|cpu=1,mem=100M,node=1|||0|||||||anchor|||0|0||00:00:01|1|||00:00:01|1|2026-11-"
      "29T15:10:52|2026-11-29T15:10:53|3:0||||26514.batch|26514.batch|batch|Unknown||||||||||||||||"
      "||||1|1|n1|1||||||0|0|0|0|1||1|||||||2026-11-29T15:10:52|FAILED|2026-11-29T15:10:52||00:00:"
      "00||00:00:00|||00:00:00|||||||||||||||||||00:00:00|||\n");
}

void SetUsage(v1::Usage* usage, uint32_t tasks, double user, double system,
              std::pair<double, double> cpu_max_min, std::pair<double, double> rss_max_min,
              double rss_total) {
  usage->set_tasks(tasks);
  usage->set_user_cpu_seconds(user);
  usage->set_system_cpu_seconds(system);
  v1::UsageStat* cpu = usage->mutable_cpu();
  cpu->set_total(user + system);
  cpu->set_max(cpu_max_min.first), cpu->set_max_node("n2"), cpu->set_max_task(3);
  cpu->set_min(cpu_max_min.second), cpu->set_min_node("n1"), cpu->set_min_task(0);
  v1::UsageStat* rss = usage->mutable_rss();
  rss->set_total(rss_total);
  rss->set_max(rss_max_min.first), rss->set_max_node("n1"), rss->set_max_task(1);
  rss->set_min(rss_max_min.second), rss->set_min_node("n2"), rss->set_min_task(2);
}

TEST(Sacct, UsageFieldsOfStepsAndTheJobRowsSum) {
  v1::Job job = Finished(50, "train", "COMPLETED", "n[1-2]", {{0, 2}, {1, 2}});
  SetUsage(job.mutable_batch_usage(), 1, 0.012, 0.010, {0.022, 0.022}, {1036, 1036}, 1036);
  job.mutable_batch_usage()->mutable_cpu()->set_max_node("n1");
  job.mutable_batch_usage()->mutable_cpu()->set_max_task(0);
  v1::Step* step = job.add_steps();
  step->set_step_id(0);
  step->set_name("python");
  step->set_state("COMPLETED");
  step->set_start_time(job.start_time());
  step->set_end_time(job.end_time());
  step->set_node_list("n[1-2]");
  step->set_ntasks(4);
  SetUsage(step->mutable_task_usage(), 4, 3600, 125.5, {1000.25, 862.75}, {1536, 1024}, 5120);
  v1::Step* running = job.add_steps();  // still running: measured nothing yet, adds nothing
  running->set_step_id(1);
  running->set_state("RUNNING");
  running->set_start_time(job.start_time());
  running->set_node_list("n1");
  running->set_ntasks(1);
  SacctOptions options = AcctOptions();
  options.parsable2 = options.no_header = true;
  options.fields = "JobID,TotalCPU,UserCPU,SystemCPU,AveCPU,MinCPU,MinCPUNode,MinCPUTask";
  EXPECT_EQ(Sacct(options, {job}),
            "50|01:02:05|01:00:00|02:05.510||||\n"
            "50.batch|00:00.022|00:00.012|00:00.010|00:00:00|00:00:00|n1|0\n"
            "50.0|01:02:05|01:00:00|02:05.500|00:15:31|00:14:22|n1|0\n"
            "50.1|00:00:00|00:00:00|00:00:00||||\n");
  options.fields = "JobID,MaxRSS,MaxRSSNode,MaxRSSTask,AveRSS,ConsumedEnergy";
  EXPECT_EQ(Sacct(options, {job}),
            "50|||||\n50.batch|1036K|n1|1|1036K|0\n50.0|1.50M|n1|1|1280K|0\n50.1|||||0\n");
  options.fields =
      "JobID,TRESUsageInTot,TRESUsageInMax,TRESUsageInMaxNode,TRESUsageInMaxTask,"
      "TRESUsageInMin,TRESUsageInMinNode,TRESUsageInMinTask,TRESUsageInAve";
  std::string rows = Sacct(options, {job});
  EXPECT_NE(rows.find("\n50.0|cpu=01:02:05,mem=5M|cpu=00:16:40,mem=1.50M|cpu=n2,mem=n1|cpu=3,mem=1|"
                      "cpu=00:14:22,mem=1M|cpu=n1,mem=n2|cpu=0,mem=2|cpu=00:15:31,mem=1280K\n"),
            std::string::npos)
      << rows;
  EXPECT_EQ(rows.substr(0, 12), "50||||||||\n5");
  // --noconvert prints bytes, --units a fixed unit.
  options.fields = "JobID,MaxRSS";
  options.no_convert = true;
  EXPECT_EQ(Sacct(options, {job}), "50|\n50.batch|1060864\n50.0|1572864\n50.1|\n");
  options.no_convert = false;
  options.units = 'M';
  EXPECT_EQ(Sacct(options, {job}), "50|\n50.batch|1.01M\n50.0|1.50M\n50.1|\n");
  // Averages to the byte, as Slurm divides: 3 tasks holding 7168 KiB in all.
  options.units = 0;
  v1::Job uneven = job;
  uneven.mutable_steps(0)->mutable_task_usage()->set_tasks(3);
  uneven.mutable_steps(0)->mutable_task_usage()->mutable_rss()->set_total(7168);
  options.fields = "JobID,AveRSS";
  EXPECT_NE(Sacct(options, {uneven}).find("\n50.0|2446677\n"), std::string::npos);
  options.units = 'M';
  uneven.mutable_steps(0)->mutable_task_usage()->mutable_rss()->set_total(0);
  EXPECT_NE(Sacct(options, {uneven}).find("\n50.0|0\n"), std::string::npos);  // 0 in any unit
  // Figures from srun are not trusted to be sane: a huge CPU time prints, bounded.
  uneven.mutable_steps(0)->mutable_task_usage()->set_user_cpu_seconds(1e300);
  options.fields = "JobID,UserCPU";
  EXPECT_NE(Sacct(options, {uneven}).find("\n50.0|104166666-16:00:00\n"), std::string::npos);
  // The srun steps keep the job's fixed values (ReqCPUFreq Unknown), the batch step its own;
  // energy is 0 on every step.
  options.units = 0;
  options.fields = "JobID,ReqCPUFreq,ConsumedEnergy";
  EXPECT_EQ(Sacct(options, {job}), "50|Unknown|\n50.batch|0|0\n50.0|Unknown|0\n50.1|Unknown|0\n");
  // -X fetches no steps in Slurm: the job row's CPU times are 0 there.
  options.allocations = true;
  options.fields = "JobID,TotalCPU";
  EXPECT_EQ(Sacct(options, {job}), "50|00:00:00\n");
}

TEST(Sacct, ParsableEndsEveryFieldWithTheDelimiter) {
  SacctOptions options = AcctOptions();
  options.parsable = true;
  options.brief = true;
  options.allocations = true;
  EXPECT_EQ(Sacct(options, {History()[2]}), "JobID|State|ExitCode|\n26514|FAILED|3:0|\n");
  EXPECT_EQ(Sacct(options, {}), "JobID|State|ExitCode|\n");
}

TEST(Sacct, TimeoutAndRunningJobs) {
  v1::Job timeout = Finished(40, "slow", "TIMEOUT", "n2", {{1, 4}});
  timeout.set_exit_signal(15);
  v1::Job running = Ran(41, "busy", "RUNNING", "n3", {{2, 1}});
  SacctOptions options = AcctOptions();
  options.parsable2 = options.no_header = true;
  options.now = kStart + 90;
  options.fields = "JobID,State,ExitCode,End,Elapsed";
  EXPECT_EQ(Sacct(options, {timeout, running}),
            "40|TIMEOUT|0:0|2026-11-29T15:10:53|00:00:01\n"
            "40.batch|CANCELLED|0:15|2026-11-29T15:10:53|00:00:01\n"
            "41|RUNNING|0:0|Unknown|00:01:30\n41.batch|RUNNING|0:0|Unknown|00:01:30\n");
}

TEST(Sacct, RequeuedRunsShowWithDuplicates) {
  v1::Job job = Finished(50, "again", "COMPLETED", "n2", {{1, 1}}, 0, kStart + 100);
  v1::JobRun* first = job.add_history();
  first->set_start_time(kStart);
  first->set_end_time(kStart + 60);
  first->set_state("NODE_FAIL");
  first->add_nodes(0);
  job.set_restart_count(1);
  SacctOptions options = AcctOptions();
  options.parsable2 = options.no_header = true;
  options.fields = "JobID,State,NodeList,Elapsed";
  EXPECT_EQ(Sacct(options, {job}), "50|COMPLETED|n2|00:00:01\n50.batch|COMPLETED|n2|00:00:01\n");
  options.duplicates = true;
  options.allocations = true;
  EXPECT_EQ(Sacct(options, {job}), "50|NODE_FAIL|n1|00:01:00\n50|COMPLETED|n2|00:00:01\n");
}

TEST(Sacct, PendingArrayTasksFold) {
  std::vector<v1::Job> jobs = Array();
  SacctOptions options = AcctOptions();
  options.parsable2 = options.no_header = options.allocations = true;
  options.fields = "JobID,State,AllocCPUS";
  EXPECT_EQ(Sacct(options, jobs), "300_[0-3,5-9]|PENDING|0\n300_4|RUNNING|1\n");
}

// ---------- sacct's selection ----------

TEST(SacctSelect, TimesLookBack) {
  setenv("TZ", "UTC", 1);
  tzset();
  int64_t now = 1795965052;  // 2026-11-29T15:10:52
  EXPECT_EQ(ParseSacctTime("2026-11-29T15:00:00", now), 1795964400);
  EXPECT_EQ(ParseSacctTime("2026-11-29-15:00", now), 1795964400);
  EXPECT_EQ(ParseSacctTime("15:00", now), 1795964400);          // today's, not tomorrow's
  EXPECT_EQ(ParseSacctTime("16:00", now), 1795964400 - 82800);  // still ahead: yesterday's
  EXPECT_EQ(ParseSacctTime("now-1hours", now), now - 3600);
  EXPECT_EQ(ParseSacctTime("midnight", now), 1795910400);
  EXPECT_EQ(ParseSacctTime("junk", now), std::nullopt);
}

TEST(SacctSelect, StateNamesAndAbbreviations) {
  EXPECT_EQ(SacctStateName("cd"), "COMPLETED");
  EXPECT_EQ(SacctStateName("Failed"), "FAILED");
  EXPECT_EQ(SacctStateName("oom"), "OUT_OF_MEMORY");
  EXPECT_EQ(SacctStateName("R"), "RUNNING");
  EXPECT_EQ(SacctStateName("xx"), std::nullopt);
}

TEST(SacctSelect, JobStepItems) {
  auto one = ParseSacctJobSteps("12.batch");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->front().job_id, 12u);
  EXPECT_EQ(one->front().step, "batch");
  auto tasks = ParseSacctJobSteps("7_[1-3,5]");
  ASSERT_TRUE(tasks.ok());
  ASSERT_EQ(tasks->size(), 4u);
  EXPECT_EQ(tasks->back().task, 5u);
  EXPECT_EQ(ParseSacctJobSteps("x").error(), "Bad job/step specified: x");
  EXPECT_EQ(ParseSacctJobSteps("3.foo").error(), "Bad step specified: 3.foo");
  EXPECT_EQ(ParseSacctJobSteps("3_x").error(), "Bad job array element specified: 3_x");
}

TEST(SacctSelect, DefaultWindowDependsOnJobsAndStates) {
  setenv("TZ", "UTC", 1);
  tzset();
  int64_t now = 1795965052, midnight = 1795910400;
  SacctSelection plain;
  SacctWindow(plain, false, false, now);
  EXPECT_EQ(plain.start, midnight);
  EXPECT_EQ(plain.end, now);
  SacctSelection jobs;
  jobs.jobs.push_back({1, std::nullopt, ""});
  SacctWindow(jobs, false, false, now);
  EXPECT_EQ(jobs.start, 0);
  SacctSelection states;
  states.states = {"RUNNING"};
  SacctWindow(states, false, false, now);
  EXPECT_EQ(states.start, now);
  EXPECT_EQ(states.end, now);
  states.start = midnight;
  SacctWindow(states, true, false, now);
  EXPECT_EQ(states.end, midnight);  // -s with -S only: the end is the start
}

TEST(SacctSelect, StatesDuringTheWindow) {
  v1::Job failed = Finished(5, "f", "FAILED", "n1", {{0, 1}}, 0, 1000);  // ran 1000..1001
  SacctSelection selection;
  selection.start = 900, selection.end = 2000;
  EXPECT_TRUE(SacctSelects(selection, failed, 3000));
  selection.states = {"FAILED"};
  EXPECT_TRUE(SacctSelects(selection, failed, 3000));
  selection.states = {"RUNNING"};
  EXPECT_TRUE(SacctSelects(selection, failed, 3000));  // it ran during the window
  selection.start = selection.end = 1500;
  EXPECT_FALSE(SacctSelects(selection, failed, 3000));
  selection.states = {"COMPLETED"};
  selection.start = 0;
  EXPECT_FALSE(SacctSelects(selection, failed, 3000));
  selection.states.clear();
  selection.start = 1002, selection.end = 2000;
  EXPECT_FALSE(SacctSelects(selection, failed, 3000)) << "it ended before the window";
}

TEST(SacctSelect, HeldJobsAreNotEligibleUnlessNamed) {
  v1::Job held = Pending(9, "held", "JobHeldUser");
  held.mutable_spec()->set_hold(v1::JobSpec::USER);
  held.mutable_spec()->set_submit_time(100);
  SacctSelection selection;
  selection.start = 0, selection.end = 200;
  EXPECT_FALSE(SacctSelects(selection, held, 200));
  selection.jobs.push_back({9, std::nullopt, ""});
  EXPECT_TRUE(SacctSelects(selection, held, 200));
}

TEST(SacctSelect, FiltersAndStepRows) {
  std::vector<v1::Job> jobs = History();
  SacctSelection selection;
  selection.end = INT64_MAX / 2;
  selection.names = {"runner"};
  EXPECT_FALSE(SacctSelects(selection, jobs[0], 0));
  EXPECT_TRUE(SacctSelects(selection, jobs[6], 0));
  selection.names.clear();
  selection.min_nodes = selection.max_nodes = 3;
  EXPECT_TRUE(SacctSelects(selection, jobs[1], 0));
  EXPECT_FALSE(SacctSelects(selection, jobs[0], 0));
  selection = {};
  selection.end = INT64_MAX / 2;
  selection.jobs.push_back({26514, std::nullopt, "batch"});
  SacctOptions options = AcctOptions();
  options.selection = &selection;
  options.fields = "JobID";
  options.parsable2 = options.no_header = true;
  EXPECT_EQ(Sacct(options, {jobs[2]}), "26514.batch\n");
  selection.jobs.push_back({26512, 2u, ""});
  EXPECT_TRUE(SacctSelects(selection, jobs[4], 0));
  EXPECT_FALSE(SacctSelects(selection, jobs[3], 0));
}

TEST(SacctSelect, UnitsAndTimeFormat) {
  SacctOptions options = AcctOptions();
  options.fields = "ReqMem,Submit";
  options.parsable2 = options.no_header = options.allocations = true;
  std::vector<v1::Job> jobs = {History()[2]};  // 100M
  options.units = 'G';
  columns::SetTimeFormat("%d.%m", 0);
  EXPECT_EQ(Sacct(options, jobs), "0.10G|29.11\n");
  options.units = 'K';
  EXPECT_EQ(Sacct(options, jobs), "102400K|29.11\n");
  columns::SetTimeFormat("standard", 0);
}

TEST(SacctSelect, FieldHelpAndYaml) {
  std::string help = SacctFieldHelp();
  EXPECT_EQ(help.substr(0, 80),
            "Account             AdminComment        AllocCPUS           AllocNodes         \n");
}

TEST(SacctSelect, ExternStepUnderPrologFlagsContain) {
  ClusterConfig cluster = Cluster();
  cluster.settings.prolog_flags = {"CONTAIN"};
  SacctOptions options = AcctOptions();
  options.cluster = &cluster;
  options.fields = "JobID,JobName,AllocCPUS,NTasks,State,NodeList";
  options.parsable2 = options.no_header = true;
  std::vector<v1::Job> jobs = {History()[1]};
  EXPECT_EQ(Sacct(options, jobs),
            "26513|wrap|6||COMPLETED|n[2-4]\n"
            "26513.batch|batch|2|1|COMPLETED|n2\n"
            "26513.extern|extern|6|3|COMPLETED|n[2-4]\n");
  SacctSelection selection;
  selection.jobs.push_back({26513, std::nullopt, "extern"});
  options.selection = &selection;
  EXPECT_EQ(Sacct(options, jobs), "26513.extern|extern|6|3|COMPLETED|n[2-4]\n");
}

}  // namespace
}  // namespace drover::cli
