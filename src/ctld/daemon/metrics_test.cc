// /metrics tests: a real Engine on a manual clock produces the snapshot, RenderMetrics renders
// it, and promtool (when installed) lints the result; HttpServer serves it to httplib's client.
#include "ctld/daemon/metrics.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ctld/daemon/http_server.h"

namespace drover::ctld {
namespace {

// n1 has typed GPUs, n2 untyped ones; n3 is drained so the unavailable family has a sample.
constexpr const char* kCluster =
    "ClusterName=t\nGresTypes=gpu\nDefMemPerCPU=100\nMinJobAge=300\n"
    "NodeName=n1 CPUs=8 RealMemory=8000 Gres=gpu:h100:2\n"
    "NodeName=n2 CPUs=8 RealMemory=8000 Gres=gpu:2\n"
    "NodeName=n3 CPUs=4 RealMemory=4000\n"
    "PartitionName=p Nodes=ALL Default=YES MaxTime=2:00:00\n"
    "PartitionName=cpu Nodes=n3\n";

class MetricsTest : public ::testing::Test {
 protected:
  MetricsTest() : load_(LoadClusterConfigText(kCluster)), engine_(load_.config, clock_) {
    EXPECT_TRUE(load_.ok());
    Apply(NodeRegistered{"n1", {}}, NodeRegistered{"n2", {}}, NodeRegistered{"n3", {}});
    Apply(UpdateNode{++token_, Caller{0, 0, true}, "n3", UpdateNode::Action::kDrain,
                     "fan \"2\" failed\\again"});
  }

  template <typename... Events>
  void Apply(Events... events) {
    std::vector<Event> batch{Event(std::move(events))...};
    engine_.Apply(std::move(batch));
  }

  uint64_t Submit(JobSpec spec) {
    spec.user = "alice";
    spec.account = "research";
    spec.time_limit_seconds = 3600;
    Apply(SubmitJob{++token_, Caller{1000, 1000}, spec, "", "#!/bin/sh\n"});
    return engine_.next_job_id() - 1;
  }

  std::string Render() {
    stats_.commit_seconds.Observe(0.0007);
    stats_.commit_seconds.Observe(0.003);
    stats_.cycle_seconds.Observe(0.02);
    stats_.batches = 7;
    return RenderMetrics(load_.config, *engine_.Publish(), stats_);
  }

  ManualClock clock_;
  ConfigLoad load_;
  Engine engine_;
  LoopStats stats_;
  uint64_t token_ = 0;
};

JobSpec Shape(uint32_t cpus, uint32_t gpus, const std::string& gpu_type = "") {
  JobSpec spec;
  spec.cpus_per_task = cpus;
  spec.gpus_per_node = gpus;
  spec.gpu_type = gpu_type;
  return spec;
}

// The lines of `text` that `line` equals: one when present once.
int Count(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  int found = 0;
  for (std::string l; std::getline(in, l);) found += l == line;
  return found;
}

#define EXPECT_LINE(text, line) EXPECT_EQ(Count(text, line), 1) << "missing: " << (line)

TEST_F(MetricsTest, StartsWaitsAndGpusByAccount) {
  uint64_t first = Submit(Shape(1, 2, "h100"));  // starts at once: waited 0 s
  Submit(Shape(1, 2, "h100"));                   // n1's GPUs are taken: waits
  clock_.Advance(45);
  Submit(Shape(1, 1));                 // n2: starts at once
  Apply(JobEnded{first, "n1", 0, 0});  // the second starts, 45 s after its submission
  std::string text = Render();
  EXPECT_LINE(text, "drover_jobs_started_total 3");
  EXPECT_LINE(text, "drover_job_wait_seconds_bucket{le=\"1\"} 2");
  EXPECT_LINE(text, "drover_job_wait_seconds_bucket{le=\"30\"} 2");
  EXPECT_LINE(text, "drover_job_wait_seconds_bucket{le=\"60\"} 3");
  EXPECT_LINE(text, "drover_job_wait_seconds_bucket{le=\"+Inf\"} 3");
  EXPECT_LINE(text, "drover_job_wait_seconds_sum 45");
  EXPECT_LINE(text, "drover_job_wait_seconds_count 3");
  // Accounts sacctmgr does not know are "other": a job's own account is never a label.
  EXPECT_LINE(text, "drover_gpus_allocated_by_account{account=\"other\"} 3");  // 2 + 1
  EXPECT_EQ(text.find("drover_gpus_allocated_by_account{account=\"research\"}"), std::string::npos);
}

TEST_F(MetricsTest, QueueNodesAndResources) {
  Submit(Shape(8, 2, "h100"));          // all of n1: ALLOCATED
  Submit(Shape(2, 2));                  // n2's two untyped GPUs: n2 MIXED
  Submit(Shape(1, 0));                  // n2 as well
  uint64_t done = Submit(Shape(1, 0));  // n2, then COMPLETED
  Apply(JobEnded{done, "n2", 0, 0});
  Submit(Shape(1, 1));  // no GPU left: pending
  std::string text = Render();
  EXPECT_LINE(text, "drover_jobs{state=\"RUNNING\",partition=\"p\"} 3");
  EXPECT_LINE(text, "drover_jobs{state=\"PENDING\",partition=\"p\"} 1");
  EXPECT_LINE(text, "drover_jobs{state=\"COMPLETED\",partition=\"p\"} 1");
  EXPECT_LINE(text, "drover_jobs{state=\"PENDING\",partition=\"cpu\"} 0");
  EXPECT_LINE(text, "drover_jobs_pending{reason=\"Resources\"} 1");
  EXPECT_LINE(text, "drover_jobs_pending{reason=\"Dependency\"} 0");
  EXPECT_LINE(text, "drover_nodes{state=\"ALLOCATED\"} 1");
  EXPECT_LINE(text, "drover_nodes{state=\"MIXED\"} 1");
  EXPECT_LINE(text, "drover_nodes{state=\"DRAINED\"} 1");
  EXPECT_LINE(text, "drover_nodes{state=\"IDLE\"} 0");
  EXPECT_LINE(text,
              "drover_nodes_unavailable{state=\"DRAINED\",reason=\"fan \\\"2\\\" "
              "failed\\\\again\"} 1");
  EXPECT_LINE(text, "drover_cpus_configured{partition=\"p\"} 20");
  EXPECT_LINE(text, "drover_cpus_allocated{partition=\"p\"} 11");
  EXPECT_LINE(text, "drover_cpus_allocated{partition=\"cpu\"} 0");
  EXPECT_LINE(text, "drover_memory_bytes_configured{partition=\"p\"} 20971520000");
  EXPECT_LINE(text, "drover_memory_bytes_allocated{partition=\"p\"} 1153433600");
  EXPECT_LINE(text, "drover_gpus_configured{partition=\"p\",type=\"h100\"} 2");
  EXPECT_LINE(text, "drover_gpus_configured{partition=\"p\",type=\"\"} 2");
  EXPECT_LINE(text, "drover_gpus_allocated{partition=\"p\",type=\"h100\"} 2");
  EXPECT_LINE(text, "drover_gpus_allocated{partition=\"p\",type=\"\"} 2");
  EXPECT_LINE(text, "drover_jobs_submitted_total 5");
  EXPECT_LINE(text, "drover_jobs_finished_total{state=\"COMPLETED\"} 1");
  EXPECT_LINE(text, "drover_jobs_finished_total{state=\"TIMEOUT\"} 0");
  EXPECT_LINE(text, "drover_fairshare_usage{account=\"research\"} 0");
}

TEST_F(MetricsTest, Histograms) {
  std::string text = Render();
  EXPECT_LINE(text, "# TYPE drover_store_commit_seconds histogram");
  EXPECT_LINE(text, "drover_store_commit_seconds_bucket{le=\"0.0005\"} 0");
  EXPECT_LINE(text, "drover_store_commit_seconds_bucket{le=\"0.001\"} 1");
  EXPECT_LINE(text, "drover_store_commit_seconds_bucket{le=\"1\"} 2");
  EXPECT_LINE(text, "drover_store_commit_seconds_bucket{le=\"+Inf\"} 2");
  EXPECT_LINE(text, "drover_store_commit_seconds_sum 0.0037");
  EXPECT_LINE(text, "drover_store_commit_seconds_count 2");
  EXPECT_LINE(text, "drover_scheduler_cycle_seconds_bucket{le=\"0.025\"} 1");
  EXPECT_LINE(text, "drover_scheduler_cycle_seconds_count 1");
  EXPECT_LINE(text, "drover_engine_batches_total 7");
}

// Reasons are cut to 64 characters, and beyond the 20 most frequent they become "other".
TEST_F(MetricsTest, UnavailableReasonsAreBounded) {
  std::string slurm =
      "ClusterName=t\nNodeName=n[1-30] CPUs=1 RealMemory=100\n"
      "PartitionName=p Nodes=ALL Default=YES\n";
  ConfigLoad load = LoadClusterConfigText(slurm);
  ASSERT_TRUE(load.ok());
  Snapshot snapshot;
  snapshot.nodes.resize(30);
  for (int n = 0; n < 30; ++n) {
    snapshot.nodes[n].registered = true;
    snapshot.nodes[n].down = true;
    snapshot.nodes[n].reason = n < 4 ? std::string(100, 'x') : "reason " + std::to_string(n);
  }
  std::string text = RenderMetrics(load.config, snapshot, stats_);
  EXPECT_LINE(text,
              "drover_nodes_unavailable{state=\"DOWN\",reason=\"" + std::string(64, 'x') + "\"} 4");
  EXPECT_LINE(text, "drover_nodes_unavailable{state=\"DOWN\",reason=\"other\"} 7");
  // Ties go by name: "reason 10" is among the 19 singles kept, "reason 4" is not.
  EXPECT_LINE(text, "drover_nodes_unavailable{state=\"DOWN\",reason=\"reason 10\"} 1");
  EXPECT_EQ(Count(text, "drover_nodes_unavailable{state=\"DOWN\",reason=\"reason 4\"} 1"), 0);
}

// promtool's lint is the reference for the format: any line it prints is a problem.
TEST_F(MetricsTest, PromtoolFindsNoProblems) {
  if (!std::filesystem::exists("/usr/bin/promtool"))
    GTEST_SKIP() << "promtool not installed (Debian package prometheus)";
  Submit(Shape(8, 2));
  Submit(Shape(1, 1));
  std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("drover_metrics_" + std::to_string(getpid()));
  std::ofstream(file) << Render();
  std::string command = "/usr/bin/promtool check metrics < " + file.string() + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  int status = pclose(pipe);
  std::filesystem::remove(file);
  EXPECT_EQ(output, "");
  EXPECT_EQ(status, 0);
}

TEST(HttpServerTest, ServesMetrics) {
  HttpServer server([] { return std::string("drover_up 1\n"); });
  ASSERT_TRUE(server.Start("127.0.0.1", 0));
  ASSERT_GT(server.port(), 0);
  httplib::Client client("127.0.0.1", server.port());
  httplib::Result metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics) << httplib::to_string(metrics.error());
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->body, "drover_up 1\n");
  EXPECT_EQ(metrics->get_header_value("Content-Type"), "text/plain; version=0.0.4");
  httplib::Result root = client.Get("/");
  ASSERT_TRUE(root);
  EXPECT_EQ(root->status, 200);
  EXPECT_FALSE(root->body.empty());
  server.Stop();
}

TEST(HttpServerTest, StopRightAfterStartAndBusyPort) {
  HttpServer first([] { return std::string(); });
  ASSERT_TRUE(first.Start("127.0.0.1", 0));
  HttpServer second([] { return std::string(); });
  EXPECT_FALSE(second.Start("127.0.0.1", first.port()));
  first.Stop();
  first.Stop();  // idempotent
}

}  // namespace
}  // namespace drover::ctld
