// sbatch's batch script: where it is read from, Slurm's checks on it, --wrap, and its #SBATCH
// lines (quotes, escapes, where they end, the line an error names).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cli/sbatch/sbatch_test_fixture.h"

namespace drover::cli {
namespace {

// ---------------------------------------------------------------------------------------------
// The script

TEST_F(Sbatch, ScriptIsReadRelativeToTheWorkingDirectory) {
  Ok({"job.sh"});
  EXPECT_EQ(reads, std::vector<std::string>{"/home/alice/work/job.sh"});
  files["/opt/run.sh"] = "#!/bin/sh\ntrue\n";
  EXPECT_EQ(Ok({"/opt/run.sh"}).spec.name, "run.sh");
}

TEST_F(Sbatch, BareScriptNameIsLookedForOnPathAfterTheWorkingDirectory) {
  files["/usr/bin/tool.sh"] = "#!/bin/sh\ntool\n";
  reads.clear();
  SbatchRequest r = Ok({"tool.sh"});
  EXPECT_EQ(r.script, "#!/bin/sh\ntool\n");
  EXPECT_EQ(r.spec.name, "tool.sh");
  EXPECT_EQ(reads, (std::vector<std::string>{"/home/alice/work/tool.sh", "/usr/local/bin/tool.sh",
                                             "/usr/bin/tool.sh"}));
}

TEST_F(Sbatch, ScriptPathWithASlashIsNotLookedForOnPath) {
  files["/usr/bin/sub/tool.sh"] = "#!/bin/sh\ntool\n";
  EXPECT_EQ(Fails({"sub/tool.sh"}), "sbatch: error: Unable to open file sub/tool.sh");
  EXPECT_EQ(reads, std::vector<std::string>{"/home/alice/work/sub/tool.sh"});
}

TEST_F(Sbatch, NoScriptOrDashReadsStandardInput) {
  files["-"] = "#!/bin/sh\n#SBATCH -J from-stdin\necho hi\n";
  SbatchRequest r = Ok({"-N", "1"});
  EXPECT_EQ(r.script, files["-"]);
  EXPECT_EQ(r.spec.name, "from-stdin");
  files["-"] = "#!/bin/sh\necho hi\n";
  r = Ok({"-", "a", "b"});
  EXPECT_EQ(r.spec.name, "sbatch");
  EXPECT_EQ(r.spec.script_args, (std::vector<std::string>{"a", "b"}));
}

TEST_F(Sbatch, MissingScriptIsSlurmsError) {
  EXPECT_EQ(Fails({"nope.sh"}), "sbatch: error: Unable to open file nope.sh");
}

TEST_F(Sbatch, ScriptsSlurmRefusesAreRefusedWithItsMessages) {
  struct Case {
    std::string script, error;
  };
  for (const Case& c : std::vector<Case>{
           {"", "sbatch: error: Batch script is empty!"},
           {" \n\t\n", "sbatch: error: Batch script contains only whitespace!"},
           {"echo hi\n",
            "sbatch: error: This does not look like a batch script.  The first\n"
            "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
            "sbatch: error: For instance: #!/bin/sh"},
           {std::string("#!/bin/sh\necho \0\n", 17),
            "sbatch: error: The Slurm controller does not allow scripts that\n"
            "sbatch: error: contain a NULL character '\\0'."},
           {"#!/bin/sh\r\necho hi\r\n",
            "sbatch: error: Batch script contains DOS line breaks (\\r\\n)\n"
            "sbatch: error: instead of expected UNIX line breaks (\\n)."}}) {
    files["/home/alice/work/job.sh"] = c.script;
    EXPECT_EQ(Fails({"job.sh"}), c.error);
  }
}

TEST_F(Sbatch, WrapWritesAShellScriptNamedWrap) {
  SbatchRequest r = Ok({"--wrap", "hostname; date"});
  EXPECT_EQ(r.script, "#!/bin/sh\n# This script was created by sbatch --wrap.\n\nhostname; date\n");
  EXPECT_EQ(r.spec.name, "wrap");
  EXPECT_TRUE(reads.empty());
  EXPECT_EQ(Ok({"--wrap=true", "-J", "mine"}).spec.name, "mine");
}

TEST_F(Sbatch, WrapTakesNoScriptArguments) {
  EXPECT_EQ(Fails({"--wrap=true", "job.sh"}),
            "sbatch: error: Script arguments not permitted with --wrap option");
}

TEST_F(Sbatch, WrapCommandThatIsADirectiveIsReadAsOne) {
  EXPECT_EQ(Ok({"--wrap=#SBATCH -N 3"}).spec.min_nodes, 3u);
}

// ---------------------------------------------------------------------------------------------
// #SBATCH lines

TEST_F(Sbatch, DirectivesSetOptions) {
  Script("#SBATCH -N 2\n#SBATCH --time=10\n#SBATCH -J named\n#SBATCH --partition debug");
  SbatchRequest r = Ok({"job.sh"});
  EXPECT_EQ(r.spec.min_nodes, 2u);
  EXPECT_EQ(r.spec.time_limit_seconds, 600);
  EXPECT_EQ(r.spec.name, "named");
  EXPECT_EQ(r.spec.partitions, std::vector<std::string>{"debug"});
}

TEST_F(Sbatch, OneDirectiveLineMayHoldSeveralOptionsAndBareFlags) {
  Script("#SBATCH -N 2 --ntasks=4 -p debug --exclusive --hold");
  SbatchRequest r = Ok({"job.sh"});
  EXPECT_EQ(r.spec.min_nodes, 2u);
  EXPECT_EQ(r.spec.ntasks, 4u);
  EXPECT_EQ(r.spec.partitions, std::vector<std::string>{"debug"});
  EXPECT_TRUE(r.spec.exclusive);
  EXPECT_EQ(r.spec.hold, HoldKind::kUser);
}

TEST_F(Sbatch, DirectivesEndAtTheFirstCommand) {
  files["/home/alice/work/job.sh"] =
      "#!/bin/bash\n\n# a comment\n   \n#SBATCH -N 3\necho hi\n#SBATCH -N 5\n";
  EXPECT_EQ(Ok({"job.sh"}).spec.min_nodes, 3u);
}

TEST_F(Sbatch, IndentedOrLowercaseDirectiveIsAComment) {
  Script("  #SBATCH -N 3\n#sbatch -N 4\n#SBATCH -n 2");
  SbatchRequest r = Ok({"job.sh"});
  EXPECT_EQ(r.spec.min_nodes, 1u);
  EXPECT_EQ(r.spec.ntasks, 2u);
}

TEST_F(Sbatch, DirectiveQuotesEscapesAndComments) {
  Script("#SBATCH --comment=\"two words\" # a comment -N 4\n#SBATCH -J 'a b' --wckey=a\\ b");
  SbatchRequest r = Ok({"job.sh"});
  EXPECT_EQ(r.spec.comment, "two words");
  EXPECT_EQ(r.spec.min_nodes, 1u);
  EXPECT_EQ(r.spec.name, "a b");
}

TEST_F(Sbatch, UnmatchedQuoteInADirectiveIsAnError) {
  Script("#SBATCH -J 'open");
  EXPECT_EQ(Fails({"job.sh"}), "sbatch: error: line 2: Unmatched `'` in [#SBATCH -J 'open]");
}

TEST_F(Sbatch, CommandLineOverridesDirectives) {
  Script("#SBATCH -p script -N 4 -t 10");
  SbatchRequest r = Ok({"-p", "cli", "-t", "20", "job.sh"});
  EXPECT_EQ(r.spec.partitions, std::vector<std::string>{"cli"});
  EXPECT_EQ(r.spec.time_limit_seconds, 1200);
  EXPECT_EQ(r.spec.min_nodes, 4u);
}

TEST_F(Sbatch, UnknownDirectiveOptionSaysWhichLine) {
  Script("#SBATCH -N 2\n#SBATCH --bogus");
  EXPECT_EQ(Fails({"job.sh"}),
            "sbatch: unrecognized option '--bogus' (#SBATCH on line 3)" + std::string(kTry));
}

TEST_F(Sbatch, BadDirectiveValueSaysWhichLine) {
  Script("#SBATCH --time=abc");
  EXPECT_EQ(Fails({"job.sh"}), "sbatch: error: Invalid --time specification (#SBATCH on line 2)");
}

TEST_F(Sbatch, WordThatIsNotAnOptionEndsTheDirectives) {
  Script("#SBATCH -N 2 stray -n 4\n#SBATCH -c 8");
  SbatchRequest r = Ok({"job.sh"});
  EXPECT_EQ(r.spec.min_nodes, 2u);
  EXPECT_EQ(r.spec.ntasks, 1u);
  EXPECT_EQ(r.spec.cpus_per_task, 1u);
  EXPECT_TRUE(Has(r.notices,
                  "sbatch: warning: #SBATCH line 2: 'stray' is not an option; it and the #SBATCH "
                  "options after it are ignored"));
}

TEST_F(Sbatch, HeterogeneousJobsAreRefused) {
  Script("#SBATCH -N 1\n#SBATCH hetjob\n#SBATCH -N 2");
  EXPECT_EQ(Fails({"job.sh"}),
            "sbatch: error: heterogeneous jobs (#SBATCH hetjob) are not supported by Drover "
            "(line 3)");
}

TEST_F(Sbatch, QuietAndWrapInADirectiveAreIgnoredAsInSlurm) {
  Script("#SBATCH -Q\n#SBATCH --wrap=true");
  SbatchRequest r = Ok({"job.sh"});
  EXPECT_FALSE(r.quiet);
  EXPECT_EQ(r.script, files["/home/alice/work/job.sh"]);
  EXPECT_EQ(r.notices.size(), 2u);
}

}  // namespace
}  // namespace drover::cli
