// sbatch's option parsing against what Slurm's sbatch does with the same command line: the
// defaults the controller expects, GNU getopt's rules and words, --help/--usage/--version.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cli/sbatch/sbatch_test_fixture.h"

namespace drover::cli {
namespace {

// ---------------------------------------------------------------------------------------------
// Defaults

TEST_F(Sbatch, PlainScriptGetsTheDefaultsTheControllerExpects) {
  SbatchRequest r = Ok({"job.sh"});
  EXPECT_EQ(r.spec.name, "job.sh");
  EXPECT_EQ(r.script, "#!/bin/bash\nsrun hostname\n");
  EXPECT_TRUE(r.spec.script_args.empty());
  EXPECT_EQ(r.spec.min_nodes, 1u);
  EXPECT_EQ(r.spec.max_nodes, 0u);
  EXPECT_EQ(r.spec.ntasks, 1u);
  EXPECT_EQ(r.spec.cpus_per_task, 1u);
  EXPECT_EQ(r.spec.time_limit_seconds, 0);
  EXPECT_EQ(r.spec.array_task_id, kNoArrayTask);
  EXPECT_EQ(r.spec.submit_time, 0);
  EXPECT_TRUE(r.spec.requeue);
  EXPECT_TRUE(r.spec.partitions.empty());
  EXPECT_EQ(r.spec.work_dir, kCwd);
  EXPECT_EQ(r.spec.user, "alice");
  EXPECT_EQ(r.spec.uid, 1000u);
  EXPECT_EQ(r.spec.gid, 100u);
  EXPECT_EQ(r.spec.hold, HoldKind::kNone);
  EXPECT_TRUE(r.spec.stdout_path.empty());
  EXPECT_TRUE(r.array.empty());
  EXPECT_FALSE(r.parsable || r.test_only || r.wait || r.quiet || r.hold);
  EXPECT_TRUE(r.notices.empty());
  EXPECT_TRUE(r.print_and_exit.empty());
}

// ---------------------------------------------------------------------------------------------
// GNU getopt

TEST_F(Sbatch, LongOptionTakesItsValueAfterEqualsOrAsTheNextWord) {
  EXPECT_EQ(Ok({"--partition=debug", "job.sh"}).spec.partitions, std::vector<std::string>{"debug"});
  EXPECT_EQ(Ok({"--partition", "debug", "job.sh"}).spec.partitions,
            std::vector<std::string>{"debug"});
}

TEST_F(Sbatch, ShortOptionTakesItsValueAttachedOrAsTheNextWord) {
  SbatchRequest r = Ok({"-N2", "-n", "4", "-Jname", "-p", "gpu", "job.sh"});
  EXPECT_EQ(r.spec.min_nodes, 2u);
  EXPECT_EQ(r.spec.max_nodes, 2u);
  EXPECT_EQ(r.spec.ntasks, 4u);
  EXPECT_EQ(r.spec.name, "name");
  EXPECT_EQ(r.spec.partitions, std::vector<std::string>{"gpu"});
}

TEST_F(Sbatch, BundledFlagsEndAtTheFirstOptionWithAValue) {
  SbatchRequest r = Ok({"-HQW", "job.sh"});
  EXPECT_TRUE(r.hold && r.quiet && r.wait);
  r = Ok({"-HN3", "job.sh"});
  EXPECT_TRUE(r.hold);
  EXPECT_EQ(r.spec.min_nodes, 3u);
  r = Ok({"-Hp", "debug", "job.sh"});
  EXPECT_TRUE(r.hold);
  EXPECT_EQ(r.spec.partitions, std::vector<std::string>{"debug"});
}

TEST_F(Sbatch, UniqueAbbreviationsOfLongOptionsWork) {
  EXPECT_EQ(Ok({"--part=debug", "job.sh"}).spec.partitions, std::vector<std::string>{"debug"});
  EXPECT_EQ(Ok({"--tasks-per=2", "-N", "1", "job.sh"}).spec.ntasks_per_node, 2u);
  // An exact name wins over the longer names it is a prefix of.
  EXPECT_EQ(Ok({"--mem=2G", "job.sh"}).spec.mem_per_node_mb, 2048u);
}

TEST_F(Sbatch, AmbiguousAbbreviationListsThePossibilities) {
  EXPECT_EQ(Fails({"--mem-per=1G", "job.sh"}),
            "sbatch: option '--mem-per=1G' is ambiguous; possibilities: '--mem-per-cpu' "
            "'--mem-per-gpu'" +
                std::string(kTry));
}

TEST_F(Sbatch, RequiredValueIsTheNextWordEvenWhenItStartsWithADash) {
  EXPECT_EQ(Ok({"--job-name", "-x", "job.sh"}).spec.name, "-x");
}

TEST_F(Sbatch, OptionalValueOnlyFollowsAnEqualsSign) {
  EXPECT_EQ(Ok({"--nice", "job.sh"}).spec.nice, 100);
  EXPECT_EQ(Fails({"--nice", "5", "job.sh"}), "sbatch: error: Unable to open file 5");
}

TEST_F(Sbatch, WordsAfterTheScriptAreTheScriptsArguments) {
  SbatchRequest r = Ok({"-N", "2", "job.sh", "-n", "4", "--foo", "x"});
  EXPECT_EQ(r.spec.script_args, (std::vector<std::string>{"-n", "4", "--foo", "x"}));
  EXPECT_EQ(r.spec.ntasks, 1u);
  EXPECT_EQ(r.spec.min_nodes, 2u);
}

TEST_F(Sbatch, DoubleDashEndsTheOptions) {
  files["/home/alice/work/-odd.sh"] = "#!/bin/sh\ntrue\n";
  SbatchRequest r = Ok({"-N", "2", "--", "-odd.sh", "--arg"});
  EXPECT_EQ(r.spec.name, "-odd.sh");
  EXPECT_EQ(r.spec.script_args, std::vector<std::string>{"--arg"});
}

TEST_F(Sbatch, UnknownLongOptionReadsAsSlurmsGetopt) {
  EXPECT_EQ(Fails({"--foo", "job.sh"}),
            "sbatch: unrecognized option '--foo'\nTry \"sbatch --help\" for more information");
  EXPECT_EQ(Fails({"--foo=bar", "job.sh"}),
            "sbatch: unrecognized option '--foo=bar'" + std::string(kTry));
}

TEST_F(Sbatch, UnknownShortOptionReadsAsSlurmsGetopt) {
  EXPECT_EQ(Fails({"-z", "job.sh"}), "sbatch: invalid option -- 'z'" + std::string(kTry));
  EXPECT_EQ(Fails({"-Hz", "job.sh"}), "sbatch: invalid option -- 'z'" + std::string(kTry));
}

TEST_F(Sbatch, MissingValuesReadAsSlurmsGetopt) {
  EXPECT_EQ(Fails({"--partition"}),
            "sbatch: option '--partition' requires an argument" + std::string(kTry));
  EXPECT_EQ(Fails({"--part"}),
            "sbatch: option '--partition' requires an argument" + std::string(kTry));
  EXPECT_EQ(Fails({"-p"}), "sbatch: option requires an argument -- 'p'" + std::string(kTry));
  EXPECT_EQ(Fails({"--hold=yes", "job.sh"}),
            "sbatch: option '--hold' doesn't allow an argument" + std::string(kTry));
}

TEST_F(Sbatch, OptionErrorsComeBeforeTheScriptIsRead) {
  Fails({"--foo", "missing.sh"});
  EXPECT_TRUE(reads.empty());
}

// ---------------------------------------------------------------------------------------------
// --help, --usage, --version

TEST_F(Sbatch, HelpIsPrintedWithoutReadingTheScript) {
  for (const char* option : {"--help", "-h", "--he"}) {
    SbatchRequest r = Ok({"-N", "2", option, "job.sh"});
    EXPECT_TRUE(r.print_and_exit.starts_with("Usage: sbatch [OPTIONS...] executable [args...]\n"))
        << option;
    EXPECT_NE(r.print_and_exit.find("  -N, --nodes=N               number of nodes"),
              std::string::npos);
    EXPECT_EQ(r.exit_code, 0);
  }
  EXPECT_TRUE(reads.empty());
}

TEST_F(Sbatch, UsageAndVersion) {
  std::string usage = Ok({"--usage"}).print_and_exit;
  EXPECT_TRUE(usage.starts_with("Usage: sbatch [-N nnodes] [-n ntasks]"));
  // Slurm's own test suite matches this last line.
  EXPECT_TRUE(usage.ends_with("\n              executable [args...]\n")) << usage;
  EXPECT_EQ(Ok({"--version"}).print_and_exit, "slurm 22.05.8\n");
  EXPECT_EQ(Ok({"-V"}).print_and_exit, "slurm 22.05.8\n");
}

TEST_F(Sbatch, WhicheverComesFirstOfHelpAndAnOptionErrorWins) {
  EXPECT_FALSE(Ok({"--help", "--foo"}).print_and_exit.empty());
  EXPECT_EQ(Fails({"--foo", "--help"}), "sbatch: unrecognized option '--foo'" + std::string(kTry));
}

TEST_F(Sbatch, HelpInAScriptIsIgnored) {
  Script("#SBATCH --help\n#SBATCH -N 2");
  SbatchRequest r = Ok({"job.sh"});
  EXPECT_TRUE(r.print_and_exit.empty());
  EXPECT_EQ(r.spec.min_nodes, 2u);
  EXPECT_TRUE(Has(r.notices,
                  "sbatch: warning: --help is ignored in #SBATCH lines (line 2); give it on the "
                  "command line"));
}

}  // namespace
}  // namespace drover::cli
