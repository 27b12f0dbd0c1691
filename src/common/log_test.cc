// The leveled log: Slurm's level names and numbers, which lines each level lets through with
// which prefix, and the debug flags.
#include "common/log.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace drover::log {
namespace {

// Captures the log's lines in a temporary file; restores the level, flags and sink after.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    file_ = std::tmpfile();
    ASSERT_NE(file_, nullptr);
    SetProgram("droverctld");
    SetSink(file_);
  }
  void TearDown() override {
    SetSink(nullptr);
    SetLevel(Level::kInfo);
    ChangeFlags(0, CurrentFlags());
    std::fclose(file_);
  }
  std::string Lines() {
    std::rewind(file_);
    std::string text;
    int c;
    while ((c = std::fgetc(file_)) != EOF) text += static_cast<char>(c);
    return text;
  }
  std::FILE* file_ = nullptr;
};

TEST(LogLevels, NamesAndNumbersAsSlurm) {
  EXPECT_EQ(ParseLevel("quiet"), Level::kQuiet);
  EXPECT_EQ(ParseLevel("INFO"), Level::kInfo);
  EXPECT_EQ(ParseLevel("Debug2"), Level::kDebug2);
  EXPECT_EQ(ParseLevel("debug5"), Level::kDebug5);
  EXPECT_EQ(ParseLevel("0"), Level::kQuiet);
  EXPECT_EQ(ParseLevel("6"), Level::kDebug2);
  EXPECT_EQ(ParseLevel("9"), Level::kDebug5);
  EXPECT_EQ(ParseLevel("06"), Level::kDebug2);
  EXPECT_EQ(ParseLevel("00"), Level::kQuiet);
  EXPECT_EQ(ParseLevel("10"), std::nullopt);
  EXPECT_EQ(ParseLevel("6x"), std::nullopt);
  EXPECT_EQ(ParseLevel("-1"), std::nullopt);
  EXPECT_EQ(ParseLevel("debug6"), std::nullopt);
  EXPECT_EQ(ParseLevel(""), std::nullopt);
  EXPECT_EQ(LevelName(Level::kVerbose), "verbose");
  EXPECT_EQ(LevelName(Level::kDebug3), "debug3");
}

TEST_F(LogTest, EachLevelWithItsPrefix) {
  SetLevel(Level::kDebug2);
  Error("cannot reach {}", "n1");
  Warning("odd");
  Info("cluster {} up", "c");
  Verbose("node n1 registered");
  Debug("cycle");
  Debug2("Processing RPC: {}", "Ping");
  At(Level::kDebug3, "not shown");
  EXPECT_EQ(Lines(),
            "droverctld: error: cannot reach n1\n"
            "droverctld: warning: odd\n"
            "droverctld: cluster c up\n"
            "droverctld: node n1 registered\n"
            "droverctld: debug:  cycle\n"
            "droverctld: debug2: Processing RPC: Ping\n");
}

TEST_F(LogTest, TheLevelFiltersAndChangesAtOnce) {
  SetLevel(Level::kInfo);
  Debug2("hidden");
  Verbose("hidden");
  Info("shown");
  EXPECT_FALSE(Enabled(Level::kVerbose));
  SetLevel(Level::kDebug);
  EXPECT_TRUE(Enabled(Level::kVerbose));
  Debug("now shown");
  SetLevel(Level::kQuiet);
  Error("nothing at quiet");
  EXPECT_EQ(Lines(), "droverctld: shown\ndroverctld: debug:  now shown\n");
}

TEST_F(LogTest, FlaggedMessagesNeedTheirFlag) {
  EXPECT_EQ(ParseFlag("tracejobs"), kFlagTraceJobs);
  EXPECT_EQ(ParseFlag("Agent"), kFlagAgent);
  EXPECT_EQ(ParseFlag("Backfill"), std::nullopt);  // Drover has no messages for it
  EXPECT_EQ(ParseFlag(""), std::nullopt);
  Flagged(kFlagTraceJobs, "JobId={} started", 1);
  EXPECT_EQ(ChangeFlags(kFlagTraceJobs | kFlagAgent, 0), kFlagTraceJobs | kFlagAgent);
  EXPECT_EQ(FlagNames(CurrentFlags()), "Agent,TraceJobs");
  Flagged(kFlagTraceJobs, "JobId={} started", 2);
  EXPECT_EQ(ChangeFlags(0, kFlagTraceJobs), kFlagAgent);
  Flagged(kFlagTraceJobs, "JobId={} started", 3);
  EXPECT_EQ(FlagNames(0), "none");
  EXPECT_EQ(Lines(), "droverctld: JobId=2 started\n");
}

}  // namespace
}  // namespace drover::log
