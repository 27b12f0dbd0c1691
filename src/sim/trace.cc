// The trace readers; see trace.h.
#include "sim/trace.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "common/text.h"

namespace drover::sim {
namespace {

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// A number as SWF writes them: integers, sometimes with a fraction ("12.5"), -1 for unknown.
std::optional<double> Number(std::string_view text) {
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  // Beyond 10^15 (thirty million years of seconds) a field is garbage, not a workload.
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value) ||
      std::abs(value) > 1e15)
    return std::nullopt;
  return value;
}

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

// One line that cannot be used: an error under --strict, else counted under `why`.
struct Skipper {
  const std::string& name;
  const ReadOptions& options;
  Trace& trace;
  std::optional<Error> error;

  bool Skip(size_t line, const std::string& why, const std::string& detail = "") {
    if (options.strict) {
      error =
          MakeError(fmt::format("{}:{}: {}{} (without --strict such lines are skipped and "
                                "counted)",
                                name, line, why, detail.empty() ? "" : ": " + detail));
      return false;
    }
    ++trace.skipped[why];
    return true;
  }
};

void Finish(Trace& trace) {
  std::stable_sort(trace.jobs.begin(), trace.jobs.end(), [](const TraceJob& a, const TraceJob& b) {
    return a.submit_time < b.submit_time;
  });
}

}  // namespace

Result<std::string> ReadFileText(const std::string& path) {
  if (EndsWith(path, ".gz")) {
    gzFile file = gzopen(path.c_str(), "rb");
    if (!file) return MakeError(fmt::format("cannot read {}", path));
    std::string text;
    char buffer[1 << 16];
    int got;
    while ((got = gzread(file, buffer, sizeof(buffer))) > 0) text.append(buffer, got);
    int code = 0;
    const char* message = gzerror(file, &code);
    gzclose(file);
    if (got < 0 || code < 0)
      return MakeError(fmt::format("{}: not a readable gzip file ({})", path, message));
    return text;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(fmt::format("cannot read {}", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<Trace> ReadTrace(const std::string& path, const ReadOptions& options) {
  using Reader = Result<Trace> (*)(std::istream&, const std::string&, const ReadOptions&);
  Reader reader = EndsWith(path, ".swf") || EndsWith(path, ".swf.gz") ? ReadSwf
                  : EndsWith(path, ".csv")                            ? ReadAlibabaPods
                  : EndsWith(path, ".json")                           ? ReadSacctJson
                                                                      : nullptr;
  if (reader) {
    auto text = ReadFileText(path);
    if (!text) return std::move(text).take_error();
    std::istringstream in(*text);
    return reader(in, path, options);
  }
  return MakeError(fmt::format(
      "{}: unknown trace format (give a .swf or .swf.gz file, an Alibaba pod list .csv, or the "
      "output of sacct --json as .json)",
      path));
}

// SWF: 18 numbers a line; ';' starts a comment. Fields used (1-based): 1 job number, 2 submit
// time, 4 run time, 5 allocated processors, 8 requested processors (5 when -1), 9 requested
// time (the run time when -1), 12 user, 13 group.
Result<Trace> ReadSwf(std::istream& in, const std::string& name, const ReadOptions& options) {
  Trace trace;
  trace.name = name;
  Skipper skip{name, options, trace, std::nullopt};
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    std::string_view text = Trim(line);
    if (text.empty() || text.front() == ';') continue;
    std::vector<std::string_view> words = Words(text);
    if (words.size() < 18) {
      if (!skip.Skip(number, "malformed line", fmt::format("{} fields, SWF has 18", words.size())))
        return *skip.error;
      continue;
    }
    double fields[18];
    bool numeric = true;
    for (size_t i = 0; i < 18 && numeric; ++i) {
      auto value = Number(words[i]);
      numeric = value.has_value();
      fields[i] = value.value_or(0);
    }
    if (!numeric) {
      if (!skip.Skip(number, "malformed line", "a field is not a number")) return *skip.error;
      continue;
    }
    auto field = [&](int one_based) {
      return static_cast<int64_t>(std::llround(fields[one_based - 1]));
    };
    int64_t processors = field(8) > 0 ? field(8) : field(5);
    if (processors <= 0) {
      if (!skip.Skip(number, "no processors")) return *skip.error;
      continue;
    }
    if (field(4) < 0) {
      if (!skip.Skip(number, "negative run time")) return *skip.error;
      continue;
    }
    TraceJob job;
    job.id = static_cast<uint64_t>(std::max<int64_t>(field(1), 0));
    job.submit_time = std::max<int64_t>(field(2), 0);
    job.run_seconds = field(4);
    job.limit_seconds = std::max<int64_t>(field(9) > 0 ? field(9) : job.run_seconds, 1);
    job.cpus = static_cast<uint32_t>(std::min<int64_t>(processors, UINT32_MAX));
    job.user = field(12) >= 0 ? fmt::format("user{}", field(12)) : "user";
    job.account = field(13) >= 0 ? fmt::format("group{}", field(13)) : "group";
    trace.jobs.push_back(std::move(job));
  }
  Finish(trace);
  return trace;
}

// cluster-trace-gpu-v2023 pods: name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,
// pod_phase,creation_time,deletion_time,scheduled_time (columns found by the header). A pod is
// submitted at its creation and runs from its scheduling to its deletion; pods never scheduled
// (Pending in the trace) are skipped. Its QOS class (LS, BE, Burstable) is its user and account.
Result<Trace> ReadAlibabaPods(std::istream& in, const std::string& name,
                              const ReadOptions& options) {
  Trace trace;
  trace.name = name;
  Skipper skip{name, options, trace, std::nullopt};
  std::string line;
  if (!std::getline(in, line)) return MakeError(name + ": empty (no header line)");
  std::vector<std::string> header = Split(Trim(line), ',');
  auto column = [&](std::string_view wanted) -> int {
    for (size_t i = 0; i < header.size(); ++i)
      if (Trim(header[i]) == wanted) return static_cast<int>(i);
    return -1;
  };
  const char* kColumns[] = {"name",          "cpu_milli",     "memory_mib",    "num_gpu",
                            "gpu_milli",     "gpu_spec",      "qos",           "pod_phase",
                            "creation_time", "deletion_time", "scheduled_time"};
  std::map<std::string, int> at;
  for (const char* wanted : kColumns) {
    at[wanted] = column(wanted);
    if (at[wanted] < 0)
      return MakeError(fmt::format(
          "{}:1: no column '{}' (an Alibaba cluster-trace-gpu-v2023 pod list starts with "
          "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
          "deletion_time,scheduled_time)",
          name, wanted));
  }
  uint64_t next_id = 1;
  for (size_t number = 2; std::getline(in, line); ++number) {
    if (Trim(line).empty()) continue;
    std::vector<std::string> cells = Split(Trim(line), ',');
    if (cells.size() < header.size()) {
      if (!skip.Skip(number, "malformed line",
                     fmt::format("{} columns, the header has {}", cells.size(), header.size())))
        return *skip.error;
      continue;
    }
    auto text = [&](const char* key) { return std::string(Trim(cells[at[key]])); };
    auto number_of = [&](const char* key) { return ParseInt64(text(key)); };
    if (text("scheduled_time").empty()) {
      if (!skip.Skip(number, "never scheduled in the trace")) return *skip.error;
      continue;
    }
    auto cpu = number_of("cpu_milli"), memory = number_of("memory_mib"),
         gpus = number_of("num_gpu"), milli = number_of("gpu_milli"),
         created = number_of("creation_time"), deleted = number_of("deletion_time"),
         scheduled = number_of("scheduled_time");
    auto sane = [](const std::optional<int64_t>& v) {  // a number, 0 to 10^15
      return v && *v >= 0 && *v <= 1'000'000'000'000'000;
    };
    if (!sane(cpu) || !sane(memory) || !sane(gpus) || *gpus > 1'000'000 || !sane(milli) ||
        !sane(created) || !sane(deleted) || !sane(scheduled)) {
      if (!skip.Skip(number, "malformed line", "a number column is not a number from 0 to 10^15"))
        return *skip.error;
      continue;
    }
    int64_t run = *deleted - std::max(*scheduled, *created);
    if (run < 0) {
      if (!skip.Skip(number, "negative run time")) return *skip.error;
      continue;
    }
    TraceJob job;
    job.id = next_id++;
    job.submit_time = *created;
    job.run_seconds = run;
    job.limit_seconds = std::max<int64_t>(run, 1);  // the trace has no estimates
    job.cpus = static_cast<uint32_t>(std::max<int64_t>((*cpu + 999) / 1000, 1));
    job.memory_mb = static_cast<uint64_t>(*memory);
    job.gpus = static_cast<uint32_t>(*gpus);
    job.gpu_milli = static_cast<uint32_t>(std::min<int64_t>(*milli, 1000));
    job.gpu_type = text("gpu_spec");
    job.user = job.account = text("qos").empty() ? "default" : text("qos");
    trace.jobs.push_back(std::move(job));
  }
  Finish(trace);
  return trace;
}

// `key`'s whole number in [0, most]; `otherwise` when it is absent or null; nullopt for anything
// else (a fraction, a negative or too large number, text): the job is malformed. A JSON number
// too large for 64 bits is a float to the parser, and converting it would be undefined.
std::optional<uint64_t> WholeNumber(const nlohmann::json& object, const char* key,
                                    uint64_t otherwise, uint64_t most) {
  auto found = object.find(key);
  if (found == object.end() || found->is_null()) return otherwise;
  if (found->is_number_unsigned()) {
    uint64_t value = found->get<uint64_t>();
    if (value <= most) return value;
  } else if (found->is_number_integer()) {
    int64_t value = found->get<int64_t>();
    if (value >= 0 && static_cast<uint64_t>(value) <= most) return static_cast<uint64_t>(value);
  }
  return std::nullopt;
}

// sacct --json (docs/cli.md): every job that started and ended, with its requested CPUs, GPUs,
// nodes and memory, its time limit, and its real start and end.
Result<Trace> ReadSacctJson(std::istream& in, const std::string& name, const ReadOptions& options) {
  nlohmann::json document;
  try {
    in >> document;
  } catch (const nlohmann::json::exception& e) {
    return MakeError(fmt::format("{}: not JSON: {}", name, e.what()));
  }
  if (!document.is_object() || !document.contains("jobs") || !document["jobs"].is_array())
    return MakeError(fmt::format("{}: no \"jobs\" array (give the output of sacct --json)", name));
  Trace trace;
  trace.name = name;
  Skipper skip{name, options, trace, std::nullopt};
  size_t index = 0;
  for (const nlohmann::json& entry : document["jobs"]) {
    ++index;  // JSON has no lines worth naming: jobs are counted from 1 instead
    try {
      const nlohmann::json& time = entry.at("time");
      // A time of null (not yet) counts as 0.
      auto when = [&](const char* key, int64_t otherwise) {
        return time.contains(key) && time[key].is_number_integer() ? time[key].get<int64_t>()
                                                                   : otherwise;
      };
      int64_t start = when("start", 0), end = when("end", 0);
      if (start <= 0 || end < start) {
        if (!skip.Skip(index, "never ran")) return *skip.error;
        continue;
      }
      int64_t submitted = when("submission", start);
      constexpr int64_t kLatest = 1'000'000'000'000'000;  // 10^15 s: later is garbage
      if (end > kLatest || submitted < 0 || submitted > kLatest) {
        if (!skip.Skip(index, "malformed job", "a time out of range")) return *skip.error;
        continue;
      }
      // The counts: whole numbers of their types' range, or the job is malformed.
      constexpr uint64_t kMostCount = UINT32_MAX;
      std::optional<uint64_t> id = WholeNumber(entry, "job_id", index, UINT64_MAX);
      std::optional<uint64_t> cpus = uint64_t{1}, memory = uint64_t{0}, nodes = uint64_t{0},
                              gpus = uint64_t{0};
      if (entry.contains("required") && entry["required"].is_object()) {
        cpus = WholeNumber(entry["required"], "CPUs", 1, kMostCount);
        memory = WholeNumber(entry["required"], "memory", 0, UINT64_MAX / 2);
      }
      if (entry.contains("tres") && entry["tres"].is_object() &&
          entry["tres"].contains("requested") && entry["tres"]["requested"].is_array())
        for (const nlohmann::json& tres : entry["tres"]["requested"]) {
          if (!tres.is_object()) continue;
          std::string type = tres.value("type", std::string());
          if (type == "node") nodes = WholeNumber(tres, "count", 0, kMostCount);
          if (type == "gres" && tres.value("name", std::string()).starts_with("gpu"))
            gpus = WholeNumber(tres, "count", 0, kMostCount);
        }
      if (!id || !cpus || !memory || !nodes || !gpus) {
        if (!skip.Skip(index, "malformed job", "a count that is not a whole number in range"))
          return *skip.error;
        continue;
      }
      TraceJob job;
      job.id = *id;
      job.submit_time = submitted;
      job.run_seconds = end - start;
      // In minutes; null (UNLIMITED) or nonsense: the job plans with its run time.
      int64_t minutes = time.contains("limit") && time["limit"].is_number_integer()
                            ? time["limit"].get<int64_t>()
                            : 0;
      job.limit_seconds = minutes > 0 && minutes < (int64_t{1} << 40)
                              ? minutes * 60
                              : std::max<int64_t>(job.run_seconds, 1);
      job.user = entry.value("user", std::string("user"));
      job.account = entry.value("account", std::string());
      job.partition = entry.value("partition", std::string());
      job.cpus = std::max<uint32_t>(static_cast<uint32_t>(*cpus), 1);
      job.memory_mb = *memory;
      job.nodes = static_cast<uint32_t>(*nodes);
      job.gpus = static_cast<uint32_t>(*gpus);
      trace.jobs.push_back(std::move(job));
    } catch (const nlohmann::json::exception& e) {
      if (!skip.Skip(index, "malformed job", e.what())) return *skip.error;
    }
  }
  Finish(trace);
  return trace;
}

}  // namespace drover::sim
