// Column helpers shared by squeue_format.cc, sinfo_format.cc and sacct_format.cc: Slurm's -o
// grammar, its padding and truncation rules, and its time forms.
#include "cli/formats/formats.h"

#include "common/gres_conf.h"
#include "common/text.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <ctime>

namespace drover::cli::columns {
namespace {

// A width beyond any terminal: keeps "%.99999999999i" from asking for gigabytes.
constexpr int kMaxWidth = 100'000;

std::tm LocalTime(int64_t time) {
  std::tm tm{};
  const std::time_t t = static_cast<std::time_t>(time);
  localtime_r(&t, &tm);
  return tm;
}

// SLURM_TIME_FORMAT as the command set it (SetTimeFormat): empty is "standard".
struct TimeFormat {
  std::string format;
  int64_t now = 0;
};
TimeFormat& CurrentTimeFormat() {
  static TimeFormat format;
  return format;
}

// Slurm's _relative_date_fmt: how far the day is from today picks the form.
const char* RelativeForm(const std::tm& when, const std::tm& today) {
  int distance = 1000 * (when.tm_year - today.tm_year) + when.tm_yday - today.tm_yday;
  if (distance == -1) return "Ystday %H:%M";
  if (distance == 0) return "%H:%M";
  if (distance == 1) return "Tomorr %H:%M";
  if (distance < -365 || distance > 365) return "%-d %b %Y";
  if (distance < -1 || distance > 6) return "%-d %b %H:%M";
  return "%a %H:%M";
}

std::string Strftime(const char* form, const std::tm& tm) {
  char text[256];
  size_t size = std::strftime(text, sizeof text, form, &tm);
  return std::string(text, size);
}

// A YAML scalar for a JSON string: plain where YAML reads it back as the same string, else
// single-quoted, as libyaml chooses.
std::string YamlString(const std::string& text) {
  static const char* kWords[] = {"true", "false", "null", "yes", "no", "on", "off", "~", ""};
  bool plain = !text.empty() && text.front() != ' ' && text.back() != ' ';
  for (const char* word : kWords)
    if (text == word) plain = false;
  if (plain && std::string_view("-?:,[]{}#&*!|>'\"%@`").find(text.front()) != std::string::npos)
    plain = false;
  if (plain && (std::isdigit(static_cast<unsigned char>(text.front())) || text.front() == '.'))
    plain = text.find_first_not_of("0123456789.eE+-") != std::string::npos &&
            text.find(": ") == std::string::npos;
  if (text.find(": ") != std::string::npos || text.find(" #") != std::string::npos ||
      text.find('\n') != std::string::npos)
    plain = false;
  if (plain) return text;
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("''") : std::string(1, c);
  return quoted + "'";
}

std::string YamlScalar(const nlohmann::ordered_json& value) {
  if (value.is_null()) return "null";
  if (value.is_string()) return YamlString(value.get<std::string>());
  return value.dump();
}

// libyaml's block style: a mapping's sequence starts at the mapping's own indentation.
void EmitYaml(const nlohmann::ordered_json& value, int indent, std::string& out);

void EmitYamlValue(const nlohmann::ordered_json& value, int indent, bool in_mapping,
                   std::string& out) {
  bool empty = (value.is_object() || value.is_array()) && value.empty();
  if (value.is_object() && !empty) {
    out += "\n";
    EmitYaml(value, indent + 2, out);
  } else if (value.is_array() && !empty) {
    out += "\n";
    EmitYaml(value, in_mapping ? indent : indent + 2, out);
  } else {
    out += " " + (empty ? std::string(value.is_object() ? "{}" : "[]") : YamlScalar(value)) + "\n";
  }
}

void EmitYaml(const nlohmann::ordered_json& value, int indent, std::string& out) {
  std::string pad(indent, ' ');
  if (value.is_object()) {
    for (const auto& [key, item] : value.items()) {
      out += pad + YamlString(key) + ":";
      EmitYamlValue(item, indent, true, out);
    }
    return;
  }
  for (const nlohmann::ordered_json& item : value) {
    if (item.is_object() && !item.empty()) {
      std::string nested;
      EmitYaml(item, indent + 2, nested);
      out += pad + "- " + nested.substr(indent + 2);  // the first key on the dash's line
    } else if (item.is_array() && !item.empty()) {
      out += pad + "-";
      EmitYamlValue(item, indent, false, out);
    } else {
      out += pad + "-";
      EmitYamlValue(item, indent, false, out);
    }
  }
}

}  // namespace

void SetTimeFormat(std::string_view format, int64_t now) {
  CurrentTimeFormat() = {std::string(format), now};
}

std::string JsonToYaml(std::string_view json) {
  nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(json);
  std::string out = "---\n";
  EmitYaml(parsed, 0, out);
  return out;
}

PercentFormat ParseLongFormat(std::string_view fields) {
  PercentFormat out;
  for (const std::string& item : Split(std::string(fields), ',')) {
    if (item.empty()) continue;
    FieldSpec field;
    size_t colon = item.find(':');
    field.name = ToLower(item.substr(0, colon));
    field.token = item;
    field.width = 20;
    if (colon != std::string::npos) {
      size_t i = colon + 1;
      if (i < item.size() && item[i] == '.') {
        field.right = true;
        ++i;
      }
      field.width = 0;
      while (i < item.size() && item[i] >= '0' && item[i] <= '9')
        field.width = std::min(kMaxWidth, field.width * 10 + (item[i++] - '0'));
      field.suffix = item.substr(i);
    }
    out.fields.push_back(std::move(field));
  }
  return out;
}

PercentFormat ParsePercentFormat(std::string_view format) {
  PercentFormat out;
  size_t first = format.find('%');
  out.prefix = std::string(format.substr(0, first));
  if (first == std::string_view::npos) return out;
  std::string_view rest = format.substr(first);
  while (!rest.empty()) {
    rest.remove_prefix(1);  // the '%'
    size_t end = rest.find('%');
    std::string_view token = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
    if (token.empty()) continue;  // strtok skips empty tokens
    FieldSpec field;
    field.token = std::string(token);
    size_t i = 0;
    if (token[i] == '.') {
      field.right = true;
      ++i;
    }
    while (i < token.size() && token[i] >= '0' && token[i] <= '9') {
      field.width = std::min(kMaxWidth, field.width * 10 + (token[i++] - '0'));
    }
    if (i < token.size()) field.letter = token[i++];
    field.suffix = std::string(token.substr(i));
    out.fields.push_back(std::move(field));
  }
  return out;
}

std::string Pad(std::string_view text, int width, bool right, bool cut) {
  if (width <= 0) return std::string(text);
  const size_t w = static_cast<size_t>(width);
  if (!right) {
    std::string out(text.substr(0, w));
    out.append(w - out.size(), ' ');
    return out;
  }
  if (text.size() < w) return std::string(w - text.size(), ' ') + std::string(text);
  return std::string(cut ? text.substr(0, w) : text);
}

std::string IsoTime(int64_t time) {
  std::tm tm = LocalTime(time);
  const TimeFormat& format = CurrentTimeFormat();
  if (format.format == "relative") return Strftime(RelativeForm(tm, LocalTime(format.now)), tm);
  if (!format.format.empty() && format.format != "standard")
    return Strftime(format.format.c_str(), tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::string DateLine(int64_t time) {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::tm tm = LocalTime(time);
  return fmt::format("{} {} {:02} {:02}:{:02}:{:02} {}", kDays[tm.tm_wday], kMonths[tm.tm_mon],
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, tm.tm_year + 1900);
}

std::string ElapsedText(int64_t secs) {
  const int64_t days = secs / 86400, hours = secs / 3600 % 24, minutes = secs / 60 % 60;
  if (days) return fmt::format("{}-{:02}:{:02}:{:02}", days, hours, minutes, secs % 60);
  if (hours) return fmt::format("{}:{:02}:{:02}", hours, minutes, secs % 60);
  return fmt::format("{}:{:02}", minutes, secs % 60);
}

bool IsUnlimited(int64_t seconds) {
  return seconds < 0 || seconds == INT64_MAX;
}

std::string ArrayRanges(std::vector<uint32_t> tasks) {
  std::sort(tasks.begin(), tasks.end());
  tasks.erase(std::unique(tasks.begin(), tasks.end()), tasks.end());
  std::string out;
  for (size_t i = 0; i < tasks.size();) {
    size_t j = i;
    while (j + 1 < tasks.size() && tasks[j + 1] == tasks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j > i ? fmt::format("{}-{}", tasks[i], tasks[j]) : fmt::format("{}", tasks[i]);
    i = j + 1;
  }
  return out;
}

std::string UserName(const UserNameLookup& lookup, uint32_t uid) {
  if (lookup) return lookup(uid);
  return uid == 0 ? "root" : std::to_string(uid);
}

uint32_t RequestedCpus(const v1::JobSpec& spec) {
  uint32_t nodes = std::max<uint32_t>(spec.min_nodes(), 1);
  uint32_t tasks = spec.ntasks();
  if (tasks == 0) tasks = spec.ntasks_per_node() ? spec.ntasks_per_node() * nodes : nodes;
  return tasks * std::max<uint32_t>(spec.cpus_per_task(), 1);
}

uint32_t AllocatedCpus(const v1::NodeAllocation& node, const ClusterConfig* cluster) {
  uint32_t threads = 1;
  if (cluster && node.node() >= 0 && static_cast<size_t>(node.node()) < cluster->nodes.size())
    threads = std::max(cluster->nodes[node.node()].threads_per_core, 1);
  return static_cast<uint32_t>(node.cores_size()) * threads;
}

SharedGres SharedGresOf(const v1::JobSpec& spec) {
  for (const v1::Gres& gres : spec.other_gres())
    if (IsGpuSharing(gres.name())) return {gres.name(), gres.count()};
  return {};
}

SharedGres SharedGresOn(const v1::JobSpec& spec, uint64_t nodes) {
  SharedGres shares = SharedGresOf(spec);
  shares.per_node *= nodes;
  return shares;
}

uint64_t AllocatedShares(const v1::Job& job) {
  uint64_t shares = 0;
  for (const v1::NodeAllocation& node : job.allocation()) shares += node.shares();
  return shares;
}

uint64_t AllocatedGpus(const v1::NodeAllocation& node) {
  return node.shares() ? 0 : static_cast<uint64_t>(node.gpus_size());
}

void ApplyNodeSettings(const google::protobuf::RepeatedPtrField<v1::NodeStatus>& nodes,
                       ClusterConfig& cluster) {
  for (const v1::NodeStatus& node : nodes) {
    int index = cluster.FindNode(node.name());
    if (index < 0 || node.weight() == 0) continue;
    NodeConfig& config = cluster.nodes[index];
    config.weight = node.weight();
    config.features.clear();
    for (const std::string& feature : Split(node.active_features(), ','))
      if (!feature.empty()) config.features.push_back(feature);
  }
}

std::string AvailableFeatures(const v1::NodeStatus& node, const NodeConfig& config) {
  return node.weight() ? node.features() : Join(config.features, ",");
}

}  // namespace drover::cli::columns
