// Small text operations that Slurm's file formats and commands need: trimming, splitting on
// commas outside brackets, case-insensitive comparison, strict number parsing, and the
// "did you mean" suggestion for misspelt keys.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace drover {

std::string_view Trim(std::string_view text);
std::string ToLower(std::string_view text);
bool EqualsIgnoreCase(std::string_view a, std::string_view b);
bool StartsWithIgnoreCase(std::string_view text, std::string_view prefix);

// Splits on `separator`, except inside [...] or (...), so "n[1-3,5],m7" gives two parts.
std::vector<std::string> SplitTopLevel(std::string_view text, char separator = ',');
std::vector<std::string> Split(std::string_view text, char separator);

// Whole-string decimal parses; nullopt on anything else (sign, spaces, overflow, empty).
std::optional<int64_t> ParseInt64(std::string_view text);
std::optional<uint64_t> ParseUint64(std::string_view text);

// Optimal string alignment distance, case-insensitive.
int EditDistance(std::string_view a, std::string_view b);
// The candidate closest to `word` if it is close enough to be a likely misspelling.
std::optional<std::string> ClosestMatch(std::string_view word,
                                        std::span<const std::string_view> candidates);

std::string Join(const std::vector<std::string>& parts, std::string_view separator);

// Whether `text` is well-formed UTF-8 with no control characters (what a protobuf string field
// and a terminal both take).
bool IsPrintableUtf8(std::string_view text);

}  // namespace drover
