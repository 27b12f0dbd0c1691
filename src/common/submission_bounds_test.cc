// Every bound of a submission: a value at the limit passes, one past it is refused with a
// message that names the option and the limit.
#include "common/submission_bounds.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "common/duration.h"

namespace drover {
namespace {

std::string ErrorOf(const std::function<void(JobSpec&)>& change, std::string_view script = "") {
  JobSpec spec;
  change(spec);
  Status status = CheckSubmission(spec, script, ClusterSettings{});
  return status ? "" : status.error();
}

TEST(SubmissionBounds, StringsAndPaths) {
  EXPECT_EQ(ErrorOf([](JobSpec& s) { s.name = std::string(1024, 'x'); }), "");
  EXPECT_EQ(ErrorOf([](JobSpec& s) { s.name = std::string(1025, 'x'); }),
            "--job-name is 1025 bytes; the limit is 1024");
  EXPECT_EQ(ErrorOf([](JobSpec& s) { s.comment = std::string(5000, 'x'); }),
            "--comment is 5000 bytes; the limit is 1024");
  EXPECT_EQ(ErrorOf([](JobSpec& s) { s.account = std::string(2000, 'a'); }),
            "--account is 2000 bytes; the limit is 1024");
  EXPECT_EQ(ErrorOf([](JobSpec& s) { s.stdout_path = std::string(4096, '/'); }), "");
  EXPECT_EQ(ErrorOf([](JobSpec& s) { s.work_dir = std::string(4097, '/'); }),
            "--chdir is 4097 bytes; the limit is 4096");
  EXPECT_EQ(ErrorOf([](JobSpec& s) { s.partitions.assign(300, "abcd"); }),
            "--partition is 1500 bytes; the limit is 1024");
}

TEST(SubmissionBounds, ListsAndTheScript) {
  EXPECT_EQ(ErrorOf([](JobSpec& s) { s.environment.assign(70000, "A=1"); }),
            "the environment has 70000 entries; the limit is 65536");
  EXPECT_EQ(ErrorOf([](JobSpec& s) { s.environment.assign(2, std::string(600 << 10, 'x')); }),
            "the environment is 1228802 bytes; the limit is 1048576");
  EXPECT_EQ(ErrorOf([](JobSpec& s) { s.script_args.assign(3, std::string(400 << 10, 'x')); }),
            "the script's arguments is 1228803 bytes; the limit is 1048576");
  EXPECT_EQ(ErrorOf([](JobSpec& s) { s.nodelist.assign(10000, "node00001"); }),
            "--nodelist is 100000 bytes; the limit is 65536");
  EXPECT_EQ(ErrorOf([](JobSpec& s) { s.dependency.terms.resize(1001); }),
            "--dependency has 1001 jobs; the limit is 1000");
  EXPECT_EQ(ErrorOf([](JobSpec& s) { s.other_gres.resize(65); }),
            "--gres has 65 entries; the limit is 64");
  EXPECT_EQ(ErrorOf([](JobSpec&) {}, std::string(4 << 20, '#')), "");
  EXPECT_EQ(ErrorOf([](JobSpec&) {}, std::string((4 << 20) + 1, '#')),
            "the batch script is 4194305 bytes; the limit is max_script_size=4194304 "
            "(SchedulerParameters)");
  ClusterSettings small;
  small.scheduler_params.max_script_size = 10;
  EXPECT_FALSE(CheckSubmission(JobSpec{}, "#!/bin/sh\necho", small));
}

TEST(SubmissionBounds, NegativeAndOverflowingTimes) {
  EXPECT_EQ(ErrorOf([](JobSpec& s) { s.time_limit_seconds = -60; }),
            "Invalid time limit: --time=-60 seconds is negative");
  EXPECT_EQ(ErrorOf([](JobSpec& s) { s.time_limit_seconds = kUnlimitedSeconds; }), "");
  EXPECT_EQ(ErrorOf([](JobSpec& s) { s.time_limit_seconds = kUnlimitedSeconds - 1; }),
            "Invalid time limit: --time=9223372036854775806 seconds is more than 4294967294 "
            "minutes (use UNLIMITED for no limit)");
  EXPECT_EQ(ErrorOf([](JobSpec& s) { s.time_min_seconds = -1; }),
            "Invalid time limit: --time-min=-1 seconds is negative");
  EXPECT_EQ(ErrorOf([](JobSpec& s) { s.begin_time = -5; }),
            "--begin (seconds since 1970)=-5 is out of range (from 0 to 253402300799)");
  EXPECT_EQ(ErrorOf([](JobSpec& s) { s.signal_seconds = 70000; }),
            "--signal's time=70000 is out of range (from 0 to 65535)");
  EXPECT_EQ(ErrorOf([](JobSpec& s) { s.switch_wait_seconds = -2; }),
            "--switches' wait=-2 is out of range (from 0 to 257698037640)");
  EXPECT_EQ(ErrorOf([](JobSpec& s) {
              s.dependency.terms.push_back({DependencyType::kAfterOk, 7, -60});
            }),
            "--dependency's +time (seconds)=-60 is out of range (from 0 to 257698037640)");
  EXPECT_EQ(ErrorOf([](JobSpec& s) { s.nice = INT32_MIN; }),
            "--nice=-2147483648 is out of range (from -2147483645 to 2147483645)");
}

TEST(SubmissionBounds, OverflowingCounts) {
  EXPECT_EQ(ErrorOf([](JobSpec& s) {
              s.ntasks = 4'000'000;
              s.cpus_per_task = 4000;
            }),
            "--ntasks=4000000 with --cpus-per-task=4000 asks for more than 4294967295 CPUs");
  EXPECT_EQ(ErrorOf([](JobSpec& s) {
              s.ntasks = 65536;
              s.cpus_per_task = 65536;
            }),
            "--ntasks=65536 with --cpus-per-task=65536 asks for more than 4294967295 CPUs");
  EXPECT_EQ(ErrorOf([](JobSpec& s) {
              s.ntasks = 65535;
              s.cpus_per_task = 65537;
            }),
            "");
  EXPECT_EQ(ErrorOf([](JobSpec& s) {
              s.mem_per_cpu_mb = UINT64_MAX / 2;
              s.ntasks = 3;
            }),
            "--mem-per-cpu=9223372036854775807 with CPUs=3 asks for more than "
            "18446744073709551615 MB of memory");
  EXPECT_EQ(ErrorOf([](JobSpec& s) {
              s.gpus_per_task = 70000;
              s.ntasks = 70000;
            }),
            "--gpus-per-task=70000 with --ntasks=70000 asks for more than 4294967295 GPUs");
  EXPECT_EQ(ErrorOf([](JobSpec& s) {
              s.ntasks_per_node = 100000;
              s.min_nodes = 100000;
            }),
            "--ntasks-per-node=100000 with --nodes=100000 asks for more than 4294967295 tasks");
}

}  // namespace
}  // namespace drover
