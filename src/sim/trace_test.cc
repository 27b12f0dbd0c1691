// The trace readers: SWF (comments, the field fallbacks, malformed lines skipped and counted or,
// with --strict, an error naming the line), Alibaba pod lists, sacct --json, and the example
// traces shipped in bench/traces.
#include "sim/trace.h"

#include <gtest/gtest.h>

#include <sstream>

#include "sim/cluster_source.h"

namespace drover::sim {
namespace {

Result<Trace> Swf(const std::string& text, bool strict = false) {
  std::istringstream in(text);
  return ReadSwf(in, "t.swf", {strict});
}

TEST(Swf, FieldsAndTheirFallbacks) {
  auto trace = Swf(
      "; MaxProcs: 100\n"
      "\n"
      "  7  50 -1 300  4 -1 -1  8  600 -1 1 12 3 -1 -1 -1 -1 -1\n"     // 8 asked, 600 s limit
      "  5  10 -1 100  2 -1 -1 -1   -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n");  // -1: allocated, run time
  ASSERT_TRUE(trace) << trace.error();
  ASSERT_EQ(trace->jobs.size(), 2u);
  const TraceJob& first = trace->jobs[0];  // sorted by submit time
  EXPECT_EQ(first.id, 5u);
  EXPECT_EQ(first.cpus, 2u);
  EXPECT_EQ(first.limit_seconds, 100);
  EXPECT_EQ(first.user, "user");
  const TraceJob& second = trace->jobs[1];
  EXPECT_EQ(second.submit_time, 50);
  EXPECT_EQ(second.run_seconds, 300);
  EXPECT_EQ(second.cpus, 8u);
  EXPECT_EQ(second.limit_seconds, 600);
  EXPECT_EQ(second.user, "user12");
  EXPECT_EQ(second.account, "group3");
}

constexpr const char* kBad =
    "1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n"
    "2 0 -1 10\n"                                         // line 2: too few fields
    "3 0 -1 10 x -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n"    // line 3: not a number
    "4 0 -1 10 -1 -1 -1 -1 10 -1 1 1 1 -1 -1 -1 -1 -1\n"  // line 4: no processors
    "5 0 -1 -5 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n";   // line 5: negative run time

TEST(Swf, MalformedLinesAreSkippedAndCounted) {
  auto trace = Swf(kBad);
  ASSERT_TRUE(trace) << trace.error();
  EXPECT_EQ(trace->jobs.size(), 1u);
  EXPECT_EQ(trace->skipped.at("malformed line"), 2u);
  EXPECT_EQ(trace->skipped.at("no processors"), 1u);
  EXPECT_EQ(trace->skipped.at("negative run time"), 1u);
}

TEST(Swf, StrictMakesTheFirstBadLineAnErrorWithItsNumber) {
  auto trace = Swf(kBad, true);
  ASSERT_FALSE(trace);
  EXPECT_EQ(trace.error().rfind("t.swf:2: malformed line: 4 fields, SWF has 18", 0), 0u)
      << trace.error();
}

TEST(Alibaba, PodsWithFractionalGpusAndTheNeverScheduled) {
  std::istringstream in(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time\n"
      "p0,12000,16384,1,1000,,LS,Running,0,500,0\n"
      "p1,6500,12288,1,460,V100M16|V100M32,BE,Succeeded,100,400,150\n"
      "p2,1000,100,1,1000,,BE,Pending,200,300,\n"
      "p3,1000,100,oops,1000,,BE,Running,200,300,200\n");
  auto trace = ReadAlibabaPods(in, "pods.csv", {});
  ASSERT_TRUE(trace) << trace.error();
  ASSERT_EQ(trace->jobs.size(), 2u);
  EXPECT_EQ(trace->jobs[0].cpus, 12u);
  EXPECT_EQ(trace->jobs[0].run_seconds, 500);
  EXPECT_EQ(trace->jobs[0].account, "LS");
  const TraceJob& shared = trace->jobs[1];
  EXPECT_EQ(shared.cpus, 7u);          // 6.5 CPUs, rounded up
  EXPECT_EQ(shared.submit_time, 100);  // created
  EXPECT_EQ(shared.run_seconds, 250);  // from its scheduling to its deletion
  EXPECT_EQ(shared.gpu_milli, 460u);
  EXPECT_EQ(shared.gpu_type, "V100M16|V100M32");
  EXPECT_EQ(trace->skipped.at("never scheduled in the trace"), 1u);
  EXPECT_EQ(trace->skipped.at("malformed line"), 1u);
  std::istringstream strict(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time\np3,1000,100,oops,1000,,BE,Running,200,300,200\n");
  auto refused = ReadAlibabaPods(strict, "pods.csv", {true});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().rfind("pods.csv:2: malformed line", 0), 0u) << refused.error();
  std::istringstream headless("a,b\n1,2\n");
  EXPECT_FALSE(ReadAlibabaPods(headless, "x.csv", {}));
}

TEST(SacctJson, JobsThatRanWithTheirRequests) {
  std::istringstream in(R"({"jobs": [
    {"job_id": 7, "user": "alice", "account": "ml", "partition": "gpu",
     "time": {"submission": 100, "start": 160, "end": 460, "limit": 10},
     "required": {"CPUs": 16, "memory": 64000},
     "tres": {"requested": [{"type": "cpu", "count": 16}, {"type": "node", "count": 2},
                            {"type": "gres", "name": "gpu", "count": 16}]}},
    {"job_id": 8, "time": {"submission": 100, "start": 0, "end": 0}}
  ]})");
  auto trace = ReadSacctJson(in, "history.json", {});
  ASSERT_TRUE(trace) << trace.error();
  ASSERT_EQ(trace->jobs.size(), 1u);
  const TraceJob& job = trace->jobs[0];
  EXPECT_EQ(job.submit_time, 100);
  EXPECT_EQ(job.run_seconds, 300);
  EXPECT_EQ(job.limit_seconds, 600);
  EXPECT_EQ(job.nodes, 2u);
  EXPECT_EQ(job.gpus, 16u);
  EXPECT_EQ(job.cpus, 16u);
  EXPECT_EQ(trace->skipped.at("never ran"), 1u);
  std::istringstream broken("{\"jobs\": [");
  EXPECT_FALSE(ReadSacctJson(broken, "broken.json", {}));
}

// A count too large for 64 bits (a float to the JSON parser), a fraction or a negative count
// makes the job malformed; converting it was undefined (fuzz_trace found the first).
TEST(SacctJson, CountsOutOfRangeMakeTheJobMalformed) {
  std::istringstream in(R"({"jobs": [
    {"job_id": 7111111111111111111111111111111111111111111111111, "time": {"start": 2, "end": 5}},
    {"job_id": 9, "time": {"start": 2, "end": 5}, "required": {"CPUs": 2.5}},
    {"job_id": 10, "time": {"start": 2, "end": 5},
     "tres": {"requested": [{"type": "node", "count": -1}]}},
    {"job_id": 11, "time": {"start": 2, "end": 5}, "required": {"CPUs": 4294967296}},
    {"job_id": 12, "time": {"start": 2, "end": 5}, "required": {"CPUs": 3}}
  ]})");
  auto trace = ReadSacctJson(in, "history.json", {});
  ASSERT_TRUE(trace) << trace.error();
  ASSERT_EQ(trace->jobs.size(), 1u);
  EXPECT_EQ(trace->jobs[0].id, 12u);
  EXPECT_EQ(trace->jobs[0].cpus, 3u);
  EXPECT_EQ(trace->skipped.at("malformed job"), 4u);
}

TEST(Traces, TheShippedExamplesRead) {
  std::string dir = std::string(DROVER_SOURCE_DIR) + "/bench/traces/";
  auto kth = ReadTrace(dir + "KTH-SP2-1996-2.1-cln.swf.gz");
  ASSERT_TRUE(kth) << kth.error();
  uint64_t skipped = 0;
  for (const auto& [why, count] : kth->skipped) skipped += count;
  EXPECT_EQ(kth->jobs.size() + skipped, 27992u);  // its job lines (the cleaned log's)
  auto lublin = ReadTrace(dir + "lublin_256.swf");
  ASSERT_TRUE(lublin) << lublin.error();
  EXPECT_EQ(lublin->jobs.size(), 10000u);
  auto pods = ReadTrace(dir + "openb_pod_list_default.csv");
  ASSERT_TRUE(pods) << pods.error();
  EXPECT_EQ(pods->jobs.size() + pods->skipped.at("never scheduled in the trace"), 8152u);
  auto nodes = AlibabaCluster(dir + "openb_node_list_gpu_node.csv", "");
  ASSERT_TRUE(nodes) << nodes.error();
  EXPECT_EQ(nodes->nodes.size(), 1213u);
  EXPECT_NE(ReadTrace(dir + "nope.txt").error().find("unknown trace format"), std::string::npos);
}

}  // namespace
}  // namespace drover::sim
