// --mail-type words as Slurm reads them, and the order Slurm prints them in.
#include "common/mail_type.h"

#include <gtest/gtest.h>

namespace drover {
namespace {

TEST(MailTypeTest, ParsesAndPrintsAsSlurm) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"END,FAIL", "END,FAIL"},
      {"fail,begin", "BEGIN,FAIL"},
      {"ALL", "INVALID_DEPEND,BEGIN,END,FAIL,REQUEUE,STAGE_OUT"},
      {"TIME_LIMIT_80,ARRAY_TASKS,END", "ARRAY_TASKS,END,TIME_LIMIT_80"},
      {"BEGIN,NONE", "NONE"},
      {"NONE,BEGIN", "NONE"},
  };
  for (const auto& [input, printed] : cases) {
    std::optional<uint32_t> types = ParseMailTypes(input);
    ASSERT_TRUE(types) << input;
    EXPECT_EQ(MailTypeText(*types), printed) << input;
  }
  EXPECT_EQ(ParseMailTypes("END,FAIL"), kMailEnd | kMailFail);
  EXPECT_FALSE(ParseMailTypes("SOMETIMES"));
  EXPECT_EQ(ParseMailTypes("END,"), kMailEnd);
  EXPECT_FALSE(ParseMailTypes(""));
  EXPECT_FALSE(ParseMailTypes(","));
}

}  // namespace
}  // namespace drover
