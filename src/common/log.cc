#include "common/log.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <mutex>

#include "common/text.h"

namespace drover::log {

namespace internal {
std::atomic<int> level{static_cast<int>(Level::kInfo)};
std::atomic<uint64_t> flags{0};
}  // namespace internal

namespace {

// Slurm's names, indexed by level number (log_num2string).
constexpr std::array<std::string_view, 10> kLevelNames = {
    "quiet", "fatal", "error", "info", "verbose", "debug", "debug2", "debug3", "debug4", "debug5"};

struct FlagName {
  uint64_t flag;
  std::string_view name;
};
constexpr FlagName kFlagNames[] = {{kFlagAgent, "Agent"}, {kFlagTraceJobs, "TraceJobs"}};

std::string program = "drover";
std::FILE* sink = nullptr;
std::mutex write_mutex;  // lines from several threads stay whole

// Slurm's prefixes: none for info and verbose, "debug:  " aligned with "debug2: ".
std::string_view PrefixOf(Level level) {
  switch (level) {
    case Level::kFatal:
      return "fatal: ";
    case Level::kError:
      return "error: ";
    case Level::kDebug:
      return "debug:  ";
    case Level::kDebug2:
      return "debug2: ";
    case Level::kDebug3:
      return "debug3: ";
    case Level::kDebug4:
      return "debug4: ";
    case Level::kDebug5:
      return "debug5: ";
    default:
      return "";
  }
}

}  // namespace

std::optional<Level> ParseLevel(std::string_view text) {
  for (size_t i = 0; i < kLevelNames.size(); ++i)
    if (EqualsIgnoreCase(text, kLevelNames[i])) return static_cast<Level>(i);
  // A number as Slurm reads it (strtoul, then at most 9): "6", "06".
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  text.remove_prefix(std::min(text.find_first_not_of('0'), text.size() - 1));
  if (text.size() != 1) return std::nullopt;
  return static_cast<Level>(text[0] - '0');
}

std::string_view LevelName(Level level) {
  return kLevelNames[static_cast<size_t>(level)];
}

std::optional<uint64_t> ParseFlag(std::string_view name) {
  for (const FlagName& known : kFlagNames)
    if (EqualsIgnoreCase(name, known.name)) return known.flag;
  return std::nullopt;
}

std::string FlagNames(uint64_t flags) {
  std::string names;
  for (const FlagName& known : kFlagNames)
    if (flags & known.flag) names += (names.empty() ? "" : ",") + std::string(known.name);
  return names.empty() ? "none" : names;
}

void SetLevel(Level level) {
  internal::level.store(static_cast<int>(level), std::memory_order_relaxed);
}

uint64_t CurrentFlags() {
  return internal::flags.load(std::memory_order_relaxed);
}

uint64_t ChangeFlags(uint64_t add, uint64_t remove) {
  uint64_t now = internal::flags.load();
  while (!internal::flags.compare_exchange_weak(now, (now | add) & ~remove)) {
  }
  return (now | add) & ~remove;
}

void SetProgram(std::string name) {
  program = std::move(name);
}

void SetSink(std::FILE* file) {
  sink = file;
}

void Write(Level level, std::string_view text, std::string_view prefix) {
  if (!Enabled(level)) return;
  std::string line = program + ": ";
  if (prefix.empty())
    line += PrefixOf(level);
  else
    line += std::string(prefix) + ": ";
  line += text;
  line += '\n';
  std::lock_guard lock(write_mutex);
  std::FILE* out = sink ? sink : stderr;
  std::fwrite(line.data(), 1, line.size(), out);
  std::fflush(out);
}

}  // namespace drover::log
