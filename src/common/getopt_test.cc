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

TEST(GetoptTest, ScanKeepsWhereEachOptionCameFrom) {
  std::vector<std::string> args = {"-N", "2", "--parsable", "--parsable=", "x", "-hl"};
  OptionScan scan = ScanOptions(args, kSpecs);
  ASSERT_FALSE(scan.error);
  ASSERT_EQ(scan.uses.size(), 5u);
  EXPECT_EQ(scan.uses[0].spec->long_name, "nodes");
  EXPECT_EQ(scan.uses[0].argument, 1u);         // the value's word
  EXPECT_EQ(scan.uses[1].value, std::nullopt);  // an optional argument left out...
  EXPECT_EQ(scan.uses[2].value, "");            // ...is not an empty one
  EXPECT_EQ(scan.uses[3].spec->long_name, "noheader");
  EXPECT_EQ(scan.uses[4].argument, 5u);
  EXPECT_EQ(scan.operands, std::vector<size_t>{4});
}

TEST(GetoptTest, ScanStopsAtTheFirstOperandWithPlus) {
  std::vector<std::string> args = {"-l", "script.sh", "-h", "--", "x"};
  OptionScan scan = ScanOptions(args, kSpecs, {.stop_at_operand = true});
  ASSERT_EQ(scan.uses.size(), 1u);
  EXPECT_EQ(scan.operands, (std::vector<size_t>{1, 2, 3, 4}));
  std::vector<std::string> dashes = {"-l", "--", "-h"};
  EXPECT_EQ(ScanOptions(dashes, kSpecs, {.stop_at_operand = true}).operands,
            std::vector<size_t>{2});
  // Without '+', GNU's permutation: options after an operand are still options.
  EXPECT_EQ(ScanOptions(args, kSpecs).uses.size(), 2u);
}

TEST(GetoptTest, ScanErrorKeepsWhatCameBeforeIt) {
  std::vector<std::string> args = {"-l", "--bogus=1", "-h"};
  OptionScan scan = ScanOptions(args, kSpecs);
  EXPECT_EQ(scan.error, "unrecognized option '--bogus'");
  EXPECT_EQ(scan.error_argument, 1u);
  ASSERT_EQ(scan.uses.size(), 1u);
  EXPECT_EQ(scan.uses[0].spec->long_name, "long");
  EXPECT_EQ(ScanOptions(args, kSpecs, {.quote_whole_argument = true}).error,
            "unrecognized option '--bogus=1'");
  std::vector<std::string> ambiguous = {"--par=1"};
  EXPECT_EQ(ScanOptions(ambiguous, kSpecs, {.quote_whole_argument = true}).error,
            "option '--par=1' is ambiguous; possibilities: '--partition' '--parsable'");
}

TEST(GetoptTest, FirstRefusedIsTheEarlierOfAnOperandAndAnError) {
  auto refused = [](std::vector<std::string> args) {
    return FirstRefused(ScanOptions(args, kSpecs));
  };
  EXPECT_EQ(refused({"-l", "-h"}), std::nullopt);
  EXPECT_EQ(refused({"-l", "stray", "--bogus"}), 1u);
  EXPECT_EQ(refused({"-l", "--bogus", "stray"}), 1u);
  EXPECT_EQ(refused({"stray", "-p"}), 0u);
  EXPECT_EQ(refused({"-l", "-p"}), 1u);  // -p lacks its value
}

TEST(GetoptTest, ScanNamesTheOptionThatLacksItsValue) {
  std::vector<std::string> short_form = {"-l", "-p"}, long_form = {"--nodes"}, unknown = {"-x"};
  ASSERT_NE(ScanOptions(short_form, kSpecs).lacks_value, nullptr);
  EXPECT_EQ(ScanOptions(short_form, kSpecs).lacks_value->long_name, "partition");
  ASSERT_NE(ScanOptions(long_form, kSpecs).lacks_value, nullptr);
  EXPECT_EQ(ScanOptions(long_form, kSpecs).lacks_value->long_name, "nodes");
  EXPECT_EQ(ScanOptions(unknown, kSpecs).lacks_value, nullptr);
}

}  // namespace
}  // namespace drover
