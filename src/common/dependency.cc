// Parsing and printing of Slurm's --dependency lists. Parsing is strict: anything Slurm would
// refuse is an error that quotes the whole input so the user sees which option was wrong. A job
// may be one array task ("123_4") or a whole array ("123_*", the same as "123").
#include "common/dependency.h"

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "common/text.h"

namespace drover {
namespace {

constexpr uint32_t kNoTask = UINT32_MAX;

constexpr std::array<std::pair<std::string_view, DependencyType>, 6> kTypeNames = {{
    {"after", DependencyType::kAfter},
    {"afterany", DependencyType::kAfterAny},
    {"afterok", DependencyType::kAfterOk},
    {"afternotok", DependencyType::kAfterNotOk},
    {"aftercorr", DependencyType::kAfterCorr},
    {"singleton", DependencyType::kSingleton},
}};

Error Invalid(std::string_view text) {
  return MakeError("invalid dependency '" + std::string(text) +
                   "' (expected TYPE:JOBID[:JOBID...][+MINUTES], e.g. afterok:123, or singleton)");
}

// Slurm matches type names without regard to case.
std::optional<DependencyType> TypeFromName(std::string_view name) {
  for (const auto& [type_name, type] : kTypeNames) {
    if (EqualsIgnoreCase(name, type_name)) return type;
  }
  return std::nullopt;
}

std::string_view TypeName(DependencyType type) {
  for (const auto& [type_name, candidate] : kTypeNames) {
    if (candidate == type) return type_name;
  }
  return "?";
}

// Only the "wait for a job" types take "+time"; aftercorr and singleton have no delay in Slurm.
bool TakesDelay(DependencyType type) {
  return type != DependencyType::kAfterCorr && type != DependencyType::kSingleton;
}

// "+MINUTES" as seconds; nullopt when not a whole number of minutes or too large to hold.
std::optional<int64_t> ParseDelay(std::string_view minutes_text) {
  std::optional<uint64_t> minutes = ParseUint64(minutes_text);
  if (!minutes || *minutes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max() / 60))
    return std::nullopt;
  return static_cast<int64_t>(*minutes) * 60;
}

// "N", "N_T" (task T of array job N) or "N_*" (every task of array N, as "N" names them).
std::optional<DependencyTerm> ParseJob(std::string_view text) {
  size_t underscore = text.find('_');
  std::optional<uint64_t> id = ParseUint64(text.substr(0, underscore));
  if (!id || *id == 0) return std::nullopt;
  DependencyTerm term;
  term.job_id = *id;
  if (underscore == std::string_view::npos) return term;
  std::string_view task = text.substr(underscore + 1);
  if (task == "*") return term;
  std::optional<uint64_t> task_id = ParseUint64(task);
  if (!task_id || *task_id >= kNoTask) return std::nullopt;
  term.array_task_id = static_cast<uint32_t>(*task_id);
  return term;
}

// One item between separators: "singleton" or "type:id[:id...][+minutes]". Appends its terms;
// false when the item is malformed (the caller builds the message from the whole input).
bool ParseItem(std::string_view item, std::vector<DependencyTerm>& terms) {
  if (EqualsIgnoreCase(item, "singleton")) {
    terms.push_back({DependencyType::kSingleton, 0, 0});
    return true;
  }
  size_t colon = item.find(':');
  if (colon == std::string_view::npos) {
    // A bare job ID waits for that job to end, as Slurm reads "-d 123" (afterany).
    std::optional<DependencyTerm> term = ParseJob(item);
    if (!term) return false;
    terms.push_back(*term);  // afterany, the default type
    return true;
  }
  std::string_view name = item.substr(0, colon);
  // afterburstbuffer also waits for the job's stage-out; Drover has no burst buffers, so it is
  // afterany, as on a Slurm cluster without a burst buffer plugin.
  if (EqualsIgnoreCase(name, "afterburstbuffer")) name = "afterany";
  std::optional<DependencyType> type = TypeFromName(name);
  if (!type || *type == DependencyType::kSingleton) return false;

  std::string_view ids = item.substr(colon + 1);
  int64_t delay = 0;
  if (size_t plus = ids.find('+'); plus != std::string_view::npos) {
    std::optional<int64_t> parsed =
        TakesDelay(*type) ? ParseDelay(ids.substr(plus + 1)) : std::nullopt;
    if (!parsed) return false;
    delay = *parsed;
    ids = ids.substr(0, plus);
  }
  for (const std::string& id_text : Split(ids, ':')) {
    std::optional<DependencyTerm> term = ParseJob(id_text);
    if (!term) return false;
    term->type = *type;
    term->delay_seconds = delay;
    terms.push_back(*term);
  }
  return true;
}

// Consecutive terms print together when Slurm's syntax lets one item hold them all.
bool SameItem(const DependencyTerm& a, const DependencyTerm& b) {
  return a.type == b.type && a.delay_seconds == b.delay_seconds &&
         a.type != DependencyType::kSingleton;
}

std::string JobText(const DependencyTerm& term) {
  std::string text = std::to_string(term.job_id);
  if (term.array_task_id != kNoTask) text += "_" + std::to_string(term.array_task_id);
  return text;
}

}  // namespace

Result<DependencySpec> ParseDependency(std::string_view text) {
  std::string_view trimmed = Trim(text);
  DependencySpec spec;
  if (trimmed.empty()) return spec;
  bool has_all = trimmed.find(',') != std::string_view::npos;
  spec.any = trimmed.find('?') != std::string_view::npos;
  if (has_all && spec.any) {
    return MakeError("invalid dependency '" + std::string(text) +
                     "' (use ',' for all or '?' for any, not both)");
  }
  for (const std::string& item : Split(trimmed, spec.any ? '?' : ',')) {
    if (!ParseItem(item, spec.terms)) return Invalid(text);
  }
  return spec;
}

std::string FormatDependency(const DependencySpec& spec) {
  std::vector<std::string> items;
  for (size_t i = 0; i < spec.terms.size();) {
    const DependencyTerm& first = spec.terms[i];
    std::string item(TypeName(first.type));
    size_t j = i;
    // Grouped ("afterok:1:2") only when joined by ',': with '?' one item of several jobs would
    // print without a '?' and read back as needing all of them.
    for (; j < spec.terms.size() && (j == i || (!spec.any && SameItem(first, spec.terms[j])));
         ++j) {
      if (first.type != DependencyType::kSingleton) item += ":" + JobText(spec.terms[j]);
    }
    // Parsed delays are whole minutes; a delay set in seconds elsewhere prints rounded down.
    if (first.delay_seconds > 0) item += "+" + std::to_string(first.delay_seconds / 60);
    items.push_back(std::move(item));
    i = j;
  }
  return Join(items, spec.any ? "?" : ",");
}

}  // namespace drover
