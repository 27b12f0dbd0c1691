#include "cli/srun/srun_options.h"

#include <gtest/gtest.h>

namespace drover::cli {
namespace {

constexpr OptionSpec kSpecs[] = {
    {'N', "nodes", OptionSpec::kRequired}, {'n', "ntasks", OptionSpec::kRequired},
    {'l', "label", OptionSpec::kNone},     {0, "ntasks-per-node", OptionSpec::kRequired},
    {0, "pty", OptionSpec::kNone},         {'K', "kill-on-bad-exit", OptionSpec::kOptional},
};

size_t Start(std::vector<std::string> args) {
  return CommandStart(args, kSpecs);
}

TEST(SrunOptionsTest, TheCommandStartsAtTheFirstOperand) {
  EXPECT_EQ(Start({"-N2", "-n", "4", "-l", "hostname", "-l"}), 4u);
  EXPECT_EQ(Start({"--nodes", "2", "--pty", "bash", "-i"}), 3u);
  EXPECT_EQ(Start({"--nodes=2", "--ntasks-per", "2", "python", "x.py", "--nodes", "3"}), 3u);
  EXPECT_EQ(Start({"-lN", "2", "env"}), 2u);
  EXPECT_EQ(Start({"-K", "true"}), 1u);  // an optional argument is never the next word
  EXPECT_EQ(Start({"-n2", "--", "-weird-name"}), 2u);
  EXPECT_EQ(Start({"-l"}), 1u);
}

TEST(SrunOptionsTest, MultiProgLinesRanksAndSubstitutions) {
  auto parsed = ParseMultiProg("# comment\n0 echo zero %t\n1-2 echo other %t %o\n3,4 hostname\n",
                               "mp.conf", 5);
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  EXPECT_EQ(parsed->at(0), (std::vector<std::string>{"echo", "zero", "0"}));
  EXPECT_EQ(parsed->at(2), (std::vector<std::string>{"echo", "other", "2", "1"}));
  EXPECT_EQ(parsed->at(4), (std::vector<std::string>{"hostname"}));
  auto star = ParseMultiProg("* echo %t\n", "mp.conf", 3);
  ASSERT_TRUE(star.ok());
  EXPECT_EQ(star->at(2), (std::vector<std::string>{"echo", "2"}));
}

TEST(SrunOptionsTest, MultiProgErrorsNameTheFileAndLine) {
  EXPECT_EQ(ParseMultiProg("0 true\n", "mp.conf", 2).error(), "mp.conf: no program for task 1");
  EXPECT_EQ(ParseMultiProg("0 true\n1\n", "mp.conf", 2).error(),
            "mp.conf line 2: no program for ranks 1");
  EXPECT_EQ(ParseMultiProg("0-x true\n", "mp.conf", 2).error(),
            "mp.conf line 1: invalid task ranks '0-x' for 2 tasks");
  EXPECT_EQ(ParseMultiProg("0-5 true\n", "mp.conf", 2).error(),
            "mp.conf line 1: invalid task ranks '0-5' for 2 tasks");
}

TEST(SrunOptionsTest, InputVariablesStandForOptions) {
  constexpr InputVariable kTable[] = {
      {"SRUN_CPUS", "ntasks"},
      {"SLURM_LABELIO", "label"},
      {"SLURM_KILL", "kill-on-bad-exit"},
      {"SLURM_NTASKS_TOO", "ntasks"},
      {"SLURM_NOT_HERE", "no-such"},
  };
  std::map<std::string, std::string> env{{"SRUN_CPUS", "4"},
                                         {"SLURM_LABELIO", "yes"},
                                         {"SLURM_KILL", ""},
                                         {"SLURM_NTASKS_TOO", "9"},
                                         {"SLURM_NOT_HERE", "1"}};
  EXPECT_EQ(InputVariableWords(kTable, kSpecs, env),
            (std::vector<std::string>{"--ntasks=4", "--label", "--kill-on-bad-exit"}));
  // A flag is set by "", "yes" or a non-zero number only.
  for (const char* off : {"no", "0", "maybe"}) {
    env = {{"SLURM_LABELIO", off}};
    EXPECT_TRUE(InputVariableWords(kTable, kSpecs, env).empty()) << off;
  }
  env = {{"SLURM_LABELIO", "2"}};
  EXPECT_EQ(InputVariableWords(kTable, kSpecs, env), (std::vector<std::string>{"--label"}));
}

TEST(SrunOptionsTest, ExportChoosesTheStepsEnvironment) {
  std::map<std::string, std::string> env{
      {"HOME", "/h"}, {"EDITOR", "vi"}, {"SLURM_JOB_ID", "7"}, {"PATH", "/bin"}};
  using Env = std::map<std::string, std::string>;
  EXPECT_EQ(ExportedEnvironment("", env), env);
  EXPECT_EQ(ExportedEnvironment("ALL", env), env);
  EXPECT_EQ(ExportedEnvironment("NONE", env), (Env{{"SLURM_JOB_ID", "7"}}));
  EXPECT_EQ(ExportedEnvironment("EDITOR,ARG1=test", env),
            (Env{{"ARG1", "test"}, {"EDITOR", "vi"}, {"SLURM_JOB_ID", "7"}}));
  Env all = ExportedEnvironment("ALL,EDITOR=emacs,NEW=1", env);
  EXPECT_EQ(all.at("EDITOR"), "vi");  // the caller's value wins with ALL
  EXPECT_EQ(all.at("NEW"), "1");
  EXPECT_EQ(all.at("HOME"), "/h");
}

TEST(SrunOptionsTest, HetGroupListsAsSlurmsSrunReadsThem) {
  EXPECT_EQ(HighestHetGroup("0").value(), 0u);
  EXPECT_EQ(HighestHetGroup("0,2").value(), 2u);
  EXPECT_EQ(HighestHetGroup("[1-3]").value(), 3u);
  EXPECT_EQ(HighestHetGroup("127").value(), 127u);
  for (const char* bad : {"", "128", "x", "2-1", "-1", "0,,1", "[]"}) {
    auto result = HighestHetGroup(bad);
    ASSERT_FALSE(result) << bad;
    EXPECT_EQ(result.error(), std::string("Invalid --het-group value: ") + bad);
  }
}

TEST(SrunOptionsTest, SlurmdDebugTakesNumbersAboveErrorOrSlurmdDebugNames) {
  EXPECT_EQ(SlurmdDebugLevel("0").value(), 2);  // errors only
  EXPECT_EQ(SlurmdDebugLevel("2").value(), kLogVerbose);
  EXPECT_EQ(SlurmdDebugLevel("quiet").value(), 0);
  EXPECT_EQ(SlurmdDebugLevel("Verbose").value(), kLogVerbose);
  EXPECT_EQ(SlurmdDebugLevel("debug5").value(), 9);
  EXPECT_EQ(SlurmdDebugLevel("loud").error(), "Invalid --slurmd-debug value: loud");
  EXPECT_FALSE(SlurmdDebugLevel("8"));
}

TEST(SrunOptionsTest, MsgTimeoutIsAPositiveNumber) {
  EXPECT_EQ(PositiveSeconds("15", "msg-timeout").value(), 15);
  EXPECT_EQ(PositiveSeconds("0", "msg-timeout").error(),
            "Invalid numeric value \"0\" for --msg-timeout.");
  EXPECT_FALSE(PositiveSeconds("ten", "msg-timeout"));
}

}  // namespace
}  // namespace drover::cli
