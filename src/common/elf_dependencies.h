// The shared libraries an ELF executable or library names (DT_NEEDED) and where it asks the
// loader to look (DT_RPATH, DT_RUNPATH), read from its bytes as the dynamic loader reads them:
// srun --send-libs finds what to send with it. 64-bit little-endian ELF only; never loads or
// runs anything.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace drover {

struct ElfDependencies {
  std::vector<std::string> needed;  // sonames, in the file's order
  std::vector<std::string> rpath;   // DT_RPATH's directories (ignored by the loader with runpath)
  std::vector<std::string> runpath;
  bool dynamic = false;  // has a dynamic section (false: static, or not a program)
};

// Errors say what is wrong with the bytes ("not an ELF file", "truncated dynamic section").
Result<ElfDependencies> ReadElfDependencies(std::string_view bytes);

}  // namespace drover
