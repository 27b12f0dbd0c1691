// The leveled log: Slurm's level names and numbers, which lines each level lets through with
// which prefix, and the debug flags.
#include "common/log.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
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

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// SlurmctldLogFile: time-stamped lines without the program's name, descriptor 2 there too, and
// SIGUSR2 or SIGHUP opens the file again after logrotate moved it. In a child process, whose
// stderr it takes.
TEST(LogFile, TimeStampedReopenedOnSigusr2AndSighup) {
  char pattern[] = "/tmp/drover_logfile.XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  const std::string path = dir + "/ctld.log";
  pid_t child = ::fork();
  if (child == 0) {
    SetProgram("droverctld");
    if (!SetUpDaemonLog(path)) ::_exit(2);
    Info("first");
    std::fputs("from a library\n", stderr);
    std::rename(path.c_str(), (path + ".1").c_str());
    ::raise(SIGUSR2);
    Error("after SIGUSR2");
    std::rename(path.c_str(), (path + ".2").c_str());
    ::raise(SIGHUP);  // reopens; does not end the process
    Info("after SIGHUP");
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const std::regex stamp(R"(\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\] )");
  const std::string first = ReadAll(path + ".1");
  EXPECT_TRUE(std::regex_search(first, std::regex(R"(^\[[-0-9T:.]+\] first\nfrom a library\n$)")))
      << first;
  EXPECT_TRUE(std::regex_match(ReadAll(path + ".2"),
                               std::regex(R"(\[[-0-9T:.]+\] error: after SIGUSR2\n)")))
      << ReadAll(path + ".2");
  EXPECT_TRUE(std::regex_match(ReadAll(path), std::regex(R"(\[[-0-9T:.]+\] after SIGHUP\n)")))
      << ReadAll(path);
  EXPECT_TRUE(std::regex_search(first, stamp)) << first;
  struct stat info {};
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0640u);
  std::filesystem::remove_all(dir);
}

// Without a log file, under systemd: a priority for journald on each line, and no name (journald
// records the unit's). Checked with JOURNAL_STREAM naming the child's stderr, a socket.
TEST(LogFile, JournaldGetsPriorities) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  pid_t child = ::fork();
  if (child == 0) {
    ::close(pair[0]);
    ::dup2(pair[1], STDERR_FILENO);
    struct stat err {};
    ::fstat(STDERR_FILENO, &err);
    std::string stream = std::to_string(err.st_dev) + ":" + std::to_string(err.st_ino);
    ::setenv("JOURNAL_STREAM", stream.c_str(), 1);
    SetProgram("droverd");
    if (!SetUpDaemonLog("")) ::_exit(2);
    Info("up");
    Error("broken");
    ::_exit(0);
  }
  ::close(pair[1]);
  std::string text;
  char buffer[256];
  for (ssize_t got; (got = ::read(pair[0], buffer, sizeof buffer)) > 0;) text.append(buffer, got);
  ::close(pair[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_EQ(text, "<6>up\n<3>error: broken\n");
}

}  // namespace
}  // namespace drover::log
