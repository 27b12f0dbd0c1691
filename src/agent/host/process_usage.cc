// A process's use, from /proc: see process_usage.h.
#include "agent/host/process_usage.h"

#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace drover::agent {
namespace {

uint64_t Number(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  uint64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

}  // namespace

std::optional<ProcessUsage> ReadProcessUsage(pid_t pid, const std::filesystem::path& proc) {
  const std::filesystem::path dir = proc / std::to_string(pid);
  std::ifstream stat_file(dir / "stat");
  std::string stat;
  if (!std::getline(stat_file, stat)) return std::nullopt;
  ProcessUsage usage;
  // After the command's closing parenthesis: state (3), ..., majflt (12), utime (14), stime (15).
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 1));
  std::vector<std::string> words;
  for (std::string word; fields >> word && words.size() < 13;) words.push_back(word);
  if (words.size() < 13) return std::nullopt;
  usage.major_faults = Number(words[9]);
  static const double kTicks = static_cast<double>(sysconf(_SC_CLK_TCK));
  usage.cpu_seconds =
      static_cast<double>(Number(words[11]) + Number(words[12])) / (kTicks > 0 ? kTicks : 100);
  std::ifstream status(dir / "status");
  for (std::string line; std::getline(status, line);) {
    std::string_view view(line);
    auto value = [&view](std::string_view key) { return Number(view.substr(key.size())); };
    if (view.starts_with("VmRSS:"))
      usage.rss_kib = value("VmRSS:");
    else if (view.starts_with("VmHWM:"))
      usage.max_rss_kib = value("VmHWM:");
    else if (view.starts_with("VmSize:"))
      usage.vsize_kib = value("VmSize:");
    else if (view.starts_with("VmPeak:"))
      usage.max_vsize_kib = value("VmPeak:");
  }
  return usage;
}

}  // namespace drover::agent
