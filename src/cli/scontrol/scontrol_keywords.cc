// See scontrol_keywords.h.
#include "cli/scontrol/scontrol_keywords.h"

#include <fmt/format.h>
#include <algorithm>
#include <cstring>

#include <map>

#include "common/text.h"

namespace drover::cli::scontrol {

bool MatchesKeyword(std::string_view word, std::string_view name, size_t min_length) {
  return word.size() >= std::min(min_length, name.size()) && word.size() <= name.size() &&
         EqualsIgnoreCase(word, name.substr(0, word.size()));
}

const Keyword* FindKeyword(std::string_view word, std::span<const Keyword> table) {
  for (const Keyword& keyword : table)
    if (MatchesKeyword(word, keyword.name, keyword.min_length)) return &keyword;
  return nullptr;
}

Result<std::vector<std::string>> SplitCommandLine(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : line) {
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        word += c;
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote) return MakeError(fmt::format("unbalanced quote ({}) in: {}", quote, line));
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::string ErrorNumberText(int number) {
  // Slurm 22.05's texts for its numbers (slurm_errno.h); the rest are the C library's errno.
  static const std::map<int, std::string_view> kSlurm = {
      {0, "No error"},
      {1800, "Unable to contact slurm controller (connect failure)"},
      {1801, "Unable to contact slurm controller (send failure)"},
      {1802, "Unable to contact slurm controller (receive failure)"},
      {1803, "Unable to contact slurm controller (shutdown failure)"},
      {1900, "Data has not changed since time specified"},
      {2000, "Invalid partition name specified"},
      {2001, "No partition specified or system default partition"},
      {2002, "Access/permission denied"},
      {2003, "User's group not permitted to use this partition"},
      {2004, "Requested nodes not in this partition"},
      {2005, "More processors requested than permitted"},
      {2006, "Node count specification invalid"},
      {2007, "Unable to create job record, try again"},
      {2008, "Job size specification needs to be provided"},
      {2009, "Job script not specified"},
      {2010, "Invalid user id"},
      {2011, "Duplicate job id"},
      {2012, "Pathname of a file, directory or other parameter too long"},
      {2013, "Immediate execution impossible, insufficient priority"},
      {2014, "Requested node configuration is not available"},
      {2015, "Requested partition configuration not available now"},
      {2016, "Requested nodes are busy"},
      {2017, "Invalid job id specified"},
      {2018, "Invalid node name specified"},
      {2019, "I/O error writing script/environment to file"},
      {2020, "Job can not be altered now, try again later"},
      {2021, "Job/step already completing or completed"},
      {2022, "Error configuring interconnect"},
      {2023, "Task distribution specification invalid"},
      {2024, "Job is pending execution"},
      {2025, "Task count specification invalid"},
      {2026, "Error generating job credential"},
      {2027, "Slurm backup controller in standby mode"},
      {2028, "Invalid node state specified"},
      {2029, "Invalid feature specification"},
  };
  if (auto it = kSlurm.find(number); it != kSlurm.end()) return std::string(it->second);
  return std::strerror(number);
}

}  // namespace drover::cli::scontrol
