// scontrol listpids and pidinfo without a cluster: the JOBID[.STEPID] argument, Slurm's lines,
// the end time pidinfo prints, and which nodes this host is.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "cli/scontrol/scontrol_pids.h"
#include "common/agent_address.h"

namespace drover::cli::scontrol {
namespace {

namespace fs = std::filesystem;

TEST(ScontrolPids, ParsesJobAndStep) {
  auto all = ParsePidsTarget("*");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->job_id(), 0u);
  EXPECT_EQ(ParsePidsTarget("")->job_id(), 0u);
  auto job = ParsePidsTarget("12");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->job_id(), 12u);
  EXPECT_FALSE(job->has_step_id());
  EXPECT_EQ(ParsePidsTarget("12.3")->step_id(), 3u);
  EXPECT_EQ(ParsePidsTarget("12.batch")->step_id(), 4294967294u);
  EXPECT_EQ(ParsePidsTarget("12.extern")->step_id(), 4294967291u);
  for (const char* bad : {"x", "12.", "12.x", "0", "12.4294967295"}) {
    auto parsed = ParsePidsTarget(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.error(), std::string("Invalid job id: ") + bad);
  }
}

TEST(ScontrolPids, PrintsSlurmsColumns) {
  v1::ListPidsReply reply;
  auto* task = reply.add_pids();
  task->set_job_id(12);
  task->set_step_id(0);
  task->set_pid(4321);
  task->set_local_task(0);
  task->set_global_task(2);
  auto* other = reply.add_pids();
  other->set_job_id(12);
  other->set_step_id(4294967294u);
  other->set_pid(4400);
  other->set_local_task(-1);
  other->set_global_task(-1);
  EXPECT_EQ(PidsText(reply),
            "PID      JOBID    STEPID LOCALID GLOBALID\n"
            "4321     12       0      0       2       \n"
            "4400     12       batch  -       -       \n");
}

TEST(ScontrolPids, SaysWhatDoesNotExist) {
  EXPECT_EQ(NoPidsText(*ParsePidsTarget("")), "No job steps exist on this node.");
  EXPECT_EQ(NoPidsText(*ParsePidsTarget("7")), "Job 7 does not exist on this node.");
  EXPECT_EQ(NoPidsText(*ParsePidsTarget("7.batch")),
            "Job step 7.batch does not exist on this node.");
}

TEST(ScontrolPids, PrintsTheEndAsSlurmCtime) {
  setenv("TZ", "UTC", 1);
  tzset();
  // 2026-12-02 10:00:00 UTC
  EXPECT_EQ(PidInfoText(12, 1796205600, 1796202000),
            "Slurm job id 12 ends at Wed Dec 02 10:00:00 2026\nslurm_get_rem_time is 3600\n");
  EXPECT_EQ(PidInfoText(12, 1796205600, 1796209999).substr(49), "slurm_get_rem_time is 0\n");
}

TEST(ScontrolPids, EndTimeOfRunningAndUnlimitedJobs) {
  v1::Job job;
  job.set_state("RUNNING");
  job.set_start_time(1000);
  job.set_time_limit_seconds(600);
  job.set_suspended_seconds(50);
  EXPECT_EQ(JobEndTime(job), 1650);
  job.set_time_limit_seconds(INT64_MAX);
  EXPECT_EQ(JobEndTime(job), 1000 + 365 * 24 * 3600);
  job.set_state("COMPLETED");
  job.set_end_time(1200);
  EXPECT_EQ(JobEndTime(job), 1200);
}

TEST(ScontrolPids, FindsThisHostsNodes) {
  ClusterConfig cluster;
  cluster.nodes.resize(3);
  cluster.nodes[0].name = "a1";
  cluster.nodes[0].hostname = "box";
  cluster.nodes[1].name = "a2";
  cluster.nodes[1].hostname = "other";
  cluster.nodes[2].name = "box2";
  EXPECT_EQ(LocalNodes(cluster, "box.example.org", ""), std::vector<std::string>{"a1"});
  EXPECT_EQ(LocalNodes(cluster, "box", "a2"), std::vector<std::string>{"a2"});
  // No name matches: the nodes whose agents left their address in their spool here.
  fs::path spool = fs::temp_directory_path() / ("scontrol_pids_test_" + std::to_string(getpid()));
  cluster.settings.slurmd_spool_dir = (spool / "%n").string();
  fs::create_directories(spool / "a2");
  ASSERT_TRUE(WriteAgentAddress(spool / "a2", "127.0.0.1:1").ok());
  std::vector<std::string> found = LocalNodes(cluster, "elsewhere", "");
  fs::remove_all(spool);
  EXPECT_EQ(found, std::vector<std::string>{"a2"});
}

// show slurmd prints slurm_print_slurmd_status's lines.
TEST(ScontrolPids, SlurmdStatusAsSlurmPrintsIt) {
  setenv("TZ", "UTC", 1);
  tzset();
  v1::AgentStatusReply status;
  status.set_cpus(16);
  status.set_boards(1);
  status.set_sockets(2);
  status.set_cores_per_socket(8);
  status.set_threads_per_core(1);
  status.set_real_memory_mb(64000);
  status.set_tmp_disk_mb(51175);
  status.set_boot_time(1764600000);
  status.set_hostname("box");
  status.set_pid(4242);
  status.set_debug_level(3);
  status.set_log_file("/var/log/drover/node1.log");
  status.set_version("22.05.8 (drover 0.1.0)");
  std::string text = SlurmdStatusText(status);
  EXPECT_EQ(text,
            "Active Steps             = NONE\n"
            "Actual CPUs              = 16\n"
            "Actual Boards            = 1\n"
            "Actual sockets           = 2\n"
            "Actual cores             = 8\n"
            "Actual threads per core  = 1\n"
            "Actual real memory       = 64000 MB\n"
            "Actual temp disk space   = 51175 MB\n"
            "Boot time                = 2025-12-01T14:40:00\n"
            "Hostname                 = box\n"
            "Last slurmctld msg time  = NONE\n"
            "Slurmd PID               = 4242\n"
            "Slurmd Debug             = 3\n"
            "Slurmd Logfile           = /var/log/drover/node1.log\n"
            "Version                  = 22.05.8 (drover 0.1.0)\n");
  status.add_active_steps("12.batch");
  status.add_active_steps("12.0");
  status.set_last_controller_message(1764600060);
  text = SlurmdStatusText(status);
  EXPECT_NE(text.find("Active Steps             = 12.batch, 12.0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Last slurmctld msg time  = 2025-12-01T14:41:00\n"), std::string::npos);
}

}  // namespace
}  // namespace drover::cli::scontrol
