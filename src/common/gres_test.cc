// Table tests for GRES strings: every element form, socket lists, counts with suffixes, the
// print form and round trips, and each malformed element with its exact message.
#include "common/gres.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace drover {
namespace {

std::string Invalid(std::string_view item) {
  return "invalid GRES '" + std::string(item) + "' (expected name[:type][:count], e.g. gpu:h100:8)";
}

std::string BadSockets(std::string_view sockets, std::string_view item) {
  return "invalid sockets '" + std::string(sockets) + "' in GRES '" + std::string(item) +
         "' (expected socket numbers or ranges, e.g. (S:0-1) or (S:0,2))";
}

struct ParseCase {
  std::string_view input;
  std::vector<GresSpec> specs;  // expected when error is empty
  std::string_view formatted;   // FormatGres of the result
  std::string error;            // exact message, empty for success
};

TEST(GresTest, ParseAndFormat) {
  const ParseCase cases[] = {
      {"", {}, "", ""},
      {"  ", {}, "", ""},
      {"(null)", {}, "", ""},
      {"gpu", {{"gpu", "", 1, {}}}, "gpu:1", ""},
      {"gpu:8", {{"gpu", "", 8, {}}}, "gpu:8", ""},
      {"gpu:0", {{"gpu", "", 0, {}}}, "gpu:0", ""},
      {"gpu:h100", {{"gpu", "h100", 1, {}}}, "gpu:h100:1", ""},
      {"gpu:h100:8", {{"gpu", "h100", 8, {}}}, "gpu:h100:8", ""},
      {"gpu:h100:0", {{"gpu", "h100", 0, {}}}, "gpu:h100:0", ""},
      {"gpu:1x", {{"gpu", "1x", 1, {}}}, "gpu:1x:1", ""},  // not a count, so a type
      {"gpu:8:2", {{"gpu", "8", 2, {}}}, "gpu:8:2", ""},
      {"mps:1K", {{"mps", "", 1024, {}}}, "mps:1024", ""},
      {"mps:2k", {{"mps", "", 2048, {}}}, "mps:2048", ""},
      {"mps:1M", {{"mps", "", 1048576, {}}}, "mps:1048576", ""},
      {"mps:a100:1G", {{"mps", "a100", 1073741824, {}}}, "mps:a100:1073741824", ""},
      {"mps:17179869183G",
       {{"mps", "", 18446744072635809792u, {}}},
       "mps:18446744072635809792",
       ""},
      {"gpu:18446744073709551615",
       {{"gpu", "", 18446744073709551615u, {}}},
       "gpu:18446744073709551615",
       ""},
      {"gpu_x:tesla-v100:2", {{"gpu_x", "tesla-v100", 2, {}}}, "gpu_x:tesla-v100:2", ""},
      {"gpu:rtx.6000:2", {{"gpu", "rtx.6000", 2, {}}}, "gpu:rtx.6000:2", ""},
      {"gpu:h100:2(S:0-1)", {{"gpu", "h100", 2, {0, 1}}}, "gpu:h100:2(S:0-1)", ""},
      {"gpu:h100:2(S:0,2)", {{"gpu", "h100", 2, {0, 2}}}, "gpu:h100:2(S:0,2)", ""},
      {"gpu:4(S:0-1,3)", {{"gpu", "", 4, {0, 1, 3}}}, "gpu:4(S:0-1,3)", ""},
      {"gpu:4(S:3,0-1,1)", {{"gpu", "", 4, {0, 1, 3}}}, "gpu:4(S:0-1,3)", ""},
      {"gpu:4(S:0,1,2,5)", {{"gpu", "", 4, {0, 1, 2, 5}}}, "gpu:4(S:0-2,5)", ""},
      {"gpu(S:0)", {{"gpu", "", 1, {0}}}, "gpu:1(S:0)", ""},
      {"gpu:h100(S:1)", {{"gpu", "h100", 1, {1}}}, "gpu:h100:1(S:1)", ""},
      {"gpu:h100:4,nic:1", {{"gpu", "h100", 4, {}}, {"nic", "", 1, {}}}, "gpu:h100:4,nic:1", ""},
      {"gpu:h100:2(S:0,2),nic:1",
       {{"gpu", "h100", 2, {0, 2}}, {"nic", "", 1, {}}},
       "gpu:h100:2(S:0,2),nic:1",
       ""},
      {" gpu:8 , nic:1 ", {{"gpu", "", 8, {}}, {"nic", "", 1, {}}}, "gpu:8,nic:1", ""},
      {"gpu:a100:4,gpu:h100:4",
       {{"gpu", "a100", 4, {}}, {"gpu", "h100", 4, {}}},
       "gpu:a100:4,gpu:h100:4",
       ""},
      {"gpu:h100:x", {}, "", Invalid("gpu:h100:x")},
      {"gpu:h100:8:1", {}, "", Invalid("gpu:h100:8:1")},
      {"gpu::8", {}, "", Invalid("gpu::8")},
      {"gpu:", {}, "", Invalid("gpu:")},
      {"gpu:h100:", {}, "", Invalid("gpu:h100:")},
      {"gpu:-1", {}, "", Invalid("gpu:-1")},
      {"gpu:h100:-1", {}, "", Invalid("gpu:h100:-1")},
      {"gpu:h100:1.5", {}, "", Invalid("gpu:h100:1.5")},
      {"gpu:h100:8T", {}, "", Invalid("gpu:h100:8T")},
      {":8", {}, "", Invalid(":8")},
      {"gp u:8", {}, "", Invalid("gp u:8")},
      {"gpu-x:1", {}, "", Invalid("gpu-x:1")},
      {"gpu:h1 00:8", {}, "", Invalid("gpu:h1 00:8")},
      {"(null),gpu:1", {}, "", Invalid("(null)")},
      {"gpu:1,(S:0)", {}, "", Invalid("(S:0)")},
      {"gpu:99999999999999999999",
       {},
       "",
       "invalid GRES 'gpu:99999999999999999999' (count too large)"},
      {"mps:17179869184G", {}, "", "invalid GRES 'mps:17179869184G' (count too large)"},
      {"gpu:2(S:0-1", {}, "", BadSockets("(S:0-1", "gpu:2(S:0-1")},
      {"gpu:2(S:)", {}, "", BadSockets("(S:)", "gpu:2(S:)")},
      {"gpu:2(S:1-0)", {}, "", BadSockets("(S:1-0)", "gpu:2(S:1-0)")},
      {"gpu:2(S:0-70000)", {}, "", BadSockets("(S:0-70000)", "gpu:2(S:0-70000)")},
      {"gpu:2(S:0,,1)", {}, "", BadSockets("(S:0,,1)", "gpu:2(S:0,,1)")},
      {"gpu:2(S:-1)", {}, "", BadSockets("(S:-1)", "gpu:2(S:-1)")},
      {"gpu:2(S:a)", {}, "", BadSockets("(S:a)", "gpu:2(S:a)")},
      {"gpu:2(0-1)", {}, "", BadSockets("(0-1)", "gpu:2(0-1)")},
      {"gpu:2(S:0-1)x", {}, "", BadSockets("(S:0-1)x", "gpu:2(S:0-1)x")},
      {"gpu:1,,nic:1",
       {},
       "",
       "empty GRES entry in 'gpu:1,,nic:1' (expected name[:type][:count], e.g. gpu:h100:8)"},
      {"gpu:1,",
       {},
       "",
       "empty GRES entry in 'gpu:1,' (expected name[:type][:count], e.g. gpu:h100:8)"},
  };
  for (const ParseCase& c : cases) {
    SCOPED_TRACE(c.input);
    Result<std::vector<GresSpec>> got = ParseGres(c.input);
    if (!c.error.empty()) {
      ASSERT_FALSE(got.ok()) << FormatGres(*got);
      EXPECT_EQ(got.error(), c.error);
      continue;
    }
    ASSERT_TRUE(got.ok()) << got.error();
    EXPECT_EQ(*got, c.specs);
    EXPECT_EQ(FormatGres(*got), c.formatted);
    // The printed form is canonical: it reads back to the same specs.
    Result<std::vector<GresSpec>> again = ParseGres(FormatGres(*got));
    ASSERT_TRUE(again.ok()) << again.error();
    EXPECT_EQ(*again, c.specs);
  }
}

struct FormatCase {
  GresSpec spec;
  std::string_view text;
};

TEST(GresTest, FormatSpec) {
  const FormatCase cases[] = {
      {{"gpu", "", 8, {}}, "gpu:8"},
      {{"gpu", "h100", 8, {}}, "gpu:h100:8"},
      {{"gpu", "h100", 0, {}}, "gpu:h100:0"},
      {{"gpu", "", 2, {2, 0, 1}}, "gpu:2(S:0-2)"},
      {{"gpu", "", 2, {0, 2, 3, 4, 7}}, "gpu:2(S:0,2-4,7)"},
      {{"gpu", "", 2, {1, 1}}, "gpu:2(S:1)"},
  };
  for (const FormatCase& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(FormatGres(c.spec), c.text);
  }
  EXPECT_EQ(FormatGres(std::vector<GresSpec>{}), "");
  EXPECT_EQ(FormatGres(std::vector<GresSpec>{{"gpu", "a100", 2, {0}}, {"gpu", "h100", 2, {1}}}),
            "gpu:a100:2(S:0),gpu:h100:2(S:1)");
}

}  // namespace
}  // namespace drover
