// Reads sbatch's command line, #SBATCH lines and SBATCH_* variables; see sbatch_options.h. The
// option table follows Slurm's (names, letters, argument kinds), so GNU getopt's abbreviations
// resolve to the same options; each option's handler validates its value where Slurm does.
#include "cli/sbatch_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <csignal>
#include <ctime>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "common/dependency.h"
#include "common/duration.h"
#include "common/gres.h"
#include "common/hostlist.h"
#include "common/memory_size.h"
#include "common/text.h"

namespace drover::cli {
namespace {

constexpr std::string_view kTryHelp = "Try \"sbatch --help\" for more information";
// The Slurm release whose behaviour Drover follows; `sbatch --version` names it, as tools that
// check Slurm's version parse "slurm X.Y.Z".
constexpr std::string_view kSlurmVersion = "22.05.8";

Error Fail(std::string_view text) {
  return MakeError(fmt::format("sbatch: error: {}", text));
}

// Where a value came from. Later sources override earlier ones, as in Slurm.
enum class Source { kScript, kEnvironment, kCommandLine };

template <typename T>
struct Sourced {
  T value;
  Source source;
};

struct GpuCount {
  std::string type;  // empty: any type
  uint32_t count = 0;
};

struct NodeRange {
  uint32_t min = 1, max = 0;  // max 0: no maximum
};

struct SignalRequest {
  int number = 0;
  int64_t seconds = 60;
  bool batch_only = false;
};

// Every option's value once validated; each option overwrites only its own field, so the order
// script, environment, command line gives Slurm's precedence. Finish() combines them.
struct Settings {
  std::optional<std::string> name, account, qos, comment, reservation, constraint, array;
  std::optional<std::string> stdout_path, stderr_path, stdin_path, work_dir;
  std::optional<std::vector<std::string>> partitions, nodelist, exclude;
  std::optional<NodeRange> nodes;
  std::optional<uint32_t> ntasks, ntasks_per_node, switches, segment;
  std::optional<int64_t> switch_wait, time_limit, time_min, begin, deadline;
  std::optional<Sourced<uint32_t>> cpus_per_task, cpus_per_gpu;
  std::optional<Sourced<uint64_t>> mem, mem_per_cpu, mem_per_gpu;
  std::optional<GpuCount> gpus, gpus_per_node, gpus_per_task;
  std::optional<std::vector<GresSpec>> gres;
  std::optional<Sourced<bool>> exclusive;
  std::optional<Source> oversubscribe;
  std::optional<DependencySpec> dependency;
  std::optional<int32_t> nice;
  std::optional<SignalRequest> signal;
  std::optional<bool> requeue;
  std::optional<char> open_mode;  // 'a' or 't'
  std::optional<std::string> export_env, export_file, wrap;
  bool hold = false, parsable = false, test_only = false, wait = false, quiet = false;
  bool verbose = false;
  std::vector<std::string> notices;

  void Notice(std::string line) {
    if (std::find(notices.begin(), notices.end(), line) == notices.end())
      notices.push_back(std::move(line));
  }
  void NoEffect(std::string_view option) {
    Notice(fmt::format("sbatch: warning: --{} is accepted but has no effect in Drover", option));
  }
};

struct Inputs {
  const ReadFile& read_file;
  const std::map<std::string, std::string>& environment;
  const std::string& cwd;
  uint32_t uid;
  int64_t now;
};

// ---------------------------------------------------------------------------------------------
// Values

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

bool ValidMailTypes(std::string_view text) {
  static constexpr std::string_view kTypes[] = {
      "NONE",          "BEGIN",          "END",        "FAIL",       "REQUEUE",
      "ALL",           "INVALID_DEPEND", "STAGE_OUT",  "TIME_LIMIT", "TIME_LIMIT_90",
      "TIME_LIMIT_80", "TIME_LIMIT_50",  "ARRAY_TASKS"};
  for (const std::string& type : Split(text, ','))
    if (std::none_of(std::begin(kTypes), std::end(kTypes),
                     [&](std::string_view known) { return EqualsIgnoreCase(type, known); }))
      return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Dates and times (Slurm's parse_time)

std::tm LocalTime(int64_t seconds) {
  std::time_t time = static_cast<std::time_t>(seconds);
  std::tm out{};
  localtime_r(&time, &out);
  return out;
}

struct TimeParts {
  int hour = -1, minute = -1, second = 0, month = -1, mday = -1, year = -1;
  void SetDate(const std::tm& tm) {
    month = tm.tm_mon;
    mday = tm.tm_mday;
    year = tm.tm_year;
  }
  void SetClock(int h, int m, int s) {
    hour = h;
    minute = m;
    second = s;
  }
};

bool IsDigit(std::string_view text, size_t pos) {
  return pos < text.size() && text[pos] >= '0' && text[pos] <= '9';
}

// Reads between `min` and `max` digits at `pos`.
bool ReadDigits(std::string_view text, size_t& pos, size_t min, size_t max, int& out) {
  size_t start = pos;
  out = 0;
  while (pos - start < max && IsDigit(text, pos)) out = out * 10 + (text[pos++] - '0');
  return pos - start >= min;
}

bool Eat(std::string_view text, size_t& pos, char c) {
  if (pos >= text.size() || text[pos] != c) return false;
  ++pos;
  return true;
}

// "HH:MM[:SS] [AM|PM]"
bool ParseClock(std::string_view text, size_t& pos, TimeParts& parts) {
  int hour = 0, minute = 0, second = 0;
  if (!ReadDigits(text, pos, 1, 2, hour) || hour > 23 || !Eat(text, pos, ':') ||
      !ReadDigits(text, pos, 2, 2, minute) || minute > 59)
    return false;
  if (Eat(text, pos, ':') && (!ReadDigits(text, pos, 2, 2, second) || second > 59)) return false;
  size_t after = pos;
  while (after < text.size() && (text[after] == ' ' || text[after] == '\t')) ++after;
  std::string_view rest = text.substr(after);
  if (StartsWithIgnoreCase(rest, "pm")) {
    hour += 12;
    if (hour == 24) hour = 12;
    if (hour > 23) return false;
    pos = after + 2;
  } else if (StartsWithIgnoreCase(rest, "am")) {
    if (hour == 12) hour = 0;
    if (hour > 11) return false;
    pos = after + 2;
  }
  parts.SetClock(hour, minute, second);
  return true;
}

// "YYYY-MM-DD", or "MM[/.]DD[[/.]YY]".
bool ParseDate(std::string_view text, size_t& pos, TimeParts& parts) {
  int year = 0, month = 0, day = 0;
  if (text.size() > pos + 7 && text[pos + 4] == '-' && text[pos + 7] == '-') {
    if (!ReadDigits(text, pos, 4, 4, year) || !Eat(text, pos, '-') ||
        !ReadDigits(text, pos, 2, 2, month) || !Eat(text, pos, '-') ||
        !ReadDigits(text, pos, 1, 2, day))
      return false;
    year -= 1900;
  } else {
    if (!ReadDigits(text, pos, 1, 2, month)) return false;
    if (!Eat(text, pos, '/')) Eat(text, pos, '.');
    if (!ReadDigits(text, pos, 1, 2, day)) return false;
    if (!Eat(text, pos, '/')) Eat(text, pos, '.');
    year = -1;
    if (IsDigit(text, pos)) {
      if (!ReadDigits(text, pos, 2, 2, year)) return false;
      year += 100;
    }
  }
  if (month < 1 || month > 12 || day < 1 || day > 31) return false;
  parts.month = month - 1;
  parts.mday = day;
  if (year != -1) parts.year = year;
  return true;
}

// "+N[unit]" or "-N[unit]" after "now", in seconds.
std::optional<int64_t> ParseDelta(std::string_view text, size_t& pos) {
  static constexpr std::pair<std::string_view, int64_t> kUnits[] = {
      {"seconds", 1}, {"second", 1},   {"minutes", 60}, {"minute", 60},       {"hours", 3600},
      {"hour", 3600}, {"days", 86400}, {"day", 86400},  {"weeks", 7 * 86400}, {"week", 7 * 86400}};
  int64_t count = 0;
  bool digits = false;
  while (pos < text.size()) {
    if (text[pos] == ' ' || text[pos] == '\t') {
      ++pos;
      continue;
    }
    auto unit = std::find_if(std::begin(kUnits), std::end(kUnits), [&](const auto& u) {
      return StartsWithIgnoreCase(text.substr(pos), u.first);
    });
    if (unit != std::end(kUnits)) {
      pos += unit->first.size();
      if (!digits || count > INT64_MAX / unit->second) return std::nullopt;
      return count * unit->second;
    }
    if (!IsDigit(text, pos) || count > (INT64_MAX - 9) / 10) return std::nullopt;
    count = count * 10 + (text[pos++] - '0');
    digits = true;
  }
  if (!digits) return std::nullopt;
  return count;
}

// "now" followed by blanks and an optional signed delta; sets the date and clock.
bool ParseNow(std::string_view text, size_t& pos, int64_t now, TimeParts& parts) {
  pos += 3;
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
  int64_t delta = 0;
  if (pos < text.size()) {
    char sign = text[pos++];
    if (sign != '+' && sign != '-') return false;
    std::optional<int64_t> parsed = ParseDelta(text, pos);
    if (!parsed || *parsed > (int64_t{1} << 40)) return false;  // beyond any calendar
    delta = sign == '-' ? -*parsed : *parsed;
  }
  std::tm later = LocalTime(now + delta);
  parts.SetDate(later);
  parts.SetClock(later.tm_hour, later.tm_min, later.tm_sec);
  return true;
}

bool ParseTimeWord(std::string_view text, size_t& pos, int64_t now, TimeParts& parts) {
  static constexpr std::pair<std::string_view, int> kClockWords[] = {
      {"midnight", 0}, {"noon", 12}, {"elevenses", 11}, {"fika", 15}, {"teatime", 16}};
  std::string_view rest = text.substr(pos);
  if (StartsWithIgnoreCase(rest, "today")) {
    parts.SetDate(LocalTime(now));
    pos += 5;
    return true;
  }
  if (StartsWithIgnoreCase(rest, "tomorrow")) {
    parts.SetDate(LocalTime(now + 86400));
    pos += 8;
    return true;
  }
  for (const auto& [word, hour] : kClockWords) {
    if (!StartsWithIgnoreCase(rest, word)) continue;
    parts.SetClock(hour, 0, 0);
    pos += word.size();
    return true;
  }
  if (StartsWithIgnoreCase(rest, "now")) return ParseNow(text, pos, now, parts);
  if (!IsDigit(text, pos)) return false;
  bool clock = (pos + 1 < text.size() && text[pos + 1] == ':') ||
               (pos + 2 < text.size() && text[pos + 2] == ':');
  return clock ? ParseClock(text, pos, parts) : ParseDate(text, pos, parts);
}

// ---------------------------------------------------------------------------------------------
// The option table

enum class Arg { kNone, kRequired, kOptional };

struct OptionDef;

struct Use {
  const OptionDef* def = nullptr;
  std::optional<std::string> value;
  Source source = Source::kCommandLine;
  const Inputs* in = nullptr;
  const std::string& text() const { return *value; }
};

using Handler = Status (*)(const Use&, Settings&);

struct OptionDef {
  constexpr OptionDef(std::string_view name_, char letter_, Arg arg_, Handler handler_,
                      bool early_ = false, std::string_view alias_of_ = {})
      : name(name_),
        letter(letter_),
        arg(arg_),
        handler(handler_),
        early(early_),
        alias_of(alias_of_) {}

  std::string_view name;  // after "--"; empty for an environment-only option
  char letter;            // the short option; 0 for none
  Arg arg;
  Handler handler;            // none for --help, --usage and --version, which end parsing
  bool early;                 // Slurm reads it before the script, and ignores it in #SBATCH lines
  std::string_view alias_of;  // the option this name also spells (getopt treats them as one)
};

// "--name" as messages give it; an alias speaks as the option it spells.
std::string Spelled(const Use& use) {
  return fmt::format("--{}", use.def->alias_of.empty() ? use.def->name : use.def->alias_of);
}

Status NoEffect(const Use& use, Settings& s) {
  s.NoEffect(use.def->name);
  return OkStatus();
}

Status RootOnly(const Use& use, Settings& s) {
  if (use.in->uid != 0) return Fail(fmt::format("{} only permitted by root user", Spelled(use)));
  return NoEffect(use, s);
}

Status SetTime(const Use& use, std::optional<int64_t>& field) {
  std::optional<int64_t> limit = ParseTimeLimit(use.text());
  if (!limit) return Fail(fmt::format("Invalid {} specification", Spelled(use)));
  field = *limit;
  return OkStatus();
}

Status SetDate(const Use& use, std::optional<int64_t>& field) {
  std::optional<int64_t> time = ParseSlurmTime(use.text(), use.in->now);
  if (!time || *time == 0) return Fail(fmt::format("Invalid {} specification", Spelled(use)));
  field = *time;
  return OkStatus();
}

Status SetMemory(const Use& use, std::optional<Sourced<uint64_t>>& field, Settings& s) {
  Result<uint64_t> megabytes = ParseMemoryMB(use.text());
  if (!megabytes) return Fail(fmt::format("Invalid {} specification", Spelled(use)));
  if (*megabytes == 0)
    s.Notice(fmt::format(
        "sbatch: warning: {}=0 (all of a node's memory in Slurm) is not supported by Drover; "
        "the partition's default memory applies",
        Spelled(use)));
  field = Sourced<uint64_t>{*megabytes, use.source};
  return OkStatus();
}

Status SetGpus(const Use& use, std::optional<GpuCount>& field) {
  Result<GpuCount> gpus = ParseGpuCount(use.text(), Spelled(use));
  if (!gpus) return std::move(gpus).take_error();
  field = std::move(*gpus);
  return OkStatus();
}

Status SetCount(const Use& use, std::optional<uint32_t>& field) {
  Result<uint32_t> count = ParseCount(use.text(), Spelled(use));
  if (!count) return std::move(count).take_error();
  field = *count;
  return OkStatus();
}

Status SetSourcedCount(const Use& use, std::optional<Sourced<uint32_t>>& field) {
  Result<uint32_t> count = ParseCount(use.text(), Spelled(use));
  if (!count) return std::move(count).take_error();
  field = Sourced<uint32_t>{*count, use.source};
  return OkStatus();
}

Status SetNodeList(const Use& use, std::optional<std::vector<std::string>>& field, bool file) {
  Result<std::vector<std::string>> names = ParseHostNames(use.text(), Spelled(use), *use.in, file);
  if (!names) return std::move(names).take_error();
  field = std::move(*names);
  return OkStatus();
}

Status SetExclusive(const Use& use, Settings& s) {
  std::string mode = use.value ? ToLower(*use.value) : "exclusive";
  if (mode == "user" || mode == "mcs" || mode == "topo")
    s.Notice(
        fmt::format("sbatch: warning: --exclusive={} is treated as --exclusive in Drover", mode));
  else if (mode != "exclusive" && mode != "oversubscribe")
    return Fail("Invalid --exclusive specification");
  s.exclusive = Sourced<bool>{mode != "oversubscribe", use.source};
  return OkStatus();
}

Status SetGres(const Use& use, Settings& s) {
  if (EqualsIgnoreCase(use.text(), "none")) {
    s.gres = std::vector<GresSpec>{};
    return OkStatus();
  }
  if (EqualsIgnoreCase(use.text(), "help") || EqualsIgnoreCase(use.text(), "list"))
    return Fail("--gres=help is not supported by Drover; sinfo -o %G lists the configured GRES");
  std::vector<std::string> items = SplitTopLevel(use.text());
  for (std::string& item : items)
    if (item.starts_with("gres/")) item.erase(0, 5);
  Result<std::vector<GresSpec>> gres = ParseGres(Join(items, ","));
  if (!gres)
    return Fail(fmt::format("Invalid generic resource (gres) specification: {}", gres.error()));
  s.gres = std::move(*gres);
  return OkStatus();
}

Status SetNice(const Use& use, Settings& s) {
  constexpr int64_t kLimit = 2147483645;  // Slurm's NICE_OFFSET - 3
  std::optional<int64_t> nice = use.value ? ParseInt64(Trim(*use.value)) : 100;
  if (!nice)
    return Fail(fmt::format("Invalid --nice value \"{}\" (expected an integer)", *use.value));
  if (*nice > kLimit || *nice < -kLimit)
    return Fail(fmt::format("Invalid --nice value, out of range (+/- {})", kLimit));
  s.nice = static_cast<int32_t>(*nice);
  return OkStatus();
}

Status SetSignal(const Use& use, Settings& s) {
  bool reservation = false;
  std::optional<SignalRequest> signal = ParseSignalOption(use.text(), reservation);
  if (!signal) return Fail("Invalid --signal specification");
  if (reservation)
    s.Notice(
        "sbatch: warning: --signal=R: (signal at the reservation's end) is accepted but has "
        "no effect in Drover");
  s.signal = *signal;
  return OkStatus();
}

Status SetSwitches(const Use& use, Settings& s) {
  size_t at = use.text().find('@');
  Result<uint32_t> count = ParseCount(use.text().substr(0, at), "--switches");
  if (!count) return std::move(count).take_error();
  if (at != std::string::npos) {
    Result<int64_t> wait = ParseDuration(use.text().substr(at + 1));
    if (!wait || *wait == kUnlimitedSeconds) return Fail("Invalid --switches specification");
    s.switch_wait = *wait;
  }
  s.switches = *count;
  return OkStatus();
}

Status SetOpenMode(const Use& use, Settings& s) {
  char mode = use.text().empty() ? '\0' : static_cast<char>(std::tolower(use.text()[0]));
  if (mode != 'a' && mode != 't') return Fail("Invalid --open-mode specification");
  s.open_mode = mode;  // the agent opens the job's files to append or truncate
  return OkStatus();
}

Status SetPartitions(const Use& use, Settings& s) {
  std::vector<std::string> names = Split(use.text(), ',');
  std::erase_if(names, [](const std::string& name) { return name.empty(); });
  s.partitions = std::move(names);
  return OkStatus();
}

Status SetSegment(const Use& use, Settings& s) {
  std::optional<uint64_t> size = ParseUint64(Trim(use.text()));
  if (!size || *size > 0xffff) return Fail("Invalid --segment specification");
  s.segment = static_cast<uint32_t>(*size);
  return OkStatus();
}

Status SetDependency(const Use& use, Settings& s) {
  Result<DependencySpec> dependency = ParseDependency(use.text());
  if (!dependency) return Fail(dependency.error());
  s.dependency = std::move(*dependency);
  return OkStatus();
}

Status ValidateThenNoEffect(const Use& use, Settings& s, bool valid) {
  if (!valid) return Fail(fmt::format("Invalid {} specification", Spelled(use)));
  return NoEffect(use, s);
}

template <std::optional<std::string> Settings::*field>
Status SetText(const Use& use, Settings& s) {
  s.*field = use.text();
  return OkStatus();
}

template <std::optional<std::string> Settings::*field>
Status SetIoPath(const Use& use, Settings& s) {
  s.*field = IoPath(use.text());
  return OkStatus();
}

template <bool Settings::*field>
Status SetFlag(const Use&, Settings& s) {
  s.*field = true;
  return OkStatus();
}

template <std::optional<uint32_t> Settings::*field>
Status SetCountOf(const Use& use, Settings& s) {
  return SetCount(use, s.*field);
}

template <std::optional<Sourced<uint32_t>> Settings::*field>
Status SetSourcedCountOf(const Use& use, Settings& s) {
  return SetSourcedCount(use, s.*field);
}

template <std::optional<Sourced<uint64_t>> Settings::*field>
Status SetMemoryOf(const Use& use, Settings& s) {
  return SetMemory(use, s.*field, s);
}

template <std::optional<GpuCount> Settings::*field>
Status SetGpusOf(const Use& use, Settings& s) {
  return SetGpus(use, s.*field);
}

template <std::optional<int64_t> Settings::*field>
Status SetTimeOf(const Use& use, Settings& s) {
  return SetTime(use, s.*field);
}

template <bool from_file>
Status SetNodeListOf(const Use& use, Settings& s) {
  return SetNodeList(use, s.nodelist, from_file);
}

Status SetVerbose(const Use& use, Settings& s) {
  s.verbose = true;
  return NoEffect(use, s);
}

Status SetRequeue(const Use& use, Settings& s) {
  s.requeue = use.def->name == "requeue";
  return OkStatus();
}

Status SetChdir(const Use& use, Settings& s) {
  s.work_dir = Absolute(use.text(), use.in->cwd);
  return OkStatus();
}

Status SetNodes(const Use& use, Settings& s) {
  Result<NodeRange> range = ParseNodeRange(use.text());
  if (!range) return std::move(range).take_error();
  s.nodes = *range;
  return OkStatus();
}

Status SetBegin(const Use& use, Settings& s) {
  return SetDate(use, s.begin);
}

Status SetDeadline(const Use& use, Settings& s) {
  if (Status ok = SetDate(use, s.deadline); !ok) return ok;
  return NoEffect(use, s);
}

Status SetExclude(const Use& use, Settings& s) {
  return SetNodeList(use, s.exclude, false);
}

Status SetOversubscribe(const Use& use, Settings& s) {
  s.oversubscribe = use.source;
  return NoEffect(use, s);
}

Status SetKillOnInvalidDep(const Use& use, Settings& s) {
  bool valid = EqualsIgnoreCase(use.text(), "yes") || EqualsIgnoreCase(use.text(), "no");
  return ValidateThenNoEffect(use, s, valid);
}

Status SetMailType(const Use& use, Settings& s) {
  return ValidateThenNoEffect(use, s, ValidMailTypes(use.text()));
}

// SBATCH_REQ_SWITCH and SBATCH_WAIT4SWITCH, which have no option of their own.
Status SetSwitchCount(const Use& use, Settings& s) {
  Result<uint32_t> count = ParseCount(use.text(), "--switches");
  if (!count) return std::move(count).take_error();
  s.switches = *count;
  return OkStatus();
}

Status SetSwitchWait(const Use& use, Settings& s) {
  Result<int64_t> wait = ParseDuration(use.text());
  if (!wait || *wait == kUnlimitedSeconds) return Fail("Invalid --switches specification");
  s.switch_wait = *wait;
  return OkStatus();
}

// Slurm's names, letters and argument kinds, alphabetical as in slurm_opt.c.
const std::vector<OptionDef>& Options() {
  using A = Arg;
  using S = Settings;
  static const std::vector<OptionDef> kOptions = {
      {"account", 'A', A::kRequired, SetText<&S::account>},
      {"acctg-freq", 0, A::kRequired, NoEffect},
      {"array", 'a', A::kRequired, SetText<&S::array>},
      {"batch", 0, A::kRequired, NoEffect},
      {"bb", 0, A::kRequired, NoEffect},
      {"bbf", 0, A::kRequired, NoEffect},
      {"begin", 'b', A::kRequired, SetBegin},
      {"chdir", 'D', A::kRequired, SetChdir},
      {"cluster", 0, A::kRequired, NoEffect},
      {"cluster-constraint", 0, A::kRequired, NoEffect},
      {"clusters", 'M', A::kRequired, NoEffect},
      {"comment", 0, A::kRequired, SetText<&S::comment>},
      {"constraint", 'C', A::kRequired, SetText<&S::constraint>},
      {"container", 0, A::kRequired, NoEffect},
      {"container-id", 0, A::kRequired, NoEffect},
      {"context", 0, A::kRequired, NoEffect},
      {"contiguous", 0, A::kNone, NoEffect},
      {"core-spec", 'S', A::kRequired, NoEffect},
      {"cores-per-socket", 0, A::kRequired, NoEffect},
      {"cpu-freq", 0, A::kRequired, NoEffect},
      {"cpus-per-gpu", 0, A::kRequired, SetSourcedCountOf<&S::cpus_per_gpu>},
      {"cpus-per-task", 'c', A::kRequired, SetSourcedCountOf<&S::cpus_per_task>},
      {"deadline", 0, A::kRequired, SetDeadline},
      {"delay-boot", 0, A::kRequired, NoEffect},
      {"dependency", 'd', A::kRequired, SetDependency},
      {"distribution", 'm', A::kRequired, NoEffect},
      {"error", 'e', A::kRequired, SetIoPath<&S::stderr_path>},
      {"exclude", 'x', A::kRequired, SetExclude},
      {"exclusive", 0, A::kOptional, SetExclusive},
      {"export", 0, A::kRequired, SetText<&S::export_env>},
      {"export-file", 0, A::kRequired, SetText<&S::export_file>},
      {"extra", 0, A::kRequired, NoEffect},
      {"extra-node-info", 'B', A::kRequired, NoEffect},
      {"get-user-env", 0, A::kOptional, NoEffect},
      {"gid", 0, A::kRequired, RootOnly},
      {"gpu-bind", 0, A::kRequired, NoEffect},
      {"gpu-freq", 0, A::kRequired, NoEffect},
      {"gpus", 'G', A::kRequired, SetGpusOf<&S::gpus>},
      {"gpus-per-node", 0, A::kRequired, SetGpusOf<&S::gpus_per_node>},
      {"gpus-per-socket", 0, A::kRequired, NoEffect},
      {"gpus-per-task", 0, A::kRequired, SetGpusOf<&S::gpus_per_task>},
      {"gres", 0, A::kRequired, SetGres},
      {"gres-flags", 0, A::kRequired, NoEffect},
      {"help", 'h', A::kNone, nullptr, true},
      {"hint", 0, A::kRequired, NoEffect},
      {"hold", 'H', A::kNone, SetFlag<&S::hold>},
      {"ignore-pbs", 0, A::kNone, NoEffect},
      {"input", 'i', A::kRequired, SetIoPath<&S::stdin_path>},
      {"job-name", 'J', A::kRequired, SetText<&S::name>},
      {"kill-on-invalid-dep", 0, A::kRequired, SetKillOnInvalidDep},
      {"licenses", 'L', A::kRequired, NoEffect},
      {"mail-type", 0, A::kRequired, SetMailType},
      {"mail-user", 0, A::kRequired, NoEffect},
      {"mcs-label", 0, A::kRequired, NoEffect},
      {"mem", 0, A::kRequired, SetMemoryOf<&S::mem>},
      {"mem-bind", 0, A::kRequired, NoEffect},
      {"mem-per-cpu", 0, A::kRequired, SetMemoryOf<&S::mem_per_cpu>},
      {"mem-per-gpu", 0, A::kRequired, SetMemoryOf<&S::mem_per_gpu>},
      {"mincpus", 0, A::kRequired, NoEffect},
      {"network", 0, A::kRequired, NoEffect},
      {"nice", 0, A::kOptional, SetNice},
      {"no-kill", 'k', A::kOptional, NoEffect},
      {"no-requeue", 0, A::kNone, SetRequeue},
      {"nodefile", 'F', A::kRequired, SetNodeListOf<true>},
      {"nodelist", 'w', A::kRequired, SetNodeListOf<false>},
      {"nodes", 'N', A::kRequired, SetNodes},
      {"ntasks", 'n', A::kRequired, SetCountOf<&S::ntasks>},
      {"ntasks-per-core", 0, A::kRequired, NoEffect},
      {"ntasks-per-gpu", 0, A::kRequired, NoEffect},
      {"ntasks-per-node", 0, A::kRequired, SetCountOf<&S::ntasks_per_node>},
      {"ntasks-per-socket", 0, A::kRequired, NoEffect},
      {"ntasks-per-tres", 0, A::kRequired, NoEffect},
      {"open-mode", 0, A::kRequired, SetOpenMode},
      {"output", 'o', A::kRequired, SetIoPath<&S::stdout_path>},
      {"overcommit", 'O', A::kNone, NoEffect},
      {"oversubscribe", 's', A::kNone, SetOversubscribe},
      {"parsable", 0, A::kNone, SetFlag<&S::parsable>},
      {"partition", 'p', A::kRequired, SetPartitions},
      {"prefer", 0, A::kRequired, NoEffect},
      {"priority", 0, A::kRequired, NoEffect},
      {"profile", 0, A::kRequired, NoEffect},
      {"propagate", 0, A::kOptional, NoEffect},
      {"qos", 'q', A::kRequired, SetText<&S::qos>},
      {"quiet", 'Q', A::kNone, SetFlag<&S::quiet>, true},
      {"reboot", 0, A::kNone, NoEffect},
      {"requeue", 0, A::kNone, SetRequeue},
      {"reservation", 0, A::kRequired, SetText<&S::reservation>},
      {"segment", 0, A::kRequired, SetSegment},
      {"signal", 0, A::kRequired, SetSignal},
      {"sockets-per-node", 0, A::kRequired, NoEffect},
      {"spread-job", 0, A::kNone, NoEffect},
      {"stepmgr", 0, A::kNone, NoEffect},
      {"switches", 0, A::kRequired, SetSwitches},
      {"tasks-per-node", 0, A::kRequired, SetCountOf<&S::ntasks_per_node>, false,
       "ntasks-per-node"},
      {"test-only", 0, A::kNone, SetFlag<&S::test_only>},
      {"thread-spec", 0, A::kRequired, NoEffect},
      {"threads-per-core", 0, A::kRequired, NoEffect},
      {"time", 't', A::kRequired, SetTimeOf<&S::time_limit>},
      {"time-min", 0, A::kRequired, SetTimeOf<&S::time_min>},
      {"tmp", 0, A::kRequired, NoEffect},
      {"tres-bind", 0, A::kRequired, NoEffect},
      {"tres-per-task", 0, A::kRequired, NoEffect},
      {"uid", 0, A::kRequired, RootOnly},
      {"usage", 0, A::kNone, nullptr, true},
      {"use-min-nodes", 0, A::kNone, NoEffect},
      {"verbose", 'v', A::kNone, SetVerbose, true},
      {"version", 'V', A::kNone, nullptr, true},
      {"wait", 'W', A::kNone, SetFlag<&S::wait>},
      {"wait-all-nodes", 0, A::kRequired, NoEffect},
      {"wckey", 0, A::kRequired, NoEffect},
      {"wrap", 0, A::kRequired, SetText<&S::wrap>, true},
      // Environment-only: SBATCH_REQ_SWITCH and SBATCH_WAIT4SWITCH.
      {"", 0, A::kRequired, SetSwitchCount},
      {"", 0, A::kRequired, SetSwitchWait},
  };
  return kOptions;
}

const OptionDef& Option(std::string_view name) {
  for (const OptionDef& def : Options())
    if (def.name == name) return def;
  throw std::logic_error(fmt::format("no sbatch option --{}", name));
}

// The SBATCH_* input variables sbatch(1) lists, and the option each stands for; the two
// environment-only ones index the unnamed entries at the end of the table.
struct EnvironmentOption {
  std::string_view variable;
  std::string_view option;
  int unnamed = 0;         // an environment-only entry, counted from the table's end
  bool any_value = false;  // a flag set whatever the value (Slurm's OPT_NO_REQUEUE and kin)
};

constexpr EnvironmentOption kEnvironmentOptions[] = {
    {"SBATCH_ACCOUNT", "account"},
    {"SBATCH_ACCTG_FREQ", "acctg-freq"},
    {"SBATCH_ARRAY_INX", "array"},
    {"SBATCH_BATCH", "batch"},
    {"SBATCH_BURST_BUFFER", "bb"},
    {"SBATCH_CLUSTER_CONSTRAINT", "cluster-constraint"},
    {"SBATCH_CLUSTERS", "clusters"},
    {"SLURM_CLUSTERS", "clusters"},
    {"SBATCH_CONSTRAINT", "constraint"},
    {"SBATCH_CONTAINER", "container"},
    {"SBATCH_CONTAINER_ID", "container-id"},
    {"SBATCH_CORE_SPEC", "core-spec"},
    {"SBATCH_CPU_FREQ_REQ", "cpu-freq"},
    {"SBATCH_CPUS_PER_GPU", "cpus-per-gpu"},
    {"SBATCH_DEBUG", "verbose"},
    {"SBATCH_DELAY_BOOT", "delay-boot"},
    {"SBATCH_DISTRIBUTION", "distribution"},
    {"SBATCH_ERROR", "error"},
    {"SBATCH_EXCLUSIVE", "exclusive"},
    {"SBATCH_EXPORT", "export"},
    {"SBATCH_GET_USER_ENV", "get-user-env"},
    {"SBATCH_GPU_BIND", "gpu-bind"},
    {"SBATCH_GPU_FREQ", "gpu-freq"},
    {"SBATCH_GPUS", "gpus"},
    {"SBATCH_GPUS_PER_NODE", "gpus-per-node"},
    {"SBATCH_GPUS_PER_SOCKET", "gpus-per-socket"},
    {"SBATCH_GPUS_PER_TASK", "gpus-per-task"},
    {"SBATCH_GRES", "gres"},
    {"SBATCH_GRES_FLAGS", "gres-flags"},
    {"SLURM_HINT", "hint"},
    {"SBATCH_HINT", "hint"},
    {"SBATCH_IGNORE_PBS", "ignore-pbs"},
    {"SBATCH_INPUT", "input"},
    {"SBATCH_JOB_NAME", "job-name"},
    {"SBATCH_MEM_BIND", "mem-bind"},
    {"SBATCH_MEM_PER_CPU", "mem-per-cpu"},
    {"SBATCH_MEM_PER_GPU", "mem-per-gpu"},
    {"SBATCH_MEM_PER_NODE", "mem"},
    {"SBATCH_NETWORK", "network"},
    {"SBATCH_NO_KILL", "no-kill"},
    {"SBATCH_NO_REQUEUE", "no-requeue", 0, true},
    {"SBATCH_OPEN_MODE", "open-mode"},
    {"SBATCH_OUTPUT", "output"},
    {"SBATCH_OVERCOMMIT", "overcommit"},
    {"SBATCH_PARTITION", "partition"},
    {"SBATCH_PROFILE", "profile"},
    {"SBATCH_QOS", "qos"},
    {"SBATCH_REQ_SWITCH", "", 2},
    {"SBATCH_REQUEUE", "requeue", 0, true},
    {"SBATCH_RESERVATION", "reservation"},
    {"SBATCH_SEGMENT_SIZE", "segment"},
    {"SBATCH_SIGNAL", "signal"},
    {"SBATCH_SPREAD_JOB", "spread-job"},
    {"SBATCH_THREAD_SPEC", "thread-spec"},
    {"SBATCH_THREADS_PER_CORE", "threads-per-core"},
    {"SBATCH_TIMELIMIT", "time"},
    {"SBATCH_TRES_BIND", "tres-bind"},
    {"SBATCH_TRES_PER_TASK", "tres-per-task"},
    {"SBATCH_USE_MIN_NODES", "use-min-nodes"},
    {"SBATCH_WAIT", "wait"},
    {"SBATCH_WAIT_ALL_NODES", "wait-all-nodes"},
    {"SBATCH_WAIT4SWITCH", "", 1},
    {"SBATCH_WCKEY", "wckey"},
};

// ---------------------------------------------------------------------------------------------
// GNU getopt_long with "+": options stop at the first operand or at "--".

struct Getopt {
  std::vector<std::pair<Use, size_t>> uses;  // each option and the argument it came from
  size_t operands = 0;                       // the index of the first operand
  std::string error;                         // getopt's message; `uses` are those before it
  size_t error_at = 0;
};

// glibc's rules: an exact name, else a unique prefix (several prefixes of the same option count
// as one).
Result<const OptionDef*> FindLong(std::string_view typed, std::string_view name) {
  std::vector<const OptionDef*> matches;
  for (const OptionDef& def : Options()) {
    if (def.name.empty()) continue;
    if (def.name == name) return &def;
    if (def.name.starts_with(name)) matches.push_back(&def);
  }
  if (matches.empty()) return MakeError(fmt::format("sbatch: unrecognized option '--{}'", typed));
  const OptionDef* first = matches.front();
  auto canonical = [](const OptionDef* def) {
    return def->alias_of.empty() ? def->name : def->alias_of;
  };
  bool same = std::all_of(matches.begin(), matches.end(),
                          [&](const OptionDef* def) { return canonical(def) == canonical(first); });
  if (same) return first;
  std::string names;
  for (const OptionDef* def : matches) names += fmt::format(" '--{}'", def->name);
  return MakeError(
      fmt::format("sbatch: option '--{}' is ambiguous; possibilities:{}", typed, names));
}

const OptionDef* FindShort(char letter) {
  for (const OptionDef& def : Options())
    if (def.letter != 0 && def.letter == letter) return &def;
  return nullptr;
}

// One "--name[=value]" at args[i]; advances i past the value it takes.
std::optional<std::string> LongOption(std::span<const std::string> args, size_t& i, Getopt& out) {
  std::string_view typed = std::string_view(args[i]).substr(2);
  size_t equals = typed.find('=');
  Result<const OptionDef*> found = FindLong(typed, typed.substr(0, equals));
  if (!found) return found.error();
  const OptionDef& def = **found;
  Use use{&def, std::nullopt, Source::kCommandLine, nullptr};
  if (equals != std::string_view::npos) {
    if (def.arg == Arg::kNone)
      return fmt::format("sbatch: option '--{}' doesn't allow an argument", def.name);
    use.value = std::string(typed.substr(equals + 1));
  } else if (def.arg == Arg::kRequired) {
    if (i + 1 >= args.size())
      return fmt::format("sbatch: option '--{}' requires an argument", def.name);
    use.value = args[++i];
  }
  out.uses.emplace_back(std::move(use), i);
  return std::nullopt;
}

// A cluster of short options ("-HN2", "-n", "4") at args[i].
std::optional<std::string> ShortOptions(std::span<const std::string> args, size_t& i, Getopt& out) {
  const std::string& cluster = args[i];
  for (size_t j = 1; j < cluster.size(); ++j) {
    const OptionDef* def = FindShort(cluster[j]);
    if (!def) return fmt::format("sbatch: invalid option -- '{}'", cluster[j]);
    Use use{def, std::nullopt, Source::kCommandLine, nullptr};
    std::string rest = cluster.substr(j + 1);
    if (def->arg == Arg::kNone) {
      out.uses.emplace_back(std::move(use), i);
      continue;
    }
    if (!rest.empty()) {
      use.value = rest;
    } else if (def->arg == Arg::kRequired) {
      if (i + 1 >= args.size())
        return fmt::format("sbatch: option requires an argument -- '{}'", cluster[j]);
      use.value = args[++i];
    }
    out.uses.emplace_back(std::move(use), i);
    break;
  }
  return std::nullopt;
}

Getopt RunGetopt(std::span<const std::string> args) {
  Getopt out;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') break;
    size_t at = i;
    std::optional<std::string> error =
        arg[1] == '-' ? LongOption(args, i, out) : ShortOptions(args, i, out);
    if (error) {
      out.error = fmt::format("{}\n{}", *error, kTryHelp);
      out.error_at = at;
      return out;
    }
  }
  out.operands = i;
  return out;
}

// Appends where a value came from to the first line of an error.
Error WithOrigin(Error error, std::string_view origin) {
  size_t newline = error.message.find('\n');
  error.message.insert(newline == std::string::npos ? error.message.size() : newline,
                       fmt::format(" ({})", origin));
  return error;
}

// ---------------------------------------------------------------------------------------------
// The script and its #SBATCH lines

struct ScriptWord {
  std::string text;
  int line = 0;
};

// Splits what follows "#SBATCH" as Slurm's get_argument does: quotes group, a backslash escapes,
// an unquoted '#' ends the line, and an empty word ends it too.
Status SplitDirective(std::string_view rest, std::string_view line, int line_number,
                      std::vector<ScriptWord>& words) {
  size_t pos = 0;
  while (true) {
    while (pos < rest.size() && std::isspace(static_cast<unsigned char>(rest[pos]))) ++pos;
    if (pos >= rest.size()) return OkStatus();
    if (rest[pos] == ':')
      return Fail(fmt::format("line {}: Unexpected `:` in [{}]", line_number, line));
    std::string word;
    char quote = 0;
    bool escaped = false, comment = false;
    for (; pos < rest.size() && (quote || !std::isspace(static_cast<unsigned char>(rest[pos])));
         ++pos) {
      char c = rest[pos];
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
        continue;
      } else if (quote) {
        if (c == quote) {
          quote = 0;
          continue;
        }
      } else if (c == '"' || c == '\'') {
        quote = c;
        continue;
      } else if (c == '#') {
        comment = true;
        break;
      }
      word += c;
    }
    if (quote)
      return Fail(fmt::format("line {}: Unmatched `{}` in [{}]", line_number, quote, line));
    if (word.empty()) return OkStatus();
    if (EqualsIgnoreCase(word, "hetjob") || EqualsIgnoreCase(word, "packjob"))
      return Fail(
          fmt::format("heterogeneous jobs (#SBATCH {}) are not supported by Drover (line {})", word,
                      line_number));
    words.push_back({std::move(word), line_number});
    if (comment) return OkStatus();
  }
}

// The words of the #SBATCH lines before the first command.
Result<std::vector<ScriptWord>> Directives(std::string_view script) {
  std::vector<ScriptWord> words;
  int line_number = 0;
  for (const std::string& line : Split(script, '\n')) {
    ++line_number;
    if (line.starts_with("#SBATCH")) {
      if (Status ok = SplitDirective(std::string_view(line).substr(7), line, line_number, words);
          !ok)
        return std::move(ok).take_error();
      continue;
    }
    std::string_view text = Trim(line);
    if (!text.empty() && text.front() != '#') break;
  }
  return words;
}

// Slurm's checks on a batch script, with its messages.
Status CheckScript(std::string_view script) {
  if (script.empty()) return Fail("Batch script is empty!");
  if (Trim(script).empty()) return Fail("Batch script contains only whitespace!");
  if (!script.starts_with("#!"))
    return MakeError(
        "sbatch: error: This does not look like a batch script.  The first\n"
        "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
        "sbatch: error: For instance: #!/bin/sh");
  if (script.find('\0') != std::string_view::npos)
    return MakeError(
        "sbatch: error: The Slurm controller does not allow scripts that\n"
        "sbatch: error: contain a NULL character '\\0'.");
  if (script.find("\r\n") != std::string_view::npos)
    return MakeError(
        "sbatch: error: Batch script contains DOS line breaks (\\r\\n)\n"
        "sbatch: error: instead of expected UNIX line breaks (\\n).");
  return OkStatus();
}

// The script named on the command line: absolute, else in the working directory, else (a bare
// name) on PATH, as Slurm's search_path looks for it; "-" or none is standard input.
Result<std::string> ReadScript(const std::optional<std::string>& operand, const Inputs& in) {
  if (!operand || *operand == "-") {
    Result<std::string> text = in.read_file("-");
    if (!text)
      return Fail(
          fmt::format("Unable to read the batch script from standard input: {}", text.error()));
    return text;
  }
  std::vector<std::string> candidates = {Absolute(*operand, in.cwd)};
  auto path = in.environment.find("PATH");
  if (operand->find('/') == std::string::npos && path != in.environment.end())
    for (const std::string& dir : Split(path->second, ':'))
      if (!dir.empty()) candidates.push_back(Absolute(dir + "/" + *operand, in.cwd));
  for (const std::string& candidate : candidates)
    if (Result<std::string> text = in.read_file(candidate)) return text;
  return Fail(fmt::format("Unable to open file {}", *operand));
}

std::string WrapScript(const std::string& command) {
  return fmt::format("#!/bin/sh\n# This script was created by sbatch --wrap.\n\n{}\n", command);
}

// ---------------------------------------------------------------------------------------------
// Applying the three sources

Status Apply(Use use, const Inputs& in, Settings& s) {
  use.in = &in;
  return use.def->handler(use, s);
}

Status ApplyScript(std::string_view script, const Inputs& in, Settings& s) {
  Result<std::vector<ScriptWord>> words = Directives(script);
  if (!words) return std::move(words).take_error();
  std::vector<std::string> args;
  for (const ScriptWord& word : *words) args.push_back(word.text);
  Getopt parsed = RunGetopt(args);
  auto origin = [&](size_t index) {
    return fmt::format("#SBATCH on line {}", (*words)[index].line);
  };
  for (auto& [use, index] : parsed.uses) {
    if (use.def->early) {
      s.Notice(fmt::format(
          "sbatch: warning: --{} is ignored in #SBATCH lines (line {}); give it on the command "
          "line",
          use.def->name, (*words)[index].line));
      continue;
    }
    use.source = Source::kScript;
    if (Status ok = Apply(std::move(use), in, s); !ok)
      return WithOrigin(std::move(ok).take_error(), origin(index));
  }
  if (!parsed.error.empty()) return WithOrigin(MakeError(parsed.error), origin(parsed.error_at));
  if (parsed.operands < args.size())
    s.Notice(fmt::format(
        "sbatch: warning: #SBATCH line {}: '{}' is not an option; it and the #SBATCH options "
        "after it are ignored",
        (*words)[parsed.operands].line, args[parsed.operands]));
  return OkStatus();
}

// A flag set through the environment is on for "", "yes" or a non-zero number, as in Slurm.
bool EnvironmentFlag(const std::string& value) {
  if (value.empty() || EqualsIgnoreCase(value, "yes")) return true;
  std::optional<int64_t> number = ParseInt64(value);
  return number && *number != 0;
}

Status ApplyEnvironment(const Inputs& in, Settings& s) {
  const std::vector<OptionDef>& options = Options();
  for (const EnvironmentOption& entry : kEnvironmentOptions) {
    auto found = in.environment.find(std::string(entry.variable));
    if (found == in.environment.end()) continue;
    const std::string& value = found->second;
    const OptionDef& def =
        entry.unnamed > 0 ? options[options.size() - entry.unnamed] : Option(entry.option);
    Use use{&def, std::nullopt, Source::kEnvironment, nullptr};
    if (def.arg == Arg::kNone && !entry.any_value && !EnvironmentFlag(value)) continue;
    if (def.arg == Arg::kRequired && value.empty()) continue;
    if (def.arg != Arg::kNone && !value.empty()) use.value = value;
    if (Status ok = Apply(std::move(use), in, s); !ok)
      return WithOrigin(std::move(ok).take_error(), fmt::format("{}={}", entry.variable, value));
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Combining the options into the request

// Two options that exclude each other: the one from the later source wins; from the same source
// they are an error, as in Slurm.
template <typename A, typename B>
bool Conflict(const std::optional<A>& a, const std::optional<B>& b) {
  return a && b && a->source == b->source;
}

Status ResolveMemory(const Settings& s, JobSpec& spec) {
  const std::optional<Sourced<uint64_t>>* all[] = {&s.mem, &s.mem_per_cpu, &s.mem_per_gpu};
  std::optional<Source> latest;
  for (auto* option : all)
    if (*option && (!latest || (*option)->source > *latest)) latest = (*option)->source;
  int at_latest = 0;
  for (auto* option : all)
    if (*option && (*option)->source == *latest) ++at_latest;
  if (at_latest > 1)
    return MakeError(
        *latest == Source::kEnvironment
            ? "sbatch: fatal: SBATCH_MEM_PER_CPU, SBATCH_MEM_PER_GPU, and SBATCH_MEM_PER_NODE are "
              "mutually exclusive."
            : "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.");
  auto value = [&](const std::optional<Sourced<uint64_t>>& option) -> uint64_t {
    return option && option->source == *latest ? option->value : 0;
  };
  if (latest) {
    spec.mem_per_node_mb = value(s.mem);
    spec.mem_per_cpu_mb = value(s.mem_per_cpu);
    spec.mem_per_gpu_mb = value(s.mem_per_gpu);
  }
  return OkStatus();
}

Status ResolveCpus(const Settings& s, JobSpec& spec) {
  if (Conflict(s.cpus_per_task, s.cpus_per_gpu))
    return MakeError(
        "sbatch: fatal: --cpus-per-task, --tres-per-task=cpu:#, and --cpus-per-gpu are mutually "
        "exclusive");
  bool task_wins =
      s.cpus_per_task && (!s.cpus_per_gpu || s.cpus_per_task->source > s.cpus_per_gpu->source);
  if (task_wins)
    spec.cpus_per_task = s.cpus_per_task->value;
  else if (s.cpus_per_gpu)
    spec.cpus_per_gpu = s.cpus_per_gpu->value;
  return OkStatus();
}

// --exclusive and --oversubscribe set one thing in Slurm (the job's sharing): the later source
// wins, and both from the same source are an error.
Status ResolveSharing(const Settings& s, JobSpec& spec) {
  spec.exclusive = s.exclusive && s.exclusive->value &&
                   (!s.oversubscribe || *s.oversubscribe <= s.exclusive->source);
  if (spec.exclusive && s.oversubscribe == s.exclusive->source)
    return MakeError(
        "sbatch: fatal: --exclusive and --oversubscribe options are mutually exclusive");
  return OkStatus();
}

Status ResolveGpus(const Settings& s, JobSpec& spec) {
  std::optional<GpuCount> per_node = s.gpus_per_node;
  bool gres_gpu = false;
  for (const GresSpec& gres : s.gres.value_or(std::vector<GresSpec>{})) {
    if (gres.name != "gpu") {
      spec.other_gres.push_back(gres);
      continue;
    }
    if (gres_gpu) return Fail("--gres names gpu more than once; Drover gives a job one GPU type");
    gres_gpu = true;
    GpuCount from_gres{gres.type, static_cast<uint32_t>(std::min<uint64_t>(gres.count, INT_MAX))};
    if (per_node && (per_node->count != from_gres.count || per_node->type != from_gres.type))
      return Fail("--gres=gpu and --gpus-per-node disagree on the GPUs per node; give one");
    per_node = from_gres;
  }
  std::string type;
  const std::optional<GpuCount>* requests[] = {&s.gpus, &per_node, &s.gpus_per_task};
  for (const std::optional<GpuCount>* gpu : requests) {
    if (!*gpu || (*gpu)->type.empty()) continue;
    if (!type.empty() && type != (*gpu)->type)
      return Fail(fmt::format("conflicting GPU types '{}' and '{}'; Drover gives a job one type",
                              type, (*gpu)->type));
    type = (*gpu)->type;
  }
  spec.gpu_type = type;
  if (s.gpus) spec.gpus = s.gpus->count;
  if (per_node) spec.gpus_per_node = per_node->count;
  if (s.gpus_per_task) spec.gpus_per_task = s.gpus_per_task->count;
  return OkStatus();
}

// Slurm's _opt_verify: a node list raises the minimum node count, --ntasks-per-node gives the
// task count when -n does not, and a task count below the node count lowers it.
Status ResolveShape(Settings& s, JobSpec& spec) {
  NodeRange nodes = s.nodes.value_or(NodeRange{});
  bool nodes_set = s.nodes.has_value();
  if (s.nodelist) {
    uint32_t count = static_cast<uint32_t>(s.nodelist->size());
    nodes.min = nodes_set ? std::max(nodes.min, count) : count;
    nodes_set = true;
  }
  bool ntasks_set = s.ntasks.has_value();
  uint32_t ntasks = s.ntasks.value_or(1);
  uint32_t per_node = s.ntasks_per_node.value_or(0);
  if (per_node > 0 && !ntasks_set && (nodes.max == 0 || nodes.min == nodes.max)) {
    ntasks = static_cast<uint32_t>(std::min<uint64_t>(uint64_t{nodes.min} * per_node, INT_MAX));
    ntasks_set = true;
  }
  if (nodes_set && ntasks_set) {
    if (ntasks < nodes.max) nodes.max = ntasks;
    if (ntasks < nodes.min) {
      s.Notice(
          fmt::format("sbatch: Warning: can't run {} processes on {} nodes, setting nnodes to {}",
                      ntasks, nodes.min, ntasks));
      nodes.min = nodes.max = ntasks;
    }
  }
  if (nodes.max != 0 && nodes.min > nodes.max)
    return Fail(fmt::format("invalid number of nodes (-N {}-{})", nodes.min, nodes.max));
  spec.min_nodes = nodes.min;
  spec.max_nodes = nodes.max;
  spec.ntasks = ntasks;
  spec.ntasks_per_node = per_node;
  return OkStatus();
}

// NAME=value entries with each name once, in the order names first appear; a later value
// replaces an earlier one, as Slurm's env_array_merge does.
class JobEnvironment {
 public:
  void Set(const std::string& name, const std::string& value) {
    auto [it, inserted] = index_.try_emplace(name, entries_.size());
    if (inserted)
      entries_.emplace_back(name, value);
    else
      entries_[it->second].second = value;
  }
  void SetEntry(std::string_view entry) {
    size_t equals = entry.find('=');
    if (equals == 0 || equals == std::string_view::npos) return;
    Set(std::string(entry.substr(0, equals)), std::string(entry.substr(equals + 1)));
  }
  std::vector<std::string> Lines() const {
    std::vector<std::string> lines;
    for (const auto& [name, value] : entries_) lines.push_back(name + "=" + value);
    return lines;
  }

 private:
  std::vector<std::pair<std::string, std::string>> entries_;
  std::unordered_map<std::string, size_t> index_;
};

// --export's list: split on commas outside quotes; a word wholly in quotes loses them.
Result<std::vector<std::string>> ExportWords(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  char quote = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : ',';
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == ',') {
      if (word.size() >= 2 && (word.front() == '"' || word.front() == '\'') &&
          word.back() == word.front())
        word = word.substr(1, word.size() - 2);
      if (!word.empty()) words.push_back(word);
      word.clear();
      continue;
    }
    if (i < text.size()) word += c;
  }
  if (quote) return Fail(fmt::format("Improperly formed environment variable ({})", text));
  return words;
}

// The job's environment: --export-file's entries, then the caller's variables as --export
// chooses (ALL by default; NONE and a list keep only SLURM_* besides what they name).
Result<std::vector<std::string>> BuildEnvironment(const Settings& s, const Inputs& in) {
  std::map<std::string, std::string> caller = in.environment;
  caller["SLURM_SUBMIT_DIR"] = in.cwd;  // sbatch sets these in its own environment first
  if (s.export_env && !EqualsIgnoreCase(*s.export_env, "ALL"))
    caller.try_emplace("SLURM_EXPORT_ENV", *s.export_env);
  if (s.open_mode) caller["SLURM_OPEN_MODE"] = std::string(1, *s.open_mode);
  JobEnvironment env;
  if (s.export_file) {
    bool fd = std::all_of(s.export_file->begin(), s.export_file->end(),
                          [](char c) { return c >= '0' && c <= '9'; });
    std::string path = fd ? "/dev/fd/" + *s.export_file : Absolute(*s.export_file, in.cwd);
    Result<std::string> content = in.read_file(path);
    if (!content)
      return Fail(
          fmt::format("Unable to read --export-file {}: {}", *s.export_file, content.error()));
    char separator = content->find('\0') != std::string::npos ? '\0' : '\n';
    for (const std::string& entry : Split(*content, separator)) env.SetEntry(entry);
  }
  auto copy_all = [&] {
    for (const auto& [name, value] : caller) env.Set(name, value);
  };
  auto copy_slurm = [&] {
    for (const auto& [name, value] : caller)
      if (name.starts_with("SLURM_")) env.Set(name, value);
  };
  if (!s.export_env || EqualsIgnoreCase(*s.export_env, "ALL")) {
    copy_all();
  } else if (EqualsIgnoreCase(*s.export_env, "NONE")) {
    copy_slurm();
  } else {
    Result<std::vector<std::string>> words = ExportWords(*s.export_env);
    if (!words) return std::move(words).take_error();
    for (const std::string& word : *words) {
      if (EqualsIgnoreCase(word, "ALL")) {
        copy_all();
      } else if (word.find('=') != std::string::npos) {
        env.SetEntry(word);
      } else if (auto found = caller.find(word); found != caller.end()) {
        env.Set(found->first, found->second);
      }
    }
    copy_slurm();
  }
  return env.Lines();
}

std::string BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

void CopyScalars(const Settings& s, JobSpec& spec) {
  spec.account = s.account.value_or("");
  spec.qos = s.qos.value_or("");
  spec.partitions = s.partitions.value_or(std::vector<std::string>{});
  spec.constraint = s.constraint.value_or("");
  spec.nodelist = s.nodelist.value_or(std::vector<std::string>{});
  spec.exclude = s.exclude.value_or(std::vector<std::string>{});
  spec.time_limit_seconds = s.time_limit.value_or(0);
  spec.time_min_seconds = s.time_min.value_or(0);
  spec.begin_time = s.begin.value_or(0);
  spec.dependency = s.dependency.value_or(DependencySpec{});
  spec.hold = s.hold ? HoldKind::kUser : HoldKind::kNone;
  spec.nice = s.nice.value_or(0);
  spec.switches = s.switches.value_or(0);
  if (s.switch_wait) spec.switch_wait_seconds = *s.switch_wait;
  spec.segment = s.segment.value_or(0);
  spec.reservation = s.reservation.value_or("");
  if (s.signal) {
    spec.signal_number = s.signal->number;
    spec.signal_seconds = s.signal->seconds;
    spec.signal_batch_only = s.signal->batch_only;
  }
  if (s.requeue) spec.requeue = *s.requeue;
  spec.stdout_path = s.stdout_path.value_or("");
  spec.stderr_path = s.stderr_path.value_or("");
  spec.stdin_path = s.stdin_path.value_or("");
  spec.comment = s.comment.value_or("");
}

Status Finish(Settings& s, const Inputs& in, SbatchRequest& request) {
  if (s.quiet && s.verbose) return Fail("don't specify both --verbose (-v) and --quiet (-Q)");
  if (s.begin && s.deadline && *s.deadline < *s.begin)
    return Fail("Incompatible begin and deadline time specification");
  JobSpec& spec = request.spec;
  if (Status ok = ResolveShape(s, spec); !ok) return ok;
  if (Status ok = ResolveMemory(s, spec); !ok) return ok;
  if (Status ok = ResolveCpus(s, spec); !ok) return ok;
  if (Status ok = ResolveSharing(s, spec); !ok) return ok;
  if (Status ok = ResolveGpus(s, spec); !ok) return ok;
  CopyScalars(s, spec);
  spec.work_dir = s.work_dir.value_or(in.cwd);
  Result<std::vector<std::string>> environment = BuildEnvironment(s, in);
  if (!environment) return std::move(environment).take_error();
  spec.environment = std::move(*environment);
  request.array = s.array.value_or("");
  request.parsable = s.parsable;
  request.test_only = s.test_only;
  request.wait = s.wait;
  request.quiet = s.quiet;
  request.hold = s.hold;
  request.notices = std::move(s.notices);
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// --help, --usage, --version

constexpr std::string_view kUsage =
    "Usage: sbatch [-N nnodes] [-n ntasks] [-c ncpus] [-p partition] [-t minutes]\n"
    "              [-J jobname] [-A account] [-q qos] [-o file] [-e file] [-i file]\n"
    "              [-D path] [--mem=MB] [--mem-per-cpu=MB] [--mem-per-gpu=MB]\n"
    "              [--gres=list] [-G [type:]n] [--gpus-per-node=n] [--gpus-per-task=n]\n"
    "              [--cpus-per-gpu=n] [--ntasks-per-node=n] [-C list] [-w hosts] [-x hosts]\n"
    "              [--exclusive] [-a indexes] [-d type:jobid] [-b time] [--hold] [--nice[=n]]\n"
    "              [--signal=[B:]num[@time]] [--requeue] [--no-requeue] [--export[=names]]\n"
    "              [--export-file=file] [--comment=text] [--reservation=name]\n"
    "              [--switches=n[@time]] [--segment=n] [--time-min=minutes] [--parsable]\n"
    "              [--test-only] [-W] [-Q] [--wrap=command] script [args...]\n";

constexpr std::string_view kHelp =
    "Usage: sbatch [OPTIONS...] script [args...]\n"
    "       sbatch [OPTIONS...] --wrap=command\n"
    "\n"
    "Options (a job's #SBATCH lines take the same; the command line overrides SBATCH_*\n"
    "variables, which override #SBATCH lines):\n"
    "  -A, --account=name          charge the job to this account\n"
    "  -a, --array=indexes         submit a job array (0-15, 1,3,5, 0-15:4, with %N limit)\n"
    "  -b, --begin=time            start no earlier than time (now+60, 16:00, 2030-01-20T12:34)\n"
    "  -c, --cpus-per-task=n       CPUs per task\n"
    "      --comment=text          a comment kept with the job\n"
    "  -C, --constraint=list       node features required\n"
    "      --cpus-per-gpu=n        CPUs per allocated GPU\n"
    "  -d, --dependency=list       start after other jobs (afterok:123, singleton, ...)\n"
    "  -D, --chdir=directory       the job's working directory\n"
    "  -e, --error=file            the batch script's standard error\n"
    "      --exclusive             do not share nodes with other jobs\n"
    "      --export=ALL|NONE|list  the variables the job gets (NAME or NAME=value, "
    "comma-separated)\n"
    "      --export-file=file      variables for the job, NAME=value separated by NUL or newline\n"
    "  -G, --gpus=[type:]n         GPUs for the whole job\n"
    "      --gpus-per-node=[type:]n  GPUs per node\n"
    "      --gpus-per-task=[type:]n  GPUs per task\n"
    "      --gres=list             generic resources per node (gpu:2, gpu:a100:2,nic:1)\n"
    "  -H, --hold                  submit the job held\n"
    "  -i, --input=file            the batch script's standard input\n"
    "  -J, --job-name=name         the job's name (default: the script's file name)\n"
    "      --mem=size              memory per node (MB, or with K, M, G, T)\n"
    "      --mem-per-cpu=size      memory per allocated CPU\n"
    "      --mem-per-gpu=size      memory per allocated GPU\n"
    "  -N, --nodes=n[-max]         number of nodes\n"
    "  -n, --ntasks=n              number of tasks\n"
    "      --nice[=n]              lower the job's priority by n (default 100)\n"
    "      --no-requeue            never requeue the job\n"
    "      --ntasks-per-node=n     tasks per node\n"
    "  -o, --output=file           the batch script's standard output (slurm-%j.out)\n"
    "  -p, --partition=names       partition(s), comma-separated\n"
    "      --parsable              print only the job id\n"
    "  -q, --qos=name              quality of service\n"
    "  -Q, --quiet                 print no informational messages\n"
    "      --requeue               allow the job to be requeued\n"
    "      --reservation=name      run in this reservation\n"
    "      --segment=n             nodes per segment (block topology)\n"
    "      --signal=[B:]sig[@sec]  signal the job sec seconds (60) before its time limit\n"
    "      --switches=n[@time]     at most n leaf switches, waiting up to time for them\n"
    "  -t, --time=time             time limit (minutes, MM:SS, HH:MM:SS, D-HH[:MM[:SS]])\n"
    "      --test-only             check the job would be accepted; submit nothing\n"
    "      --time-min=time         the least time limit the job accepts\n"
    "  -W, --wait                  wait for the job to end; exit with its exit code\n"
    "  -w, --nodelist=hosts        run on these hosts (a hostlist, or a file when it holds '/')\n"
    "      --wrap=command          submit a script that runs command with /bin/sh\n"
    "  -x, --exclude=hosts         never run on these hosts\n"
    "\n"
    "Accepted for compatibility, with no effect in Drover (a warning says so): --acctg-freq,\n"
    "--batch, --bb, --bbf, -M/--clusters, --cluster-constraint, --container, --container-id,\n"
    "--context, --contiguous, -S/--core-spec, --cores-per-socket, --cpu-freq, --deadline,\n"
    "--delay-boot, -m/--distribution, --extra, -B/--extra-node-info, --get-user-env,\n"
    "--gpu-bind, --gpu-freq, --gpus-per-socket, --gres-flags, --hint, --ignore-pbs,\n"
    "--kill-on-invalid-dep, -L/--licenses, --mail-type, --mail-user, --mcs-label, --mem-bind,\n"
    "--mincpus, --network, -k/--no-kill, --ntasks-per-core, --ntasks-per-gpu,\n"
    "--ntasks-per-socket, -O/--overcommit, -s/--oversubscribe, --prefer,\n"
    "--priority, --profile, --propagate, --reboot, --sockets-per-node, --spread-job, --stepmgr,\n"
    "--thread-spec, --threads-per-core, --tmp, --tres-bind, --tres-per-task, --use-min-nodes,\n"
    "-v/--verbose, --wait-all-nodes, --wckey; --uid and --gid (root only).\n"
    "\n"
    "Help options:\n"
    "  -h, --help                  show this help message\n"
    "      --usage                 display brief usage message\n"
    "  -V, --version               output version information and exit\n";

std::optional<std::string> EarlyOutput(std::string_view option) {
  if (option == "help") return std::string(kHelp);
  if (option == "usage") return std::string(kUsage);
  if (option == "version") return fmt::format("slurm {}\n", kSlurmVersion);
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> ParseSlurmTime(std::string_view text, int64_t now) {
  if (StartsWithIgnoreCase(text, "uts")) {
    std::optional<int64_t> epoch = ParseInt64(text.substr(3));
    if (!epoch || *epoch < 1000000) return std::nullopt;
    return *epoch;
  }
  TimeParts parts;
  for (size_t pos = 0; pos < text.size();) {
    char c = text[pos];
    if (c == ' ' || c == '\t' || c == '-' || c == 'T') {
      ++pos;
      continue;
    }
    if (!ParseTimeWord(text, pos, now, parts)) return std::nullopt;
  }
  const std::tm today = LocalTime(now);
  if (parts.hour == -1 && parts.month == -1) return std::nullopt;
  if (parts.hour == -1) {
    parts.SetClock(0, 0, parts.second);
  } else if (parts.month == -1) {
    bool later_today =
        parts.hour > today.tm_hour || (parts.hour == today.tm_hour && parts.minute > today.tm_min);
    parts.SetDate(later_today ? today : LocalTime(now + 86400));
  }
  if (parts.year == -1) {
    auto key = [](int month, int mday, int hour, int minute) {
      return std::tuple(month, mday, hour, minute);
    };
    bool this_year = key(parts.month, parts.mday, parts.hour, parts.minute) >
                     key(today.tm_mon, today.tm_mday, today.tm_hour, today.tm_min);
    parts.year = today.tm_year + (this_year ? 0 : 1);
  }
  std::tm when{};
  when.tm_sec = parts.second;
  when.tm_min = parts.minute;
  when.tm_hour = parts.hour;
  when.tm_mday = parts.mday;
  when.tm_mon = parts.month;
  when.tm_year = parts.year;
  when.tm_isdst = -1;
  std::time_t result = std::mktime(&when);
  if (result == -1) return std::nullopt;
  return static_cast<int64_t>(result);
}

Result<SbatchRequest> ParseSbatch(std::span<const std::string> argv, const ReadFile& read_file,
                                  const std::map<std::string, std::string>& environment,
                                  const std::string& cwd, uint32_t uid, uint32_t gid,
                                  const std::string& user, int64_t now) {
  const Inputs in{read_file, environment, cwd, uid, now};
  SbatchRequest request;
  Settings s;
  // First pass, as sbatch's: getopt errors, --help and its kin, --wrap, -Q; and the script.
  Getopt command_line = RunGetopt(argv);
  for (auto& [use, index] : command_line.uses) {
    if (!use.def->early) continue;
    if (std::optional<std::string> output = EarlyOutput(use.def->name)) {
      request.print_and_exit = std::move(*output);
      return request;
    }
    if (Status ok = Apply(use, in, s); !ok) return std::move(ok).take_error();
  }
  if (!command_line.error.empty()) return MakeError(command_line.error);
  std::span<const std::string> operands = argv.subspan(command_line.operands);
  if (s.wrap && !operands.empty()) return Fail("Script arguments not permitted with --wrap option");
  std::optional<std::string> operand;
  if (!operands.empty()) operand = operands.front();
  if (s.wrap) {
    request.script = WrapScript(*s.wrap);
  } else {
    Result<std::string> script = ReadScript(operand, in);
    if (!script) return std::move(script).take_error();
    if (Status ok = CheckScript(*script); !ok) return std::move(ok).take_error();
    request.script = std::move(*script);
    if (!operands.empty()) request.spec.script_args.assign(operands.begin() + 1, operands.end());
  }
  // Second pass: #SBATCH lines (a --wrap script's too, as in Slurm), then SBATCH_* variables,
  // then the command line.
  if (Status ok = ApplyScript(request.script, in, s); !ok) return std::move(ok).take_error();
  if (Status ok = ApplyEnvironment(in, s); !ok) return std::move(ok).take_error();
  for (auto& [use, index] : command_line.uses) {
    if (use.def->early) continue;
    if (Status ok = Apply(use, in, s); !ok) return std::move(ok).take_error();
  }
  if (Status ok = Finish(s, in, request); !ok) return std::move(ok).take_error();
  JobSpec& spec = request.spec;
  spec.name = s.name                       ? *s.name
              : s.wrap                     ? "wrap"
              : operand && *operand != "-" ? BaseName(*operand)
                                           : "sbatch";
  spec.user = user;
  spec.uid = uid;
  spec.gid = gid;
  return request;
}

Result<SbatchRequest> ParseSbatch(std::span<const std::string> argv, const ReadFile& read_file,
                                  const std::map<std::string, std::string>& environment,
                                  const std::string& cwd, uint32_t uid, uint32_t gid,
                                  const std::string& user) {
  return ParseSbatch(argv, read_file, environment, cwd, uid, gid, user,
                     static_cast<int64_t>(std::time(nullptr)));
}

}  // namespace drover::cli
