// Process files; see process_file.h.
#include "common/process_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "common/fd_io.h"
#include "common/text.h"

namespace drover {
namespace {

namespace fs = std::filesystem;

struct ProcessStat {
  char state = '?';
  uint64_t started = 0;
};

// Fields 3 (state) and 22 (start time) of /proc/<pid>/stat.
std::optional<ProcessStat> ReadStat(pid_t pid, const fs::path& proc) {
  std::ifstream file(proc / std::to_string(pid) / "stat");
  std::stringstream read;
  read << file.rdbuf();
  if (!file) return std::nullopt;
  std::string text = read.str();
  size_t close = text.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 1));
  ProcessStat stat;
  std::string skipped;
  if (!(fields >> stat.state)) return std::nullopt;
  for (int index = 4; index < 22; ++index)
    if (!(fields >> skipped)) return std::nullopt;
  if (!(fields >> stat.started)) return std::nullopt;
  return stat;
}

template <typename Integer>
bool ParseWhole(std::string_view text, Integer& out) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && error == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::optional<uint64_t> ProcessStartTime(pid_t pid, const fs::path& proc) {
  auto stat = ReadStat(pid, proc);
  if (!stat) return std::nullopt;
  return stat->started;
}

namespace {
// `text` as `file`, atomically (temporary file, rename), mode 0644.
Status WriteSmallFile(const fs::path& file,
                      const std::string& text) {  // A reader sees the old file or the whole new
                                                  // one. Only this boot matters: a node that
  // restarts has lost its processes anyway, so nothing waits for the disk.
  const fs::path temporary = file.string() + fmt::format(".tmp.{}", ::getpid());
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return MakeError(
        fmt::format("{}: cannot create it: {}", temporary.string(), std::strerror(errno)));
  bool written = WriteFully(fd, text) && ::fchmod(fd, 0644) == 0;
  std::string why = written ? "" : std::strerror(errno);
  ::close(fd);
  if (!written || ::rename(temporary.c_str(), file.c_str()) != 0) {
    if (written) why = std::strerror(errno);
    ::unlink(temporary.c_str());
    return MakeError(fmt::format("{}: cannot write it: {}", file.string(), why));
  }
  return OkStatus();
}
}  // namespace

Status WriteProcessFile(const fs::path& file, pid_t pid) {
  auto started = ProcessStartTime(pid);
  if (!started) return MakeError(fmt::format("process {} has no readable /proc entry", pid));
  return WriteSmallFile(file, fmt::format("pid={}\nstarted={}\n", pid, *started));
}

Status WritePidFile(const fs::path& file) {
  return WriteSmallFile(file, fmt::format("{}\n", ::getpid()));
}

Result<ProcessRecord> ReadProcessFile(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return MakeError(fmt::format("{}: cannot read it", file.string()));
  ProcessRecord record;
  bool has_pid = false, has_started = false;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string_view text = Trim(line);
    if (text.empty() || text.starts_with('#')) continue;
    size_t equals = line.find('=');
    std::string_view key = std::string_view(line).substr(0, equals);
    std::string_view value =
        equals == std::string::npos ? "" : std::string_view(line).substr(equals + 1);
    bool& seen = key == "pid" ? has_pid : has_started;
    bool parsed = key == "pid"       ? ParseWhole(value, record.pid)
                  : key == "started" ? ParseWhole(value, record.started)
                                     : false;
    if (!parsed || seen)
      return MakeError(fmt::format("{}:{}: expected pid=N or started=T once, found '{}'",
                                   file.string(), number, line));
    seen = true;
  }
  if (!has_pid || !has_started)
    return MakeError(fmt::format("{}: missing {}", file.string(), has_pid ? "started" : "pid"));
  if (record.pid <= 0)
    return MakeError(fmt::format("{}: invalid pid {}", file.string(), record.pid));
  return record;
}

bool ProcessAlive(const ProcessRecord& record, const fs::path& proc) {
  auto stat = ReadStat(record.pid, proc);
  return stat && stat->state != 'Z' && stat->state != 'X' && stat->started == record.started;
}

}  // namespace drover
