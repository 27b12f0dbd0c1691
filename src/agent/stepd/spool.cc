// The job directory's files, written and read by the agent and the supervisor; see spool.h.
#include "agent/stepd/spool.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "agent/host/host_info.h"
#include "agent/stepd/user_environment.h"
#include "common/gres_conf.h"
#include "common/resource_limits.h"
#include "common/text.h"

namespace drover::agent {
namespace {

namespace fs = std::filesystem;

std::string Escape(std::string_view value) {
  std::string out;
  for (char c : value) {
    auto byte = static_cast<unsigned char>(c);
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (byte < 0x20 || byte == 0x7f)
      out += fmt::format("\\x{:02x}", byte);
    else
      out += c;
  }
  return out;
}

Result<std::string> Unescape(std::string_view value) {
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '\\') {
      out += value[i];
      continue;
    }
    if (++i == value.size()) return MakeError("a '\\' ends the value");
    switch (value[i]) {
      case '\\':
        out += '\\';
        break;
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'x': {
        unsigned byte = 0;
        auto digits = value.substr(i + 1, 2);
        auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), byte, 16);
        if (digits.size() != 2 || error != std::errc() || end != digits.data() + 2)
          return MakeError("'\\x' wants two hex digits");
        out += static_cast<char>(byte);
        i += 2;
        break;
      }
      default:
        return MakeError(fmt::format("unknown escape '\\{}'", value[i]));
    }
  }
  return out;
}

std::string SystemError(const fs::path& path, std::string_view action, int error) {
  return fmt::format("{}: cannot {}: {}", path.string(), action, std::strerror(error));
}

Result<std::string> ReadWholeFile(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return MakeError(SystemError(path, "read it", errno));
  std::string text;
  char buffer[8192];
  ssize_t got = 0;
  while ((got = ::read(fd, buffer, sizeof buffer)) > 0 || (got < 0 && errno == EINTR))
    if (got > 0) text.append(buffer, got);
  int error = errno;
  ::close(fd);
  if (got < 0) return MakeError(SystemError(path, "read it", error));
  return text;
}

Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t written = ::write(fd, data.data(), data.size());
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) return MakeError(std::strerror(errno));
    data.remove_prefix(written);
  }
  return OkStatus();
}

// How much a file must survive. Everything a launch writes, and the pid files, matter only
// while this boot lasts (a node that crashes has lost its jobs anyway), so they are renamed into
// place without waiting for the disk; a job's status is the record of how it ended until the
// controller has it, so it is synced.
enum class Durability { kThisBoot, kCrash };

// Temporary file, (fsync,) rename, (fsync of the directory): a reader sees the old file or the
// whole new one; with kCrash, a crash after we return loses neither.
Status WriteAtomically(const fs::path& path, std::string_view contents, mode_t mode,
                       Durability durability = Durability::kThisBoot) {
  bool sync = durability == Durability::kCrash;
  const fs::path temporary = path.string() + fmt::format(".tmp.{}", ::getpid());
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return MakeError(SystemError(temporary, "create it", errno));
  Status written = WriteAll(fd, contents);
  if (written && ::fchmod(fd, mode) != 0) written = MakeError(std::strerror(errno));
  if (written && sync && ::fsync(fd) != 0) written = MakeError(std::strerror(errno));
  ::close(fd);
  if (!written || ::rename(temporary.c_str(), path.c_str()) != 0) {
    std::string why = written ? std::strerror(errno) : written.error();
    ::unlink(temporary.c_str());
    return MakeError(fmt::format("{}: cannot write it: {}", path.string(), why));
  }
  int dir = sync ? ::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return OkStatus();
}

struct Entry {
  int line = 0;
  std::string key, value;
};

// key=value lines; blank lines and '#' comments skipped; values unescaped.
Result<std::vector<Entry>> ReadEntries(const fs::path& path) {
  auto text = ReadWholeFile(path);
  if (!text) return std::move(text).take_error();
  std::vector<Entry> entries;
  int number = 0;
  for (const std::string& line : Split(*text, '\n')) {
    ++number;
    if (Trim(line).empty() || Trim(line).starts_with('#')) continue;
    size_t equals = line.find('=');
    if (equals == std::string::npos || equals == 0)
      return MakeError(fmt::format("{}:{}: expected key=value, found '{}'", path.string(), number,
                                   Escape(line)));
    auto value = Unescape(std::string_view(line).substr(equals + 1));
    if (!value) return MakeError(fmt::format("{}:{}: {}", path.string(), number, value.error()));
    entries.push_back({number, line.substr(0, equals), std::move(*value)});
  }
  return entries;
}

template <typename Integer>
Result<Integer> ParseInteger(std::string_view text) {
  Integer value{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size())
    return MakeError(fmt::format("expected a number, found '{}'", Escape(text)));
  return value;
}

Result<double> ParseSeconds(std::string_view text) {
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  // "nan" and "inf" parse as doubles; a job's CPU time is neither.
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0 ||
      !std::isfinite(value))
    return MakeError(fmt::format("expected seconds, found '{}'", Escape(text)));
  return value;
}

Result<std::vector<int>> ParseList(std::string_view text) {
  if (text.empty()) return std::vector<int>{};
  return ParseIndexList(text);
}

// A key's parser: stores the value into the record or says what is wrong with it.
template <typename Record>
using FieldSetter = std::function<Status(Record&, const std::string&)>;

template <typename Record, typename Integer>
FieldSetter<Record> IntegerField(Integer Record::*field) {
  return [field](Record& record, const std::string& text) -> Status {
    auto value = ParseInteger<Integer>(text);
    if (!value) return std::move(value).take_error();
    record.*field = *value;
    return OkStatus();
  };
}

template <typename Record>
FieldSetter<Record> TextField(std::string Record::*field) {
  return [field](Record& record, const std::string& text) -> Status {
    record.*field = text;
    return OkStatus();
  };
}

template <typename Record>
FieldSetter<Record> SecondsField(double Record::*field) {
  return [field](Record& record, const std::string& text) -> Status {
    auto value = ParseSeconds(text);
    if (!value) return std::move(value).take_error();
    record.*field = *value;
    return OkStatus();
  };
}

// A flag written as one of two words: `yes` sets it, `no` clears it; anything else is an error.
template <typename Record>
FieldSetter<Record> WordFlagField(bool Record::*field, std::string_view yes, std::string_view no) {
  return [field, yes, no](Record& record, const std::string& text) -> Status {
    if (text != yes && text != no)
      return MakeError(fmt::format("expected {} or {}, found '{}'", no, yes, Escape(text)));
    record.*field = text == yes;
    return OkStatus();
  };
}

// A flag written as 1 or 0.
template <typename Record>
FieldSetter<Record> FlagField(bool Record::*field) {
  return WordFlagField(field, "1", "0");
}

template <typename Record>
FieldSetter<Record> ListField(std::vector<int> Record::*field) {
  return [field](Record& record, const std::string& text) -> Status {
    auto value = ParseList(text);
    if (!value) return std::move(value).take_error();
    record.*field = std::move(*value);
    return OkStatus();
  };
}

// Fills a record from `path`: every key known, none twice (except `repeatable`), every
// `required` one present.
template <typename Record>
Result<Record> ReadRecord(const fs::path& path,
                          const std::map<std::string, FieldSetter<Record>, std::less<>>& fields,
                          const std::vector<std::string_view>& required,
                          std::string_view repeatable = {}) {
  auto entries = ReadEntries(path);
  if (!entries) return std::move(entries).take_error();
  Record record;
  std::set<std::string, std::less<>> seen;
  for (const Entry& entry : *entries) {
    auto where = fmt::format("{}:{}", path.string(), entry.line);
    auto field = fields.find(entry.key);
    if (field == fields.end()) {
      std::vector<std::string_view> names;
      for (const auto& [name, setter] : fields) names.push_back(name);
      auto suggestion = ClosestMatch(entry.key, names);
      return MakeError(fmt::format(
          "{}: unknown key '{}'{}", where, Escape(entry.key),
          suggestion ? fmt::format(" (did you mean '{}'?)", *suggestion) : std::string()));
    }
    if (!seen.insert(entry.key).second && entry.key != repeatable)
      return MakeError(fmt::format("{}: {} given twice", where, entry.key));
    if (Status ok = field->second(record, entry.value); !ok)
      return MakeError(fmt::format("{}: {}: {}", where, entry.key, ok.error()));
  }
  for (std::string_view key : required)
    if (!seen.count(key)) return MakeError(fmt::format("{}: missing {}", path.string(), key));
  return record;
}

const std::map<std::string, FieldSetter<BatchLaunch>, std::less<>>& LaunchFields() {
  using L = BatchLaunch;
  static const std::map<std::string, FieldSetter<L>, std::less<>> fields = {
      {"job_id", IntegerField(&L::job_id)},
      {"uid", IntegerField(&L::uid)},
      {"gid", IntegerField(&L::gid)},
      {"user", TextField(&L::user)},
      {"node_name", TextField(&L::node_name)},
      {"work_dir", TextField(&L::work_dir)},
      {"stdout", TextField(&L::stdout_path)},
      {"stderr", TextField(&L::stderr_path)},
      {"stdin", TextField(&L::stdin_path)},
      {"open_mode",
       [](L& launch, const std::string& text) -> Status {
         if (text != "truncate" && text != "append")
           return MakeError(fmt::format("expected truncate or append, found '{}'", Escape(text)));
         launch.open_mode = text == "append" ? OpenMode::kAppend : OpenMode::kTruncate;
         return OkStatus();
       }},
      {"cgroup_mode",
       [](L& launch, const std::string& text) -> Status {
         if (text != "auto" && text != "v1" && text != "v2" && text != "none")
           return MakeError(fmt::format("expected auto, v1, v2 or none, found '{}'", Escape(text)));
         launch.cgroup_mode = text;
         return OkStatus();
       }},
      {"step", WordFlagField(&L::extern_step, "extern", "batch")},
      {"cgroup_root", TextField(&L::cgroup_root)},
      {"cgroup_parent", TextField(&L::cgroup_parent)},
      {"cpus",  // a set: written sorted and without repeats, so read that way too
       [](L& launch, const std::string& text) -> Status {
         auto cpus = ParseList(text);
         if (!cpus) return std::move(cpus).take_error();
         std::sort(cpus->begin(), cpus->end());
         cpus->erase(std::unique(cpus->begin(), cpus->end()), cpus->end());
         launch.cpus = std::move(*cpus);
         return OkStatus();
       }},
      {"memory_limit_mib", IntegerField(&L::memory_limit_mib)},
      {"memory_and_swap_limit_mib", IntegerField(&L::memory_and_swap_limit_mib)},
      {"over_memory_kill_mib", IntegerField(&L::over_memory_kill_mib)},
      {"memory_poll_seconds", IntegerField(&L::memory_poll_seconds)},
      {"devices_denied",
       [](L& launch, const std::string& text) -> Status {
         if (text.empty()) return OkStatus();
         for (std::string_view item : Split(text, ',')) {
           auto device = ParseDeviceNumber(item);
           if (!device) return std::move(device).take_error();
           launch.devices_denied.push_back(*device);
         }
         return OkStatus();
       }},
      // An older agent's spool: NVIDIA's major with the minors it named.
      {"gpu_minors", [](L&, const std::string&) { return OkStatus(); }},
      {"gpu_minors_denied",
       [](L& launch, const std::string& text) -> Status {
         auto minors = ParseList(text);
         if (!minors) return std::move(minors).take_error();
         for (int minor : *minors)
           launch.devices_denied.push_back({195, static_cast<uint32_t>(minor)});
         return OkStatus();
       }},
      {"container_base", TextField(&L::container_base)},
      {"container_dir", TextField(&L::container_dir)},
      {"container_dirs",
       [](L& launch, const std::string& text) -> Status {
         launch.container_dirs.clear();
         for (std::string_view item : Split(text, ','))
           if (!item.empty()) launch.container_dirs.emplace_back(item);
         return OkStatus();
       }},
      {"container_auto_base", FlagField(&L::container_auto_base)},
      {"prolog", TextField(&L::prolog)},
      {"epilog", TextField(&L::epilog)},
      {"kill_wait", IntegerField(&L::kill_wait_seconds)},
      {"prolog_epilog_timeout", IntegerField(&L::prolog_epilog_timeout_seconds)},
      {"rlimits",
       [](L& launch, const std::string& text) -> Status {
         launch.rlimits.clear();
         for (const std::string& entry : Split(text, ',')) {
           if (auto limit = ParsePropagatedLimit(entry); !limit)
             return std::move(limit).take_error();
           launch.rlimits.push_back(entry);
         }
         return OkStatus();
       }},
      {"get_user_env",
       [](L& launch, const std::string& text) -> Status {
         if (auto request = ParseUserEnvironmentRequest(text); !request)
           return std::move(request).take_error();
         launch.get_user_env = text;
         return OkStatus();
       }},
      {"arg",
       [](L& launch, const std::string& text) -> Status {
         launch.arguments.push_back(text);
         return OkStatus();
       }},
  };
  return fields;
}

const std::map<std::string, FieldSetter<BatchStatus>, std::less<>>& StatusFields() {
  using S = BatchStatus;
  static const std::map<std::string, FieldSetter<S>, std::less<>> fields = {
      {"exit_code", IntegerField(&S::exit_code)},
      {"signal", IntegerField(&S::signal)},
      {"out_of_memory", FlagField(&S::out_of_memory)},
      {"cancelled", FlagField(&S::cancelled)},
      {"launch_failed", FlagField(&S::launch_failed)},
      {"prolog_failed", FlagField(&S::prolog_failed)},
      {"epilog_failed", FlagField(&S::epilog_failed)},
      {"cpu_seconds", SecondsField(&S::cpu_seconds)},
      {"max_rss_mib", IntegerField(&S::max_rss_mib)},
      {"batch_user_cpu", SecondsField(&S::batch_user_cpu)},
      {"batch_system_cpu", SecondsField(&S::batch_system_cpu)},
      {"batch_rss_kib", IntegerField(&S::batch_rss_kib)},
      {"start_time", IntegerField(&S::start_time)},
      {"end_time", IntegerField(&S::end_time)},
      {"cgroup_mode", TextField(&S::cgroup_mode)},
      {"reason", TextField(&S::reason)},
  };
  return fields;
}

void Line(std::string& out, std::string_view key, std::string_view value) {
  out += fmt::format("{}={}\n", key, Escape(value));
}

}  // namespace

fs::path JobDirectory(const fs::path& spool, uint64_t job_id) {
  return spool / fmt::format("job_{}", job_id);
}

Result<fs::path> CreateJobDirectory(const fs::path& spool, uint64_t job_id) {
  fs::path dir = JobDirectory(spool, job_id);
  if (::mkdir(dir.c_str(), 0700) != 0) return MakeError(SystemError(dir, "create it", errno));
  // Not through umask: the job's user must be able to reach its script.
  if (::chmod(dir.c_str(), 0711) != 0) return MakeError(SystemError(dir, "chmod it", errno));
  return dir;
}

Status WriteLaunch(const fs::path& job_dir, const BatchLaunch& launch) {
  std::string out = "# drover batch launch: read by droverstepd (src/agent/stepd/spool.h)\n";
  Line(out, "job_id", std::to_string(launch.job_id));
  Line(out, "uid", std::to_string(launch.uid));
  Line(out, "gid", std::to_string(launch.gid));
  Line(out, "user", launch.user);
  Line(out, "node_name", launch.node_name);
  Line(out, "work_dir", launch.work_dir);
  Line(out, "stdout", launch.stdout_path);
  Line(out, "stderr", launch.stderr_path);
  Line(out, "stdin", launch.stdin_path);
  Line(out, "open_mode", launch.open_mode == OpenMode::kAppend ? "append" : "truncate");
  Line(out, "cgroup_mode", launch.cgroup_mode);
  Line(out, "cgroup_root", launch.cgroup_root);
  if (!launch.cgroup_parent.empty()) Line(out, "cgroup_parent", launch.cgroup_parent);
  Line(out, "cpus", FormatIndexRanges(launch.cpus));
  Line(out, "memory_limit_mib", std::to_string(launch.memory_limit_mib));
  Line(out, "memory_and_swap_limit_mib", std::to_string(launch.memory_and_swap_limit_mib));
  Line(out, "over_memory_kill_mib", std::to_string(launch.over_memory_kill_mib));
  Line(out, "memory_poll_seconds", std::to_string(launch.memory_poll_seconds));
  std::vector<std::string> denied;
  for (const DeviceNumber& device : launch.devices_denied) denied.push_back(DeviceText(device));
  Line(out, "devices_denied", Join(denied, ","));
  if (!launch.container_base.empty()) {
    Line(out, "container_base", launch.container_base);
    Line(out, "container_dir", launch.container_dir);
    Line(out, "container_dirs", Join(launch.container_dirs, ","));
    Line(out, "container_auto_base", launch.container_auto_base ? "1" : "0");
  }
  if (!launch.prolog.empty()) Line(out, "prolog", launch.prolog);
  if (!launch.epilog.empty()) Line(out, "epilog", launch.epilog);
  Line(out, "kill_wait", std::to_string(launch.kill_wait_seconds));
  Line(out, "prolog_epilog_timeout", std::to_string(launch.prolog_epilog_timeout_seconds));
  if (!launch.rlimits.empty()) Line(out, "rlimits", Join(launch.rlimits, ","));
  if (!launch.get_user_env.empty()) Line(out, "get_user_env", launch.get_user_env);
  for (const std::string& argument : launch.arguments) Line(out, "arg", argument);
  if (launch.extern_step) Line(out, "step", "extern");
  return WriteAtomically(job_dir / "launch", out, 0600);
}

Result<BatchLaunch> ReadLaunch(const fs::path& job_dir) {
  static const std::vector<std::string_view> required = {
      "job_id", "uid", "gid", "user", "node_name", "work_dir", "stdout", "stderr", "stdin"};
  const fs::path path = job_dir / "launch";
  auto launch = ReadRecord(path, LaunchFields(), required, "arg");
  if (!launch) return launch;
  for (const auto& [key, value] :
       {std::pair<const char*, const std::string*>{"work_dir", &launch->work_dir},
        {"stdout", &launch->stdout_path},
        {"stderr", &launch->stderr_path},
        {"stdin", &launch->stdin_path},
        {"cgroup_root", &launch->cgroup_root}})
    if (!value->starts_with('/'))
      return MakeError(
          fmt::format("{}: {} '{}' is not an absolute path", path.string(), key, Escape(*value)));
  for (const auto& [key, value] :
       {std::pair<const char*, const std::string*>{"prolog", &launch->prolog},
        {"epilog", &launch->epilog}})
    if (!value->empty() && !value->starts_with('/'))
      return MakeError(
          fmt::format("{}: {} '{}' is not an absolute path", path.string(), key, Escape(*value)));
  return launch;
}

Status WriteEnvironment(const fs::path& job_dir, const std::vector<std::string>& environment) {
  std::string out;
  for (const std::string& entry : environment) {
    out += entry;
    out += '\0';
  }
  return WriteAtomically(job_dir / "environ", out, 0600);
}

Result<std::vector<std::string>> ReadEnvironment(const fs::path& job_dir) {
  const fs::path path = job_dir / "environ";
  auto text = ReadWholeFile(path);
  if (!text) return std::move(text).take_error();
  std::vector<std::string> environment;
  if (text->empty()) return environment;
  if (text->back() != '\0')
    return MakeError(fmt::format("{}: the last entry is not ended by a NUL", path.string()));
  text->pop_back();
  for (std::string& entry : Split(*text, '\0')) {
    size_t equals = entry.find('=');
    if (equals == std::string::npos || equals == 0)
      return MakeError(fmt::format("{}: entry {} '{}' is not NAME=value", path.string(),
                                   environment.size() + 1, Escape(entry)));
    environment.push_back(std::move(entry));
  }
  return environment;
}

Result<SupervisorInput> ReadSupervisorInput(const fs::path& job_dir) {
  auto launch = ReadLaunch(job_dir);
  if (!launch) return MakeError(launch.error());
  auto environment = ReadEnvironment(job_dir);
  if (!environment) return MakeError(environment.error());
  return SupervisorInput{std::move(*launch), std::move(*environment)};
}

Status WriteScript(const fs::path& job_dir, std::string_view text, uid_t uid, gid_t gid) {
  const fs::path path = job_dir / "script";
  if (Status ok = WriteAtomically(path, text, 0700); !ok) return ok;
  if (::geteuid() == 0 && ::chown(path.c_str(), uid, gid) != 0)
    return MakeError(SystemError(path, fmt::format("give it to {}:{}", uid, gid), errno));
  return OkStatus();
}

Status WriteStatus(const fs::path& job_dir, const BatchStatus& status) {
  std::string out;
  Line(out, "exit_code", std::to_string(status.exit_code));
  Line(out, "signal", std::to_string(status.signal));
  Line(out, "out_of_memory", status.out_of_memory ? "1" : "0");
  Line(out, "cancelled", status.cancelled ? "1" : "0");
  Line(out, "launch_failed", status.launch_failed ? "1" : "0");
  Line(out, "prolog_failed", status.prolog_failed ? "1" : "0");
  Line(out, "epilog_failed", status.epilog_failed ? "1" : "0");
  Line(out, "cpu_seconds", fmt::format("{:.3f}", status.cpu_seconds));
  Line(out, "max_rss_mib", std::to_string(status.max_rss_mib));
  Line(out, "batch_user_cpu", fmt::format("{:.6f}", status.batch_user_cpu));
  Line(out, "batch_system_cpu", fmt::format("{:.6f}", status.batch_system_cpu));
  Line(out, "batch_rss_kib", std::to_string(status.batch_rss_kib));
  Line(out, "start_time", std::to_string(status.start_time));
  Line(out, "end_time", std::to_string(status.end_time));
  Line(out, "cgroup_mode", status.cgroup_mode);
  Line(out, "reason", status.reason);
  return WriteAtomically(job_dir / "status", out, 0644, Durability::kCrash);
}

Result<BatchStatus> ReadStatus(const fs::path& job_dir) {
  static const std::vector<std::string_view> required = {"exit_code", "signal", "launch_failed",
                                                         "prolog_failed"};
  return ReadRecord(job_dir / "status", StatusFields(), required);
}

bool SupervisorAlive(const fs::path& job_dir) {
  auto record = ReadProcessFile(job_dir / "supervisor.pid");
  return record && ProcessAlive(*record);
}

Status WriteHeld(const fs::path& job_dir, int64_t since) {
  return WriteAtomically(job_dir / "held", fmt::format("since={}\n", since), 0644);
}

Status WriteHoldEnding(const fs::path& job_dir) {
  return WriteAtomically(job_dir / "ending", "", 0644);
}

bool HoldEnding(const fs::path& job_dir) {
  return ::access((job_dir / "ending").c_str(), F_OK) == 0;
}

std::optional<int64_t> ReadHeld(const fs::path& job_dir) {
  std::ifstream in(job_dir / "held");
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  if (!line.starts_with("since=")) return int64_t{0};
  return ParseInt64(std::string_view(line).substr(6)).value_or(0);
}

}  // namespace drover::agent
