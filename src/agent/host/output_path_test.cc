// Tests for Slurm's filename patterns: every symbol with and without padding, for plain jobs,
// array tasks and steps; the escapes and Slurm's quirks; default names and the three batch files.
#include "agent/host/output_path.h"

#include <string>

#include <gtest/gtest.h>

namespace drover::agent {
namespace {

PatternContext PlainJob() {
  PatternContext ctx;
  ctx.job_id = 123;
  ctx.node_name = "n7.cluster.example";
  ctx.user_name = "alice";
  ctx.job_name = "train";
  ctx.work_dir = "/home/alice/proj";
  return ctx;
}

PatternContext ArrayTask(uint32_t task) {
  PatternContext ctx = PlainJob();
  ctx.job_id = 26516;
  ctx.array_job_id = 26512;
  ctx.array_task_id = task;
  return ctx;
}

PatternContext Step(uint32_t step) {
  PatternContext ctx = PlainJob();
  ctx.step_id = step;
  ctx.node_id = 2;
  ctx.task_id = 5;
  return ctx;
}

std::string Expand(std::string_view pattern, const PatternContext& ctx) {
  Result<std::string> path = ExpandOutputPattern(pattern, ctx);
  return path.ok() ? path.value() : "error: " + path.error();
}

struct Case {
  std::string pattern;
  std::string expected;
};

void ExpectAll(const PatternContext& ctx, std::initializer_list<Case> cases) {
  for (const Case& c : cases) {
    EXPECT_EQ(Expand(c.pattern, ctx), c.expected) << "pattern '" << c.pattern << "'";
  }
}

TEST(ExpandOutputPatternTest, PlainJobSymbols) {
  ExpectAll(PlainJob(), {
                            {"/o/%j.out", "/o/123.out"},
                            {"/o/%A", "/o/123"},  // the job id outside arrays
                            {"/o/%a", "/o/4294967294"},
                            {"/o/%b", "/o/4"},  // 4294967294 % 10
                            {"/o/%J", "/o/123.batch"},
                            {"/o/%s", "/o/batch"},
                            {"/o/%N", "/o/n7"},
                            {"/o/%n", "/o/0"},
                            {"/o/%t", "/o/0"},
                            {"/o/%u", "/o/alice"},
                            {"/o/%x", "/o/train"},
                            {"/tmp/%u/%x-%j.log", "/tmp/alice/train-123.log"},
                            {"/o/%j%j", "/o/123123"},
                        });
}

TEST(ExpandOutputPatternTest, ZeroPadding) {
  ExpectAll(PlainJob(), {
                            {"/o/%5j", "/o/00123"},
                            {"/o/%2j", "/o/123"},  // never truncates
                            {"/o/%0j", "/o/123"},
                            {"/o/%10j", "/o/0000000123"},
                            {"/o/%12j", "/o/0000000123"},  // at most 10 wide
                            {"/o/%99999999999999999999j", "/o/0000000123"},
                            {"/o/%4A", "/o/0123"},
                            {"/o/%5J", "/o/00123.batch"},
                            {"/o/%3n", "/o/000"},
                            {"/o/%2t", "/o/00"},
                            {"/o/%3b", "/o/004"},
                            {"/o/%5N", "/o/n7"},  // no padding for names
                            {"/o/%5u", "/o/alice"},
                            {"/o/%9x", "/o/train"},
                            {"/o/%5s", "/o/batch"},
                        });
}

TEST(ExpandOutputPatternTest, ArrayTaskSymbols) {
  ExpectAll(ArrayTask(2), {
                              {"/o/%A_%a.out", "/o/26512_2.out"},
                              {"/o/%j", "/o/26516"},  // the task's own job id
                              {"/o/%3a", "/o/002"},
                              {"/o/%8A", "/o/00026512"},
                              {"/o/%b", "/o/2"},
                          });
  ExpectAll(ArrayTask(17), {{"/o/%b", "/o/7"}, {"/o/%2b", "/o/07"}, {"/o/%a", "/o/17"}});
}

TEST(ExpandOutputPatternTest, StepSymbols) {
  ExpectAll(Step(3), {
                         {"/o/%J", "/o/123.3"},
                         {"/o/%s", "/o/3"},
                         {"/o/%3s", "/o/003"},
                         {"/o/%5J", "/o/00123.3"},
                         {"/o/%n-%t", "/o/2-5"},
                         {"/o/%2n-%3t", "/o/02-005"},
                     });
}

TEST(ExpandOutputPatternTest, PercentSignsAndUnknownSymbols) {
  ExpectAll(PlainJob(), {
                            {"/o/%%", "/o/%"},
                            {"/o/%%j", "/o/%j"},
                            {"/o/100%%-%j", "/o/100%-123"},
                            {"/o/%%%j", "/o/%123"},
                            {"/o/%c", "/o/%c"},
                            {"/o/%Z%j", "/o/%Z123"},
                            {"/o/a%", "/o/a%"},
                            {"/o/%", "/o/%"},
                            // Slurm drops the '%' and all but the last digit of a width that
                            // precedes no symbol, then reads on from the next character.
                            {"/o/%5q", "/o/5q"},
                            {"/o/%12q", "/o/2q"},
                            {"/o/x%5", "/o/x5"},
                            {"/o/%5%j", "/o/5123"},
                        });
}

TEST(ExpandOutputPatternTest, BackslashDisablesExpansion) {
  ExpectAll(PlainJob(), {
                            {"/o/\\%j", "/o/%j"},
                            {"/o/%j\\", "/o/%j"},
                            {"/o/a\\\\b%j", "/o/a\\b%j"},
                            {"out\\%x", "/home/alice/proj/out%x"},
                        });
}

TEST(ExpandOutputPatternTest, RelativeNamesResolveAgainstWorkingDirectory) {
  PatternContext ctx = PlainJob();
  EXPECT_EQ(Expand("slurm-%j.out", ctx), "/home/alice/proj/slurm-123.out");
  EXPECT_EQ(Expand("logs/%x.%j", ctx), "/home/alice/proj/logs/train.123");
  ctx.work_dir = "/home/alice/";
  EXPECT_EQ(Expand("x", ctx), "/home/alice/x");
  ctx.work_dir = "/";
  EXPECT_EQ(Expand("x", ctx), "/x");
}

TEST(ExpandOutputPatternTest, Errors) {
  PatternContext ctx = PlainJob();
  EXPECT_EQ(Expand("", ctx), "error: empty file name pattern");
  ctx.work_dir = "";
  EXPECT_EQ(Expand("out-%j", ctx),
            "error: cannot resolve relative file name 'out-%j' for job 123: the working "
            "directory '' is not an absolute path");
  ctx.work_dir = "proj";
  EXPECT_EQ(Expand("out", ctx),
            "error: cannot resolve relative file name 'out' for job 123: the working directory "
            "'proj' is not an absolute path");
  EXPECT_EQ(Expand("/abs/%j", ctx), "/abs/123");  // no working directory needed
}

JobSpec BatchSpec() {
  JobSpec spec;
  spec.job_id = 123;
  spec.name = "train";
  spec.user = "alice";
  spec.work_dir = "/home/alice/proj";
  return spec;
}

JobSpec ArraySpec() {
  JobSpec spec = BatchSpec();
  spec.job_id = 26516;
  spec.array_job_id = 26512;
  spec.array_task_id = 2;
  return spec;
}

TEST(DefaultOutputPathTest, PlainAndArray) {
  EXPECT_EQ(DefaultOutputPath(BatchSpec()), "slurm-%j.out");
  EXPECT_EQ(DefaultOutputPath(ArraySpec()), "slurm-%A_%a.out");
}

TEST(BatchPatternContextTest, TakesTheSpecsIdentity) {
  PatternContext ctx = BatchPatternContext(ArraySpec(), "n1");
  EXPECT_EQ(Expand("%x-%u-%j-%A-%a-%N-%n-%t-%J", ctx),
            "/home/alice/proj/train-alice-26516-26512-2-n1-0-0-26516.batch");
}

std::string Describe(const Result<BatchIoPaths>& paths) {
  if (!paths.ok()) return "error: " + paths.error();
  return paths->stdout_path + " | " + paths->stderr_path + " | " + paths->stdin_path;
}

TEST(ResolveBatchIoPathsTest, Defaults) {
  JobSpec spec = BatchSpec();
  EXPECT_EQ(Describe(ResolveBatchIoPaths(spec, BatchPatternContext(spec, "n1"))),
            "/home/alice/proj/slurm-123.out | /home/alice/proj/slurm-123.out | /dev/null");
  spec = ArraySpec();
  EXPECT_EQ(Describe(ResolveBatchIoPaths(spec, BatchPatternContext(spec, "n1"))),
            "/home/alice/proj/slurm-26512_2.out | /home/alice/proj/slurm-26512_2.out | /dev/null");
}

TEST(ResolveBatchIoPathsTest, ErrorFollowsOutputUnlessGiven) {
  JobSpec spec = BatchSpec();
  spec.stdout_path = "logs/%x-%j.out";
  EXPECT_EQ(Describe(ResolveBatchIoPaths(spec, BatchPatternContext(spec, "n1"))),
            "/home/alice/proj/logs/train-123.out | /home/alice/proj/logs/train-123.out | "
            "/dev/null");
  spec.stderr_path = "/scratch/%u/%j.err";
  spec.stdin_path = "input-%a.txt";
  EXPECT_EQ(Describe(ResolveBatchIoPaths(spec, BatchPatternContext(spec, "n1"))),
            "/home/alice/proj/logs/train-123.out | /scratch/alice/123.err | "
            "/home/alice/proj/input-4294967294.txt");
}

TEST(ResolveBatchIoPathsTest, ReportsTheFailingPattern) {
  JobSpec spec = BatchSpec();
  spec.work_dir = "";
  spec.stdout_path = "/abs/out";
  spec.stderr_path = "err-%j";
  EXPECT_EQ(Describe(ResolveBatchIoPaths(spec, BatchPatternContext(spec, "n1"))),
            "error: cannot resolve relative file name 'err-%j' for job 123: the working "
            "directory '' is not an absolute path");
}

}  // namespace
}  // namespace drover::agent
