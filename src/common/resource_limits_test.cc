// The limit lists of --propagate and PropagateResourceLimits, and the entries jobs carry.
#include "common/resource_limits.h"

#include <gtest/gtest.h>

namespace drover {
namespace {

using Names = std::vector<std::string>;

TEST(ResourceLimits, ListsChooseSlurmsNamesInSlurmsOrder) {
  EXPECT_EQ(ParseLimitList("ALL")->size(), 10u);
  EXPECT_EQ(ParseLimitList("none").value(), Names{});
  EXPECT_EQ(ParseLimitList("stack, NOFILE,core").value(), (Names{"CORE", "NOFILE", "STACK"}));
  EXPECT_EQ(ParseLimitList("NONE,CPU").value(), Names{"CPU"});
  auto bad = ParseLimitList("NOFILE,FILES");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(),
            "'FILES' is not a resource limit (expected ALL, NONE or AS, CORE, CPU, DATA, FSIZE, "
            "MEMLOCK, NOFILE, NPROC, RSS, STACK)");
}

TEST(ResourceLimits, TheOptionWinsOverSlurmConf) {
  auto given = ChooseLimits(std::string("NOFILE"), std::string("NONE"), "");
  EXPECT_EQ(given->names, Names{"NOFILE"});
  EXPECT_TRUE(given->user_requested);
  EXPECT_EQ(ChooseLimits(std::string(""), std::nullopt, "")->names.size(), 10u);  // --propagate
  auto conf = ChooseLimits(std::nullopt, std::nullopt, "");  // slurm.conf's default: ALL
  EXPECT_EQ(conf->names.size(), 10u);
  EXPECT_FALSE(conf->user_requested);
  EXPECT_EQ(ChooseLimits(std::nullopt, std::string("CORE,CPU"), "")->names, (Names{"CORE", "CPU"}));
  auto except = ChooseLimits(std::nullopt, std::nullopt, "AS,CORE,CPU,DATA,FSIZE,MEMLOCK,NPROC");
  EXPECT_EQ(except->names, (Names{"NOFILE", "RSS", "STACK"}));
}

TEST(ResourceLimits, EntriesRoundTripAndMarkWhatTheUserAskedFor) {
  PropagatedLimit limit{"NOFILE", RLIMIT_NOFILE, 256, RLIM_INFINITY, true};
  EXPECT_EQ(FormatPropagatedLimit(limit), "NOFILE=U256:unlimited");
  EXPECT_EQ(ParsePropagatedLimit("NOFILE=U256:unlimited").value(), limit);
  auto conf = ParsePropagatedLimit("CORE=0:unlimited");
  ASSERT_TRUE(conf);
  EXPECT_EQ(conf->resource, RLIMIT_CORE);
  EXPECT_FALSE(conf->user_requested);
  for (const char* bad : {"NOFILE=256", "FILES=1:2", "NOFILE=x:2", "NOFILE:1=2", "=1:2"})
    EXPECT_FALSE(ParsePropagatedLimit(bad)) << bad;
}

TEST(ResourceLimits, CaptureReadsThisProcesssLimits) {
  rlimit files{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &files), 0);
  std::vector<std::string> entries = CaptureLimits({{"NOFILE"}, true});
  ASSERT_EQ(entries.size(), 1u);
  auto captured = ParsePropagatedLimit(entries[0]);
  ASSERT_TRUE(captured);
  EXPECT_EQ(captured->soft, files.rlim_cur);
  EXPECT_EQ(captured->hard, files.rlim_max);
  EXPECT_TRUE(captured->user_requested);
  EXPECT_EQ(CaptureLimits({{}, false}).size(), 0u);
}

}  // namespace
}  // namespace drover
