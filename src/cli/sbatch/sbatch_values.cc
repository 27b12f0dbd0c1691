// sbatch's option values; see sbatch_values.h.
#include "cli/sbatch/sbatch_values.h"

#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <csignal>
#include <set>
#include <utility>
#include <vector>

#include "common/duration.h"
#include "common/hostlist.h"
#include "common/text.h"

namespace drover::cli::sbatch {

// Slurm's parse_int for a count: a whole decimal number above zero.
Result<uint32_t> ParseCount(const std::string& text, std::string_view option) {
  std::string_view digits = text;
  while (!digits.empty() && std::isspace(static_cast<unsigned char>(digits.front())))
    digits.remove_prefix(1);
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  std::optional<uint64_t> value = ParseUint64(digits);
  if (!value || *value == 0)
    return Fail(fmt::format("Invalid numeric value \"{}\" for {}.", text, option));
  if (*value > INT_MAX)
    return Fail(fmt::format("Numeric argument ({}) to big for {}.", *value, option));
  return static_cast<uint32_t>(*value);
}

// Slurm's time_str2mins: whole minutes, rounded up; 0, -1, INFINITE and UNLIMITED mean no limit.
std::optional<int64_t> ParseTimeLimit(std::string_view text) {
  if (Trim(text) == "-1") return kUnlimitedSeconds;
  Result<int64_t> seconds = ParseDuration(text);
  if (!seconds) return std::nullopt;
  if (*seconds == 0 || *seconds == kUnlimitedSeconds) return kUnlimitedSeconds;
  if (*seconds > int64_t{INT_MAX} * 60) return std::nullopt;  // Slurm keeps minutes in an int
  return (*seconds + 59) / 60 * 60;
}

// "none" is /dev/null for --output, --error and --input.
std::string IoPath(const std::string& text) {
  return EqualsIgnoreCase(text, "none") ? "/dev/null" : text;
}

std::string Absolute(const std::string& path, const std::string& cwd) {
  if (path.starts_with('/')) return path;
  return cwd.ends_with('/') ? cwd + path : cwd + "/" + path;
}

// "[type:]count", as --gpus, --gpus-per-node and --gpus-per-task take it.
Result<GpuCount> ParseGpuCount(const std::string& text, std::string_view option) {
  std::vector<std::string> parts = Split(text, ':');
  GpuCount gpu;
  std::optional<uint64_t> count = ParseUint64(parts.back());
  if (parts.size() > 2 || (parts.size() == 2 && parts[0].empty()) || !count || *count == 0 ||
      *count > INT_MAX)
    return Fail(fmt::format(
        "Invalid {} specification '{}' (expected [type:]count, e.g. 4 or a100:4)", option, text));
  if (parts.size() == 2) gpu.type = parts[0];
  gpu.count = static_cast<uint32_t>(*count);
  return gpu;
}

// The words of a host file: separated by blanks, commas or newlines, '#' starting a comment.
std::vector<std::string> HostFileWords(std::string_view content) {
  std::vector<std::string> words;
  for (const std::string& line : Split(content, '\n')) {
    std::string word;
    for (char c : std::string_view(line).substr(0, line.find('#'))) {
      if (!std::isspace(static_cast<unsigned char>(c)))
        word += c;
      else if (!word.empty())
        words.push_back(std::exchange(word, {}));
    }
    if (!word.empty()) words.push_back(std::move(word));
  }
  return words;
}

// Host names from a hostlist expression, or from a file when the text holds a '/' (as Slurm
// reads --nodelist) or `from_file`; duplicates dropped, order kept.
Result<std::vector<std::string>> ParseHostNames(const std::string& text, std::string_view option,
                                                const Inputs& in, bool from_file) {
  std::string expression = text;
  if (from_file || text.find('/') != std::string::npos) {
    Result<std::string> content = in.read_file(Absolute(text, in.cwd));
    if (!content)
      return Fail(fmt::format("Unable to read {} file {}: {}", option, text, content.error()));
    expression = Join(HostFileWords(*content), ",");
  }
  Result<std::vector<std::string>> names = ExpandHostlist(expression);
  if (!names) return Fail(fmt::format("Invalid {} specification: {}", option, names.error()));
  std::vector<std::string> unique;
  std::set<std::string> seen;
  for (std::string& name : *names) {
    if (name.empty() || !seen.insert(name).second) continue;
    unique.push_back(std::move(name));
  }
  if (unique.empty()) return Fail(fmt::format("Invalid {} specification: no host names", option));
  return unique;
}

// Slurm's verify_node_count: "N" or "MIN-MAX" (an empty MAX is no maximum), with k and m
// multiplying by 1024 and 1048576.
std::optional<uint64_t> ParseNodeCount(std::string_view text) {
  text = Trim(text);
  uint64_t scale = 1;
  if (!text.empty() && (text.back() == 'k' || text.back() == 'K')) scale = 1024;
  if (!text.empty() && (text.back() == 'm' || text.back() == 'M')) scale = 1024 * 1024;
  if (scale != 1) text.remove_suffix(1);
  std::optional<uint64_t> count = ParseUint64(text);
  if (!count || *count > UINT32_MAX / scale) return std::nullopt;
  return *count * scale;
}

Result<NodeRange> ParseNodeRange(const std::string& text) {
  size_t dash = text.find('-');
  std::string min_text = text.substr(0, dash);
  std::optional<uint64_t> min = ParseNodeCount(min_text);
  if (!min) return Fail(fmt::format("\"{}\" is not a valid node count", min_text));
  NodeRange range{static_cast<uint32_t>(*min), static_cast<uint32_t>(*min)};
  if (dash != std::string::npos) {
    std::string max_text = text.substr(dash + 1);
    std::optional<uint64_t> max =
        Trim(max_text).empty() ? std::optional<uint64_t>(0) : ParseNodeCount(max_text);
    if (!max) return Fail(fmt::format("\"{}\" is not a valid node count", max_text));
    range.max = static_cast<uint32_t>(*max);
  }
  if (range.max != 0 && range.max < range.min)
    return Fail(fmt::format("Maximum node count {} is less than minimum node count {}", range.max,
                            range.min));
  if (range.min == 0) return Fail(fmt::format("invalid number of nodes (-N {})", text));
  return range;
}

// Slurm's sig_name2num: a number, or a name with or without "SIG", in any case.
std::optional<int> ParseSignal(std::string_view text) {
  if (std::optional<uint64_t> number = ParseUint64(text))
    return *number >= 1 && *number <= 64 ? std::optional<int>(static_cast<int>(*number))
                                         : std::nullopt;
  if (StartsWithIgnoreCase(text, "SIG")) text.remove_prefix(3);
  static constexpr std::pair<std::string_view, int> kSignals[] = {
      {"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"ABRT", SIGABRT},
      {"KILL", SIGKILL}, {"ALRM", SIGALRM}, {"TERM", SIGTERM}, {"USR1", SIGUSR1},
      {"USR2", SIGUSR2}, {"URG", SIGURG},   {"CONT", SIGCONT}, {"STOP", SIGSTOP},
      {"TSTP", SIGTSTP}, {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU}, {"XCPU", SIGXCPU}};
  for (const auto& [name, number] : kSignals)
    if (EqualsIgnoreCase(text, name)) return number;
  return std::nullopt;
}

// --signal=[{R|B}:]SIG[@seconds], seconds 0..65535, 60 when not given.
std::optional<SignalRequest> ParseSignalOption(std::string_view text, bool& reservation) {
  SignalRequest request;
  reservation = false;
  for (std::string_view prefix : {"RB:", "BR:", "B:", "R:"}) {
    if (!StartsWithIgnoreCase(text, prefix)) continue;
    request.batch_only = prefix != "R:";
    reservation = prefix != "B:";
    text.remove_prefix(prefix.size());
    break;
  }
  size_t at = text.find('@');
  std::optional<int> number = ParseSignal(text.substr(0, at));
  if (!number) return std::nullopt;
  request.number = *number;
  if (at != std::string_view::npos) {
    std::optional<uint64_t> seconds = ParseUint64(text.substr(at + 1));
    if (!seconds || *seconds > 0xffff) return std::nullopt;
    request.seconds = static_cast<int64_t>(*seconds);
  }
  return request;
}

std::optional<UserEntry> LookUpUser(std::string_view name_or_id) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  std::string text(name_or_id);
  if (std::optional<uint64_t> id = ParseUint64(text); id && *id <= UINT32_MAX)
    getpwuid_r(static_cast<uid_t>(*id), &entry, buffer.data(), buffer.size(), &found);
  else
    getpwnam_r(text.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (!found) return std::nullopt;
  return UserEntry{found->pw_uid, found->pw_gid, found->pw_name};
}

std::optional<uint32_t> LookUpGroup(std::string_view name_or_id) {
  std::string text(name_or_id);
  if (std::optional<uint64_t> id = ParseUint64(text); id && *id <= UINT32_MAX)
    return static_cast<uint32_t>(*id);  // a number needs no entry, as in Slurm
  std::vector<char> buffer(16384);
  group entry{};
  group* found = nullptr;
  getgrnam_r(text.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (!found) return std::nullopt;
  return found->gr_gid;
}

}  // namespace drover::cli::sbatch
