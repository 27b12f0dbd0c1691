// Job cgroups on v1 and v2, and session tracking without them; see cgroup.h.
#include "agent/host/cgroup.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "agent/host/host_info.h"
#include "common/text.h"

namespace drover::agent {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr auto kFreezeWait = std::chrono::seconds(2);
constexpr auto kPoll = std::chrono::milliseconds(10);
const char* const kV1Required[] = {"memory", "cpuset", "freezer"};
const char* const kV1Optional[] = {"devices", "cpuacct"};
const char* const kV2Controllers[] = {"cpuset", "cpu", "memory", "pids"};

std::string Hint(int error) {
  switch (error) {
    case EACCES:
    case EPERM:
      return " (droverd must run as root or in a cgroup delegated to it)";
    case EROFS:
      return " (the cgroup file system is mounted read-only, as in most containers)";
    case ENOENT:
      return " (the controller's file is missing: is the controller mounted or enabled?)";
    case EBUSY:
      return " (the cgroup still holds processes or is in use)";
    default:
      return "";
  }
}

std::string Failure(const fs::path& path, std::string_view action, int error) {
  return fmt::format("{}: cannot {}: {}{}", path.string(), action, std::strerror(error),
                     Hint(error));
}

Result<std::string> ReadControl(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return MakeError(Failure(path, "read it", errno));
  std::string text;
  char buffer[4096];
  ssize_t got = 0;
  while ((got = ::read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, got);
  int error = errno;
  ::close(fd);
  if (got < 0) return MakeError(Failure(path, "read it", error));
  return text;
}

// One write(2) per value, as cgroup files want. `append` keeps earlier values in a plain file
// (the tests' fake trees); cgroup files ignore it.
Status WriteControl(const fs::path& path, std::string_view value, bool append = false) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | (append ? O_APPEND : O_TRUNC));
  if (fd < 0) return MakeError(Failure(path, fmt::format("write '{}'", value), errno));
  ssize_t written = ::write(fd, value.data(), value.size());
  int error = errno;
  ::close(fd);
  if (written != static_cast<ssize_t>(value.size()))
    return MakeError(Failure(path, fmt::format("write '{}'", value), written < 0 ? error : EIO));
  return OkStatus();
}

Result<uint64_t> ReadNumber(const fs::path& path) {
  auto text = ReadControl(path);
  if (!text) return std::move(text).take_error();
  auto number = ParseUint64(Trim(*text));
  if (!number)
    return MakeError(
        fmt::format("{}: expected a number, found '{}'", path.string(), std::string(Trim(*text))));
  return *number;
}

// The value of `key` in a "key value" file (memory.events, cpu.stat, memory.oom_control).
Result<std::optional<uint64_t>> ReadKeyed(const fs::path& path, std::string_view key) {
  auto text = ReadControl(path);
  if (!text) return std::move(text).take_error();
  for (const std::string& line : Split(*text, '\n')) {
    std::string_view rest = line;
    if (!rest.starts_with(key) || rest.size() == key.size() || rest[key.size()] != ' ') continue;
    auto number = ParseUint64(Trim(rest.substr(key.size())));
    if (!number) return MakeError(fmt::format("{}: invalid line '{}'", path.string(), line));
    return std::optional<uint64_t>(*number);
  }
  return std::optional<uint64_t>();
}

Status MakeDirectory(const fs::path& path) {
  if (::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) return OkStatus();
  return MakeError(Failure(path, "create it", errno));
}

bool Writable(const fs::path& path, std::string& reason) {
  if (::access(path.c_str(), W_OK) == 0) return true;
  reason = Failure(path, "write to it", errno);
  return false;
}

// v1 cpusets start empty, and a task cannot join an empty one: copy the parent's.
Status InheritCpuset(const fs::path& dir) {
  for (const char* file : {"cpuset.cpus", "cpuset.mems"}) {
    auto own = ReadControl(dir / file);
    if (!own) return std::move(own).take_error();
    if (!Trim(*own).empty()) continue;
    auto parent = ReadControl(dir.parent_path() / file);
    if (!parent) return std::move(parent).take_error();
    if (Status ok = WriteControl(dir / file, Trim(*parent)); !ok) return ok;
  }
  return OkStatus();
}

// v2: enables in `dir`'s children the controllers `dir` has.
Status EnableControllers(const fs::path& dir) {
  auto available = ReadControl(dir / "cgroup.controllers");
  if (!available) return std::move(available).take_error();
  std::set<std::string> have;
  for (const std::string& name : Split(std::string(Trim(*available)), ' ')) have.insert(name);
  std::string enable;
  for (const char* name : kV2Controllers)
    if (have.count(name)) enable += fmt::format("{}+{}", enable.empty() ? "" : " ", name);
  if (enable.empty()) return OkStatus();
  return WriteControl(dir / "cgroup.subtree_control", enable);
}

Status ValidNodeName(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos)
    return MakeError(fmt::format("invalid node name '{}' for a cgroup directory", name));
  return OkStatus();
}

// Every cgroup directory at and below `dir`, deepest first.
std::vector<fs::path> Tree(const fs::path& dir) {
  std::vector<fs::path> dirs;
  std::error_code error;
  for (fs::recursive_directory_iterator it(dir, error), end; !error && it != end;
       it.increment(error))
    if (it->is_directory(error)) dirs.push_back(it->path());
  std::sort(dirs.begin(), dirs.end(), [](const fs::path& a, const fs::path& b) {
    return std::distance(a.begin(), a.end()) > std::distance(b.begin(), b.end());
  });
  dirs.push_back(dir);
  return dirs;
}

Result<std::vector<pid_t>> ReadProcs(const fs::path& dir) {
  std::vector<pid_t> pids;
  for (const fs::path& cgroup : Tree(dir)) {
    auto text = ReadControl(cgroup / "cgroup.procs");
    if (!text) return std::move(text).take_error();
    for (const std::string& line : Split(*text, '\n')) {
      if (Trim(line).empty()) continue;
      auto pid = ParseInt64(Trim(line));
      if (!pid || *pid <= 0)
        return MakeError(
            fmt::format("{}: invalid pid '{}'", (cgroup / "cgroup.procs").string(), line));
      pids.push_back(static_cast<pid_t>(*pid));
    }
  }
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  return pids;
}

struct ProcessStat {
  char state = '?';
  pid_t session = 0;
};

// Fields 3 and 6 of /proc/<pid>/stat, after the parenthesised command name.
std::optional<ProcessStat> ReadStat(const fs::path& file) {
  std::ifstream in(file);
  std::ostringstream read;  // a process gone since the open fails the read: caught, not thrown
  read << in.rdbuf();
  std::string text = read.str();
  size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 1));
  ProcessStat stat;
  long parent = 0, group = 0, session = 0;
  if (!(fields >> stat.state >> parent >> group >> session)) return std::nullopt;
  stat.session = static_cast<pid_t>(session);
  return stat;
}

std::string Describe(const std::vector<pid_t>& pids) {
  std::vector<std::string> text;
  for (pid_t pid : pids) text.push_back(std::to_string(pid));
  return Join(text, " ");
}

}  // namespace

const char* CgroupModeName(CgroupMode mode) {
  switch (mode) {
    case CgroupMode::kV1:
      return "v1";
    case CgroupMode::kV2:
      return "v2";
    case CgroupMode::kNone:
      break;
  }
  return "none";
}

std::vector<fs::path> CgroupMounts(const CgroupHierarchy& hierarchy) {
  std::vector<fs::path> mounts;
  if (hierarchy.mode == CgroupMode::kV2) mounts.push_back(hierarchy.root);
  if (hierarchy.mode == CgroupMode::kV1)
    for (const auto& [controller, mount] : hierarchy.controllers) mounts.push_back(mount);
  return mounts;
}

CgroupHierarchy DetectCgroups(const fs::path& root, const fs::path& proc) {
  CgroupHierarchy found;
  found.root = root;
  found.proc = proc;
  auto off = [&](std::string reason) {
    found.mode = CgroupMode::kNone;
    found.controllers.clear();
    found.reason = std::move(reason) + "; jobs are tracked by session, without limits";
    return found;
  };
  if (fs::exists(root / "cgroup.controllers")) {
    std::string reason;
    if (!Writable(root, reason)) return off(reason);
    found.mode = CgroupMode::kV2;
    found.reason =
        "cgroup v2: GPU device isolation needs an eBPF program, which Drover does not load yet";
    return found;
  }
  std::vector<std::string> missing;
  for (const char* name : kV1Required) {
    if (!fs::exists(root / name / "cgroup.procs")) {
      missing.push_back(name);
      continue;
    }
    std::string reason;
    if (!Writable(root / name, reason)) return off(reason);
    found.controllers[name] = root / name;
  }
  if (!missing.empty())
    return off(
        fmt::format("no usable cgroup hierarchy at {}: no cgroup.controllers (v2) and "
                    "no v1 {} controller{} mounted there",
                    root.string(), Join(missing, ", "), missing.size() == 1 ? "" : "s"));
  found.mode = CgroupMode::kV1;
  std::vector<std::string> notes;
  for (const char* name : kV1Optional) {
    if (fs::exists(root / name / "cgroup.procs"))
      found.controllers[name] = root / name;
    else
      notes.push_back(fmt::format("v1 {} controller not mounted: {}", name,
                                  std::string_view(name) == "devices"
                                      ? "GPUs are not isolated"
                                      : "CPU time is not measured"));
  }
  found.reason = Join(notes, "; ");
  return found;
}

Result<JobCgroup> JobCgroup::Create(const CgroupHierarchy& hierarchy, std::string_view node_name,
                                    uint64_t job_id) {
  if (hierarchy.mode == CgroupMode::kNone)
    return Untracked(hierarchy, node_name, job_id, hierarchy.reason);
  if (Status ok = ValidNodeName(node_name); !ok) return std::move(ok).take_error();
  JobCgroup job = Untracked(hierarchy, node_name, job_id, "");
  job.mode_ = hierarchy.mode;
  const fs::path relative = fs::path("drover") / node_name / fmt::format("job_{}", job_id);
  if (hierarchy.mode == CgroupMode::kV2) {
    fs::path dir = hierarchy.root;
    for (const fs::path& part : relative) {
      if (Status ok = EnableControllers(dir); !ok) return std::move(ok).take_error();
      dir /= part;
      if (Status ok = MakeDirectory(dir); !ok) return std::move(ok).take_error();
    }
    job.dirs_.push_back({"", dir});
    return job;
  }
  for (const auto& [controller, mount] : hierarchy.controllers) {
    fs::path dir = mount;
    for (const fs::path& part : relative) {
      dir /= part;
      if (Status ok = MakeDirectory(dir); !ok) return std::move(ok).take_error();
      if (controller == "cpuset")
        if (Status ok = InheritCpuset(dir); !ok) return std::move(ok).take_error();
    }
    job.dirs_.push_back({controller, dir});
  }
  return job;
}

Result<JobCgroup> JobCgroup::Open(const CgroupHierarchy& hierarchy, std::string_view node_name,
                                  uint64_t job_id) {
  if (hierarchy.mode == CgroupMode::kNone) return MakeError(hierarchy.reason);
  if (Status ok = ValidNodeName(node_name); !ok) return std::move(ok).take_error();
  JobCgroup job = Untracked(hierarchy, node_name, job_id, "");
  job.mode_ = hierarchy.mode;
  const fs::path relative = fs::path("drover") / node_name / fmt::format("job_{}", job_id);
  if (hierarchy.mode == CgroupMode::kV2) {
    job.dirs_.push_back({"", hierarchy.root / relative});
  } else {
    for (const auto& [controller, mount] : hierarchy.controllers)
      job.dirs_.push_back({controller, mount / relative});
  }
  const fs::path memory = job.Dir("memory");
  std::error_code error;
  if (memory.empty() || !fs::is_directory(memory, error))
    return MakeError(fmt::format("{}: no cgroup", job.name_));
  return job;
}

JobCgroup JobCgroup::Untracked(const CgroupHierarchy& hierarchy, std::string_view node_name,
                               uint64_t job_id, std::string reason) {
  JobCgroup job;
  job.reason_ = std::move(reason);
  job.name_ = fmt::format("job {} on node {}", job_id, node_name);
  job.proc_ = hierarchy.proc;
  return job;
}

fs::path JobCgroup::Dir(std::string_view controller) const {
  for (const auto& [name, dir] : dirs_)
    if (mode_ == CgroupMode::kV2 || name == controller) return dir;
  return {};
}

fs::path JobCgroup::path() const {
  return Dir("memory");
}

Status JobCgroup::SetMemoryLimit(uint64_t bytes) {
  return SetMemoryLimits(bytes, bytes);
}

Status JobCgroup::SetMemoryLimits(uint64_t ram_bytes, uint64_t ram_and_swap_bytes) {
  if (mode_ == CgroupMode::kNone) return OkStatus();
  const fs::path dir = Dir("memory");
  if (mode_ == CgroupMode::kV2) {
    if (Status ok = WriteControl(dir / "memory.max", ram_bytes ? std::to_string(ram_bytes) : "max");
        !ok)
      return ok;
    if (!fs::exists(dir / "memory.swap.max")) return OkStatus();
    // v2 limits swap on its own: what RAM+swap allows beyond the RAM.
    std::string swap =
        ram_bytes && ram_and_swap_bytes
            ? std::to_string(ram_and_swap_bytes - std::min(ram_and_swap_bytes, ram_bytes))
            : "max";
    return WriteControl(dir / "memory.swap.max", swap);
  }
  const fs::path limit = dir / "memory.limit_in_bytes", memsw = dir / "memory.memsw.limit_in_bytes";
  const std::string value = ram_bytes ? std::to_string(ram_bytes) : "-1";
  if (!fs::exists(memsw)) return WriteControl(limit, value);  // no swap accounting here
  const std::string both = ram_and_swap_bytes ? std::to_string(ram_and_swap_bytes) : "-1";
  // The kernel keeps limit <= memsw limit at every step: raise memsw first, lower it last.
  auto current = ReadNumber(memsw);
  bool raising = !ram_and_swap_bytes || !current || ram_and_swap_bytes > *current;
  if (raising) {
    if (Status ok = WriteControl(memsw, both); !ok) return ok;
    return WriteControl(limit, value);
  }
  if (Status ok = WriteControl(limit, value); !ok) return ok;
  return WriteControl(memsw, both);
}

Status JobCgroup::SetCpus(const std::vector<int>& cpus) {
  if (mode_ == CgroupMode::kNone) return OkStatus();
  if (cpus.empty()) return MakeError(fmt::format("{}: a cpuset needs at least one CPU", name_));
  const fs::path dir = Dir("cpuset");
  if (mode_ == CgroupMode::kV2 && !fs::exists(dir / "cpuset.cpus"))
    return MakeError(
        fmt::format("{}: no cpuset.cpus: the cpuset controller is not enabled in "
                    "{}/cgroup.subtree_control",
                    dir.string(), dir.parent_path().string()));
  return WriteControl(dir / "cpuset.cpus", FormatIndexRanges(cpus));
}

Result<DeviceIsolation> JobCgroup::RestrictDevices(const std::vector<DeviceNumber>& denied) {
  if (mode_ == CgroupMode::kNone) return DeviceIsolation{false, reason_};
  if (mode_ == CgroupMode::kV2) {
    if (Status ok = DenyDevices(dirs_.front().second, denied); !ok)
      return std::move(ok).take_error();
    return DeviceIsolation{true, ""};
  }
  const fs::path dir = Dir("devices");
  if (dir.empty())
    return DeviceIsolation{false,
                           "the v1 devices controller is not mounted: GPUs are not "
                           "isolated"};
  for (const DeviceNumber& device : denied)
    if (Status ok =
            WriteControl(dir / "devices.deny", fmt::format("c {} rwm\n", DeviceText(device)), true);
        !ok)
      return std::move(ok).take_error();
  return DeviceIsolation{true, ""};
}

Result<fs::path> JobCgroup::MakeStepDevices(std::string_view name,
                                            const std::vector<DeviceNumber>& denied) {
  if (mode_ == CgroupMode::kNone) return fs::path();
  const fs::path job = Dir("devices");
  if (job.empty()) return fs::path();
  const fs::path dir = job / name;
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return MakeError(Failure(dir, "create it", errno));
  if (mode_ == CgroupMode::kV2) {
    if (Status ok = DenyDevices(dir, denied); !ok) return std::move(ok).take_error();
    return dir;
  }
  for (const DeviceNumber& device : denied)
    if (Status ok =
            WriteControl(dir / "devices.deny", fmt::format("c {} rwm\n", DeviceText(device)), true);
        !ok)
      return std::move(ok).take_error();
  return dir;
}

Status JobCgroup::AddProcessTo(pid_t pid, const fs::path& dir) {
  if (Status ok = AddProcess(pid); !ok || dir.empty()) return ok;
  return WriteControl(dir / "cgroup.procs", std::to_string(pid) + "\n", true);
}

Status JobCgroup::AddProcess(pid_t pid) {
  if (mode_ != CgroupMode::kNone) {
    for (const auto& [controller, dir] : dirs_)
      if (Status ok = WriteControl(dir / "cgroup.procs", std::to_string(pid) + "\n", true); !ok)
        return ok;
    return OkStatus();
  }
  pid_t session = ::getsid(pid);
  if (session < 0)
    return MakeError(fmt::format("{}: process {}: {}", name_, pid, std::strerror(errno)));
  if (session == ::getsid(0))
    return MakeError(
        fmt::format("{}: process {} is in droverd's own session; the job must "
                    "call setsid() first, or killing it would kill droverd",
                    name_, pid));
  if (std::find(sessions_.begin(), sessions_.end(), session) == sessions_.end())
    sessions_.push_back(session);
  return OkStatus();
}

Result<std::vector<pid_t>> JobCgroup::SessionPids() const {
  std::vector<pid_t> pids;
  if (sessions_.empty()) return pids;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(proc_, error)) {
    auto pid = ParseInt64(entry.path().filename().string());
    if (!pid) continue;
    auto stat = ReadStat(entry.path() / "stat");  // gone meanwhile: not ours any more
    if (!stat || stat->state == 'Z' || stat->state == 'X') continue;
    if (std::find(sessions_.begin(), sessions_.end(), stat->session) != sessions_.end())
      pids.push_back(static_cast<pid_t>(*pid));
  }
  if (error) return MakeError(Failure(proc_, "list it", error.value()));
  std::sort(pids.begin(), pids.end());
  return pids;
}

Result<std::vector<pid_t>> JobCgroup::Pids() const {
  if (mode_ == CgroupMode::kNone) return SessionPids();
  return ReadProcs(TrackingDir());
}

Status JobCgroup::SignalSession(int signal) const {
  auto pids = SessionPids();
  if (!pids) return std::move(pids).take_error();
  for (pid_t pid : *pids) ::kill(pid, signal);
  return OkStatus();
}

Status JobCgroup::Freeze() {
  if (mode_ == CgroupMode::kNone) return SignalSession(SIGSTOP);
  const bool v2 = mode_ == CgroupMode::kV2;
  const fs::path control = v2 ? Dir("") / "cgroup.freeze" : Dir("freezer") / "freezer.state";
  if (Status ok = WriteControl(control, v2 ? "1" : "FROZEN"); !ok) return ok;
  // Freezing takes effect task by task; wait until the kernel says it is done.
  for (auto deadline = Clock::now() + kFreezeWait;; std::this_thread::sleep_for(kPoll)) {
    auto frozen = IsFrozen();
    if (!frozen) return std::move(frozen).take_error();
    if (*frozen) return OkStatus();
    if (Clock::now() > deadline)
      return MakeError(
          fmt::format("{}: not frozen after {} s (a process in uninterruptible "
                      "sleep?)",
                      control.string(), kFreezeWait.count()));
  }
}

Result<bool> JobCgroup::IsFrozen() const {
  if (mode_ == CgroupMode::kV1) {
    auto state = ReadControl(Dir("freezer") / "freezer.state");
    if (!state) return std::move(state).take_error();
    return Trim(*state) == "FROZEN";
  }
  const fs::path events = Dir("") / "cgroup.events";
  if (!fs::exists(events)) return true;  // Linux before 5.2 cannot tell; the write is all
  auto frozen = ReadKeyed(events, "frozen");
  if (!frozen) return std::move(frozen).take_error();
  return frozen->value_or(0) == 1;
}

Status JobCgroup::Thaw() {
  if (mode_ == CgroupMode::kNone) return SignalSession(SIGCONT);
  if (mode_ == CgroupMode::kV2) return WriteControl(Dir("") / "cgroup.freeze", "0");
  return WriteControl(Dir("freezer") / "freezer.state", "THAWED");
}

fs::path JobCgroup::TrackingDir() const {
  return mode_ == CgroupMode::kV2 ? Dir("") : Dir("freezer");
}

void JobCgroup::KillOnce(const std::vector<pid_t>& pids) {
  const fs::path dir = TrackingDir();
  if (mode_ == CgroupMode::kNone) {
    for (pid_t session : sessions_) ::killpg(session, SIGKILL);
  } else if (mode_ == CgroupMode::kV2 && fs::exists(dir / "cgroup.kill")) {
    static_cast<void>(WriteControl(dir / "cgroup.kill", "1"));  // the listed pids follow
  } else {
    // Frozen, the processes cannot fork new ones between the listing and the signals; the
    // caller's loop copes without it, so a failure to freeze is no reason to stop.
    static_cast<void>(mode_ == CgroupMode::kV2 ? WriteControl(dir / "cgroup.freeze", "1")
                                               : WriteControl(dir / "freezer.state", "FROZEN"));
  }
  for (pid_t pid : pids) ::kill(pid, SIGKILL);
  if (mode_ != CgroupMode::kNone) static_cast<void>(Thaw());
}

Status JobCgroup::KillAll(std::chrono::milliseconds bound) {
  // A removed cgroup has nothing left to kill.
  if (mode_ != CgroupMode::kNone && !fs::exists(TrackingDir())) return OkStatus();
  const auto deadline = Clock::now() + bound;
  for (;; std::this_thread::sleep_for(kPoll)) {
    auto pids = Pids();
    if (!pids) return std::move(pids).take_error();
    if (pids->empty()) return OkStatus();
    if (Clock::now() > deadline)
      return MakeError(
          fmt::format("{}: processes {} survived {} ms of SIGKILL (uninterruptible "
                      "sleep, e.g. on a hung file system?)",
                      name_, Describe(*pids), bound.count()));
    KillOnce(*pids);
  }
}

Result<bool> JobCgroup::OomKilled() const {
  if (mode_ == CgroupMode::kNone) return false;
  const fs::path dir = Dir("memory");
  if (mode_ == CgroupMode::kV2) {
    auto kills = ReadKeyed(dir / "memory.events", "oom_kill");
    if (!kills) return std::move(kills).take_error();
    return kills->value_or(0) > 0;
  }
  auto kills = ReadKeyed(dir / "memory.oom_control", "oom_kill");
  if (!kills) return std::move(kills).take_error();
  if (kills->has_value()) return **kills > 0;
  auto failures = ReadNumber(dir / "memory.failcnt");
  if (!failures) return std::move(failures).take_error();
  auto peak = ReadNumber(dir / "memory.max_usage_in_bytes");
  if (!peak) return std::move(peak).take_error();
  auto limit = ReadNumber(dir / "memory.limit_in_bytes");
  if (!limit) return std::move(limit).take_error();
  constexpr uint64_t kPage = 4096;
  return *failures > 0 && *peak + kPage >= *limit;
}

Result<uint64_t> JobCgroup::PeakMemoryBytes() const {
  if (mode_ == CgroupMode::kNone)
    return MakeError(fmt::format("{}: peak memory is not measured: {}", name_, reason_));
  const fs::path dir = Dir("memory");
  if (mode_ == CgroupMode::kV1) return ReadNumber(dir / "memory.max_usage_in_bytes");
  if (!fs::exists(dir / "memory.peak"))
    return MakeError(
        fmt::format("{}: no memory.peak (Linux before 5.19): peak memory is not "
                    "measured",
                    dir.string()));
  return ReadNumber(dir / "memory.peak");
}

Result<uint64_t> JobCgroup::MemoryBytes() const {
  if (mode_ == CgroupMode::kNone)
    return MakeError(fmt::format("{}: memory is not measured: {}", name_, reason_));
  const fs::path dir = Dir("memory");
  return ReadNumber(dir / (mode_ == CgroupMode::kV1 ? "memory.usage_in_bytes" : "memory.current"));
}

Result<uint64_t> JobCgroup::CpuTimeNanoseconds() const {
  if (mode_ == CgroupMode::kNone)
    return MakeError(fmt::format("{}: CPU time is not measured: {}", name_, reason_));
  if (mode_ == CgroupMode::kV1) {
    const fs::path dir = Dir("cpuacct");
    if (dir.empty())
      return MakeError(
          fmt::format("{}: the v1 cpuacct controller is not mounted: CPU time is "
                      "not measured",
                      name_));
    return ReadNumber(dir / "cpuacct.usage");
  }
  const fs::path stat = Dir("") / "cpu.stat";
  auto usage = ReadKeyed(stat, "usage_usec");
  if (!usage) return std::move(usage).take_error();
  if (!usage->has_value()) return MakeError(fmt::format("{}: no usage_usec line", stat.string()));
  return **usage * 1000;
}

Status JobCgroup::Remove() {
  for (const auto& [controller, dir] : dirs_) {
    if (!fs::exists(dir)) continue;
    for (const fs::path& cgroup : Tree(dir))
      if (::rmdir(cgroup.c_str()) != 0 && errno != ENOENT)
        return MakeError(Failure(cgroup, "remove it", errno));
  }
  return OkStatus();
}

}  // namespace drover::agent
