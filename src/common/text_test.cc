#include <gtest/gtest.h>

#include <string>

#include "common/text.h"

namespace drover {
namespace {

TEST(IsPrintableUtf8, TakesTextAndRefusesControlsAndMalformedBytes) {
  EXPECT_TRUE(IsPrintableUtf8("physics dept"));
  EXPECT_TRUE(IsPrintableUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80"));
  EXPECT_TRUE(IsPrintableUtf8(""));
  EXPECT_FALSE(IsPrintableUtf8(std::string("a\0b", 3)));
  EXPECT_FALSE(IsPrintableUtf8("tab\there"));
  EXPECT_FALSE(IsPrintableUtf8("\x7f"));
  EXPECT_FALSE(IsPrintableUtf8("\xff"));
  EXPECT_FALSE(IsPrintableUtf8("\xc3"));              // cut short
  EXPECT_FALSE(IsPrintableUtf8("\xc0\xaf"));          // overlong
  EXPECT_FALSE(IsPrintableUtf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(IsPrintableUtf8("\xf4\x90\x80\x80"));  // past U+10FFFF
}

}  // namespace
}  // namespace drover
