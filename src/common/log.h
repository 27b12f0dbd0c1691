// A daemon's leveled log, as Slurm's: the levels quiet, fatal, error, info, verbose, debug and
// debug2..debug5 (numbers 0-9, as SlurmctldDebug and `scontrol setdebug` take them), and the
// debug flags that turn on the messages of one subsystem (DebugFlags, `scontrol setdebugflags`).
// One log per process: the level and flags are atomics, so a message below the level costs one
// relaxed load and no formatting. Lines go whole to the sink (stderr unless a test sets one):
// "PROGRAM: error: text", "PROGRAM: text" for info and verbose, "PROGRAM: debug2: text".
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/result.h"

namespace drover::log {

enum class Level : int {
  kQuiet = 0,
  kFatal = 1,
  kError = 2,
  kInfo = 3,
  kVerbose = 4,
  kDebug = 5,
  kDebug2 = 6,
  kDebug3 = 7,
  kDebug4 = 8,
  kDebug5 = 9,
};

// A level by Slurm's name (any case) or number 0-9; nullopt for anything else.
std::optional<Level> ParseLevel(std::string_view text);
std::string_view LevelName(Level level);

// The debug flags Drover has messages for, with Slurm's names.
enum Flag : uint64_t {
  kFlagAgent = 1 << 0,      // the controller's outgoing RPCs to the agents
  kFlagTraceJobs = 1 << 1,  // each job's start and end, with its nodes
};
// A flag by Slurm's name (any case); nullopt for a name Drover has no messages for.
std::optional<uint64_t> ParseFlag(std::string_view name);
// The names of the flags that are set, comma-separated ("none" when none is set).
std::string FlagNames(uint64_t flags);

namespace internal {
extern std::atomic<int> level;
extern std::atomic<uint64_t> flags;
}  // namespace internal

inline bool Enabled(Level level) {
  return static_cast<int>(level) <= internal::level.load(std::memory_order_relaxed);
}
inline bool FlagSet(uint64_t flag) {
  return (internal::flags.load(std::memory_order_relaxed) & flag) != 0;
}
inline Level CurrentLevel() {
  return static_cast<Level>(internal::level.load(std::memory_order_relaxed));
}
void SetLevel(Level level);
uint64_t CurrentFlags();
// Adds then removes flags; returns the flags now set.
uint64_t ChangeFlags(uint64_t add, uint64_t remove);

// The program named in every line, and where lines go (null: stderr). Set before threads start.
void SetProgram(std::string program);
void SetSink(std::FILE* sink);

// SlurmctldLogFile / SlurmdLogFile: lines go to `path` (appended; made 0640 when new), each
// after Slurm's "[2026-12-05T04:50:00.123] " time stamp and without the program's name, as
// Slurm's log files have them. The file also becomes the process's descriptor 2, so what
// libraries print lands there too. Errors name the file.
Status OpenFile(const std::string& path);
// Opens the log file again (logrotate moved it): for SIGUSR2 and SIGHUP handlers, so it uses
// only async-signal-safe calls. Does nothing without a log file.
void ReopenFile();
// Without a log file under systemd (JOURNAL_STREAM names descriptor 2): each line starts with
// its syslog priority ("<3>" for errors) for journald, and carries no program name, which
// journald records itself. Call once at start-up; false when stderr is not the journal.
bool UseJournalIfThere();
// A daemon's log as slurm.conf says: `file` (SlurmctldLogFile, SlurmdLogFile) when set, else
// journald when stderr is the journal, else stderr; SIGUSR2 and SIGHUP reopen the file
// (logrotate) instead of ending the process. An error when the file cannot be opened.
Status SetUpDaemonLog(const std::string& file);

// Writes one line at `level` when the log's level admits it. `prefix` follows the program
// name ("warning" for Slurm's warnings, which log at info); empty: the level's own.
void Write(Level level, std::string_view text, std::string_view prefix = {});

template <typename... Args>
void At(Level level, fmt::format_string<Args...> format, Args&&... args) {
  if (Enabled(level)) Write(level, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void Error(fmt::format_string<Args...> format, Args&&... args) {
  At(Level::kError, format, std::forward<Args>(args)...);
}
template <typename... Args>
void Warning(fmt::format_string<Args...> format, Args&&... args) {
  if (Enabled(Level::kInfo))
    Write(Level::kInfo, fmt::format(format, std::forward<Args>(args)...), "warning");
}
template <typename... Args>
void Info(fmt::format_string<Args...> format, Args&&... args) {
  At(Level::kInfo, format, std::forward<Args>(args)...);
}
template <typename... Args>
void Verbose(fmt::format_string<Args...> format, Args&&... args) {
  At(Level::kVerbose, format, std::forward<Args>(args)...);
}
template <typename... Args>
void Debug(fmt::format_string<Args...> format, Args&&... args) {
  At(Level::kDebug, format, std::forward<Args>(args)...);
}
template <typename... Args>
void Debug2(fmt::format_string<Args...> format, Args&&... args) {
  At(Level::kDebug2, format, std::forward<Args>(args)...);
}
// A message of one debug flag: written at info level, as Slurm's flagged messages are, when
// the flag is set.
template <typename... Args>
void Flagged(uint64_t flag, fmt::format_string<Args...> format, Args&&... args) {
  if (FlagSet(flag) && Enabled(Level::kInfo))
    Write(Level::kInfo, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace drover::log
