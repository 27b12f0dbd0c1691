// Settings of associations and QOS: one table of keys (with Slurm's aliases) to setters.
#include "common/accounting_settings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <optional>
#include <utility>

#include "common/duration.h"
#include "common/text.h"

namespace drover::acct {
namespace {

using LimitSetter = std::function<Status(Limits&, const Word&)>;
using AssociationSetter = std::function<Status(Association&, const Word&)>;
using QosSetter = std::function<Status(Qos&, const Word&)>;

template <typename Setter>
struct Key {
  std::vector<std::string_view> names;  // the canonical name first, then Slurm's aliases
  Setter set;
};

Error Invalid(const Word& word, std::string_view expected) {
  return MakeError(
      fmt::format("Invalid value for {} ({}): expected {}", word.key, word.value, expected));
}

Status OnlyAssign(const Word& word) {
  if (word.op == "=") return OkStatus();
  return MakeError(fmt::format("{}{}: only '=' sets {} ('+=' and '-=' are for lists)", word.key,
                               word.op, word.key));
}

// A count: a negative number clears it (kUnset), as sacctmgr's -1.
Result<int64_t> Count(const Word& word) {
  if (Status assign = OnlyAssign(word); !assign) return std::move(assign).take_error();
  std::optional<int64_t> value = ParseInt64(Trim(word.value));
  if (!value) return Invalid(word, "a whole number, or -1 to clear it");
  return *value < 0 ? kUnset : *value;
}

// A 32-bit count; -1 gives `cleared` (a default, not "unset").
Result<uint32_t> Count32(const Word& word, uint32_t cleared) {
  auto value = Count(word);
  if (!value) return std::move(value).take_error();
  if (*value > UINT32_MAX) return Invalid(word, "at most 4294967295");
  return *value == kUnset ? cleared : static_cast<uint32_t>(*value);
}

// Minutes from Slurm's time formats (a bare number is minutes); -1 clears.
Result<int64_t> Minutes(const Word& word) {
  if (Status assign = OnlyAssign(word); !assign) return std::move(assign).take_error();
  std::string_view text = Trim(word.value);
  if (std::optional<int64_t> number = ParseInt64(text); number && *number < 0) return kUnset;
  auto seconds = ParseDuration(text);
  if (!seconds) return Invalid(word, "minutes or [days-]hours:minutes:seconds, or -1");
  if (*seconds == kUnlimitedSeconds) return kUnset;
  return *seconds / 60;
}

Result<int64_t> Seconds(const Word& word) {
  if (Status assign = OnlyAssign(word); !assign) return std::move(assign).take_error();
  std::string_view text = Trim(word.value);
  if (std::optional<int64_t> number = ParseInt64(text)) return *number < 0 ? kUnset : *number;
  auto seconds = ParseDuration(text);  // hh:mm:ss
  if (!seconds || *seconds == kUnlimitedSeconds) return Invalid(word, "seconds or hh:mm:ss, or -1");
  return *seconds;
}

Result<double> Number(const Word& word) {
  if (Status assign = OnlyAssign(word); !assign) return std::move(assign).take_error();
  std::string text(Trim(word.value));
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || value != value)
    return Invalid(word, "a number, or -1 to clear it");
  return value;
}

// "cpu=4,gres/gpu=8" merged into `list`; an entry of -1 removes that TRES, "-1" alone them all.
Status MergeTres(TresList& list, const Word& word) {
  if (Status assign = OnlyAssign(word); !assign) return assign;
  std::string_view text = Trim(word.value);
  if (text == "-1") {
    list = TresList();
    return OkStatus();
  }
  TresList merged = list;
  for (const std::string& item : Split(text, ',')) {
    std::string_view entry = Trim(item);
    size_t equals = entry.find('=');
    if (equals != std::string_view::npos && Trim(entry.substr(equals + 1)) == "-1") {
      auto named = ParseTres(fmt::format("{}=0", entry.substr(0, equals)));
      if (!named) return MakeError(fmt::format("{}: {}", word.key, named.error()));
      TresList kept;
      for (const auto& [name, count] : merged.items()) {
        if (!named->Has(name)) kept.Set(name, count);
      }
      merged = std::move(kept);
      continue;
    }
    auto parsed = ParseTres(entry);
    if (!parsed) return MakeError(fmt::format("{}: {}", word.key, parsed.error()));
    for (const auto& [name, count] : parsed->items()) merged.Set(name, count);
  }
  list = std::move(merged);
  return OkStatus();
}

// "a,b" for '=', added to or removed from `list` for '+=' and '-='; names lower-cased.
void EditList(std::vector<std::string>& list, const Word& word) {
  std::vector<std::string> names;
  for (const std::string& item : Split(word.value, ',')) {
    if (!Trim(item).empty()) names.push_back(NameOf(item));
  }
  if (word.op == "=") {
    list = std::move(names);
    return;
  }
  for (const std::string& name : names) {
    auto it = std::find(list.begin(), list.end(), name);
    if (word.op == "+=" && it == list.end()) list.push_back(name);
    if (word.op == "-=" && it != list.end()) list.erase(it);
  }
}

// A setter of one number of `Record`, read by `parse` (Count, Minutes).
template <typename Record>
std::function<Status(Record&, const Word&)> NumberOf(int64_t Record::*field,
                                                     Result<int64_t> (*parse)(const Word&)) {
  return [field, parse](Record& record, const Word& word) -> Status {
    auto value = parse(word);
    if (!value) return std::move(value).take_error();
    record.*field = *value;
    return OkStatus();
  };
}

LimitSetter CountOf(int64_t Limits::*field) {
  return NumberOf(field, Count);
}

LimitSetter MinutesOf(int64_t Limits::*field) {
  return NumberOf(field, Minutes);
}

LimitSetter TresOf(TresList Limits::*field) {
  return [field](Limits& limits, const Word& word) { return MergeTres(limits.*field, word); };
}

// The limits associations and QOS share; for a QOS, MaxJobs and MaxSubmitJobs are per user and
// are also named MaxJobsPerUser and MaxSubmitJobsPerUser (qos_settings below).
const std::vector<Key<LimitSetter>>& LimitKeys() {
  static const std::vector<Key<LimitSetter>> keys = {
      {{"GrpJobs"}, CountOf(&Limits::grp_jobs)},
      {{"GrpSubmitJobs", "GrpSubmit"}, CountOf(&Limits::grp_submit_jobs)},
      {{"GrpWall"}, MinutesOf(&Limits::grp_wall_minutes)},
      {{"GrpTRES"}, TresOf(&Limits::grp_tres)},
      {{"GrpTRESMins"}, TresOf(&Limits::grp_tres_mins)},
      {{"GrpTRESRunMins"}, TresOf(&Limits::grp_tres_run_mins)},
      {{"MaxJobs"}, CountOf(&Limits::max_jobs)},
      {{"MaxSubmitJobs", "MaxSubmit"}, CountOf(&Limits::max_submit_jobs)},
      {{"MaxWall", "MaxWallDurationPerJob"}, MinutesOf(&Limits::max_wall_minutes)},
      {{"MaxTRES", "MaxTRESPerJob", "MaxTRESPJ"}, TresOf(&Limits::max_tres)},
      {{"MaxTRESPerNode", "MaxTRESPN"}, TresOf(&Limits::max_tres_per_node)},
      {{"MaxTRESMins", "MaxTRESMinsPerJob", "MaxTRESMinsPJ"}, TresOf(&Limits::max_tres_mins)},
  };
  return keys;
}

template <typename Setter>
const Key<Setter>* FindKey(const std::vector<Key<Setter>>& keys, std::string_view key) {
  for (const Key<Setter>& entry : keys) {
    for (std::string_view name : entry.names) {
      if (EqualsIgnoreCase(name, key)) return &entry;
    }
  }
  return nullptr;
}

const std::vector<Key<AssociationSetter>>& AssociationKeys() {
  static const std::vector<Key<AssociationSetter>> keys = {
      {{"Fairshare", "Shares"},
       [](Association& association, const Word& word) -> Status {
         if (EqualsIgnoreCase(Trim(word.value), "parent"))
           return MakeError(
               "Fairshare=parent is not supported by Drover yet: give the association its own "
               "shares (a number)");
         auto value = Count32(word, 1);
         if (!value) return std::move(value).take_error();
         association.shares = *value;
         return OkStatus();
       }},
      {{"Priority"},
       [](Association& association, const Word& word) -> Status {
         auto value = Count(word);
         if (!value) return std::move(value).take_error();
         association.priority = *value;
         return OkStatus();
       }},
      {{"QOS", "QOSLevel"},
       [](Association& association, const Word& word) -> Status {
         EditList(association.qos, word);
         return OkStatus();
       }},
      {{"DefaultQOS", "DefQOS"},
       [](Association& association, const Word& word) -> Status {
         if (Status assign = OnlyAssign(word); !assign) return assign;
         std::string_view value = Trim(word.value);
         association.default_qos = value == "-1" ? "" : NameOf(value);
         return OkStatus();
       }},
  };
  return keys;
}

QosSetter QosTres(TresList Qos::*field) {
  return [field](Qos& qos, const Word& word) { return MergeTres(qos.*field, word); };
}

QosSetter QosCount(int64_t Qos::*field) {
  return NumberOf(field, Count);
}

QosSetter QosLimit(std::string_view key) {
  const LimitSetter* setter = nullptr;
  for (const Key<LimitSetter>& entry : LimitKeys()) {
    if (entry.names.front() == key) setter = &entry.set;
  }
  return [setter](Qos& qos, const Word& word) { return (*setter)(qos.limits, word); };
}

const std::vector<Key<QosSetter>>& QosKeys() {
  static const std::vector<Key<QosSetter>> keys = {
      {{"Description"},
       [](Qos& qos, const Word& word) -> Status {
         if (Status assign = OnlyAssign(word); !assign) return assign;
         qos.description = NameOf(word.value);
         return OkStatus();
       }},
      {{"Priority"},
       [](Qos& qos, const Word& word) -> Status {
         auto value = Count32(word, 0);
         if (!value) return std::move(value).take_error();
         qos.priority = *value;
         return OkStatus();
       }},
      {{"Flags"},
       [](Qos& qos, const Word& word) -> Status {
         std::string_view value = Trim(word.value);
         uint32_t flags = 0;
         if (value != "-1" && !EqualsIgnoreCase(value, "none")) {
           auto parsed = ParseQosFlags(value);
           if (!parsed) return std::move(parsed).take_error();
           flags = *parsed;
         }
         if (word.op == "+=") qos.flags |= flags;
         if (word.op == "-=") qos.flags &= ~flags;
         if (word.op == "=") qos.flags = flags;
         return OkStatus();
       }},
      {{"GraceTime"},
       [](Qos& qos, const Word& word) -> Status {
         auto value = Seconds(word);
         if (!value) return std::move(value).take_error();
         qos.grace_seconds = *value == kUnset ? 0 : *value;
         return OkStatus();
       }},
      {{"PreemptExemptTime"},
       [](Qos& qos, const Word& word) -> Status {
         auto value = Seconds(word);
         if (!value) return std::move(value).take_error();
         qos.preempt_exempt_seconds = *value;
         return OkStatus();
       }},
      {{"Preempt"},
       [](Qos& qos, const Word& word) -> Status {
         std::string_view value = Trim(word.value);
         if (word.op == "=" && (value.empty() || value == "-1" || value == "''")) {
           qos.preempt.clear();
           return OkStatus();
         }
         EditList(qos.preempt, word);
         return OkStatus();
       }},
      {{"PreemptMode"},
       [](Qos& qos, const Word& word) -> Status {
         if (Status assign = OnlyAssign(word); !assign) return assign;
         std::string mode = ToLower(Trim(word.value));
         if (mode == "-1") mode = "cluster";
         if (mode != "cluster" && mode != "off" && mode != "cancel" && mode != "requeue" &&
             mode != "suspend")
           return Invalid(word, "Cluster, Off, Cancel, Requeue or Suspend");
         qos.preempt_mode = mode;
         return OkStatus();
       }},
      {{"UsageFactor"},
       [](Qos& qos, const Word& word) -> Status {
         auto value = Number(word);
         if (!value) return std::move(value).take_error();
         qos.usage_factor = *value < 0 ? 1.0 : *value;
         return OkStatus();
       }},
      {{"UsageThreshold"},
       [](Qos& qos, const Word& word) -> Status {
         auto value = Number(word);
         if (!value) return std::move(value).take_error();
         qos.usage_threshold = *value < 0 ? -1 : *value;
         return OkStatus();
       }},
      {{"MaxTRESPerUser", "MaxTRESPU"}, QosTres(&Qos::max_tres_per_user)},
      {{"MaxTRESPerAccount", "MaxTRESPA"}, QosTres(&Qos::max_tres_per_account)},
      {{"MinTRESPerJob", "MinTRES"}, QosTres(&Qos::min_tres)},
      {{"MaxJobsPerAccount", "MaxJobsPA"}, QosCount(&Qos::max_jobs_per_account)},
      {{"MaxSubmitJobsPerAccount", "MaxSubmitPA"}, QosCount(&Qos::max_submit_per_account)},
      {{"MaxJobsPerUser", "MaxJobsPU"}, QosLimit("MaxJobs")},
      {{"MaxSubmitJobsPerUser", "MaxSubmitPU"}, QosLimit("MaxSubmitJobs")},
  };
  return keys;
}

}  // namespace

std::string NameOf(std::string_view text) {
  return ToLower(Trim(text));
}

bool IsAssociationSetting(std::string_view key) {
  return FindKey(AssociationKeys(), key) || FindKey(LimitKeys(), key);
}

Status ApplyAssociationSetting(Association& association, const Word& word) {
  if (const auto* key = FindKey(AssociationKeys(), word.key)) return key->set(association, word);
  if (const auto* key = FindKey(LimitKeys(), word.key)) return key->set(association.limits, word);
  return MakeError(fmt::format("Unknown option: {}{}{}", word.key, word.op, word.value));
}

bool IsQosSetting(std::string_view key) {
  return FindKey(QosKeys(), key) || FindKey(LimitKeys(), key);
}

Status ApplyQosSetting(Qos& qos, const Word& word) {
  if (const auto* key = FindKey(QosKeys(), word.key)) return key->set(qos, word);
  if (const auto* key = FindKey(LimitKeys(), word.key)) return key->set(qos.limits, word);
  return MakeError(fmt::format("Unknown option: {}{}{}", word.key, word.op, word.value));
}

namespace {

// The canonical name of a setting's key ("MaxTRESPJ" -> "MaxTRES"), or the key as typed.
std::string_view CanonicalKey(std::string_view key, bool qos) {
  if (qos) {
    if (const auto* entry = FindKey(QosKeys(), key)) return entry->names.front();
  } else if (const auto* entry = FindKey(AssociationKeys(), key)) {
    return entry->names.front();
  }
  if (const auto* entry = FindKey(LimitKeys(), key)) return entry->names.front();
  return key;
}

struct Label {
  std::string_view key;    // canonical
  std::string_view label;  // as sacctmgr prints it
};

// sacctmgr_print_assoc_limits' order and labels.
constexpr Label kAssociationLabels[] = {
    {"Fairshare", "Fairshare"},
    {"GrpJobs", "GrpJobs"},
    {"GrpSubmitJobs", "GrpSubmitJobs"},
    {"GrpTRES", "GrpTRES"},
    {"GrpTRESMins", "GrpTRESMins"},
    {"GrpTRESRunMins", "GrpTRESRunMins"},
    {"GrpWall", "GrpWall"},
    {"MaxJobs", "MaxJobs"},
    {"MaxSubmitJobs", "MaxSubmitJobs"},
    {"MaxTRES", "MaxTRES"},
    {"MaxTRESPerNode", "MaxTRESPerNode"},
    {"MaxTRESMins", "MaxTRESMins"},
    {"MaxWall", "MaxWall"},
    {"Parent", "Parent"},
    {"Priority", "Priority"},
    {"QOS", "QOS"},
    {"DefaultQOS", "DefQOS"},
};

// sacctmgr_print_qos_limits' order and labels.
constexpr Label kQosLabels[] = {
    {"Flags", "Flags"},
    {"GraceTime", "GraceTime"},
    {"GrpJobs", "GrpJobs"},
    {"GrpSubmitJobs", "GrpSubmitJobs"},
    {"GrpTRES", "GrpTRES"},
    {"GrpTRESMins", "GrpTRESMins"},
    {"GrpTRESRunMins", "GrpTRESRunMins"},
    {"GrpWall", "GrpWall"},
    {"MaxJobsPerAccount", "MaxJobsPerAccount"},
    {"MaxJobs", "MaxJobsPerUser"},
    {"MaxJobsPerUser", "MaxJobsPerUser"},
    {"MaxSubmitJobsPerAccount", "MaxSubmitJobsPerAccount"},
    {"MaxSubmitJobs", "MaxSubmitJobsPerUser"},
    {"MaxSubmitJobsPerUser", "MaxSubmitJobsPerUser"},
    {"MaxTRESPerAccount", "MaxTRESPerAccount"},
    {"MaxTRES", "MaxTRESPerJob"},
    {"MaxTRESPerNode", "MaxTRESPerNode"},
    {"MaxTRESPerUser", "MaxTRESPerUser"},
    {"MinTRESPerJob", "MinTRESPerJob"},
    {"MaxTRESMins", "MaxTRESMins"},
    {"MaxWall", "MaxWall"},
    {"Preempt", "Preempt"},
    {"PreemptMode", "PreemptMode"},
    {"PreemptExemptTime", "PreemptExemptTime"},
    {"Priority", "Priority"},
    {"UsageFactor", "UsageFactor"},
    {"UsageThreshold", "UsageThreshold"},
};

std::string Shown(const Word& word, std::string_view key) {
  std::string value(Trim(word.value));
  if (value == "-1") return key == "Flags" || key == "Preempt" ? "" : "NONE";
  if (key == "PreemptMode") {
    for (char& c : value) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return value;
  }
  if (key == "UsageFactor" || key == "UsageThreshold") {
    char* end = nullptr;
    double number = std::strtod(value.c_str(), &end);
    if (end != value.c_str()) return fmt::format("{:.4f}", number);
  }
  return word.op == "=" ? value : word.op.substr(0, 1) + value;
}

}  // namespace

std::string DescribeAssociationSettings(const std::vector<Word>& settings) {
  std::string text;
  for (const Label& label : kAssociationLabels) {
    for (const Word& word : settings) {
      if (!EqualsIgnoreCase(CanonicalKey(word.key, false), label.key)) continue;
      text += fmt::format("  {:<14}= {}\n", label.label, Shown(word, label.key));
    }
  }
  return text;
}

std::string DescribeQosSettings(const std::vector<Word>& settings) {
  std::string text;
  for (const Label& label : kQosLabels) {
    for (const Word& word : settings) {
      if (!EqualsIgnoreCase(CanonicalKey(word.key, true), label.key)) continue;
      // As sacctmgr 22.05: this one label is padded short.
      std::string_view pad = label.label == "MaxJobsPerUser" ? " " : "";
      text += pad.empty() ? fmt::format("  {:<25}= {}\n", label.label, Shown(word, label.key))
                          : fmt::format("  {}{}= {}\n", label.label, pad, Shown(word, label.key));
    }
  }
  return text;
}

}  // namespace drover::acct
