#include "common/log.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ctime>
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

// How lines are dressed: stderr as always ("droverctld: error: ..."), a log file (time stamped,
// no program name), or journald (a priority, no program name).
enum class Style { kStderr, kFile, kJournal };
std::atomic<Style> style{Style::kStderr};
char file_path[PATH_MAX] = {};  // the log file, for ReopenFile in a signal handler

// sd-daemon's priorities for journald, by level.
int PriorityOf(Level level) {
  switch (level) {
    case Level::kFatal:
      return 2;  // crit
    case Level::kError:
      return 3;  // err
    case Level::kInfo:
    case Level::kVerbose:
      return 6;  // info
    default:
      return 7;  // debug
  }
}

// "[2026-12-05T04:50:00.123] ", local time, as Slurm's LogTimeFormat=iso8601_ms.
std::string TimeStamp() {
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
  std::tm local{};
  localtime_r(&seconds, &local);
  char text[40];
  size_t length = std::strftime(text, sizeof text, "[%Y-%m-%dT%H:%M:%S", &local);
  return std::string(text, length) + fmt::format(".{:03}] ", millis.count());
}

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

Status OpenFile(const std::string& path) {
  if (path.size() >= sizeof file_path)
    return MakeError(fmt::format("the log file's path is too long: {}", path));
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (fd < 0)
    return MakeError(
        fmt::format("cannot open the log file {}: {}; make its folder writable by "
                    "this daemon's user, or change the LogFile key",
                    path, std::strerror(errno)));
  std::lock_guard lock(write_mutex);
  if (::dup2(fd, STDERR_FILENO) < 0) {
    int error = errno;
    ::close(fd);
    return MakeError(fmt::format("cannot log to {}: {}", path, std::strerror(error)));
  }
  ::close(fd);
  std::memcpy(file_path, path.c_str(), path.size() + 1);
  style = Style::kFile;
  return OkStatus();
}

void ReopenFile() {
  if (file_path[0] == '\0') return;
  int saved = errno;
  int fd = ::open(file_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (fd >= 0) {
    ::dup2(fd, STDERR_FILENO);  // atomic: a line being written goes to the old file or the new
    ::close(fd);
  }
  errno = saved;
}

bool UseJournalIfThere() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  struct stat err {};
  if (!stream || ::fstat(STDERR_FILENO, &err) != 0) return false;
  unsigned long long device = 0, inode = 0;
  if (std::sscanf(stream, "%llu:%llu", &device, &inode) != 2) return false;
  if (device != static_cast<unsigned long long>(err.st_dev) ||
      inode != static_cast<unsigned long long>(err.st_ino))
    return false;
  style = Style::kJournal;
  return true;
}

Status SetUpDaemonLog(const std::string& file) {
  if (!file.empty()) {
    if (Status opened = OpenFile(file); !opened) return opened;
  } else {
    UseJournalIfThere();
  }
  struct sigaction reopen {};
  reopen.sa_handler = [](int) { ReopenFile(); };
  sigemptyset(&reopen.sa_mask);
  reopen.sa_flags = SA_RESTART;
  ::sigaction(SIGUSR2, &reopen, nullptr);
  ::sigaction(SIGHUP, &reopen, nullptr);
  return OkStatus();
}

void Write(Level level, std::string_view text, std::string_view prefix) {
  if (!Enabled(level)) return;
  const Style now = style.load(std::memory_order_relaxed);
  std::string line = now == Style::kFile      ? TimeStamp()
                     : now == Style::kJournal ? fmt::format("<{}>", PriorityOf(level))
                                              : program + ": ";
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
