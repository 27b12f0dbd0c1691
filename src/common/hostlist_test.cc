// Tests for hostlist expansion and compression: table-driven cases for Slurm's notation and
// every error message, plus a seeded round-trip property over generated name lists.
#include "common/hostlist.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace drover {
namespace {

using Names = std::vector<std::string>;

std::string Describe(const Result<Names>& result) {
  if (!result.ok()) return "error: " + result.error();
  std::string out = "names:";
  for (const std::string& name : result.value()) out += " " + name;
  return out;
}

Names Numbered(const std::string& prefix, int first, int last, int width) {
  Names names;
  for (int i = first; i <= last; ++i) {
    std::string digits = std::to_string(i);
    if (static_cast<int>(digits.size()) < width) digits.insert(0, width - digits.size(), '0');
    names.push_back(prefix + digits);
  }
  return names;
}

TEST(ExpandHostlistTest, ExpandsSlurmNotation) {
  struct Case {
    std::string input;
    Names expected;
  };
  const Case cases[] = {
      {"n1", {"n1"}},
      {"login", {"login"}},
      {"n1,n2,login", {"n1", "n2", "login"}},
      {"  n1 ,\tn2  ", {"n1", "n2"}},
      {"n1,n1", {"n1", "n1"}},
      {"a-b.c", {"a-b.c"}},
      {"gpu[001-003]", {"gpu001", "gpu002", "gpu003"}},
      {"n[8-11]", {"n8", "n9", "n10", "n11"}},
      {"n[08-11]", {"n08", "n09", "n10", "n11"}},
      {"n[8-011]", {"n8", "n9", "n10", "n11"}},
      {"n[007]", {"n007"}},
      {"n[5-5]", {"n5"}},
      {"n[0-1]", {"n0", "n1"}},
      {"n[1-3,5]", {"n1", "n2", "n3", "n5"}},
      {"n[3,1-2]", {"n3", "n1", "n2"}},
      {"n[1,01]", {"n1", "n01"}},
      {"n[1,3-4],m7", {"n1", "n3", "n4", "m7"}},
      {"n[1-2],m[3-4]", {"n1", "n2", "m3", "m4"}},
      {"[1-3]", {"1", "2", "3"}},
      {"n[1-2]x", {"n1x", "n2x"}},
      {"n[ 1 - 2 , 5 ]", {"n1", "n2", "n5"}},
      {"rack[1-2]-n[01-02]", {"rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02"}},
      {"r[1-2]c[3,5]n[7-8]",
       {"r1c3n7", "r1c3n8", "r1c5n7", "r1c5n8", "r2c3n7", "r2c3n8", "r2c5n7", "r2c5n8"}},
      {"n[18446744073709551614-18446744073709551615]",
       {"n18446744073709551614", "n18446744073709551615"}},
      {"n[0000000000000000000000001-2]",
       {"n0000000000000000000000001", "n0000000000000000000000002"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.input);
    Result<Names> result = ExpandHostlist(c.input);
    ASSERT_TRUE(result.ok()) << result.error();
    EXPECT_EQ(*result, c.expected);
  }
}

TEST(ExpandHostlistTest, KeepsZeroPaddingOverWholeRanges) {
  struct Case {
    std::string input;
    Names expected;
  };
  const Case cases[] = {
      {"gpu[001-128]", Numbered("gpu", 1, 128, 3)},
      {"n[01-10]", Numbered("n", 1, 10, 2)},
      {"n[1-10]", Numbered("n", 1, 10, 1)},
      {"n[0001-1000]", Numbered("n", 1, 1000, 4)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.input);
    EXPECT_EQ(Describe(ExpandHostlist(c.input)), Describe(c.expected));
  }
}

TEST(ExpandHostlistTest, RejectsMalformedInputWithActionableMessages) {
  struct Case {
    std::string input;
    std::string error;
  };
  const Case cases[] = {
      {"", "empty hostlist"},
      {" \t ", "empty hostlist"},
      {"n[1-3", "unbalanced '[' in 'n[1-3'"},
      {"n[1-3,m5", "unbalanced '[' in 'n[1-3,m5'"},
      {"n1,m[2", "unbalanced '[' in 'm[2'"},
      {"n1-3]", "unbalanced ']' in 'n1-3]'"},
      {"n[1-3]]", "unbalanced ']' in 'n[1-3]]'"},
      {"n1],n2", "unbalanced ']' in 'n1]'"},
      {"n[1[2]]", "nested '[' in 'n[1[2]]'"},
      {"n[]", "empty brackets in 'n[]'"},
      {"n[ ]", "empty brackets in 'n[ ]'"},
      {"n[1,,3]", "empty range in 'n[1,,3]'"},
      {"n[1,]", "empty range in 'n[1,]'"},
      {"n[a-3]", "'a-3' is not a number or range in 'n[a-3]'"},
      {"n[1-b]", "'1-b' is not a number or range in 'n[1-b]'"},
      {"n[x]", "'x' is not a number or range in 'n[x]'"},
      {"n[1-2-3]", "'1-2-3' is not a number or range in 'n[1-2-3]'"},
      {"n[-3]", "'-3' is not a number or range in 'n[-3]'"},
      {"n[3-]", "'3-' is not a number or range in 'n[3-]'"},
      {"n[+3]", "'+3' is not a number or range in 'n[+3]'"},
      {"n[5-3]", "range 5-3 is backwards in 'n[5-3]'"},
      {"n[05-03]", "range 05-03 is backwards in 'n[05-03]'"},
      {"n[99999999999999999999]",
       "number '99999999999999999999' is too large in 'n[99999999999999999999]'"},
      {"n[1-18446744073709551616]",
       "number '18446744073709551616' is too large in 'n[1-18446744073709551616]'"},
      {"n1,,n2", "empty name after 'n1' in hostlist 'n1,,n2'"},
      {"n1, ,n2", "empty name after 'n1' in hostlist 'n1, ,n2'"},
      {",n1", "empty name at the start of hostlist ',n1'"},
      {"n[1-2],", "empty name after 'n[1-2]' in hostlist 'n[1-2],'"},
      {"n[1-1000001]",
       "hostlist expands to more than 1000000 names (the limit), reached at 'n[1-1000001]'"},
      {"n[0-18446744073709551615][0-18446744073709551615]",
       "hostlist expands to more than 1000000 names (the limit), reached at "
       "'n[0-18446744073709551615][0-18446744073709551615]'"},
      {std::string(100, 'x') + "[", "unbalanced '[' in '" + std::string(77, 'x') + "...'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.input);
    EXPECT_EQ(Describe(ExpandHostlist(c.input)), "error: " + c.error);
  }
}

TEST(ExpandHostlistTest, EnforcesTheNameCap) {
  struct Case {
    std::string input;
    size_t cap;
    std::string expected;  // Describe() of the result
  };
  const Case cases[] = {
      {"n[1-10]", 10, Describe(Numbered("n", 1, 10, 1))},
      {"n[1-11]", 10,
       "error: hostlist expands to more than 10 names (the limit), reached at "
       "'n[1-11]'"},
      {"n[1-5],m[1-6]", 10,
       "error: hostlist expands to more than 10 names (the limit), reached "
       "at 'm[1-6]'"},
      {"a,b,c", 2, "error: hostlist expands to more than 2 names (the limit), reached at 'c'"},
      {"r[1-4]n[1-3]", 11,
       "error: hostlist expands to more than 11 names (the limit), reached at "
       "'r[1-4]n[1-3]'"},
      {"a", 0, "error: hostlist expands to more than 0 names (the limit), reached at 'a'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.input);
    EXPECT_EQ(Describe(ExpandHostlist(c.input, c.cap)), c.expected);
  }
}

// Hostile input fails before anything is expanded: the default cap on names, and the text's
// length before it is parsed.
TEST(ExpandHostlistTest, RefusesHostileInputBeforeExpanding) {
  EXPECT_EQ(Describe(ExpandHostlist("n[0-999999999]")),
            "error: hostlist expands to more than 1000000 names (the limit), reached at "
            "'n[0-999999999]'");
  EXPECT_EQ(Describe(ExpandHostlist("n[0-99999][0-99999]")),
            "error: hostlist expands to more than 1000000 names (the limit), reached at "
            "'n[0-99999][0-99999]'");
  std::string long_text = "n[" + std::string(kMaxHostlistLength, '1') + "]";
  EXPECT_EQ(Describe(ExpandHostlist(long_text)),
            "error: hostlist of 1048579 characters is longer than the limit of 1048576 (use "
            "ranges such as n[1-100])");
  EXPECT_TRUE(ExpandHostlist("n[0-999999]").ok());
}

TEST(CompressHostlistTest, ProducesSlurmRangedForm) {
  struct Case {
    Names input;
    std::string expected;
  };
  const Case cases[] = {
      {{}, ""},
      {{"n7"}, "n7"},
      {{"login"}, "login"},
      {{"n1", "n2", "n3", "n5"}, "n[1-3,5]"},
      {{"n3", "n1", "n2"}, "n[3,1-2]"},
      {{"gpu001", "gpu002"}, "gpu[001-002]"},
      {{"n9", "n10"}, "n[9-10]"},
      {{"n09", "n10"}, "n[09-10]"},
      {{"n99", "n100"}, "n[99-100]"},
      {{"n0", "n1"}, "n[0-1]"},
      {{"n1", "n01"}, "n[1,01]"},
      {{"n1", "n02"}, "n[1,02]"},
      {{"n01", "n1"}, "n[01,1]"},
      {{"n10", "n9"}, "n[10,9]"},
      {{"n1", "n3", "n10"}, "n[1,3,10]"},
      {{"n1", "n1"}, "n[1,1]"},
      {{"a", "a"}, "a,a"},
      {{"n", "n1"}, "n,n1"},
      {{"login", "n1", "n2"}, "login,n[1-2]"},
      {{"n1", "m1", "n2"}, "n1,m1,n2"},
      {{"1", "2", "3"}, "[1-3]"},
      {{"n1x", "n2x"}, "n1x,n2x"},
      {{"rack1-n01", "rack1-n02", "rack1-n03", "rack1-n04", "rack2-n01", "rack2-n02", "rack2-n03",
        "rack2-n04"},
       "rack1-n[01-04],rack2-n[01-04]"},
      {{"n18446744073709551614", "n18446744073709551615"},
       "n[18446744073709551614-18446744073709551615]"},
      {{"n18446744073709551615", "n00000000000000000000"},
       "n[18446744073709551615,00000000000000000000]"},
      {{"n18446744073709551615", "n18446744073709551616"},
       "n18446744073709551615,n18446744073709551616"},
      {Numbered("gpu", 1, 128, 3), "gpu[001-128]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.expected);
    EXPECT_EQ(CompressHostlist(c.input), c.expected);
  }
}

TEST(CompressHostlistTest, SortedFormSortsAndRemovesDuplicates) {
  struct Case {
    Names input;
    std::string expected;
  };
  const Case cases[] = {
      {{}, ""},
      {{"n3", "n1", "n2", "n2"}, "n[1-3]"},
      {{"n10", "n9", "n1"}, "n[1,9-10]"},
      {{"b", "a", "n2", "a"}, "a,b,n2"},
      {{"n1", "n"}, "n,n1"},
      {{"n00", "n0", "n"}, "n,n[0,00]"},
      {{"a1-n1", "a01-n1", "a1-n1"}, "a01-n1,a1-n1"},
      {{"x9z", "x10z", "x9y"}, "x9y,x9z,x10z"},
      {{"n01", "n2", "n1"}, "n[1,01,2]"},
      {{"rack10-n1", "rack2-n1", "rack1-n2", "rack1-n1"}, "rack1-n[1-2],rack2-n1,rack10-n1"},
      {{"gpu10", "n5", "gpu9", "n4"}, "gpu[9-10],n[4-5]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.expected);
    EXPECT_EQ(CompressHostlistSorted(c.input), c.expected);
  }
}

TEST(CompressHostlistTest, HandlesTenThousandNodeLists) {
  Names names = Numbered("gpu", 1, 10000, 5);
  EXPECT_EQ(CompressHostlist(names), "gpu[00001-10000]");
  Result<Names> expanded = ExpandHostlist("gpu[00001-10000]");
  ASSERT_TRUE(expanded.ok()) << expanded.error();
  EXPECT_EQ(*expanded, names);

  Names reversed(names.rbegin(), names.rend());
  reversed.insert(reversed.end(), names.begin(), names.end());
  EXPECT_EQ(CompressHostlistSorted(reversed), "gpu[00001-10000]");
}

// SplitMix64: the same sequence on every platform, unlike std:: distributions.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return static_cast<size_t>(Next() % n); }

 private:
  uint64_t state_;
};

// Lists with runs of consecutive numbers, mixed widths, repeats and unnumbered names.
Names RandomNames(Random& random) {
  static const char* const kPrefixes[] = {"n", "gpu", "rack1-n", "a.b-", "", "x y", "n0", "r9c"};
  Names names;
  size_t count = 1 + random.Below(60);
  uint64_t number = random.Below(200);
  while (names.size() < count) {
    std::string prefix = kPrefixes[random.Below(std::size(kPrefixes))];
    size_t kind = random.Below(10);
    if (kind == 0) {
      names.push_back(prefix.empty() ? "solo" : prefix + "z");
      continue;
    }
    if (kind == 1) number = random.Below(2) ? 18446744073709551615ULL - random.Below(3) : 0;
    size_t width = random.Below(4) == 0 ? random.Below(6) : 0;
    size_t run = 1 + random.Below(8);
    for (size_t i = 0; i < run && names.size() < count; ++i) {
      std::string digits = std::to_string(number);
      if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
      names.push_back(prefix + digits);
      if (number < 18446744073709551615ULL) ++number;
    }
    if (random.Below(3) == 0) number = random.Below(200);
  }
  return names;
}

TEST(CompressHostlistTest, RoundTripsGeneratedLists) {
  Random random(20240601);
  for (int iteration = 0; iteration < 2000; ++iteration) {
    Names names = RandomNames(random);
    std::string compressed = CompressHostlist(names);
    SCOPED_TRACE(compressed);
    Result<Names> expanded = ExpandHostlist(compressed);
    ASSERT_TRUE(expanded.ok()) << expanded.error();
    ASSERT_EQ(*expanded, names);

    std::string sorted = CompressHostlistSorted(names);
    Result<Names> sorted_names = ExpandHostlist(sorted);
    ASSERT_TRUE(sorted_names.ok()) << sorted << ": " << sorted_names.error();
    std::set<std::string> unique(names.begin(), names.end());
    ASSERT_EQ(sorted_names->size(), unique.size()) << sorted;
    ASSERT_EQ(std::set<std::string>(sorted_names->begin(), sorted_names->end()), unique);
    EXPECT_EQ(CompressHostlistSorted(*sorted_names), sorted);
  }
}

}  // namespace
}  // namespace drover
