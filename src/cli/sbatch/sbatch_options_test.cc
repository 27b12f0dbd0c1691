// sbatch's option parsing against what Slurm's sbatch does with the same command line, script
// and environment: the JobSpec fields, the exact error text, the environment the job gets.
#include "cli/sbatch_options.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <functional>

#include "common/duration.h"

namespace drover::cli {
namespace {

// --begin and --deadline read local time; the expectations below are in UTC.
class UtcEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
};
[[maybe_unused]] ::testing::Environment* const kUtc =
    ::testing::AddGlobalTestEnvironment(new UtcEnvironment);

constexpr int64_t kNow = 1700000000;  // 2023-11-14T22:13:20Z
constexpr std::string_view kTry = "\nTry \"sbatch --help\" for more information";
constexpr char kCwd[] = "/home/alice/work";

class Sbatch : public ::testing::Test {
 protected:
  std::map<std::string, std::string> files = {
      {"/home/alice/work/job.sh", "#!/bin/bash\nsrun hostname\n"}};
  std::map<std::string, std::string> environment = {{"HOME", "/home/alice"},
                                                    {"PATH", "/usr/local/bin:/usr/bin"}};
  std::vector<std::string> reads;
  uint32_t uid = 1000;

  Result<SbatchRequest> Run(std::vector<std::string> args) {
    ReadFile read = [this](const std::string& path) -> Result<std::string> {
      reads.push_back(path);
      auto found = files.find(path);
      if (found == files.end()) return MakeError("No such file or directory");
      return found->second;
    };
    return ParseSbatch(args, read, environment, kCwd, uid, 100, "alice", kNow);
  }

  SbatchRequest Ok(std::vector<std::string> args) {
    Result<SbatchRequest> request = Run(std::move(args));
    EXPECT_TRUE(request.ok()) << request.error();
    return request.ok() ? std::move(request).value() : SbatchRequest{};
  }

  std::string Fails(std::vector<std::string> args) {
    Result<SbatchRequest> request = Run(std::move(args));
    EXPECT_FALSE(request.ok());
    return request.ok() ? "" : request.error();
  }

  // A job script with these lines after "#!/bin/bash".
  void Script(const std::string& body) {
    files["/home/alice/work/job.sh"] = "#!/bin/bash\n" + body + "\nsrun hostname\n";
  }
};

bool Has(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

bool HasName(const std::vector<std::string>& environment, const std::string& name) {
  return std::any_of(environment.begin(), environment.end(),
                     [&](const std::string& entry) { return entry.starts_with(name + "="); });
}

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
    EXPECT_TRUE(r.print_and_exit.starts_with("Usage: sbatch [OPTIONS...] script [args...]\n"))
        << option;
    EXPECT_NE(r.print_and_exit.find("  -N, --nodes=n[-max]"), std::string::npos);
    EXPECT_EQ(r.exit_code, 0);
  }
  EXPECT_TRUE(reads.empty());
}

TEST_F(Sbatch, UsageAndVersion) {
  EXPECT_TRUE(Ok({"--usage"}).print_and_exit.starts_with("Usage: sbatch [-N nnodes] [-n ntasks]"));
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

// ---------------------------------------------------------------------------------------------
// Identity, files and places

TEST_F(Sbatch, NamesAccountsAndPartitions) {
  SbatchRequest r = Ok({"-J", "train", "-A", "ml", "-q", "normal", "-p", "a,b,,c",
                        "--reservation=maint", "--comment", "note", "job.sh"});
  EXPECT_EQ(r.spec.name, "train");
  EXPECT_EQ(r.spec.account, "ml");
  EXPECT_EQ(r.spec.qos, "normal");
  EXPECT_EQ(r.spec.partitions, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(r.spec.reservation, "maint");
  EXPECT_EQ(r.spec.comment, "note");
  r = Ok({"--job-name=x", "--account=y", "--qos=z", "--partition=p", "job.sh"});
  EXPECT_EQ(r.spec.name + r.spec.account + r.spec.qos + r.spec.partitions[0], "xyzp");
}

TEST_F(Sbatch, OutputErrorAndInputKeepTheirPatterns) {
  SbatchRequest r = Ok({"-o", "out-%j.log", "-e", "err-%A_%a.log", "-i", "in.txt", "job.sh"});
  EXPECT_EQ(r.spec.stdout_path, "out-%j.log");
  EXPECT_EQ(r.spec.stderr_path, "err-%A_%a.log");
  EXPECT_EQ(r.spec.stdin_path, "in.txt");
  r = Ok({"--output=none", "--error=NONE", "--input=none", "job.sh"});
  EXPECT_EQ(r.spec.stdout_path, "/dev/null");
  EXPECT_EQ(r.spec.stderr_path, "/dev/null");
  EXPECT_EQ(r.spec.stdin_path, "/dev/null");
}

TEST_F(Sbatch, ChdirIsMadeAbsolute) {
  EXPECT_EQ(Ok({"-D", "/scratch/run", "job.sh"}).spec.work_dir, "/scratch/run");
  EXPECT_EQ(Ok({"--chdir=sub", "job.sh"}).spec.work_dir, "/home/alice/work/sub");
}

// ---------------------------------------------------------------------------------------------
// Shape: nodes, tasks, CPUs

TEST_F(Sbatch, NodeCounts) {
  struct Case {
    const char* text;
    uint32_t min, max;
  };
  for (const Case& c :
       std::vector<Case>{{"3", 3, 3}, {"2-4", 2, 4}, {"2-", 2, 0}, {"1k", 1024, 1024}}) {
    SbatchRequest r = Ok({"-N", c.text, "job.sh"});
    EXPECT_EQ(r.spec.min_nodes, c.min) << c.text;
    EXPECT_EQ(r.spec.max_nodes, c.max) << c.text;
  }
  EXPECT_EQ(Ok({"--nodes=5", "job.sh"}).spec.min_nodes, 5u);
}

TEST_F(Sbatch, BadNodeCountsAreSlurmsErrors) {
  EXPECT_EQ(Fails({"-N", "0", "job.sh"}), "sbatch: error: invalid number of nodes (-N 0)");
  EXPECT_EQ(Fails({"-N", "x", "job.sh"}), "sbatch: error: \"x\" is not a valid node count");
  EXPECT_EQ(Fails({"-N", "4-2", "job.sh"}),
            "sbatch: error: Maximum node count 2 is less than minimum node count 4");
}

TEST_F(Sbatch, TaskAndCpuCounts) {
  SbatchRequest r = Ok({"-n", "8", "-c", "4", "job.sh"});
  EXPECT_EQ(r.spec.ntasks, 8u);
  EXPECT_EQ(r.spec.cpus_per_task, 4u);
  r = Ok({"--ntasks=3", "--cpus-per-task=2", "job.sh"});
  EXPECT_EQ(r.spec.ntasks, 3u);
  EXPECT_EQ(r.spec.cpus_per_task, 2u);
}

TEST_F(Sbatch, BadCountsAreSlurmsErrors) {
  EXPECT_EQ(Fails({"-n", "x", "job.sh"}),
            "sbatch: error: Invalid numeric value \"x\" for --ntasks.");
  EXPECT_EQ(Fails({"-n", "0", "job.sh"}),
            "sbatch: error: Invalid numeric value \"0\" for --ntasks.");
  EXPECT_EQ(Fails({"-c", "-2", "job.sh"}),
            "sbatch: error: Invalid numeric value \"-2\" for --cpus-per-task.");
  EXPECT_EQ(Fails({"--ntasks-per-node=9999999999", "job.sh"}),
            "sbatch: error: Numeric argument (9999999999) to big for --ntasks-per-node.");
}

TEST_F(Sbatch, TasksPerNodeGivesTheTaskCountWhenNIsNotGiven) {
  SbatchRequest r = Ok({"--ntasks-per-node=4", "-N", "2", "job.sh"});
  EXPECT_EQ(r.spec.ntasks, 8u);
  EXPECT_EQ(r.spec.ntasks_per_node, 4u);
  r = Ok({"--ntasks-per-node=4", "-N", "2", "-n", "6", "job.sh"});
  EXPECT_EQ(r.spec.ntasks, 6u);
}

TEST_F(Sbatch, FewerTasksThanNodesLowersTheNodeCount) {
  SbatchRequest r = Ok({"-N", "4", "-n", "2", "job.sh"});
  EXPECT_EQ(r.spec.min_nodes, 2u);
  EXPECT_EQ(r.spec.max_nodes, 2u);
  EXPECT_EQ(r.notices,
            std::vector<std::string>{
                "sbatch: Warning: can't run 2 processes on 4 nodes, setting nnodes to 2"});
  r = Ok({"-N", "2-8", "-n", "4", "job.sh"});
  EXPECT_EQ(r.spec.min_nodes, 2u);
  EXPECT_EQ(r.spec.max_nodes, 4u);
}

TEST_F(Sbatch, NodeListAndExcludeAreExpanded) {
  SbatchRequest r = Ok({"-w", "n[1-3],n2", "-x", "n[7-8]", "job.sh"});
  EXPECT_EQ(r.spec.nodelist, (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(r.spec.exclude, (std::vector<std::string>{"n7", "n8"}));
  EXPECT_EQ(r.spec.min_nodes, 3u);  // the job holds every listed node
  EXPECT_EQ(Ok({"--exclude=m[1-2]", "job.sh"}).spec.exclude,
            (std::vector<std::string>{"m1", "m2"}));
  r = Ok({"--nodelist=n1", "-N", "2", "job.sh"});
  EXPECT_EQ(r.spec.min_nodes, 2u);
  EXPECT_EQ(
      Fails({"-w", "n[1-", "job.sh"}).rfind("sbatch: error: Invalid --nodelist specification: ", 0),
      0u);
}

TEST_F(Sbatch, NodeListWithASlashIsAHostFile) {
  files["/home/alice/work/hosts"] = "n1 n2\n# spare\nn3,n4\n";
  files["/home/alice/work/./hosts"] = files["/home/alice/work/hosts"];
  EXPECT_EQ(Ok({"-w", "./hosts", "job.sh"}).spec.nodelist,
            (std::vector<std::string>{"n1", "n2", "n3", "n4"}));
  EXPECT_EQ(Ok({"-F", "hosts", "job.sh"}).spec.nodelist.size(), 4u);
  EXPECT_EQ(Fails({"-w", "/none/hosts", "job.sh"}),
            "sbatch: error: Unable to read --nodelist file /none/hosts: No such file or "
            "directory");
}

TEST_F(Sbatch, ConstraintAndExclusive) {
  SbatchRequest r = Ok({"-C", "intel&ib", "--exclusive", "job.sh"});
  EXPECT_EQ(r.spec.constraint, "intel&ib");
  EXPECT_TRUE(r.spec.exclusive);
  EXPECT_EQ(Ok({"--constraint=a|b", "job.sh"}).spec.constraint, "a|b");
  EXPECT_FALSE(Ok({"--exclusive=oversubscribe", "job.sh"}).spec.exclusive);
  r = Ok({"--exclusive=user", "job.sh"});
  EXPECT_TRUE(r.spec.exclusive);
  EXPECT_EQ(r.notices,
            std::vector<std::string>{
                "sbatch: warning: --exclusive=user is treated as --exclusive in Drover"});
  EXPECT_EQ(Fails({"--exclusive=bogus", "job.sh"}),
            "sbatch: error: Invalid --exclusive specification");
  EXPECT_EQ(Fails({"--exclusive", "-s", "job.sh"}),
            "sbatch: fatal: --exclusive and --oversubscribe options are mutually exclusive");
  Script("#SBATCH --exclusive");
  EXPECT_FALSE(Ok({"--oversubscribe", "job.sh"}).spec.exclusive);
  Script("#SBATCH --oversubscribe");
  EXPECT_TRUE(Ok({"--exclusive", "job.sh"}).spec.exclusive);
}

// ---------------------------------------------------------------------------------------------
// Memory and GPUs

TEST_F(Sbatch, MemorySizes) {
  struct Case {
    const char* text;
    uint64_t megabytes;
  };
  for (const Case& c : std::vector<Case>{{"512", 512},
                                         {"512M", 512},
                                         {"16G", 16384},
                                         {"16GB", 16384},
                                         {"2048K", 2},
                                         {"1T", 1048576},
                                         {"3MB", 3}}) {
    EXPECT_EQ(Ok({"--mem", c.text, "job.sh"}).spec.mem_per_node_mb, c.megabytes) << c.text;
  }
  EXPECT_EQ(Ok({"--mem-per-cpu=2G", "job.sh"}).spec.mem_per_cpu_mb, 2048u);
  EXPECT_EQ(Ok({"--mem-per-gpu=40G", "job.sh"}).spec.mem_per_gpu_mb, 40960u);
}

TEST_F(Sbatch, BadMemoryIsSlurmsError) {
  EXPECT_EQ(Fails({"--mem=lots", "job.sh"}), "sbatch: error: Invalid --mem specification");
  EXPECT_EQ(Fails({"--mem-per-cpu=1X", "job.sh"}),
            "sbatch: error: Invalid --mem-per-cpu specification");
}

TEST_F(Sbatch, MemoryOptionsExcludeEachOtherButALaterSourceWins) {
  EXPECT_EQ(Fails({"--mem=1G", "--mem-per-cpu=1G", "job.sh"}),
            "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.");
  Script("#SBATCH --mem=8G");
  SbatchRequest r = Ok({"--mem-per-cpu=1G", "job.sh"});
  EXPECT_EQ(r.spec.mem_per_cpu_mb, 1024u);
  EXPECT_EQ(r.spec.mem_per_node_mb, 0u);
  environment["SBATCH_MEM_PER_CPU"] = "1G";
  environment["SBATCH_MEM_PER_GPU"] = "1G";
  EXPECT_EQ(Fails({"job.sh"}),
            "sbatch: fatal: SBATCH_MEM_PER_CPU, SBATCH_MEM_PER_GPU, and SBATCH_MEM_PER_NODE are "
            "mutually exclusive.");
}

TEST_F(Sbatch, ZeroMemoryIsNotSupportedAndSaysSo) {
  SbatchRequest r = Ok({"--mem=0", "job.sh"});
  EXPECT_EQ(r.spec.mem_per_node_mb, 0u);
  EXPECT_EQ(r.notices.size(), 1u);
  EXPECT_NE(r.notices[0].find("--mem=0"), std::string::npos);
}

TEST_F(Sbatch, GresGpuIsPerNodeAndOtherGresIsKept) {
  SbatchRequest r = Ok({"--gres=gpu:2", "job.sh"});
  EXPECT_EQ(r.spec.gpus_per_node, 2u);
  EXPECT_EQ(r.spec.gpu_type, "");
  r = Ok({"--gres", "gpu:a100:4,nic:1", "job.sh"});
  EXPECT_EQ(r.spec.gpus_per_node, 4u);
  EXPECT_EQ(r.spec.gpu_type, "a100");
  ASSERT_EQ(r.spec.other_gres.size(), 1u);
  EXPECT_EQ(r.spec.other_gres[0].name, "nic");
  EXPECT_EQ(r.spec.other_gres[0].count, 1u);
  EXPECT_EQ(Ok({"--gres=gres/gpu:1", "job.sh"}).spec.gpus_per_node, 1u);
  Script("#SBATCH --gres=gpu:2");
  EXPECT_EQ(Ok({"--gres=none", "job.sh"}).spec.gpus_per_node, 0u);
}

TEST_F(Sbatch, BadGresIsAnError) {
  EXPECT_EQ(Fails({"--gres=gpu:h100:x", "job.sh"})
                .rfind("sbatch: error: Invalid generic resource (gres) specification: ", 0),
            0u);
  EXPECT_EQ(Fails({"--gres=gpu:a100:1,gpu:v100:1", "job.sh"}),
            "sbatch: error: --gres names gpu more than once; Drover gives a job one GPU type");
}

TEST_F(Sbatch, GpuOptions) {
  SbatchRequest r =
      Ok({"-G", "4", "--gpus-per-node=2", "--gpus-per-task=1", "--cpus-per-gpu=8", "job.sh"});
  EXPECT_EQ(r.spec.gpus, 4u);
  EXPECT_EQ(r.spec.gpus_per_node, 2u);
  EXPECT_EQ(r.spec.gpus_per_task, 1u);
  EXPECT_EQ(r.spec.cpus_per_gpu, 8u);
  r = Ok({"--gpus=a100:8", "--gpus-per-node=a100:4", "job.sh"});
  EXPECT_EQ(r.spec.gpus, 8u);
  EXPECT_EQ(r.spec.gpu_type, "a100");
}

TEST_F(Sbatch, GpuConflictsAreErrors) {
  EXPECT_EQ(Fails({"--gpus=a100:8", "--gpus-per-task=h100:1", "job.sh"}),
            "sbatch: error: conflicting GPU types 'a100' and 'h100'; Drover gives a job one type");
  EXPECT_EQ(Fails({"--gres=gpu:2", "--gpus-per-node=4", "job.sh"}),
            "sbatch: error: --gres=gpu and --gpus-per-node disagree on the GPUs per node; give "
            "one");
  EXPECT_EQ(Fails({"--gpus=x", "job.sh"}),
            "sbatch: error: Invalid --gpus specification 'x' (expected [type:]count, e.g. 4 or "
            "a100:4)");
}

TEST_F(Sbatch, CpusPerTaskAndCpusPerGpuExcludeEachOther) {
  EXPECT_EQ(Fails({"-c", "2", "--cpus-per-gpu=4", "job.sh"}),
            "sbatch: fatal: --cpus-per-task, --tres-per-task=cpu:#, and --cpus-per-gpu are "
            "mutually exclusive");
  environment["SBATCH_CPUS_PER_GPU"] = "4";
  SbatchRequest r = Ok({"-c", "2", "job.sh"});
  EXPECT_EQ(r.spec.cpus_per_task, 2u);
  EXPECT_EQ(r.spec.cpus_per_gpu, 0u);
}

// ---------------------------------------------------------------------------------------------
// Time

TEST_F(Sbatch, TimeLimitFormatsInWholeMinutesRoundedUp) {
  struct Case {
    const char* text;
    int64_t seconds;
  };
  for (const Case& c : std::vector<Case>{{"90", 5400},
                                         {"1:30", 120},
                                         {"1:00:00", 3600},
                                         {"2-0", 172800},
                                         {"2-12:30", 2 * 86400 + 12 * 3600 + 1800},
                                         {"1-00:00:30", 86400 + 60},
                                         {"UNLIMITED", kUnlimitedSeconds},
                                         {"infinite", kUnlimitedSeconds},
                                         {"0", kUnlimitedSeconds},
                                         {"-1", kUnlimitedSeconds}}) {
    EXPECT_EQ(Ok({"-t", c.text, "job.sh"}).spec.time_limit_seconds, c.seconds) << c.text;
  }
  EXPECT_EQ(Ok({"--time-min=30", "--time=1:00:00", "job.sh"}).spec.time_min_seconds, 1800);
}

TEST_F(Sbatch, BadTimeIsSlurmsError) {
  EXPECT_EQ(Fails({"--time=1:2:3:4", "job.sh"}), "sbatch: error: Invalid --time specification");
  EXPECT_EQ(Fails({"--time-min=x", "job.sh"}), "sbatch: error: Invalid --time-min specification");
}

TEST_F(Sbatch, BeginTimes) {
  EXPECT_EQ(Ok({"--begin=now+60", "job.sh"}).spec.begin_time, kNow + 60);
  EXPECT_EQ(Ok({"-b", "now+1hour", "job.sh"}).spec.begin_time, kNow + 3600);
  EXPECT_EQ(Ok({"--begin=2030-01-20T12:34:00", "job.sh"}).spec.begin_time, 1895142840);
  EXPECT_EQ(Ok({"--begin=16:00", "job.sh"}).spec.begin_time, 1700064000);  // tomorrow
  EXPECT_EQ(Fails({"--begin=soon", "job.sh"}), "sbatch: error: Invalid --begin specification");
}

TEST_F(Sbatch, DeadlineIsCheckedButHasNoEffect) {
  SbatchRequest r = Ok({"--deadline=now+2hours", "job.sh"});
  EXPECT_EQ(r.notices, std::vector<std::string>{
                           "sbatch: warning: --deadline is accepted but has no effect in Drover"});
  EXPECT_EQ(Fails({"--deadline=never", "job.sh"}),
            "sbatch: error: Invalid --deadline specification");
  EXPECT_EQ(Fails({"--begin=now+2hours", "--deadline=now+1hour", "job.sh"}),
            "sbatch: error: Incompatible begin and deadline time specification");
}

// ---------------------------------------------------------------------------------------------
// Scheduling and control

TEST_F(Sbatch, ArrayIsPassedAsGiven) {
  EXPECT_EQ(Ok({"-a", "0-15%4", "job.sh"}).array, "0-15%4");
  EXPECT_EQ(Ok({"--array=1,3,5", "job.sh"}).array, "1,3,5");
}

TEST_F(Sbatch, Dependencies) {
  SbatchRequest r = Ok({"-d", "afterok:12:13", "job.sh"});
  ASSERT_EQ(r.spec.dependency.terms.size(), 2u);
  EXPECT_EQ(r.spec.dependency.terms[0].type, DependencyType::kAfterOk);
  EXPECT_EQ(r.spec.dependency.terms[1].job_id, 13u);
  r = Ok({"--dependency=singleton", "job.sh"});
  EXPECT_EQ(r.spec.dependency.terms[0].type, DependencyType::kSingleton);
  EXPECT_EQ(Fails({"-d", "afterok:x", "job.sh"}),
            "sbatch: error: invalid dependency 'afterok:x' (expected "
            "TYPE:JOBID[:JOBID...][+MINUTES], e.g. afterok:123, or singleton)");
}

TEST_F(Sbatch, HoldAndNice) {
  SbatchRequest r = Ok({"-H", "--nice=-5", "job.sh"});
  EXPECT_EQ(r.spec.hold, HoldKind::kUser);
  EXPECT_TRUE(r.hold);
  EXPECT_EQ(r.spec.nice, -5);
  EXPECT_EQ(Ok({"--hold", "--nice", "job.sh"}).spec.nice, 100);
  EXPECT_EQ(Fails({"--nice=3000000000", "job.sh"}),
            "sbatch: error: Invalid --nice value, out of range (+/- 2147483645)");
  EXPECT_EQ(Fails({"--nice=lots", "job.sh"}),
            "sbatch: error: Invalid --nice value \"lots\" (expected an integer)");
}

TEST_F(Sbatch, Signals) {
  SbatchRequest r = Ok({"--signal=USR1", "job.sh"});
  EXPECT_EQ(r.spec.signal_number, SIGUSR1);
  EXPECT_EQ(r.spec.signal_seconds, 60);
  EXPECT_FALSE(r.spec.signal_batch_only);
  r = Ok({"--signal=B:SIGTERM@120", "job.sh"});
  EXPECT_EQ(r.spec.signal_number, SIGTERM);
  EXPECT_EQ(r.spec.signal_seconds, 120);
  EXPECT_TRUE(r.spec.signal_batch_only);
  r = Ok({"--signal=10@30", "job.sh"});
  EXPECT_EQ(r.spec.signal_number, 10);
  EXPECT_EQ(r.spec.signal_seconds, 30);
  for (const char* bad : {"--signal=BOGUS", "--signal=USR1@x", "--signal=0", "--signal=X:USR1"})
    EXPECT_EQ(Fails({bad, "job.sh"}), "sbatch: error: Invalid --signal specification") << bad;
}

TEST_F(Sbatch, Requeue) {
  EXPECT_FALSE(Ok({"--no-requeue", "job.sh"}).spec.requeue);
  EXPECT_TRUE(Ok({"--no-requeue", "--requeue", "job.sh"}).spec.requeue);
}

TEST_F(Sbatch, SwitchesAndSegment) {
  SbatchRequest r = Ok({"--switches=2@10:00", "--segment=4", "job.sh"});
  EXPECT_EQ(r.spec.switches, 2u);
  EXPECT_EQ(r.spec.switch_wait_seconds, 600);
  EXPECT_EQ(r.spec.segment, 4u);
  EXPECT_EQ(Ok({"--switches=1", "job.sh"}).spec.switch_wait_seconds, -1);
  EXPECT_EQ(Fails({"--switches=2@x", "job.sh"}), "sbatch: error: Invalid --switches specification");
  EXPECT_EQ(Fails({"--segment=-1", "job.sh"}), "sbatch: error: Invalid --segment specification");
}

TEST_F(Sbatch, SubmissionFlags) {
  SbatchRequest r = Ok({"--parsable", "--test-only", "-W", "-Q", "job.sh"});
  EXPECT_TRUE(r.parsable && r.test_only && r.wait && r.quiet);
  r = Ok({"--wait", "--quiet", "job.sh"});
  EXPECT_TRUE(r.wait && r.quiet);
  EXPECT_EQ(Fails({"-Q", "-v", "job.sh"}),
            "sbatch: error: don't specify both --verbose (-v) and --quiet (-Q)");
}

TEST_F(Sbatch, UidAndGidAreForRootOnly) {
  EXPECT_EQ(Fails({"--uid=0", "job.sh"}), "sbatch: error: --uid only permitted by root user");
  EXPECT_EQ(Fails({"--gid=0", "job.sh"}), "sbatch: error: --gid only permitted by root user");
  uid = 0;
  EXPECT_EQ(
      Ok({"--uid=bob", "job.sh"}).notices,
      std::vector<std::string>{"sbatch: warning: --uid is accepted but has no effect in Drover"});
}

// ---------------------------------------------------------------------------------------------
// Options with no effect

TEST_F(Sbatch, OptionsWithNoEffectAreAcceptedWithOneNoticeEach) {
  SbatchRequest r =
      Ok({"--mail-type=END,FAIL", "--mail-user=a@b", "--mail-user=c@d", "--wckey=w", "-L", "lic:1",
          "--cpu-freq=high", "-m", "block", "--profile=all", "job.sh"});
  EXPECT_EQ(r.notices,
            (std::vector<std::string>{
                "sbatch: warning: --mail-type is accepted but has no effect in Drover",
                "sbatch: warning: --mail-user is accepted but has no effect in Drover",
                "sbatch: warning: --wckey is accepted but has no effect in Drover",
                "sbatch: warning: --licenses is accepted but has no effect in Drover",
                "sbatch: warning: --cpu-freq is accepted but has no effect in Drover",
                "sbatch: warning: --distribution is accepted but has no effect in Drover",
                "sbatch: warning: --profile is accepted but has no effect in Drover"}));
}

TEST_F(Sbatch, OptionsWithNoEffectStillHaveTheirValuesChecked) {
  EXPECT_EQ(Fails({"--mail-type=SOMETIMES", "job.sh"}),
            "sbatch: error: Invalid --mail-type specification");
  EXPECT_EQ(Fails({"--open-mode=sideways", "job.sh"}),
            "sbatch: error: Invalid --open-mode specification");
  EXPECT_EQ(Fails({"--kill-on-invalid-dep=maybe", "job.sh"}),
            "sbatch: error: Invalid --kill-on-invalid-dep specification");
}

TEST_F(Sbatch, OptionalValueOptionsWithNoEffect) {
  SbatchRequest r = Ok({"-k", "--get-user-env", "--propagate=STACK", "job.sh"});
  EXPECT_EQ(r.notices.size(), 3u);
  // -k takes an optional value, so a letter after it in a bundle is its value.
  EXPECT_EQ(Ok({"-kH", "job.sh"}).spec.hold, HoldKind::kNone);
}

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

// ---------------------------------------------------------------------------------------------
// Every option sbatch's issue lists: each reaches the job or the request, or is said once on
// stderr; none is dropped silently.

TEST_F(Sbatch, EveryListedOptionReachesTheJob) {
  using Check = std::function<bool(const SbatchRequest&)>;
  struct Case {
    std::vector<std::string> args;
    Check check;
  };
  const std::vector<Case> cases = {
      {{"-J", "x"}, [](const SbatchRequest& r) { return r.spec.name == "x"; }},
      {{"-o", "o"}, [](const SbatchRequest& r) { return r.spec.stdout_path == "o"; }},
      {{"-e", "e"}, [](const SbatchRequest& r) { return r.spec.stderr_path == "e"; }},
      {{"-i", "i"}, [](const SbatchRequest& r) { return r.spec.stdin_path == "i"; }},
      {{"-p", "gpu"}, [](const SbatchRequest& r) { return r.spec.partitions.at(0) == "gpu"; }},
      {{"-A", "ml"}, [](const SbatchRequest& r) { return r.spec.account == "ml"; }},
      {{"-q", "high"}, [](const SbatchRequest& r) { return r.spec.qos == "high"; }},
      {{"-t", "5"}, [](const SbatchRequest& r) { return r.spec.time_limit_seconds == 300; }},
      {{"-N", "2"}, [](const SbatchRequest& r) { return r.spec.min_nodes == 2; }},
      {{"-n", "3"}, [](const SbatchRequest& r) { return r.spec.ntasks == 3; }},
      {{"-c", "4"}, [](const SbatchRequest& r) { return r.spec.cpus_per_task == 4; }},
      {{"--ntasks-per-node=2"}, [](const SbatchRequest& r) { return r.spec.ntasks_per_node == 2; }},
      {{"--mem=1G"}, [](const SbatchRequest& r) { return r.spec.mem_per_node_mb == 1024; }},
      {{"--mem-per-cpu=2G"}, [](const SbatchRequest& r) { return r.spec.mem_per_cpu_mb == 2048; }},
      {{"--mem-per-gpu=3G"}, [](const SbatchRequest& r) { return r.spec.mem_per_gpu_mb == 3072; }},
      {{"--gres=gpu:2"}, [](const SbatchRequest& r) { return r.spec.gpus_per_node == 2; }},
      {{"--gpus=4"}, [](const SbatchRequest& r) { return r.spec.gpus == 4; }},
      {{"-G", "a100:4"},
       [](const SbatchRequest& r) { return r.spec.gpus == 4 && r.spec.gpu_type == "a100"; }},
      {{"--gpus-per-node=2"}, [](const SbatchRequest& r) { return r.spec.gpus_per_node == 2; }},
      {{"--gpus-per-task=1"}, [](const SbatchRequest& r) { return r.spec.gpus_per_task == 1; }},
      {{"--cpus-per-gpu=6"}, [](const SbatchRequest& r) { return r.spec.cpus_per_gpu == 6; }},
      {{"-C", "a&b"}, [](const SbatchRequest& r) { return r.spec.constraint == "a&b"; }},
      {{"--nodelist=n[1-2]"}, [](const SbatchRequest& r) { return r.spec.nodelist.size() == 2; }},
      {{"-w", "n1"}, [](const SbatchRequest& r) { return r.spec.nodelist.at(0) == "n1"; }},
      {{"--exclude=n3"}, [](const SbatchRequest& r) { return r.spec.exclude.at(0) == "n3"; }},
      {{"-x", "n[3-4]"}, [](const SbatchRequest& r) { return r.spec.exclude.size() == 2; }},
      {{"--exclusive"}, [](const SbatchRequest& r) { return r.spec.exclusive; }},
      {{"--array=1-3"}, [](const SbatchRequest& r) { return r.array == "1-3"; }},
      {{"-a", "0-7%2"}, [](const SbatchRequest& r) { return r.array == "0-7%2"; }},
      {{"--dependency=afterany:7"},
       [](const SbatchRequest& r) { return r.spec.dependency.terms.at(0).job_id == 7; }},
      {{"-d", "singleton"},
       [](const SbatchRequest& r) {
         return r.spec.dependency.terms.at(0).type == DependencyType::kSingleton;
       }},
      {{"--begin=now+60"}, [](const SbatchRequest& r) { return r.spec.begin_time == kNow + 60; }},
      {{"--hold"}, [](const SbatchRequest& r) { return r.spec.hold == HoldKind::kUser; }},
      {{"-H"}, [](const SbatchRequest& r) { return r.hold; }},
      {{"--nice=7"}, [](const SbatchRequest& r) { return r.spec.nice == 7; }},
      {{"--signal=USR2@90"}, [](const SbatchRequest& r) { return r.spec.signal_seconds == 90; }},
      {{"--no-requeue"}, [](const SbatchRequest& r) { return !r.spec.requeue; }},
      {{"--requeue"}, [](const SbatchRequest& r) { return r.spec.requeue; }},
      {{"--export=NONE"},
       [](const SbatchRequest& r) { return !HasName(r.spec.environment, "HOME"); }},
      {{"--export-file=env.txt"},
       [](const SbatchRequest& r) { return Has(r.spec.environment, "FROM_FILE=1"); }},
      {{"--chdir=/tmp"}, [](const SbatchRequest& r) { return r.spec.work_dir == "/tmp"; }},
      {{"-D", "/srv"}, [](const SbatchRequest& r) { return r.spec.work_dir == "/srv"; }},
      {{"--comment=c"}, [](const SbatchRequest& r) { return r.spec.comment == "c"; }},
      {{"--switches=1@5"}, [](const SbatchRequest& r) { return r.spec.switches == 1; }},
      {{"--segment=2"}, [](const SbatchRequest& r) { return r.spec.segment == 2; }},
      {{"--reservation=r"}, [](const SbatchRequest& r) { return r.spec.reservation == "r"; }},
      {{"--time-min=10"}, [](const SbatchRequest& r) { return r.spec.time_min_seconds == 600; }},
      {{"--test-only"}, [](const SbatchRequest& r) { return r.test_only; }},
      {{"--wait"}, [](const SbatchRequest& r) { return r.wait; }},
      {{"-W"}, [](const SbatchRequest& r) { return r.wait; }},
      {{"-Q"}, [](const SbatchRequest& r) { return r.quiet; }},
  };
  files["/home/alice/work/env.txt"] = "FROM_FILE=1\n";
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.push_back("job.sh");
    SbatchRequest r = Ok(args);
    EXPECT_TRUE(c.check(r)) << args[0];
    EXPECT_TRUE(r.notices.empty()) << args[0];
  }
}

TEST_F(Sbatch, ListedOptionsDroverDoesNotActOnAreSaidOnce) {
  for (std::string option :
       {"--deadline=now+1hour", "--wckey=w", "--mail-type=END", "--mail-user=a@b"}) {
    std::string name = option.substr(2, option.find('=') - 2);
    SbatchRequest r = Ok({option, option, "job.sh"});
    EXPECT_EQ(r.notices,
              std::vector<std::string>{fmt::format(
                  "sbatch: warning: --{} is accepted but has no effect in Drover", name)})
        << option;
  }
}

TEST_F(Sbatch, AmbiguousPrefixesOfListedOptionsAreRefused) {
  for (const char* prefix : {"--exc", "--gpus-per", "--ntasks-per", "--no-", "--ti"}) {
    std::string error = Fails({std::string(prefix) + "=1", "job.sh"});
    EXPECT_EQ(
        error.rfind(fmt::format("sbatch: option '{}=1' is ambiguous; possibilities:", prefix), 0),
        0u)
        << error;
  }
  EXPECT_EQ(Ok({"--test", "--dead=now+60", "--chd=/x", "--depend=singleton", "job.sh"}).test_only,
            true);
  EXPECT_EQ(Ok({"--nodel=n1", "job.sh"}).spec.nodelist, std::vector<std::string>{"n1"});
  EXPECT_EQ(Ok({"--exclus", "job.sh"}).spec.exclusive, true);
}

TEST_F(Sbatch, BadFormsOfListedOptionsAreSlurmsErrors) {
  struct Case {
    const char* option;
    const char* error;
  };
  for (const Case& c : std::vector<Case>{
           {"-N0", "sbatch: error: invalid number of nodes (-N 0)"},
           {"-n0", "sbatch: error: Invalid numeric value \"0\" for --ntasks."},
           {"-cx", "sbatch: error: Invalid numeric value \"x\" for --cpus-per-task."},
           {"-t1:2:3:4", "sbatch: error: Invalid --time specification"},
           {"--mem=1Q", "sbatch: error: Invalid --mem specification"},
           {"--mem-per-gpu=x", "sbatch: error: Invalid --mem-per-gpu specification"},
           {"--begin=someday", "sbatch: error: Invalid --begin specification"},
           {"--deadline=never", "sbatch: error: Invalid --deadline specification"},
           {"--exclusive=everyone", "sbatch: error: Invalid --exclusive specification"},
           {"--signal=NOPE", "sbatch: error: Invalid --signal specification"},
           {"--open-mode=x", "sbatch: error: Invalid --open-mode specification"},
           {"--mail-type=NEVER", "sbatch: error: Invalid --mail-type specification"},
           {"--time-min=1-2-3", "sbatch: error: Invalid --time-min specification"},
           {"--switches=0", "sbatch: error: Invalid numeric value \"0\" for --switches."},
           {"--ntasks-per-node=-1",
            "sbatch: error: Invalid numeric value \"-1\" for --ntasks-per-node."},
       }) {
    EXPECT_EQ(Fails({c.option, "job.sh"}), c.error) << c.option;
  }
}

// ---------------------------------------------------------------------------------------------
// Slurm's date and time forms

TEST(SlurmTime, RelativeTimes) {
  EXPECT_EQ(ParseSlurmTime("now", kNow), kNow);
  EXPECT_EQ(ParseSlurmTime("now+60", kNow), kNow + 60);
  EXPECT_EQ(ParseSlurmTime("now + 5 minutes", kNow), kNow + 300);
  EXPECT_EQ(ParseSlurmTime("now+2days", kNow), kNow + 2 * 86400);
  EXPECT_EQ(ParseSlurmTime("now+1week", kNow), kNow + 7 * 86400);
  EXPECT_EQ(ParseSlurmTime("NOW-60", kNow), kNow - 60);
}

TEST(SlurmTime, ClockTimesAreTheNextSuchTime) {
  EXPECT_EQ(ParseSlurmTime("23:00", kNow), 1700002800);  // later today
  EXPECT_EQ(ParseSlurmTime("16:00", kNow), 1700064000);  // tomorrow
  EXPECT_EQ(ParseSlurmTime("4:00pm", kNow), 1700064000);
  EXPECT_EQ(ParseSlurmTime("16:00:00", kNow), 1700064000);
  EXPECT_EQ(ParseSlurmTime("midnight", kNow), 1700006400);
  EXPECT_EQ(ParseSlurmTime("noon tomorrow", kNow), 1700049600);
  EXPECT_EQ(ParseSlurmTime("tomorrow", kNow), 1700006400);
  EXPECT_EQ(ParseSlurmTime("teatime", kNow), 1700064000);
}

TEST(SlurmTime, Dates) {
  EXPECT_EQ(ParseSlurmTime("2030-01-20T12:34:00", kNow), 1895142840);
  EXPECT_EQ(ParseSlurmTime("2030-01-20T12:34", kNow), 1895142840);
  EXPECT_EQ(ParseSlurmTime("2030-01-20", kNow), 1895097600);
  EXPECT_EQ(ParseSlurmTime("12/25", kNow), 1703462400);  // this year
  EXPECT_EQ(ParseSlurmTime("01/02", kNow), 1704153600);  // next year
  EXPECT_EQ(ParseSlurmTime("12/25/24", kNow), 1735084800);
  EXPECT_EQ(ParseSlurmTime("122524", kNow), 1735084800);
  EXPECT_EQ(ParseSlurmTime("12.25.24", kNow), 1735084800);
  EXPECT_EQ(ParseSlurmTime("uts1700000500", kNow), 1700000500);
}

TEST(SlurmTime, Invalid) {
  for (const char* bad : {"", "soon", "25:00", "12:5", "now+", "now+3fortnights", "now 5", "13/01",
                          "2030-13-01", "uts12"})
    EXPECT_EQ(ParseSlurmTime(bad, kNow), std::nullopt) << bad;
}

}  // namespace
}  // namespace drover::cli
