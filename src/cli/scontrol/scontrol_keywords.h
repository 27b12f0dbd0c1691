// scontrol's words as Slurm 22.05 reads them: a keyword matches any prefix of its name at least
// as long as the name's minimum (`scontrol sh jo 12`, `upd JobId=12`), each keyword with its own
// minimum; the lines of interactive mode split into words (quotes group words); and the text
// `errnumstr` prints for a Slurm error number. Pure: no controller.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace drover::cli::scontrol {

// Slurm's test: `word` is a prefix of `name` (any case), at least `min_length` long.
bool MatchesKeyword(std::string_view word, std::string_view name, size_t min_length);

struct Keyword {
  std::string_view name;
  size_t min_length;
};

// The first keyword of `table` (Slurm's order decides between two that share a prefix) that
// `word` matches, or nullptr.
const Keyword* FindKeyword(std::string_view word, std::span<const Keyword> table);

// One line of interactive input as words: blanks separate words, and "..." or '...' keep blanks
// inside one (the quotes removed), as scontrol's own reader does. An unclosed quote is an error.
Result<std::vector<std::string>> SplitCommandLine(std::string_view line);

// What `scontrol errnumstr N` prints: Slurm's text for its own error numbers, the C library's
// (strerror) for the rest.
std::string ErrorNumberText(int number);

}  // namespace drover::cli::scontrol
