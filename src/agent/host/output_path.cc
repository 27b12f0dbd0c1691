// Slurm's filename patterns, following slurmstepd's batch expansion (fname.c) symbol for symbol,
// including its handling of widths that precede no symbol.
#include "agent/host/output_path.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace drover::agent {
namespace {

constexpr size_t kMaxWidth = 10;
// What Slurm prints for the array task id of a job that is not an array task (its NO_VAL).
constexpr uint64_t kSlurmNoValue = 4294967294;

bool IsSymbol(char c) {
  return std::string_view("AabJjNnstux").find(c) != std::string_view::npos;
}

std::string Padded(uint64_t value, size_t width) {
  return fmt::format("{:0{}}", value, width);
}

std::string ShortName(std::string_view name) {
  return std::string(name.substr(0, name.find('.')));
}

uint64_t ArrayTaskValue(const PatternContext& ctx) {
  return ctx.array_task_id == kNoArrayTask ? kSlurmNoValue : ctx.array_task_id;
}

std::string StepName(const PatternContext& ctx, size_t width) {
  return ctx.step_id ? Padded(*ctx.step_id, width) : std::string("batch");
}

std::string ExpandSymbol(char symbol, size_t width, const PatternContext& ctx) {
  switch (symbol) {
    case 'A':
      return Padded(ctx.array_job_id != 0 ? ctx.array_job_id : ctx.job_id, width);
    case 'a':
      return Padded(ArrayTaskValue(ctx), width);
    case 'b':
      return Padded(ArrayTaskValue(ctx) % 10, width);
    case 'J':
      return Padded(ctx.job_id, width) + "." + StepName(ctx, 0);
    case 'j':
      return Padded(ctx.job_id, width);
    case 'N':
      return ShortName(ctx.node_name);
    case 'n':
      return Padded(ctx.node_id, width);
    case 's':
      return StepName(ctx, width);
    case 't':
      return Padded(ctx.task_id, width);
    case 'u':
      return ctx.user_name;
    case 'x':
      return ctx.job_name;
    default:
      return {};
  }
}

// Expands the symbols of a pattern that has no '\'.
std::string ExpandSymbols(std::string_view pattern, const PatternContext& ctx) {
  std::string out;
  size_t i = 0;
  while (i < pattern.size()) {
    if (pattern[i] != '%') {
      out += pattern[i++];
      continue;
    }
    if (i + 1 < pattern.size() && pattern[i + 1] == '%') {
      out += '%';
      i += 2;
      continue;
    }
    size_t end = i + 1;
    size_t width = 0;
    while (end < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[end]))) {
      width = std::min(width * 10 + static_cast<size_t>(pattern[end] - '0'), kMaxWidth + 1);
      ++end;
    }
    bool has_width = end > i + 1;
    if (end == pattern.size() || !IsSymbol(pattern[end])) {
      // Not a symbol: Slurm keeps a lone '%', or the last digit of a width, and carries on from
      // the next character (which may itself start a symbol).
      out += has_width ? pattern[end - 1] : '%';
      i = end;
      continue;
    }
    out += ExpandSymbol(pattern[end], std::min(width, kMaxWidth), ctx);
    i = end + 1;
  }
  return out;
}

// "\" disables every symbol; "\\" stands for one backslash.
std::string RemoveEscapes(std::string_view pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '\\') {
      out += pattern[i];
    } else if (i + 1 < pattern.size() && pattern[i + 1] == '\\') {
      out += '\\';
      ++i;
    }
  }
  return out;
}

}  // namespace

PatternContext BatchPatternContext(const JobSpec& spec, std::string_view node_name) {
  PatternContext ctx;
  ctx.job_id = spec.job_id;
  ctx.array_job_id = spec.array_job_id;
  ctx.array_task_id = spec.array_task_id;
  ctx.node_name = std::string(node_name);
  ctx.user_name = spec.user;
  ctx.job_name = spec.name;
  ctx.work_dir = spec.work_dir;
  return ctx;
}

Result<std::string> ExpandOutputPattern(std::string_view pattern, const PatternContext& ctx) {
  if (pattern.empty()) return MakeError("empty file name pattern");
  bool escaped = pattern.find('\\') != std::string_view::npos;
  std::string expanded = escaped ? RemoveEscapes(pattern) : ExpandSymbols(pattern, ctx);
  if (pattern.front() == '/') return expanded;
  if (ctx.work_dir.empty() || ctx.work_dir.front() != '/') {
    return MakeError(fmt::format(
        "cannot resolve relative file name '{}' for job {}: the working directory '{}' is not an "
        "absolute path",
        pattern, ctx.job_id, ctx.work_dir));
  }
  std::string path = ctx.work_dir;
  if (path.back() != '/') path += '/';
  return path + expanded;
}

std::string DefaultOutputPath(const JobSpec& spec) {
  bool array_task = spec.array_task_id != kNoArrayTask;
  return array_task ? "slurm-%A_%a.out" : "slurm-%j.out";
}

Result<BatchIoPaths> ResolveBatchIoPaths(const JobSpec& spec, const PatternContext& ctx) {
  const std::string stdout_pattern =
      spec.stdout_path.empty() ? DefaultOutputPath(spec) : spec.stdout_path;
  const std::string& stderr_pattern = spec.stderr_path.empty() ? stdout_pattern : spec.stderr_path;
  const std::string stdin_pattern = spec.stdin_path.empty() ? "/dev/null" : spec.stdin_path;

  BatchIoPaths paths;
  struct Slot {
    const std::string& pattern;
    std::string& path;
  };
  for (const Slot& slot :
       {Slot{stdout_pattern, paths.stdout_path}, Slot{stderr_pattern, paths.stderr_path},
        Slot{stdin_pattern, paths.stdin_path}}) {
    Result<std::string> path = ExpandOutputPattern(slot.pattern, ctx);
    if (!path.ok()) return std::move(path).take_error();
    slot.path = std::move(path).value();
  }
  return paths;
}

}  // namespace drover::agent
