// scontrol show's records against what Slurm 22.05 printed for the same jobs, nodes and
// partitions (tests/cli/golden/scontrol_*.txt, copied from its output on a 4-node cluster).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

#include "cli/scontrol/scontrol_format.h"
#include "common/hostlist.h"

namespace drover::cli::scontrol {
namespace {

// The reference cluster: n[1-4], 8 cores and 2 GPUs each, partition debug, DefMemPerCPU=100.
constexpr const char* kSlurmConf =
    "ClusterName=anchor\n"
    "SlurmctldHost=localhost(127.0.0.1)\n"
    "SlurmctldPort=6817\n"
    "SelectType=select/cons_tres\n"
    "SelectTypeParameters=CR_Core_Memory\n"
    "DefMemPerCPU=100\n"
    "GresTypes=gpu\n"
    "MaxJobCount=50000\n"
    "NodeName=n[1-4] NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=8 Boards=1 "
    "SocketsPerBoard=1 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=4000 Gres=gpu:2\n"
    "PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=INFINITE State=UP\n";
constexpr const char* kGresConf = "NodeName=n[1-4] Name=gpu Count=2\n";

// Times of the reference run, read as UTC.
constexpr int64_t k151051 = 1795965051, k151052 = 1795965052, k151053 = 1795965053,
                  k151054 = 1795965054, k151055 = 1795965055, kNow = 1795965063;

std::string Golden(const std::string& name) {
  std::ifstream in(std::string(SCONTROL_GOLDEN_DIR) + "/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void Replace(std::string& text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
}

class ScontrolFormat : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
    ConfigLoad load = LoadClusterConfigText(kSlurmConf, std::string(kGresConf));
    ASSERT_TRUE(load.ok());
    cluster_ = std::move(load.config);
    ctx_.cluster = &cluster_;
    ctx_.now = kNow;
  }

  v1::Job Job(uint64_t id, const std::string& name, int64_t submit) {
    v1::Job job;
    v1::JobSpec* spec = job.mutable_spec();
    spec->set_job_id(id);
    spec->set_array_task_id(UINT32_MAX);
    spec->set_name(name);
    spec->set_user("root");
    spec->set_account("root");
    spec->set_qos("normal");
    spec->set_min_nodes(1);
    spec->set_ntasks(1);
    spec->set_submit_time(submit);
    spec->set_requeue(true);
    spec->set_work_dir("/home/alice/proj");
    spec->set_stdout_path("/dev/null");
    spec->set_stderr_path("/dev/null");
    spec->set_stdin_path("/dev/null");
    job.set_state("PENDING");
    job.set_reason("None");
    return job;
  }

  // Runs on `nodes` (indexes) with `cores` cores, `memory_mb` and `gpus` GPUs on each.
  void Run(v1::Job& job, std::vector<int> nodes, int cores, uint64_t memory_mb, int gpus,
           int64_t start) {
    job.set_state("RUNNING");
    job.set_partition_name("debug");
    job.set_start_time(start);
    job.set_time_limit_seconds(INT64_MAX);
    std::vector<std::string> names;
    for (int node : nodes) {
      v1::NodeAllocation* part = job.add_allocation();
      part->set_node(node);
      for (int c = 0; c < cores; ++c) part->add_cores(c);
      part->set_memory_mb(memory_mb);
      for (int g = 0; g < gpus; ++g) part->add_gpus(g);
      names.push_back(cluster_.nodes[node].name);
    }
    job.set_node_list(CompressHostlist(names));
  }

  v1::Job Running26517() {
    v1::Job job = Job(26517, "runner", k151053);
    job.mutable_spec()->set_min_nodes(2);
    job.mutable_spec()->set_max_nodes(2);
    job.mutable_spec()->set_ntasks(2);
    job.mutable_spec()->set_gpus_per_node(1);
    Run(job, {0, 1}, 1, 100, 1, k151055);
    ctx_.priorities[26517] = 4294895507;
    return job;
  }

  // Slurm records the submitting host; Drover does not (yet).
  static std::string WithoutAllocNode(std::string text) {
    size_t at;
    while ((at = text.find("AllocNode:Sid=localhost:3174")) != std::string::npos)
      text.replace(at, 28, "AllocNode:Sid=(null):0");
    return text;
  }

  ClusterConfig cluster_;
  ShowContext ctx_;
};

TEST_F(ScontrolFormat, RunningJobAsSlurmPrintsIt) {
  v1::Job job = Running26517();
  Record record = JobRecord(job, ctx_);
  EXPECT_EQ(Render({&record, 1}, false), WithoutAllocNode(Golden("scontrol_job_running.txt")));
}

TEST_F(ScontrolFormat, OneLinerJoinsTheLinesWithSpaces) {
  v1::Job job = Running26517();
  Record record = JobRecord(job, ctx_);
  EXPECT_EQ(Render({&record, 1}, true), WithoutAllocNode(Golden("scontrol_job_oneliner.txt")));
}

TEST_F(ScontrolFormat, HeldJobHasNoPriorityNorEligibleTime) {
  v1::Job job = Job(26519, "held", k151054);
  job.mutable_spec()->set_hold(v1::JobSpec::USER);
  job.set_reason("JobHeldUser");
  ctx_.priorities[26519] = 12345;  // a hold wins over any computed priority
  Record record = JobRecord(job, ctx_);
  EXPECT_EQ(Render({&record, 1}, false), WithoutAllocNode(Golden("scontrol_job_held.txt")));
}

TEST_F(ScontrolFormat, DetailsAddDerivedExitCodeAndPerNodeResources) {
  v1::Job job = Job(26513, "wrap", k151051);
  v1::JobSpec* spec = job.mutable_spec();
  spec->set_min_nodes(3);
  spec->set_max_nodes(3);
  spec->set_ntasks(6);
  spec->set_ntasks_per_node(2);
  spec->set_gpus_per_node(2);
  spec->set_stdout_path("multi.out");
  spec->clear_stderr_path();
  Run(job, {1, 2, 3}, 2, 200, 2, k151052);
  job.set_state("COMPLETED");
  job.set_end_time(k151053);
  ctx_.priorities[26513] = 4294895509;
  ctx_.details = true;
  Record record = JobRecord(job, ctx_);
  std::string expected = WithoutAllocNode(Golden("scontrol_job_details.txt"));
  // Drover names the GPUs each node holds, as Slurm does where it knows their indexes.
  Replace(expected, "Mem=200 GRES=\n", "Mem=200 GRES=gpu:2(IDX:0-1)\n");
  EXPECT_EQ(Render({&record, 1}, false), expected);
}

TEST_F(ScontrolFormat, PlacementOptionsOfTheJob) {
  v1::Job job = Running26517();
  job.mutable_spec()->set_prefer("fast");
  job.mutable_spec()->set_licenses("ansys,fluent:2");
  job.mutable_spec()->set_oversubscribe(true);
  job.set_batch_host("n2");
  Record record = JobRecord(job, ctx_);
  std::string expected = WithoutAllocNode(Golden("scontrol_job_running.txt"));
  Replace(expected, "BatchHost=n1", "BatchHost=n2");
  Replace(expected, "DelayBoot=00:00:00\n", "DelayBoot=00:00:00\n   Prefer=fast\n");
  Replace(expected, "OverSubscribe=OK Contiguous=0 Licenses=(null)",
          "OverSubscribe=YES Contiguous=0 Licenses=ansys:1,fluent:2");
  EXPECT_EQ(Render({&record, 1}, false), expected);
}

TEST_F(ScontrolFormat, LicensesWithWhatRunningJobsHold) {
  ConfigLoad load = LoadClusterConfigText(std::string(kSlurmConf) + "Licenses=fluent:4,ansys\n",
                                          std::string(kGresConf));
  ASSERT_TRUE(load.ok()) << load.ErrorText();
  std::vector<v1::Job> jobs = {Running26517(), Running26517(), Job(3, "waiting", k151051)};
  jobs[0].mutable_spec()->set_licenses("fluent:2");
  jobs[1].mutable_spec()->set_licenses("fluent,ansys");
  jobs[2].mutable_spec()->set_licenses("fluent:4");  // pending: holds nothing
  EXPECT_EQ(LicensesText(load.config, jobs, std::nullopt, false),
            "LicenseName=ansys\n    Total=1 Used=1 Free=0 Reserved=0 Remote=no\n"
            "LicenseName=fluent\n    Total=4 Used=3 Free=1 Reserved=0 Remote=no\n");
  EXPECT_EQ(LicensesText(load.config, jobs, "fluent", true),
            "LicenseName=fluent Total=4 Used=3 Free=1 Reserved=0 Remote=no\n");
  EXPECT_EQ(LicensesText(load.config, jobs, "matlab", false), "");
  EXPECT_EQ(LicensesText(cluster_, jobs, std::nullopt, false),
            "No licenses configured in Slurm.\n");
}

TEST_F(ScontrolFormat, PendingJobWithNodeRangeAndBeginTime) {
  v1::Job job = Job(26520, "later", k151054);
  job.mutable_spec()->set_begin_time(k151054 + 3600);
  job.mutable_spec()->set_min_nodes(4);
  job.mutable_spec()->set_max_nodes(4);
  job.set_reason("BeginTime");
  std::string text = Render(std::vector{JobRecord(job, ctx_)}, false);
  EXPECT_NE(text.find("SubmitTime=2026-11-29T15:10:54 EligibleTime=2026-11-29T16:10:54\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("StartTime=2026-11-29T16:10:54 EndTime=Unknown Deadline=N/A"),
            std::string::npos);
  EXPECT_NE(text.find("NumNodes=4-4 NumCPUs=4 NumTasks=4 "), std::string::npos) << text;
  EXPECT_NE(text.find("TRES=cpu=4,mem=400M,node=4,billing=4\n"), std::string::npos);
}

TEST_F(ScontrolFormat, ArrayTaskNamesItsArray) {
  v1::Job job = Job(31, "arr", k151054);
  job.mutable_spec()->set_array_job_id(30);
  job.mutable_spec()->set_array_task_id(1);
  job.mutable_spec()->set_stdout_path("");
  std::string text = Render(std::vector{JobRecord(job, ctx_)}, false);
  EXPECT_EQ(text.substr(0, text.find('\n')), "JobId=31 ArrayJobId=30 ArrayTaskId=1 JobName=arr");
  EXPECT_NE(text.find("StdOut=/home/alice/proj/slurm-30_1.out\n"), std::string::npos) << text;
}

TEST_F(ScontrolFormat, PartitionAsSlurmPrintsIt) {
  v1::Partition partition;
  partition.set_name("debug");
  partition.set_state("UP");
  partition.set_is_default(true);
  partition.set_node_list("n[1-4]");
  partition.set_total_nodes(4);
  partition.set_total_cpus(32);
  partition.set_total_gpus(8);
  partition.set_max_time_seconds(-1);
  partition.set_default_time_seconds(-1);
  partition.set_priority_tier(1);
  partition.set_priority_job_factor(1);
  partition.set_over_subscribe("NO");
  partition.set_preempt_mode("OFF");
  Record record = PartitionRecord(partition, ctx_);
  EXPECT_EQ(Render({&record, 1}, false), Golden("scontrol_partition.txt"));
}

TEST_F(ScontrolFormat, NodeLinesDroverKnowsMatchSlurms) {
  v1::Job big = Running26517();  // one core, 100M and one GPU on n1 and n2
  v1::Job other = Job(26518, "runner2", k151053);
  Run(other, {0}, 4, 400, 0, k151055);
  std::vector<v1::Job> jobs = {big, other};
  v1::NodeStatus node;
  node.set_name("n1");
  node.set_registered(true);
  ctx_.version = "0.1.0";
  Record record = NodeRecord(node, 0, jobs, ctx_);
  std::string text = Render({&record, 1}, false);
  // Every line Drover prints as Slurm does; the host's OS, load, free memory and boot times
  // are not reported by Drover's agents (yet), so those lines differ.
  std::string slurm = Golden("scontrol_node_slurm.txt");
  for (const char* line :
       {"   AvailableFeatures=(null)\n", "   ActiveFeatures=(null)\n", "   Gres=gpu:2\n",
        "   State=MIXED ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n",
        "   Partitions=debug \n", "   CfgTRES=cpu=8,mem=4000M,billing=8,gres/gpu=2\n",
        "   AllocTRES=cpu=5,mem=500M,gres/gpu=1\n", "   CapWatts=n/a\n",
        "   CurrentWatts=0 AveWatts=0\n",
        "   ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n\n"}) {
    EXPECT_NE(slurm.find(line), std::string::npos) << line;
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
  EXPECT_EQ(text.substr(0, text.find('\n')), "NodeName=n1 CoresPerSocket=8 ");
  EXPECT_NE(text.find("   CPUAlloc=5 CPUEfctv=8 CPUTot=8 CPULoad=N/A\n"), std::string::npos);
  EXPECT_NE(text.find("   NodeAddr=127.0.0.1 NodeHostName=localhost Version=0.1.0\n"),
            std::string::npos);
  EXPECT_NE(text.find("   RealMemory=4000 AllocMem=500 FreeMem=N/A Sockets=1 Boards=1\n"),
            std::string::npos);
}

TEST_F(ScontrolFormat, DrainedNodeShowsItsReason) {
  v1::NodeStatus node;
  node.set_name("n3");
  node.set_registered(true);
  node.set_drain(true);
  node.set_reason("bad fan");
  node.set_reason_time(k151055);
  Record record = NodeRecord(node, 2, {}, ctx_);
  std::string text = Render({&record, 1}, true);
  EXPECT_NE(text.find(" State=IDLE+DRAIN "), std::string::npos) << text;
  EXPECT_NE(text.find(" Partitions=debug  BootTime"), std::string::npos) << text;
  EXPECT_TRUE(text.ends_with(" Reason=bad fan [root@2026-11-29T15:10:55]\n")) << text;
}

TEST_F(ScontrolFormat, Reservation) {
  v1::Reservation reservation;
  reservation.set_name("maint");
  reservation.set_start_time(k151055);
  reservation.set_end_time(k151055 + 3600);
  reservation.add_nodes("n1");
  reservation.add_nodes("n2");
  reservation.set_node_list("n[1-2]");
  reservation.add_users("root");
  reservation.add_flags("MAINT");
  Record record = ReservationRecord(reservation, ctx_);
  EXPECT_EQ(Render({&record, 1}, false),
            "ReservationName=maint StartTime=2026-11-29T15:10:55 EndTime=2026-11-29T16:10:55 "
            "Duration=01:00:00\n"
            "   Nodes=n[1-2] NodeCnt=2 CoreCnt=16 Features=(null) PartitionName=(null) "
            "Flags=MAINT,SPEC_NODES\n"
            "   TRES=cpu=16\n"
            "   Users=root Groups=(null) Accounts=(null) Licenses=(null) State=ACTIVE "
            "BurstBuffer=(null) Watts=n/a\n"
            "   MaxStartDelay=(null)\n\n");
}

// write config: Slurm's banner and sections, values cut as Slurm cuts them, nodes alike on one
// line (the live weight of one sets it apart), the controller's partitions; and it loads again.
TEST_F(ScontrolFormat, WriteConfigAsSlurmWritesIt) {
  v1::NodeStatus n1;
  n1.set_name("n1");
  n1.set_weight(5);
  v1::Partition debug;
  debug.set_name("debug");
  debug.set_is_default(true);
  debug.set_node_list("n[1-4]");
  debug.set_max_time_seconds(kUnlimitedSeconds);
  debug.set_default_time_seconds(-1);
  debug.set_state("UP");
  debug.set_priority_job_factor(1);
  debug.set_priority_tier(1);
  v1::Partition spare = debug;
  spare.set_name("spare");
  spare.set_is_default(false);
  spare.set_max_time_seconds(300);
  spare.set_node_list("n4");
  std::vector<v1::Partition> partitions = {debug, spare};
  std::string text = WriteConfigText(cluster_, std::span(&n1, 1), partitions, "2026-11-29T15:11:03",
                                     "/etc/slurm/slurm.conf");
  EXPECT_TRUE(
      text.starts_with("########################################################\n"
                       "#  Configuration file for Slurm - 2026-11-29T15:11:03  #\n"
                       "########################################################\n"
                       "#\n#\n"
                       "#\n################################################\n"
                       "#                   CONTROL                    #\n"))
      << text;
  for (const char* line :
       {"\nClusterName=anchor\n", "\nSlurmctldHost=localhost\n", "\nDefMemPerCPU=100\n",
        "\nMaxJobCount=50000\n", "\nSelectTypeParameters=CR_CORE_MEMORY\n",
        "\n#                    TIMERS                    #\n",
        "\nNodeName=n1 NodeHostName=localhost NodeAddr=127.0.0.1 Sockets=1 CoresPerSocket=8 "
        "ThreadsPerCore=1 Gres=gpu:2 RealMemory=4000 Weight=5\n",
        "\nNodeName=n[2-4] NodeHostName=localhost NodeAddr=127.0.0.1 Sockets=1 CoresPerSocket=8 "
        "ThreadsPerCore=1 Gres=gpu:2 RealMemory=4000\n",
        "\nPartitionName=debug Default=YES MinNodes=0 Nodes=n[1-4] State=UP\n",
        "\nPartitionName=spare MaxTime=00:05:00 MinNodes=0 Nodes=n4 State=UP\n"})
    EXPECT_NE(text.find(line), std::string::npos) << line << text;
  EXPECT_EQ(text.find("SLURM_CONF"), std::string::npos);
  EXPECT_EQ(text.find(" sec\n"), std::string::npos) << "values are cut at their first space";
  ConfigLoad again = LoadClusterConfigText(text, std::string(kGresConf));
  ASSERT_TRUE(again.ok()) << again.ErrorText() << text;
  EXPECT_EQ(again.config.partitions.size(), 2u);
  EXPECT_EQ(again.config.nodes[0].weight, 5u);
}

TEST_F(ScontrolFormat, ConfigLinesAsSlurmPrintsThem) {
  std::string text = ConfigText(cluster_, kNow, "/etc/slurm/slurm.conf");
  EXPECT_EQ(text.substr(0, text.find('\n')), "Configuration data as of 2026-11-29T15:11:03");
  std::string slurm;
  {
    std::ifstream in(std::string(SCONTROL_GOLDEN_DIR) + "/scontrol_config_slurm.txt");
    std::stringstream buffer;
    buffer << in.rdbuf();
    slurm = buffer.str();
  }
  for (const char* line :
       {"ClusterName             = anchor\n", "DefMemPerCPU            = 100\n",
        "MaxJobCount             = 50000\n", "SelectTypeParameters    = CR_CORE_MEMORY\n",
        "SelectType              = select/cons_tres\n", "SlurmctldPort           = 6817\n",
        "SlurmctldHost[0]        = localhost(127.0.0.1)\n", "MaxArraySize            = 1001\n",
        "SLURM_CONF              = /etc/slurm/slurm.conf\n", "MaxNodeCount            = 4\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << text;
    if (std::string_view(line).starts_with("SlurmctldHost")) continue;  // "vm" there
    EXPECT_NE(slurm.find(line), std::string::npos) << line;
  }
}

TEST_F(ScontrolFormat, JsonIsValidAndUsesSlurmsNames) {
  std::vector<v1::Job> jobs = {Running26517()};
  auto parsed = nlohmann::json::parse(JobsJson(jobs, ctx_));
  const auto& job = parsed.at("jobs").at(0);
  EXPECT_EQ(job.at("job_id"), 26517);
  EXPECT_EQ(job.at("name"), "runner");
  EXPECT_EQ(job.at("job_state"), "RUNNING");
  EXPECT_EQ(job.at("nodes"), "n[1-2]");
  EXPECT_EQ(job.at("batch_host"), "n1");
  EXPECT_EQ(job.at("priority"), 4294895507LL);
  EXPECT_TRUE(job.at("time_limit").is_null());
  EXPECT_EQ(job.at("tres_alloc_str"), "cpu=2,mem=200M,node=2,billing=2,gres/gpu=2");
  EXPECT_EQ(job.at("tres_per_node"), "gres:gpu:1");

  v1::NodeStatus node;
  node.set_name("n1");
  node.set_reason("quote \" and\nnewline");
  std::vector<v1::NodeStatus> nodes = {node};
  auto node_json = nlohmann::json::parse(NodesJson(nodes, jobs, ctx_)).at("nodes").at(0);
  EXPECT_EQ(node_json.at("reason"), "quote \" and\nnewline");
  EXPECT_EQ(node_json.at("partitions"), nlohmann::json::array({"debug"}));
  EXPECT_EQ(node_json.at("alloc_cpus"), 1);

  EXPECT_EQ(nlohmann::json::parse(ReservationsJson({}, ctx_)).at("reservations").size(), 0u);
}

}  // namespace
}  // namespace drover::cli::scontrol
