#include "cli/restd/job_submit.h"

#include <gtest/gtest.h>

namespace drover::cli::restd {
namespace {

Submitter Alice() {
  Submitter submitter;
  submitter.uid = 1000;
  submitter.gid = 1000;
  submitter.user = "alice";
  submitter.home = "/home/alice";
  submitter.now = 1'700'000'000;
  return submitter;
}

TEST(RestJobSubmit, SlurmsJobPropertiesBecomeTheSbatchOptionsTheyStandFor) {
  auto request = ParseJobSubmission(R"({
    "script": "#!/bin/bash\nsrun hostname\n",
    "job": {"name": "train", "partition": "gpu", "nodes": [2, 4], "tasks": 8,
            "cpus_per_task": 2, "time_limit": 90, "memory_per_node": 4096,
            "gpus_per_node": "2", "current_working_directory": "/scratch/alice",
            "standard_output": "out.%j", "requeue": false, "hold": true,
            "environment": {"PATH": "/usr/bin:/bin", "LANG": "C"},
            "argv": ["--epochs", "3"], "comment": null}})",
                                    Alice());
  ASSERT_TRUE(request) << request.error();
  const JobSpec& spec = request->spec;
  EXPECT_EQ(spec.name, "train");
  EXPECT_EQ(spec.partitions, std::vector<std::string>{"gpu"});
  EXPECT_EQ(spec.min_nodes, 2u);
  EXPECT_EQ(spec.max_nodes, 4u);
  EXPECT_EQ(spec.ntasks, 8u);
  EXPECT_EQ(spec.cpus_per_task, 2u);
  EXPECT_EQ(spec.time_limit_seconds, 90 * 60);
  EXPECT_EQ(spec.work_dir, "/scratch/alice");
  EXPECT_EQ(spec.stdout_path, "out.%j");  // beside the working directory, as sbatch -o
  EXPECT_EQ(spec.script_args, (std::vector<std::string>{"--epochs", "3"}));
  EXPECT_EQ(request->script, "#!/bin/bash\nsrun hostname\n");
  EXPECT_EQ(spec.uid, 1000u);
  bool has_path = false;
  for (const std::string& entry : spec.environment) has_path |= entry == "PATH=/usr/bin:/bin";
  EXPECT_TRUE(has_path);
}

TEST(RestJobSubmit, WithoutADirectoryTheJobRunsInTheUsersHome) {
  auto request = ParseJobSubmission(
      R"({"job": {"environment": ["PATH=/bin"]}, "script": "#!/bin/sh\ntrue\n"})", Alice());
  ASSERT_TRUE(request) << request.error();
  EXPECT_EQ(request->spec.work_dir, "/home/alice");
}

TEST(RestJobSubmit, BadRequestsSayWhatIsWrong) {
  auto error = [](std::string_view body) {
    auto request = ParseJobSubmission(body, Alice());
    return request ? std::string("(accepted)") : request.error();
  };
  EXPECT_EQ(error("{"), "the request body is not JSON");
  EXPECT_EQ(error("[1]"), "the request body is not a JSON object");
  EXPECT_NE(error(R"({"script": "#!/bin/sh\n"})").find("no \"job\""), std::string::npos);
  EXPECT_NE(error(R"({"job": {"environment": {}}})").find("no \"script\""), std::string::npos);
  EXPECT_NE(error(R"({"job": {}, "script": "#!/bin/sh\n"})").find("no \"environment\""),
            std::string::npos);
  EXPECT_NE(error(R"({"job": {"environment": {}, "colour": "red"}, "script": "#!/bin/sh\n"})")
                .find("unknown job field \"colour\""),
            std::string::npos);
  EXPECT_NE(error(R"({"job": {"environment": {}}, "script": "#!/bin/sh\n", "x": 1})")
                .find("unknown field \"x\""),
            std::string::npos);
  EXPECT_NE(error(R"({"job": {"environment": {}, "tasks": "many"}, "script": "#!/bin/sh\n"})")
                .find("\"tasks\" takes a whole number, not a string"),
            std::string::npos);
  EXPECT_NE(error(R"({"job": {"environment": {}, "hold": 1}, "script": "#!/bin/sh\n"})")
                .find("\"hold\" takes true or false"),
            std::string::npos);
  EXPECT_NE(error(R"({"jobs": [], "script": "#!/bin/sh\n"})").find("heterogeneous"),
            std::string::npos);
  // sbatch's own checks apply: a bad time limit reads as sbatch says it.
  EXPECT_NE(error(R"({"job": {"environment": {}, "time_limit": -5}, "script": "#!/bin/sh\n"})"),
            "(accepted)");
}

TEST(RestJobSubmit, OnlyTheJsonDescribesTheJob) {
  // As slurmrestd: #SBATCH lines (one would read a file on the server's host) and SBATCH_*
  // variables are not read.
  auto request = ParseJobSubmission(
      R"({"job": {"environment": {"PATH": "/bin", "SBATCH_PARTITION": "other"},
                  "partition": "gpu"},
          "script": "#!/bin/sh\n#SBATCH --export-file=/etc/shadow\n#SBATCH -J named\ntrue\n"})",
      Alice());
  ASSERT_TRUE(request) << request.error();
  EXPECT_EQ(request->spec.partitions, std::vector<std::string>{"gpu"});
  EXPECT_EQ(request->spec.name, "sbatch");
  // Slurm's spec's own spellings are taken.
  auto args = SbatchArgumentsOf(R"({"account_gather_freqency": "task=30",
                                    "cluster_constraints": "x"})");
  ASSERT_TRUE(args) << args.error();
  EXPECT_EQ(*args, (std::vector<std::string>{"--acctg-freq=task=30", "--cluster-constraint=x"}));
}

TEST(RestJobSubmit, FlagsAndSpecialFieldsMapOneToOne) {
  auto args = SbatchArgumentsOf(
      R"({"exclusive": "user", "kill_on_invalid_dependency": false, "nodes": 3,
          "wait_all_nodes": true, "begin_time": "now+60", "requeue": true})");
  ASSERT_TRUE(args) << args.error();
  // In the fields' name order.
  EXPECT_EQ(*args, (std::vector<std::string>{"--begin=now+60", "--exclusive=user",
                                             "--kill-on-invalid-dep=no", "--nodes=3", "--requeue",
                                             "--wait-all-nodes=1"}));
  EXPECT_FALSE(SbatchArgumentsOf(R"({"exclusive": "maybe"})"));
  EXPECT_FALSE(SbatchArgumentsOf(R"({"nodes": [0]})"));
  EXPECT_FALSE(SbatchArgumentsOf(R"({"environment": {"A=B": "x"}})"));
}

}  // namespace
}  // namespace drover::cli::restd
