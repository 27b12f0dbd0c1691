// Table tests for --dependency: every accepted form with the terms it yields, every refused form
// with its exact message, the printed form, and round trips through ParseDependency.
#include "common/dependency.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace drover {
namespace {

constexpr DependencyType kAfter = DependencyType::kAfter;
constexpr DependencyType kAny = DependencyType::kAfterAny;
constexpr DependencyType kOk = DependencyType::kAfterOk;
constexpr DependencyType kNotOk = DependencyType::kAfterNotOk;
constexpr DependencyType kCorr = DependencyType::kAfterCorr;
constexpr DependencyType kSingleton = DependencyType::kSingleton;

std::string Invalid(std::string_view text) {
  return "invalid dependency '" + std::string(text) +
         "' (expected TYPE:JOBID[:JOBID...][+MINUTES], e.g. afterok:123, or singleton)";
}

std::string Mixed(std::string_view text) {
  return "invalid dependency '" + std::string(text) +
         "' (use ',' for all or '?' for any, not both)";
}

struct ParseCase {
  std::string_view input;
  std::vector<DependencyTerm> terms;  // expected when error is empty
  bool any = false;
  std::string error;  // exact message, empty for success
};

TEST(DependencyTest, Parse) {
  const ParseCase cases[] = {
      {"", {}, false, ""},
      {"   ", {}, false, ""},
      {"after:5", {{kAfter, 5, 0}}, false, ""},
      {"afterany:14", {{kAny, 14, 0}}, false, ""},
      {"afterok:123", {{kOk, 123, 0}}, false, ""},
      {"afternotok:7", {{kNotOk, 7, 0}}, false, ""},
      {"aftercorr:9", {{kCorr, 9, 0}}, false, ""},
      {"singleton", {{kSingleton, 0, 0}}, false, ""},
      {"SINGLETON", {{kSingleton, 0, 0}}, false, ""},
      {"AfterOK:3", {{kOk, 3, 0}}, false, ""},
      {" afterok:3 ", {{kOk, 3, 0}}, false, ""},
      {"after:5+30", {{kAfter, 5, 1800}}, false, ""},
      {"afterany:14+10", {{kAny, 14, 600}}, false, ""},
      {"afterok:1+0", {{kOk, 1, 0}}, false, ""},
      {"afternotok:2+1", {{kNotOk, 2, 60}}, false, ""},
      {"afterok:1:2", {{kOk, 1, 0}, {kOk, 2, 0}}, false, ""},
      {"afterok:1:2+5", {{kOk, 1, 300}, {kOk, 2, 300}}, false, ""},
      {"afterok:12:13,afterany:14+10", {{kOk, 12, 0}, {kOk, 13, 0}, {kAny, 14, 600}}, false, ""},
      {"afterok:1?afternotok:2", {{kOk, 1, 0}, {kNotOk, 2, 0}}, true, ""},
      {"afterok:1?singleton", {{kOk, 1, 0}, {kSingleton, 0, 0}}, true, ""},
      {"singleton,after:4", {{kSingleton, 0, 0}, {kAfter, 4, 0}}, false, ""},
      {"afterok:007", {{kOk, 7, 0}}, false, ""},
      {"afterok:18446744073709551615", {{kOk, 18446744073709551615u, 0}}, false, ""},

      {"afterok:1,afterok:2?afterok:3", {}, false, Mixed("afterok:1,afterok:2?afterok:3")},
      {"a,b?c", {}, false, Mixed("a,b?c")},
      {"afterok", {}, false, Invalid("afterok")},
      {"afterok:", {}, false, Invalid("afterok:")},
      {"afterok:x", {}, false, Invalid("afterok:x")},
      {"afterok:0", {}, false, Invalid("afterok:0")},
      {"afterok:-1", {}, false, Invalid("afterok:-1")},
      {"afterok:+5", {}, false, Invalid("afterok:+5")},
      {"afterok:123_4", {{kOk, 123, 0, 4}}, false, ""},
      {"afternotok:123_0:9+2", {{kNotOk, 123, 120, 0}, {kNotOk, 9, 120}}, false, ""},
      {"afterany:123_*", {{kAny, 123, 0}}, false, ""},
      {"afterok:123_", {}, false, Invalid("afterok:123_")},
      {"afterok:123_x", {}, false, Invalid("afterok:123_x")},
      {"afterok:123_4294967295", {}, false, Invalid("afterok:123_4294967295")},
      {"afterok:_4", {}, false, Invalid("afterok:_4")},
      {"afterok:1::2", {}, false, Invalid("afterok:1::2")},
      {"afterok:1:", {}, false, Invalid("afterok:1:")},
      {"afterok:18446744073709551616", {}, false, Invalid("afterok:18446744073709551616")},
      {"afterok: 1", {}, false, Invalid("afterok: 1")},
      {"afterok:1+", {}, false, Invalid("afterok:1+")},
      {"afterok:1+x", {}, false, Invalid("afterok:1+x")},
      {"afterok:1+-5", {}, false, Invalid("afterok:1+-5")},
      {"afterok:1+5+5", {}, false, Invalid("afterok:1+5+5")},
      {"afterok:1+5:2", {}, false, Invalid("afterok:1+5:2")},
      {"afterok:1+153722867280912931", {}, false, Invalid("afterok:1+153722867280912931")},
      {"aftercorr:1+5", {}, false, Invalid("aftercorr:1+5")},
      {"singleton:1", {}, false, Invalid("singleton:1")},
      {"singleton+5", {}, false, Invalid("singleton+5")},
      {"single", {}, false, Invalid("single")},
      {"expand:5", {}, false, Invalid("expand:5")},
      {"before:5", {}, false, Invalid("before:5")},
      {":123", {}, false, Invalid(":123")},
      {"afterok:1,", {}, false, Invalid("afterok:1,")},
      {",afterok:1", {}, false, Invalid(",afterok:1")},
      {"afterok:1??afterok:2", {}, false, Invalid("afterok:1??afterok:2")},
      {"afterok:1, afterok:2", {}, false, Invalid("afterok:1, afterok:2")},
      {"afterok:1?", {}, false, Invalid("afterok:1?")},
  };
  for (const ParseCase& c : cases) {
    SCOPED_TRACE(std::string(c.input));
    Result<DependencySpec> parsed = ParseDependency(c.input);
    if (!c.error.empty()) {
      ASSERT_FALSE(parsed.ok());
      EXPECT_EQ(parsed.error(), c.error);
      continue;
    }
    ASSERT_TRUE(parsed.ok()) << parsed.error();
    EXPECT_EQ(parsed->terms, c.terms);
    EXPECT_EQ(parsed->any, c.any);
  }
}

struct FormatCase {
  DependencySpec spec;
  std::string_view expected;
};

// A bare ID is afterany (Slurm's "-d 123"); afterburstbuffer is afterany without burst buffers.
TEST(DependencyTest, BareIdAndBurstBuffer) {
  auto bare = ParseDependency("123");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(FormatDependency(*bare), "afterany:123");
  auto mixed = ParseDependency("123?afterok:7");
  ASSERT_TRUE(mixed.ok());
  EXPECT_TRUE(mixed->any);
  EXPECT_EQ(FormatDependency(*mixed), "afterany:123?afterok:7");
  auto burst = ParseDependency("afterburstbuffer:9:10");
  ASSERT_TRUE(burst.ok());
  EXPECT_EQ(FormatDependency(*burst), "afterany:9:10");
  EXPECT_FALSE(ParseDependency("0").ok());
  EXPECT_FALSE(ParseDependency("12x").ok());
}

TEST(DependencyTest, Format) {
  const FormatCase cases[] = {
      {{}, ""},
      {{{{kOk, 12, 0}}, false}, "afterok:12"},
      {{{{kAfter, 5, 1800}}, false}, "after:5+30"},
      {{{{kSingleton, 0, 0}}, false}, "singleton"},
      {{{{kSingleton, 0, 0}, {kSingleton, 0, 0}}, false}, "singleton,singleton"},
      {{{{kOk, 1, 300}, {kOk, 2, 300}}, false}, "afterok:1:2+5"},
      {{{{kOk, 12, 0}, {kOk, 13, 0}, {kAny, 14, 600}}, false}, "afterok:12:13,afterany:14+10"},
      {{{{kOk, 1, 0}, {kOk, 2, 60}}, false}, "afterok:1,afterok:2+1"},  // delays differ
      {{{{kOk, 1, 0}, {kAny, 2, 0}, {kOk, 3, 0}}, false}, "afterok:1,afterany:2,afterok:3"},
      {{{{kOk, 1, 0}, {kNotOk, 2, 0}}, true}, "afterok:1?afternotok:2"},
      {{{{kCorr, 9, 0}, {kSingleton, 0, 0}}, true}, "aftercorr:9?singleton"},
      // "after:2:1?after:2" (found by fuzz_expressions): '?' keeps every job its own item.
      {{{{kAfter, 2, 0}, {kAfter, 1, 0}, {kAfter, 2, 0}}, true}, "after:2?after:1?after:2"},
  };
  for (const FormatCase& c : cases) {
    EXPECT_EQ(FormatDependency(c.spec), c.expected);
  }
}

TEST(DependencyTest, RoundTrip) {
  const std::string_view inputs[] = {
      "afterok:12:13,afterany:14+10",
      "afterok:1?afternotok:2",
      "singleton",
      "after:5+30",
      "aftercorr:3,singleton,afternotok:4:5+2",
      "afterok:1,afterok:2+1",
      "afterok:7_3:8,afterany:7_0+1",
  };
  for (std::string_view input : inputs) {
    Result<DependencySpec> parsed = ParseDependency(input);
    ASSERT_TRUE(parsed.ok()) << parsed.error();
    EXPECT_EQ(FormatDependency(*parsed), input);
    Result<DependencySpec> again = ParseDependency(FormatDependency(*parsed));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *parsed);
  }
}

}  // namespace
}  // namespace drover
