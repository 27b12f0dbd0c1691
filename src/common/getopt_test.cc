#include "common/getopt.h"

#include <gtest/gtest.h>

namespace drover {
namespace {

constexpr OptionSpec kSpecs[] = {
    {'p', "partition", OptionSpec::kRequired}, {0, "parsable", OptionSpec::kOptional},
    {'h', "noheader", OptionSpec::kNone},      {'l', "long", OptionSpec::kNone},
    {'N', "nodes", OptionSpec::kRequired},     {'s', "signal", OptionSpec::kRequired},
};

ParsedOptions Parse(std::vector<std::string> args) {
  auto parsed = ParseOptions(args, kSpecs);
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error());
  return parsed.ok() ? *parsed : ParsedOptions{};
}

std::string ErrorOf(std::vector<std::string> args) {
  auto parsed = ParseOptions(args, kSpecs);
  return parsed.ok() ? "" : parsed.error();
}

TEST(GetoptTest, LongWithEqualsOrSpace) {
  EXPECT_EQ(Parse({"--partition=gpu"}).Last("partition"), "gpu");
  EXPECT_EQ(Parse({"--partition", "gpu"}).Last("partition"), "gpu");
  EXPECT_EQ(Parse({"--partition="}).Last("partition"), "");
}

TEST(GetoptTest, ShortAttachedSeparateAndBundled) {
  EXPECT_EQ(Parse({"-N2"}).Last("nodes"), "2");
  EXPECT_EQ(Parse({"-N", "2"}).Last("nodes"), "2");
  ParsedOptions bundled = Parse({"-hlN3"});
  EXPECT_TRUE(bundled.Has("noheader"));
  EXPECT_TRUE(bundled.Has("long"));
  EXPECT_EQ(bundled.Last("nodes"), "3");
}

TEST(GetoptTest, OperandsAnywhereRepeatsAndDoubleDash) {
  ParsedOptions parsed = Parse({"12", "--signal", "USR2", "13", "-s", "TERM", "--", "-h"});
  EXPECT_EQ(parsed.operands, (std::vector<std::string>{"12", "13", "-h"}));
  EXPECT_EQ(parsed.All("signal"), (std::vector<std::string>{"USR2", "TERM"}));
  EXPECT_EQ(parsed.Last("signal"), "TERM");
  EXPECT_FALSE(parsed.Has("noheader"));
  EXPECT_EQ(Parse({"-"}).operands, std::vector<std::string>{"-"});
}

TEST(GetoptTest, PrefixesAndOptionalArguments) {
  EXPECT_EQ(Parse({"--part=x"}).Last("partition"), "x");
  EXPECT_EQ(Parse({"--parsable"}).Last("parsable"), "");
  EXPECT_EQ(Parse({"--parsable=;"}).Last("parsable"), ";");
  // An optional argument is never taken from the next word.
  EXPECT_EQ(Parse({"--parsable", "x"}).operands, std::vector<std::string>{"x"});
  EXPECT_EQ(ErrorOf({"--par"}),
            "option '--par' is ambiguous; possibilities: '--partition' '--parsable'");
}

TEST(GetoptTest, ErrorsInGnuWords) {
  EXPECT_EQ(ErrorOf({"--bogus"}), "unrecognized option '--bogus'");
  EXPECT_EQ(ErrorOf({"-z"}), "invalid option -- 'z'");
  EXPECT_EQ(ErrorOf({"-p"}), "option requires an argument -- 'p'");
  EXPECT_EQ(ErrorOf({"--partition"}), "option '--partition' requires an argument");
  EXPECT_EQ(ErrorOf({"--long=1"}), "option '--long' doesn't allow an argument");
}

}  // namespace
}  // namespace drover
