// Reading the libraries an ELF file needs: a real dynamic program of this system, a static or
// foreign file, and bytes cut short.
#include "common/elf_dependencies.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace drover {
namespace {

std::string ReadFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ElfDependencies, ADynamicProgramNamesTheCLibrary) {
  std::string sh = ReadFile("/bin/sh");
  if (sh.size() < 64 || sh[4] != 2) GTEST_SKIP() << "no 64-bit /bin/sh here";
  auto found = ReadElfDependencies(sh);
  ASSERT_TRUE(found) << found.error();
  EXPECT_TRUE(found->dynamic);
  EXPECT_NE(std::find(found->needed.begin(), found->needed.end(), "libc.so.6"),
            found->needed.end());
  // Cut inside the headers: an error, never a read past the end.
  for (size_t size : {size_t{10}, size_t{70}, sh.size() / 3})
    (void)ReadElfDependencies(std::string_view(sh).substr(0, size));
}

TEST(ElfDependencies, OtherBytesAreRefusedWithAReason) {
  EXPECT_EQ(ReadElfDependencies("#!/bin/sh\necho hi\n").error(), "not an ELF file");
  std::string elf32 = std::string(
                          "\x7f"
                          "ELF\x01\x01",
                          6) +
                      std::string(60, '\0');
  EXPECT_EQ(ReadElfDependencies(elf32).error(),
            "not a 64-bit little-endian ELF file (the only kind read)");
  std::string empty64 = std::string(
                            "\x7f"
                            "ELF\x02\x01",
                            6) +
                        std::string(58, '\0');
  auto none = ReadElfDependencies(empty64);  // no program headers: nothing dynamic
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->dynamic);
}

}  // namespace
}  // namespace drover
