// The environment a batch job gets: --export (ALL, NONE, lists, values), --export-file, and what
// sbatch adds itself.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cli/sbatch/sbatch_test_fixture.h"

namespace drover::cli {
namespace {

// ---------------------------------------------------------------------------------------------
// The job's environment (--export)

TEST_F(Sbatch, DefaultExportCopiesTheCallersEnvironment) {
  environment["SLURM_CONF"] = "/etc/slurm/slurm.conf";
  SbatchRequest r = Ok({"job.sh"});
  EXPECT_TRUE(Has(r.spec.environment, "HOME=/home/alice"));
  EXPECT_TRUE(Has(r.spec.environment, "PATH=/usr/local/bin:/usr/bin"));
  EXPECT_TRUE(Has(r.spec.environment, "SLURM_CONF=/etc/slurm/slurm.conf"));
  EXPECT_TRUE(Has(r.spec.environment, "SLURM_SUBMIT_DIR=/home/alice/work"));
  EXPECT_EQ(r.spec.environment.size(), 4u);
  EXPECT_EQ(Ok({"--export=ALL", "job.sh"}).spec.environment, r.spec.environment);
}

TEST_F(Sbatch, ExportNoneKeepsOnlySlurmVariables) {
  environment["SLURM_CONF"] = "/etc/slurm/slurm.conf";
  SbatchRequest r = Ok({"--export=NONE", "job.sh"});
  EXPECT_EQ(r.spec.environment,
            (std::vector<std::string>{"SLURM_CONF=/etc/slurm/slurm.conf", "SLURM_EXPORT_ENV=NONE",
                                      "SLURM_SUBMIT_DIR=/home/alice/work"}));
}

TEST_F(Sbatch, ExportListCopiesNamesAndSetsValues) {
  environment["EDITOR"] = "vi";
  SbatchRequest r = Ok({"--export=HOME,FOO=bar,MISSING", "job.sh"});
  EXPECT_EQ(r.spec.environment, (std::vector<std::string>{"HOME=/home/alice", "FOO=bar",
                                                          "SLURM_EXPORT_ENV=HOME,FOO=bar,MISSING",
                                                          "SLURM_SUBMIT_DIR=/home/alice/work"}));
}

TEST_F(Sbatch, ExportAllWithValuesAddsToTheCallersEnvironment) {
  environment["EDITOR"] = "vi";
  SbatchRequest r = Ok({"--export=ALL,EDITOR=emacs,EXTRA=1", "job.sh"});
  EXPECT_TRUE(Has(r.spec.environment, "EDITOR=emacs"));
  EXPECT_FALSE(Has(r.spec.environment, "EDITOR=vi"));
  EXPECT_TRUE(Has(r.spec.environment, "EXTRA=1"));
  EXPECT_TRUE(Has(r.spec.environment, "PATH=/usr/local/bin:/usr/bin"));
}

TEST_F(Sbatch, ExportValuesMayHoldQuotedCommas) {
  SbatchRequest r = Ok({"--export=LIST=\"a,b\",'HOME'", "job.sh"});
  EXPECT_TRUE(Has(r.spec.environment, "LIST=\"a,b\""));
  EXPECT_TRUE(Has(r.spec.environment, "HOME=/home/alice"));
  EXPECT_EQ(Fails({"--export=A=\"open", "job.sh"}),
            "sbatch: error: Improperly formed environment variable (A=\"open)");
}

TEST_F(Sbatch, ExportSetInTheEnvironmentOrScript) {
  environment["SBATCH_EXPORT"] = "NONE";
  EXPECT_FALSE(HasName(Ok({"job.sh"}).spec.environment, "HOME"));
  environment.erase("SBATCH_EXPORT");
  Script("#SBATCH --export=NONE");
  EXPECT_FALSE(HasName(Ok({"job.sh"}).spec.environment, "HOME"));
  EXPECT_TRUE(HasName(Ok({"--export=ALL", "job.sh"}).spec.environment, "HOME"));
}

TEST_F(Sbatch, CallersSlurmExportEnvIsKept) {
  environment["SLURM_EXPORT_ENV"] = "ALL";
  EXPECT_TRUE(Has(Ok({"--export=NONE", "job.sh"}).spec.environment, "SLURM_EXPORT_ENV=ALL"));
}

TEST_F(Sbatch, ExportFileEntriesComeFirst) {
  files["/home/alice/work/vars"] = std::string("A=1\0B=two words\0", 16);
  SbatchRequest r = Ok({"--export-file=vars", "--export=NONE", "job.sh"});
  EXPECT_EQ(r.spec.environment[0], "A=1");
  EXPECT_EQ(r.spec.environment[1], "B=two words");
  EXPECT_FALSE(HasName(r.spec.environment, "HOME"));
  files["/dev/fd/3"] = "C=3\nD=4\n";
  r = Ok({"--export-file=3", "job.sh"});
  EXPECT_EQ(r.spec.environment[0], "C=3");
  EXPECT_EQ(r.spec.environment[1], "D=4");
  EXPECT_EQ(Fails({"--export-file=/no/such", "job.sh"}),
            "sbatch: error: Unable to read --export-file /no/such: No such file or directory");
}

TEST_F(Sbatch, OpenModeIsExportedForTheJob) {
  SbatchRequest r = Ok({"--open-mode=append", "job.sh"});
  EXPECT_TRUE(Has(r.spec.environment, "SLURM_OPEN_MODE=a"));
  EXPECT_TRUE(r.notices.empty());
}

}  // namespace
}  // namespace drover::cli
