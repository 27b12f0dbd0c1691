// The host's CPUs, memory and boot id from /sys and /proc; see host_info.h.
#include "agent/host/host_info.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/gres_conf.h"
#include "common/text.h"

namespace drover::agent {
namespace {

namespace fs = std::filesystem;

struct LogicalCpu {
  int id = 0;
  int package = 0;
  int core = 0;
};

Result<std::string> ReadText(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return MakeError(fmt::format("{}: cannot read it", path.string()));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<int> ReadNumber(const fs::path& path) {
  auto text = ReadText(path);
  if (!text) return std::move(text).take_error();
  auto number = ParseInt64(Trim(*text));
  if (!number || *number < 0 || *number > 1 << 20)
    return MakeError(
        fmt::format("{}: expected a number, found '{}'", path.string(), std::string(Trim(*text))));
  return static_cast<int>(*number);
}

// The CPUs of <root>/sys/devices/system/cpu; an empty list when sysfs has no topology.
Result<std::vector<LogicalCpu>> CpusFromSysfs(const fs::path& root) {
  const fs::path base = root / "sys/devices/system/cpu";
  std::vector<int> ids;
  if (auto online = ReadText(base / "online"); online) {
    auto list = ParseIndexList(Trim(*online));
    if (!list) return MakeError(fmt::format("{}: {}", (base / "online").string(), list.error()));
    ids = std::move(*list);
  } else {
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(base, error)) {
      std::string name = entry.path().filename().string();
      if (name.size() > 3 && name.starts_with("cpu"))
        if (auto id = ParseInt64(std::string_view(name).substr(3)))
          ids.push_back(static_cast<int>(*id));
    }
  }
  std::vector<LogicalCpu> cpus;
  for (int id : ids) {
    const fs::path topology = base / fmt::format("cpu{}/topology", id);
    if (!fs::exists(topology)) return std::vector<LogicalCpu>{};
    auto package = ReadNumber(topology / "physical_package_id");
    if (!package) return std::move(package).take_error();
    auto core = ReadNumber(topology / "core_id");
    if (!core) return std::move(core).take_error();
    cpus.push_back({id, *package, *core});
  }
  return cpus;
}

// The same from /proc/cpuinfo, for hosts (and containers) without sysfs topology. A processor
// without "physical id" (some VMs) is a core of its own on socket 0.
Result<std::vector<LogicalCpu>> CpusFromCpuinfo(const fs::path& root) {
  const fs::path path = root / "proc/cpuinfo";
  auto text = ReadText(path);
  if (!text) return std::move(text).take_error();
  std::vector<LogicalCpu> cpus;
  for (const std::string& line : Split(*text, '\n')) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key(Trim(std::string_view(line).substr(0, colon)));
    auto value = ParseInt64(Trim(std::string_view(line).substr(colon + 1)));
    if (key == "processor") {
      if (!value) return MakeError(fmt::format("{}: invalid line '{}'", path.string(), line));
      cpus.push_back({static_cast<int>(*value), 0, static_cast<int>(*value)});
    } else if (!cpus.empty() && value && key == "physical id") {
      cpus.back().package = static_cast<int>(*value);
    } else if (!cpus.empty() && value && key == "core id") {
      cpus.back().core = static_cast<int>(*value);
    }
  }
  if (cpus.empty())
    return MakeError(
        fmt::format("{}: no 'processor' lines; cannot count the host's CPUs", path.string()));
  return cpus;
}

void FillTopology(const std::vector<LogicalCpu>& cpus, HostInfo& host) {
  std::map<std::pair<int, int>, std::vector<int>> cores;  // (package, core id) -> CPUs
  std::map<int, int> cores_in_package;
  for (const LogicalCpu& cpu : cpus) {
    auto& threads = cores[{cpu.package, cpu.core}];
    if (threads.empty()) ++cores_in_package[cpu.package];
    threads.push_back(cpu.id);
  }
  host.cpus = static_cast<int>(cpus.size());
  host.sockets = static_cast<int>(cores_in_package.size());
  host.cores_per_socket = 0;
  for (const auto& [package, count] : cores_in_package)
    host.cores_per_socket = std::max(host.cores_per_socket, count);
  host.threads_per_core = 0;
  host.core_cpus.clear();
  for (auto& [key, threads] : cores) {
    std::sort(threads.begin(), threads.end());
    host.threads_per_core = std::max(host.threads_per_core, static_cast<int>(threads.size()));
    host.core_cpus.push_back(threads);
  }
}

Result<uint64_t> ReadMemoryMb(const fs::path& root) {
  const fs::path path = root / "proc/meminfo";
  auto text = ReadText(path);
  if (!text) return std::move(text).take_error();
  for (const std::string& line : Split(*text, '\n')) {
    if (!line.starts_with("MemTotal:")) continue;
    std::string_view value = Trim(std::string_view(line).substr(9));
    if (value.ends_with("kB")) value = Trim(value.substr(0, value.size() - 2));
    auto kib = ParseUint64(value);
    if (!kib) return MakeError(fmt::format("{}: invalid line '{}'", path.string(), line));
    return *kib / 1024;
  }
  return MakeError(fmt::format("{}: no MemTotal line", path.string()));
}

}  // namespace

Result<HostInfo> ReadHostInfo(const fs::path& root) {
  HostInfo host;
  auto cpus = CpusFromSysfs(root);
  if (!cpus) return std::move(cpus).take_error();
  if (cpus->empty()) {
    cpus = CpusFromCpuinfo(root);
    if (!cpus) return std::move(cpus).take_error();
  }
  FillTopology(*cpus, host);

  auto memory = ReadMemoryMb(root);
  if (!memory) return std::move(memory).take_error();
  host.memory_mb = *memory;

  const fs::path boot_id = root / "proc/sys/kernel/random/boot_id";
  auto text = ReadText(boot_id);
  if (!text) return std::move(text).take_error();
  host.boot_id = std::string(Trim(*text));
  if (host.boot_id.empty()) return MakeError(fmt::format("{}: empty", boot_id.string()));
  return host;
}

Result<std::vector<int>> CpusOfCores(const HostInfo& host, const std::vector<int>& cores) {
  std::vector<int> cpus;
  for (int core : cores) {
    if (core < 0 || core >= host.cores())
      return MakeError(fmt::format("core {} does not exist: this host has {} cores (0-{})", core,
                                   host.cores(), host.cores() - 1));
    cpus.insert(cpus.end(), host.core_cpus[core].begin(), host.core_cpus[core].end());
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::vector<int> CoresOfCpus(const HostInfo& host, const std::vector<int>& cpus) {
  std::set<int> wanted(cpus.begin(), cpus.end());
  std::vector<int> cores;
  for (int core = 0; core < host.cores(); ++core) {
    for (int cpu : host.core_cpus[core]) {
      if (wanted.count(cpu)) {
        cores.push_back(core);
        break;
      }
    }
  }
  return cores;
}

std::string FormatIndexRanges(std::vector<int> indexes) {
  std::sort(indexes.begin(), indexes.end());
  indexes.erase(std::unique(indexes.begin(), indexes.end()), indexes.end());
  std::string out;
  for (size_t i = 0; i < indexes.size();) {
    size_t j = i;
    while (j + 1 < indexes.size() && indexes[j + 1] == indexes[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", indexes[i]) : fmt::format("{}-{}", indexes[i], indexes[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace drover::agent
