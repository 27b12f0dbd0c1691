// Slurm configuration syntax: comments, continuation lines, quoting and Include; see
// conf_reader.h. Keys may have spaces around '=' and values may be "quoted with spaces", as
// Slurm's own parser allows.
#include "common/conf_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/text.h"

namespace drover {
namespace {

bool IsKeyChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/';
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

// Removes an unescaped '#' comment; "\#" stands for a literal '#'.
std::string StripComment(const std::string& raw) {
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\\' && i + 1 < raw.size() && raw[i + 1] == '#') {
      out += '#';
      ++i;
    } else if (raw[i] == '#') {
      break;
    } else {
      out += raw[i];
    }
  }
  return out;
}

struct LogicalLine {
  int line;
  std::string text;
};

// Joins '\' continuations; a logical line is numbered by its first physical line.
std::vector<LogicalLine> JoinLines(std::istream& in) {
  std::vector<LogicalLine> lines;
  std::string raw;
  std::string pending;
  int number = 0, first = 0;
  while (std::getline(in, raw)) {
    ++number;
    std::string text = StripComment(raw);
    std::string_view trimmed_right = text;
    while (!trimmed_right.empty() && IsSpace(trimmed_right.back())) trimmed_right.remove_suffix(1);
    if (pending.empty()) first = number;
    if (!trimmed_right.empty() && trimmed_right.back() == '\\') {
      trimmed_right.remove_suffix(1);
      pending.append(trimmed_right);
      pending += ' ';
      continue;
    }
    pending.append(trimmed_right);
    if (!Trim(pending).empty()) lines.push_back({first, pending});
    pending.clear();
  }
  if (!Trim(pending).empty()) lines.push_back({first, pending});
  return lines;
}

bool IsIncludeLine(std::string_view text, std::string& target) {
  std::string_view line = Trim(text);
  if (!StartsWithIgnoreCase(line, "include") || line.size() <= 7 || !IsSpace(line[7])) return false;
  target = std::string(Trim(line.substr(7)));
  if (target.size() >= 2 && target.front() == '"' && target.back() == '"')
    target = target.substr(1, target.size() - 2);
  return true;
}

void ReadInto(const std::string& path, Diagnostics& diagnostics, const ConfReadOptions& options,
              std::vector<std::string>& include_stack, std::vector<ConfLine>& out,
              const SourceLocation& included_from);

void ReadStream(std::istream& in, const std::string& path, Diagnostics& diagnostics,
                const ConfReadOptions& options, std::vector<std::string>& include_stack,
                std::vector<ConfLine>& out) {
  for (const LogicalLine& logical : JoinLines(in)) {
    SourceLocation where{path, logical.line};
    std::string target;
    if (IsIncludeLine(logical.text, target)) {
      if (!options.allow_include) {
        diagnostics.Error(where, "Include is not allowed in this file; put the lines here");
        continue;
      }
      std::filesystem::path resolved(target);
      if (resolved.is_relative()) resolved = std::filesystem::path(path).parent_path() / resolved;
      ReadInto(resolved.lexically_normal().string(), diagnostics, options, include_stack, out,
               where);
      continue;
    }
    ConfLine line;
    if (ParseConfLine(logical.text, where, line, diagnostics)) out.push_back(std::move(line));
  }
}

void ReadInto(const std::string& path, Diagnostics& diagnostics, const ConfReadOptions& options,
              std::vector<std::string>& include_stack, std::vector<ConfLine>& out,
              const SourceLocation& included_from) {
  if (std::find(include_stack.begin(), include_stack.end(), path) != include_stack.end()) {
    diagnostics.Error(included_from, fmt::format("'{}' includes itself (Include loop)", path));
    return;
  }
  if (static_cast<int>(include_stack.size()) > options.max_include_depth) {
    diagnostics.Error(included_from, fmt::format("Include nested more than {} deep at '{}'",
                                                 options.max_include_depth, path));
    return;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    diagnostics.Error(included_from, fmt::format("'{}' is a directory, not a file", path));
    return;
  }
  std::ifstream in(path);
  if (!in) {
    diagnostics.Error(included_from,
                      fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
    return;
  }
  include_stack.push_back(path);
  ReadStream(in, path, diagnostics, options, include_stack, out);
  include_stack.pop_back();
}

}  // namespace

bool ParseConfLine(const std::string& text, const SourceLocation& where, ConfLine& line,
                   Diagnostics& diagnostics) {
  line.where = where;
  size_t i = 0;
  const size_t n = text.size();
  while (true) {
    while (i < n && IsSpace(text[i])) ++i;
    if (i >= n) break;
    size_t key_start = i;
    while (i < n && IsKeyChar(text[i])) ++i;
    std::string key = text.substr(key_start, i - key_start);
    while (i < n && IsSpace(text[i])) ++i;
    if (key.empty() || i >= n || text[i] != '=') {
      size_t end = text.find_first_of(" \t", key_start);
      std::string word = text.substr(key_start, end == std::string::npos ? end : end - key_start);
      diagnostics.Error(where, fmt::format("expected Key=Value, found '{}'", word));
      return false;
    }
    ++i;  // '='
    while (i < n && IsSpace(text[i])) ++i;
    std::string value;
    if (i < n && text[i] == '"') {
      size_t close = text.find('"', i + 1);
      if (close == std::string::npos) {
        diagnostics.Error(where, fmt::format("unterminated quote in the value of '{}'", key));
        return false;
      }
      value = text.substr(i + 1, close - i - 1);
      i = close + 1;
    } else {
      size_t start = i;
      while (i < n && !IsSpace(text[i])) ++i;
      value = text.substr(start, i - start);
    }
    line.pairs.push_back({std::move(key), std::move(value)});
  }
  return !line.pairs.empty();
}

std::vector<ConfLine> ReadConfFile(const std::string& path, Diagnostics& diagnostics,
                                   const ConfReadOptions& options) {
  std::vector<ConfLine> out;
  std::vector<std::string> include_stack;
  ReadInto(path, diagnostics, options, include_stack, out, SourceLocation{});
  return out;
}

std::vector<ConfLine> ReadConfText(const std::string& text, const std::string& name,
                                   Diagnostics& diagnostics) {
  std::vector<ConfLine> out;
  std::vector<std::string> include_stack;
  std::istringstream in(text);
  ConfReadOptions options;
  options.allow_include = false;
  ReadStream(in, name, diagnostics, options, include_stack, out);
  return out;
}

}  // namespace drover
