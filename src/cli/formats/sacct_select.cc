// sacct's selection (formats.h): its time forms, state names, -j items, the default time window
// and the filters of its job_cond, applied to the controller's records.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <regex>
#include <utility>

#include "cli/formats/formats.h"
#include "common/hostlist.h"
#include "common/job_state.h"
#include "common/slurm_time.h"
#include "common/text.h"

namespace drover::cli {
namespace {

constexpr uint32_t kNoTask = UINT32_MAX;
constexpr int64_t kDay = 24 * 60 * 60;

// Slurm's states that no Drover job is ever in, which sacct -s still takes.
constexpr std::pair<std::string_view, std::string_view> kOtherStates[] = {{"RS", "RESIZING"},
                                                                          {"RV", "REVOKED"}};

bool Contains(const std::vector<std::string>& list, std::string_view value) {
  return std::any_of(list.begin(), list.end(),
                     [&](const std::string& item) { return EqualsIgnoreCase(item, value); });
}

// A state that a job leaves only by ending; its end_time is then the end.
bool Live(std::string_view state) {
  return state == "PENDING" || state == "RUNNING" || state == "SUSPENDED" ||
         state == "COMPLETING" || state == "CONFIGURING" || state == "RESIZING";
}

int64_t EndOf(const v1::Job& job) {
  return Live(job.state()) ? 0 : job.end_time();
}

// When the job became eligible: never while held or waiting on a dependency (Slurm's
// EligibleTime=Unknown), else its begin time or submission.
int64_t Eligible(const v1::Job& job) {
  const v1::JobSpec& spec = job.spec();
  if (job.start_time() == 0 && spec.hold() != v1::JobSpec::NONE) return 0;
  if (job.state() == "PENDING" && job.reason().rfind("Dependency", 0) == 0) return 0;
  return spec.begin_time() ? spec.begin_time() : spec.submit_time();
}

// [from, to] (to 0: still going) meets the window.
bool Meets(int64_t from, int64_t to, const SacctSelection& selection) {
  return from != 0 && from <= selection.end && (to == 0 || to >= selection.start);
}

// As slurmdbd's state condition: pending or running at some time in the window; any other
// state, ended in it.
bool InStateDuring(std::string_view state, const v1::Job& job, const SacctSelection& selection) {
  int64_t end = EndOf(job);
  if (state == "PENDING")
    return Meets(Eligible(job), job.start_time() ? job.start_time() : end, selection);
  if (state == "RUNNING") return Meets(job.start_time(), end, selection);
  if (state == "SUSPENDED")
    return (job.state() == "SUSPENDED" || job.suspended_seconds() > 0) &&
           Meets(job.start_time(), end, selection);
  auto ended_in = [&](int64_t when) { return when >= selection.start && when <= selection.end; };
  if (job.state() == state && end && ended_in(end)) return true;
  return std::any_of(job.history().begin(), job.history().end(), [&](const v1::JobRun& run) {
    return run.state() == state && run.end_time() && ended_in(run.end_time());
  });
}

bool InWindow(const SacctSelection& selection, const v1::Job& job) {
  if (!selection.states.empty())
    return std::any_of(
        selection.states.begin(), selection.states.end(),
        [&](const std::string& state) { return InStateDuring(state, job, selection); });
  int64_t eligible = Eligible(job);
  // -j shows jobs that never became eligible too (held ones).
  if (eligible == 0 && !selection.jobs.empty()) eligible = job.spec().submit_time();
  return Meets(eligible, EndOf(job), selection);
}

bool MatchesJob(const SacctJobStep& item, const v1::JobSpec& spec) {
  bool array = spec.array_job_id() && spec.array_task_id() != kNoTask;
  if (item.task)
    return array && item.job_id == spec.array_job_id() && *item.task == spec.array_task_id();
  return item.job_id == spec.job_id() || (array && item.job_id == spec.array_job_id());
}

std::vector<std::string> RunNodes(const v1::Job& job) {
  if (job.start_time() == 0) return {};
  auto names = ExpandHostlist(job.node_list());
  return names ? std::move(names).value() : std::vector<std::string>{};
}

uint32_t CpusOf(const v1::Job& job) {
  if (job.allocation_size() == 0) return columns::RequestedCpus(job.spec());
  uint32_t cpus = 0;
  for (const v1::NodeAllocation& node : job.allocation())
    cpus += columns::AllocatedCpus(node, nullptr);
  return cpus;
}

bool InRange(uint32_t value, uint32_t min, uint32_t max) {
  return (min == 0 || value >= min) && (max == 0 || value <= max);
}

bool MatchesLists(const SacctSelection& selection, const v1::Job& job) {
  const v1::JobSpec& spec = job.spec();
  auto listed = [](const std::vector<std::string>& list, std::string_view value) {
    return list.empty() || Contains(list, value);
  };
  if (!listed(selection.accounts, spec.account())) return false;
  if (!selection.names.empty() && std::find(selection.names.begin(), selection.names.end(),
                                            spec.name()) == selection.names.end())
    return false;
  if (!selection.partitions.empty()) {
    std::vector<std::string> parts{spec.partitions().begin(), spec.partitions().end()};
    if (!job.partition_name().empty()) parts = {job.partition_name()};
    if (std::none_of(parts.begin(), parts.end(),
                     [&](const std::string& part) { return Contains(selection.partitions, part); }))
      return false;
  }
  if (!listed(selection.qos, spec.qos().empty() ? "normal" : spec.qos())) return false;
  if (!listed(selection.reasons, job.reason().empty() ? "None" : job.reason())) return false;
  if (!selection.flags.empty() && !Contains(selection.flags, job.sched_by())) return false;
  // Drover keeps no WCKeys nor associations: a job has neither, so a list of them selects none.
  if (!selection.wckeys.empty() || !selection.associations.empty()) return false;
  for (const std::string& feature : selection.constraints) {
    std::vector<std::string> features;
    for (std::string& word : Split(spec.constraint(), '&'))
      for (std::string& part : Split(word, ',')) features.push_back(std::string(Trim(part)));
    if (!Contains(features, feature)) return false;
  }
  return true;
}

bool MatchesNumbers(const SacctSelection& selection, const v1::Job& job) {
  const v1::JobSpec& spec = job.spec();
  auto has = [](const std::vector<uint32_t>& ids, uint32_t id) {
    return ids.empty() || std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  if (!has(selection.uids, spec.uid()) || !has(selection.gids, spec.gid())) return false;
  std::vector<std::string> nodes = RunNodes(job);
  if (!selection.nodes.empty() &&
      std::none_of(nodes.begin(), nodes.end(),
                   [&](const std::string& node) { return Contains(selection.nodes, node); }))
    return false;
  uint32_t node_count =
      nodes.empty() ? std::max<uint32_t>(spec.min_nodes(), 1) : static_cast<uint32_t>(nodes.size());
  if (!InRange(node_count, selection.min_nodes, selection.max_nodes)) return false;
  if (!InRange(CpusOf(job), selection.min_cpus, selection.max_cpus)) return false;
  if (selection.min_timelimit) {
    int64_t limit = job.time_limit_seconds() ? job.time_limit_seconds() : spec.time_limit_seconds();
    int64_t minutes = columns::IsUnlimited(limit) ? INT64_MAX : limit / 60;
    if (selection.max_timelimit)
      return minutes >= selection.min_timelimit && minutes <= selection.max_timelimit;
    return minutes == selection.min_timelimit;
  }
  return true;
}

// "1-5,7" (inside N_[...]) as task IDs.
std::optional<std::vector<uint32_t>> TaskRanges(std::string_view text) {
  std::vector<uint32_t> tasks;
  for (const std::string& range : Split(text, ',')) {
    unsigned first = 0, last = 0;
    char tail = 0;
    int read = std::sscanf(range.c_str(), "%u-%u%c", &first, &last, &tail);
    if (read == 1 && range.find('-') == std::string::npos)
      last = first;
    else if (read != 2 || last < first || last - first > 1'000'000)
      return std::nullopt;
    for (unsigned task = first; task <= last; ++task) tasks.push_back(task);
  }
  return tasks;
}

bool AllDigits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

}  // namespace

std::optional<int64_t> ParseSacctTime(std::string_view text, int64_t now) {
  std::optional<int64_t> when = ParseSlurmTime(text, now);
  if (!when) return std::nullopt;
  // A time of day alone means today's (sacct looks back), where sbatch --begin means the next.
  static const std::regex kTimeOfDay(
      R"(^(\d{1,2}:\d{2}(:\d{2})?\s*([AaPp][Mm])?|midnight|noon|fika|teatime)$)",
      std::regex::icase);
  std::string copy(text);
  if (*when > now && std::regex_match(copy, kTimeOfDay)) *when -= kDay;
  return when;
}

std::optional<std::string> SacctStateName(std::string_view text) {
  for (int i = 0; i <= static_cast<int>(JobState::kRequeued); ++i) {
    auto state = static_cast<JobState>(i);
    if (EqualsIgnoreCase(text, JobStateCode(state)) || EqualsIgnoreCase(text, JobStateName(state)))
      return std::string(JobStateName(state));
  }
  for (const auto& [code, name] : kOtherStates)
    if (EqualsIgnoreCase(text, code) || EqualsIgnoreCase(text, name)) return std::string(name);
  return std::nullopt;
}

Result<std::vector<SacctJobStep>> ParseSacctJobSteps(std::string_view item) {
  std::string text(item);
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])))
    return MakeError("Bad job/step specified: " + text);
  SacctJobStep base;
  std::string job = text;
  if (size_t dot = text.find('.'); dot != std::string::npos) {
    base.step = text.substr(dot + 1);
    job = text.substr(0, dot);
    if (!AllDigits(base.step) && base.step != "batch" && base.step != "extern" &&
        base.step != "interactive")
      return MakeError("Bad step specified: " + text);
  }
  std::vector<uint32_t> tasks;
  if (size_t under = job.find('_'); under != std::string::npos) {
    std::string task = job.substr(under + 1);
    job.resize(under);
    std::optional<std::vector<uint32_t>> ranges;
    if (task.size() > 2 && task.front() == '[' && task.back() == ']')
      ranges = TaskRanges(std::string_view(task).substr(1, task.size() - 2));
    else if (AllDigits(task))
      ranges = TaskRanges(task);
    if (!ranges) return MakeError("Bad job array element specified: " + text);
    tasks = std::move(*ranges);
  }
  if (!AllDigits(job) || job.size() > 19) return MakeError("Bad job/step specified: " + text);
  base.job_id = std::stoull(job);
  if (tasks.empty()) return std::vector<SacctJobStep>{base};
  std::vector<SacctJobStep> out;
  for (uint32_t task : tasks) {
    SacctJobStep one = base;
    one.task = task;
    out.push_back(one);
  }
  return out;
}

void SacctWindow(SacctSelection& selection, bool start_given, bool end_given, int64_t now) {
  if (!start_given) {
    if (!selection.jobs.empty()) {
      selection.start = 0;
    } else if (!selection.states.empty()) {
      selection.start = now;
    } else {
      time_t clock = static_cast<time_t>(now);
      std::tm local{};
      localtime_r(&clock, &local);
      local.tm_hour = local.tm_min = local.tm_sec = 0;
      local.tm_isdst = -1;
      selection.start = std::mktime(&local);
    }
  }
  if (!end_given) selection.end = !selection.states.empty() && start_given ? selection.start : now;
}

bool SacctSelects(const SacctSelection& selection, const v1::Job& job, int64_t) {
  const v1::JobSpec& spec = job.spec();
  if (!selection.jobs.empty() &&
      std::none_of(selection.jobs.begin(), selection.jobs.end(),
                   [&](const SacctJobStep& item) { return MatchesJob(item, spec); }))
    return false;
  return MatchesLists(selection, job) && MatchesNumbers(selection, job) && InWindow(selection, job);
}

bool SacctShowsRow(const SacctSelection* selection, const v1::Job& job, std::string_view step) {
  if (!selection || selection->jobs.empty()) return true;
  bool whole = false, listed = false;
  for (const SacctJobStep& item : selection->jobs) {
    if (!MatchesJob(item, job.spec())) continue;
    whole = whole || item.step.empty();
    listed = listed || (!step.empty() && item.step == step);
  }
  return whole || listed;
}

}  // namespace drover::cli
