// sreport's reports from fabricated job histories: usage within the window, the columns'
// widths and justification, percentages, the account tree and the job size buckets.
#include "cli/formats/sreport_format.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace drover::cli {
namespace {

ClusterConfig Cluster() {
  ConfigLoad load = LoadClusterConfigText(
      "ClusterName=tux\nGresTypes=gpu\nNodeName=n[1-2] CPUs=4 RealMemory=1000 Gres=gpu:2\n"
      "PartitionName=p Nodes=ALL Default=YES\n");
  EXPECT_TRUE(load.ok());
  return load.config;
}

v1::Job Ran(const std::string& account, const std::string& user, int cores, int gpus, int64_t start,
            int64_t end) {
  v1::Job job;
  job.mutable_spec()->set_account(account);
  job.mutable_spec()->set_user(user);
  job.set_state("COMPLETED");
  job.set_start_time(start);
  job.set_end_time(end);
  v1::NodeAllocation* node = job.add_allocation();
  node->set_node(0);
  for (int c = 0; c < cores; ++c) node->add_cores(c);
  for (int g = 0; g < gpus; ++g) node->add_gpus(g);
  return job;
}

SreportOptions Options() {
  SreportOptions options;
  options.cluster = "tux";
  options.start = 36000;
  options.end = 36000 + 3600;
  options.time = SreportTime::kSeconds;
  options.parsable2 = true;
  options.no_header = true;
  return options;
}

TEST(Sreport, ClusterUtilizationCountsWhatJobsHeldWithinTheWindow) {
  ClusterConfig cluster = Cluster();
  // 2 CPUs for the last 600 s of the window (it started before), 1 CPU for 100 s, one after.
  std::vector<v1::Job> jobs = {Ran("a", "alice", 2, 1, 36000 - 500, 36600),
                               Ran("b", "bob", 1, 0, 37000, 37100),
                               Ran("b", "bob", 4, 0, 40000, 40100)};
  SreportOptions options = Options();
  EXPECT_EQ(FormatClusterUtilization(cluster, jobs, options), "tux|1300|0|0|27500|0|28800\n");
  options.tres = {"gres/gpu"};
  EXPECT_EQ(FormatClusterUtilization(cluster, jobs, options),
            "tux|gres/gpu|600|0|0|13800|0|14400\n");
  options = Options();
  options.parsable2 = false;
  options.no_header = false;
  options.time = SreportTime::kMinutes;
  std::string text = FormatClusterUtilization(cluster, jobs, options);
  EXPECT_NE(text.find("Usage reported in CPU Minutes\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  Cluster Allocate     Down PLND Dow     Idle  Planned Reported \n"
                      "--------- -------- -------- -------- -------- -------- -------- \n"
                      "      tux       22        0        0      458        0      480 \n"),
            std::string::npos)
      << text;
  options.time = SreportTime::kHourPer;
  text = FormatClusterUtilization(cluster, jobs, options);
  EXPECT_NE(text.find("   0(4.51%) "), std::string::npos) << text;
}

TEST(Sreport, AccountUtilizationFollowsTheTreeAndTopUsageSortsUsers) {
  ClusterConfig cluster = Cluster();
  acct::Database accounting = acct::Database::Initial("tux");
  std::vector<v1::Job> jobs = {Ran("a", "alice", 2, 0, 36000, 36600),
                               Ran("b", "bob", 1, 0, 36000, 36100),
                               Ran("a", "carol", 4, 0, 36000, 36300)};
  SreportOptions options = Options();
  options.proper_name = [](const std::string& user) { return "Dr " + user; };
  EXPECT_EQ(FormatAccountUtilizationByUser(cluster, accounting, jobs, options),
            "tux|root|||2500|0\n"
            "tux|a|||2400|0\n"
            "tux|a|alice|Dr alice|1200|0\n"
            "tux|a|carol|Dr carol|1200|0\n"
            "tux|b|||100|0\n"
            "tux|b|bob|Dr bob|100|0\n");
  EXPECT_EQ(FormatTopUsage(cluster, jobs, options),
            "tux|alice|Dr alice|a|1200|0\n"
            "tux|carol|Dr carol|a|1200|0\n"
            "tux|bob|Dr bob|b|100|0\n");
  options.top = 1;
  EXPECT_EQ(FormatTopUsage(cluster, jobs, options), "tux|alice|Dr alice|a|1200|0\n");
}

TEST(Sreport, JobSizesGoInTheirBuckets) {
  ClusterConfig cluster = Cluster();
  acct::Database accounting = acct::Database::Initial("tux");
  std::vector<v1::Job> jobs = {Ran("a", "alice", 2, 0, 36000, 36600),
                               Ran("b", "bob", 4, 0, 36000, 36100)};
  SreportOptions options = Options();
  options.grouping = {3};
  EXPECT_EQ(*FormatJobSizesByAccount(cluster, accounting, jobs, options),
            "tux|root|1200|400|100.00%\n");
  options.flat_view = true;
  options.print_job_count = true;
  EXPECT_EQ(*FormatJobSizesByAccount(cluster, accounting, jobs, options),
            "tux|a|1|0|50.00%\n"
            "tux|b|0|1|50.00%\n");
  options.tres = {"cpu", "mem"};
  EXPECT_FALSE(FormatJobSizesByAccount(cluster, accounting, jobs, options).ok());
}

TEST(Sreport, TimeFormatsAndTheWindow) {
  EXPECT_EQ(ParseSreportTime("hourper"), SreportTime::kHourPer);
  EXPECT_EQ(ParseSreportTime("h"), SreportTime::kHours);
  EXPECT_EQ(ParseSreportTime("p"), SreportTime::kPercent);
  EXPECT_EQ(ParseSreportTime("minper"), SreportTime::kMinPer);
  EXPECT_FALSE(ParseSreportTime("fortnights").has_value());
  setenv("TZ", "UTC", 1);
  tzset();
  SreportOptions options;
  int64_t now = 1775001600 + 3600 * 10 + 40 * 60;  // 2026-04-01 10:40 UTC
  SreportWindow(options, std::nullopt, std::nullopt, now);
  EXPECT_EQ(options.start, 1775001600 - 86400);  // yesterday's midnight
  EXPECT_EQ(options.end, 1775001600);            // today's
  SreportWindow(options, now - 3 * 3600 + 20 * 60, now + 3600, now);
  EXPECT_EQ(options.start, 1775001600 + 3600 * 8);  // 8:00 (7:40 + 20 min: nearest hour)
  EXPECT_EQ(options.end, 1775001600 + 3600 * 11);   // now, rounded up to 11:00
}

}  // namespace
}  // namespace drover::cli
