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

TEST(RestJobUpdate, FieldsBecomeScontrolsKeys) {
  auto update = ParseJobUpdate(
      R"({"time_limit": 30, "name": "renamed", "comment": "a b", "requeue": false,
          "begin_time": 0, "nodes": 2, "hold": true})");
  ASSERT_TRUE(update) << update.error();
  EXPECT_EQ(update->request.time_limit_seconds(), 1800);
  EXPECT_EQ(update->request.name(), "renamed");
  EXPECT_FALSE(update->request.has_partition());
  ASSERT_TRUE(update->hold.has_value());
  EXPECT_TRUE(*update->hold);
  std::vector<std::string> settings(update->request.settings().begin(),
                                    update->request.settings().end());
  ASSERT_EQ(settings.size(), 4u);
  // In the fields' name order.
  EXPECT_TRUE(settings[0].starts_with("StartTime=19")) << settings[0];
  EXPECT_EQ(settings[1], "Comment=a b");
  EXPECT_EQ(settings[2], "NumNodes=2");
  EXPECT_EQ(settings[3], "Requeue=0");
  // Inside "job", as a submission has it.
  auto wrapped = ParseJobUpdate(R"({"job": {"partition": "gpu"}})");
  ASSERT_TRUE(wrapped) << wrapped.error();
  EXPECT_EQ(wrapped->request.partition(), "gpu");
}

TEST(RestJobUpdate, BadBodiesSayWhy) {
  EXPECT_NE(ParseJobUpdate("not json").error().find("not JSON"), std::string::npos);
  EXPECT_NE(ParseJobUpdate("[]").error().find("object"), std::string::npos);
  EXPECT_NE(ParseJobUpdate("{}").error().find("no field"), std::string::npos);
  EXPECT_NE(ParseJobUpdate(R"({"user_id": 0})").error().find("unknown field \"user_id\""),
            std::string::npos);
  EXPECT_NE(ParseJobUpdate(R"({"time_limit": "1:00"})").error().find("an integer"),
            std::string::npos);
  EXPECT_NE(ParseJobUpdate(R"({"time_limit": 0})").error().find("minutes"), std::string::npos);
  EXPECT_NE(ParseJobUpdate(R"({"hold": 1})").error().find("true or false"), std::string::npos);
  EXPECT_NE(ParseJobUpdate(R"({"priority": -5})").error().find("0 or more"), std::string::npos);
  EXPECT_FALSE(ParseJobUpdate(R"({"job": {"name": "x"}, "script": "y"})"));
}

}  // namespace
}  // namespace drover::cli::restd
