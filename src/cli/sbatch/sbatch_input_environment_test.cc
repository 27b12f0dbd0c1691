// sbatch's SBATCH_* input variables: which option each sets, their precedence between the
// script and the command line, flags, and the variable an error names.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cli/sbatch/sbatch_test_fixture.h"

namespace drover::cli {
namespace {

// ---------------------------------------------------------------------------------------------
// SBATCH_* input variables

TEST_F(Sbatch, InputVariablesSetOptions) {
  environment["SBATCH_PARTITION"] = "gpu,cpu";
  environment["SBATCH_ACCOUNT"] = "physics";
  environment["SBATCH_QOS"] = "high";
  environment["SBATCH_TIMELIMIT"] = "30";
  environment["SBATCH_JOB_NAME"] = "from-env";
  environment["SBATCH_GRES"] = "gpu:a100:2";
  environment["SBATCH_MEM_PER_NODE"] = "4G";
  environment["SBATCH_OUTPUT"] = "out-%j.txt";
  SbatchRequest r = Ok({"job.sh"});
  EXPECT_EQ(r.spec.partitions, (std::vector<std::string>{"gpu", "cpu"}));
  EXPECT_EQ(r.spec.account, "physics");
  EXPECT_EQ(r.spec.qos, "high");
  EXPECT_EQ(r.spec.time_limit_seconds, 1800);
  EXPECT_EQ(r.spec.name, "from-env");
  EXPECT_EQ(r.spec.gpus_per_node, 2u);
  EXPECT_EQ(r.spec.gpu_type, "a100");
  EXPECT_EQ(r.spec.mem_per_node_mb, 4096u);
  EXPECT_EQ(r.spec.stdout_path, "out-%j.txt");
}

TEST_F(Sbatch, CommandLineBeatsEnvironmentBeatsScript) {
  Script("#SBATCH -p script -A script -q script");
  environment["SBATCH_PARTITION"] = "env";
  environment["SBATCH_ACCOUNT"] = "env";
  SbatchRequest r = Ok({"-p", "cli", "job.sh"});
  EXPECT_EQ(r.spec.partitions, std::vector<std::string>{"cli"});
  EXPECT_EQ(r.spec.account, "env");
  EXPECT_EQ(r.spec.qos, "script");
}

TEST_F(Sbatch, FlagVariablesAreOnForEmptyYesOrANonZeroNumber) {
  environment["SBATCH_WAIT"] = "0";
  EXPECT_FALSE(Ok({"job.sh"}).wait);
  for (const char* on : {"", "yes", "1"}) {
    environment["SBATCH_WAIT"] = on;
    EXPECT_TRUE(Ok({"job.sh"}).wait) << on;
  }
  environment.erase("SBATCH_WAIT");
  environment["SBATCH_EXCLUSIVE"] = "";
  EXPECT_TRUE(Ok({"job.sh"}).spec.exclusive);
  environment["SBATCH_NO_REQUEUE"] = "whatever";
  EXPECT_FALSE(Ok({"job.sh"}).spec.requeue);
}

TEST_F(Sbatch, GpuAndSwitchVariables) {
  environment["SBATCH_GPUS"] = "h100:8";
  environment["SBATCH_GPUS_PER_TASK"] = "1";
  environment["SBATCH_REQ_SWITCH"] = "2";
  environment["SBATCH_WAIT4SWITCH"] = "5:00";
  SbatchRequest r = Ok({"job.sh"});
  EXPECT_EQ(r.spec.gpus, 8u);
  EXPECT_EQ(r.spec.gpu_type, "h100");
  EXPECT_EQ(r.spec.gpus_per_task, 1u);
  EXPECT_EQ(r.spec.switches, 2u);
  EXPECT_EQ(r.spec.switch_wait_seconds, 300);
}

TEST_F(Sbatch, BadVariableSaysWhichOne) {
  environment["SBATCH_TIMELIMIT"] = "soon";
  EXPECT_EQ(Fails({"job.sh"}),
            "sbatch: error: Invalid --time specification (SBATCH_TIMELIMIT=soon)");
}

TEST_F(Sbatch, VariableForAnOptionWithNoEffectGivesANotice) {
  environment["SBATCH_HINT"] = "nomultithread";
  EXPECT_EQ(
      Ok({"job.sh"}).notices,
      std::vector<std::string>{"sbatch: warning: --hint is accepted but has no effect in Drover"});
}

}  // namespace
}  // namespace drover::cli
