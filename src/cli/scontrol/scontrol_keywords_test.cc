// scontrol's keyword abbreviations (Slurm's minimum lengths and order), interactive lines split
// into words, and errnumstr's texts.
#include "cli/scontrol/scontrol_keywords.h"

#include <gtest/gtest.h>

namespace drover::cli::scontrol {
namespace {

TEST(ScontrolKeywords, AbbreviationsAsSlurmTakesThem) {
  EXPECT_TRUE(MatchesKeyword("sh", "show", 3) == false);
  EXPECT_TRUE(MatchesKeyword("sho", "show", 3));
  EXPECT_TRUE(MatchesKeyword("SHOW", "show", 3));
  EXPECT_TRUE(MatchesKeyword("u", "update", 1));
  EXPECT_TRUE(MatchesKeyword("upd", "update", 1));
  EXPECT_FALSE(MatchesKeyword("updates", "update", 1));  // longer than the name
  EXPECT_FALSE(MatchesKeyword("upx", "update", 1));
  EXPECT_TRUE(MatchesKeyword("j", "jobs", 1));
  EXPECT_FALSE(MatchesKeyword("p", "partitions", 2));
  EXPECT_TRUE(MatchesKeyword("pa", "partitions", 2));
  EXPECT_FALSE(MatchesKeyword("takeove", "takeover", 8));
}

TEST(ScontrolKeywords, FirstMatchInSlurmsOrder) {
  constexpr Keyword kTable[] = {{"completing", 2}, {"cluster", 2}, {"create", 2}};
  EXPECT_EQ(FindKeyword("co", kTable)->name, "completing");
  EXPECT_EQ(FindKeyword("cl", kTable)->name, "cluster");
  EXPECT_EQ(FindKeyword("cr", kTable)->name, "create");
  EXPECT_EQ(FindKeyword("c", kTable), nullptr);
  EXPECT_EQ(FindKeyword("cx", kTable), nullptr);
}

TEST(ScontrolKeywords, SplitsInteractiveLines) {
  auto words = SplitCommandLine("  update JobId=12 Comment=\"two words\"  Name='a b'\n");
  ASSERT_TRUE(words) << words.error();
  EXPECT_EQ(*words,
            (std::vector<std::string>{"update", "JobId=12", "Comment=two words", "Name=a b"}));
  EXPECT_TRUE(SplitCommandLine("")->empty());
  EXPECT_FALSE(SplitCommandLine("show job \"12"));
}

TEST(ScontrolKeywords, ErrorNumbers) {
  EXPECT_EQ(ErrorNumberText(2017), "Invalid job id specified");
  EXPECT_EQ(ErrorNumberText(2002), "Access/permission denied");
  EXPECT_EQ(ErrorNumberText(0), "No error");
  EXPECT_EQ(ErrorNumberText(2), "No such file or directory");
}

}  // namespace
}  // namespace drover::cli::scontrol
