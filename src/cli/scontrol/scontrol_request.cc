// See scontrol_request.h.
#include "cli/scontrol/scontrol_request.h"

#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include <optional>

#include "common/duration.h"
#include "common/job_update.h"
#include "common/partition_update.h"
#include "common/slurm_time.h"
#include "common/text.h"

namespace drover::cli::scontrol {
namespace {

Error Unsupported(std::string_view word) {
  return MakeError(fmt::format("Update of this parameter is not supported: {}", word));
}

// "job 12 ...", "JobId=12 ...", "job JobId=12 ...": the ID word and where the keys start.
Result<std::pair<std::string, size_t>> TargetOf(std::span<const std::string> words,
                                                std::string_view entity, std::string_view id_key) {
  size_t i = 0;
  if (i < words.size() && EqualsIgnoreCase(words[i], entity)) ++i;
  if (i >= words.size()) return MakeError(fmt::format("No {} identification provided", entity));
  auto [key, value] = SplitKeyValue(words[i]);
  if (words[i].find('=') == std::string::npos) return std::pair(words[i], i + 1);
  if (key != id_key && !(entity == "job" && key == "job") &&
      !(entity == "reservation" && key == "reservation"))
    return MakeError(fmt::format("No {} identification provided (give {}=...)", entity, id_key));
  return std::pair(value, i + 1);
}

}  // namespace

std::pair<std::string, std::string> SplitKeyValue(std::string_view word) {
  size_t eq = word.find('=');
  if (eq == std::string_view::npos) return {ToLower(word), ""};
  return {ToLower(word.substr(0, eq)), std::string(word.substr(eq + 1))};
}

namespace {

// "[1-3,7]" or "5": the task IDs of an array range.
bool AddTaskRange(uint64_t job, std::string_view tasks, v1::JobFilter* filter) {
  bool bracketed = tasks.starts_with('[') && tasks.ends_with(']');
  if (bracketed) tasks = tasks.substr(1, tasks.size() - 2);
  for (const std::string& item : Split(std::string(tasks), ',')) {
    size_t dash = item.find('-');
    auto first = ParseUint64(std::string_view(item).substr(0, dash));
    auto last =
        dash == std::string::npos ? first : ParseUint64(std::string_view(item).substr(dash + 1));
    if (!first || !last || *last < *first || *last >= UINT32_MAX || *last - *first > 1'000'000)
      return false;
    if (dash != std::string::npos && !bracketed) return false;
    for (uint64_t task = *first; task <= *last; ++task) {
      v1::JobFilter::ArrayTask* array = filter->add_array_tasks();
      array->set_array_job_id(job);
      array->set_task_id(static_cast<uint32_t>(task));
    }
  }
  return true;
}

}  // namespace

bool AddJobId(std::string_view text, v1::JobFilter* filter) {
  size_t underscore = text.find('_');
  auto id = ParseUint64(text.substr(0, underscore));
  if (!id || *id == 0) return false;
  if (underscore == std::string_view::npos) {
    filter->add_job_ids(*id);
    return true;
  }
  return AddTaskRange(*id, text.substr(underscore + 1), filter);
}

namespace {

// "12,13_[1-3],14": commas inside brackets belong to the array range.
std::vector<std::string> SplitIds(std::string_view text) {
  std::vector<std::string> ids(1);
  int depth = 0;
  for (char c : text) {
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    if (c == ',' && depth == 0)
      ids.emplace_back();
    else
      ids.back() += c;
  }
  return ids;
}

}  // namespace

Result<v1::JobFilter> ParseJobList(std::span<const std::string> words) {
  v1::JobFilter filter;
  for (const std::string& word : words)
    for (const std::string& id : SplitIds(word))
      if (!Trim(id).empty() && !AddJobId(Trim(id), &filter))
        return MakeError("Invalid job id specified: " + id);
  if (filter.job_ids_size() == 0 && filter.array_tasks_size() == 0)
    return MakeError("Invalid job id specified");
  return filter;
}

Result<v1::TopRequest> ParseTopList(std::span<const std::string> words) {
  v1::TopRequest request;
  for (const std::string& word : words)
    for (const std::string& id : Split(word, ',')) {
      if (Trim(id).empty()) continue;
      v1::JobFilter one;
      if (!AddJobId(Trim(id), &one)) return MakeError("Invalid job id specified: " + id);
      v1::JobFilter::ArrayTask* job = request.add_jobs();
      if (one.job_ids_size() > 0) {
        job->set_array_job_id(one.job_ids(0));
        job->set_task_id(UINT32_MAX);
      } else {
        *job = one.array_tasks(0);
      }
    }
  if (request.jobs_size() == 0) return MakeError("Invalid job id specified");
  return request;
}

namespace {

// The job an update names: JobId=ID[,ID...] (arrays as N_T or N_[1-5]) anywhere, else the jobs
// named by JobName= when no JobId is given, as Slurm takes them: the caller's, or with
// UserID=NAME|UID that user's. The words left.
Result<std::vector<std::string>> TargetJobs(std::span<const std::string> words,
                                            v1::UpdateJobRequest& request) {
  std::vector<std::string> rest;
  std::optional<std::string> ids, name, user;
  size_t i = 0;
  if (!words.empty() && EqualsIgnoreCase(words[0], "job")) {
    if (words.size() < 2) return MakeError("No job identification provided");
    ids = words[1].find('=') == std::string::npos ? words[1] : SplitKeyValue(words[1]).second;
    i = 2;
  }
  for (; i < words.size(); ++i) {
    auto [key, value] = SplitKeyValue(words[i]);
    if (!ids && (key == "jobid" || key == "job"))
      ids = value;
    else if (key == "jobname" || key == "name")
      name = value, rest.push_back(words[i]);
    else if (key == "userid")
      user = value;
    else
      rest.push_back(words[i]);
  }
  if (ids) {
    if (user) return MakeError("UserID= selects jobs by JobName=; it cannot narrow JobId=");
    for (const std::string& id : SplitIds(*ids))
      if (!AddJobId(Trim(id), request.mutable_filter()))
        return MakeError("Invalid job id specified: " + *ids);
    return rest;
  }
  if (!name) return MakeError("No job identification provided");
  // JobName= alone names the jobs to update, not a new name.
  request.mutable_filter()->set_name(*name);
  if (user) {
    passwd* entry = getpwnam(user->c_str());
    if (!entry)
      if (auto uid = ParseUint64(*user); uid && *uid < UINT32_MAX)
        entry = getpwuid(static_cast<uid_t>(*uid));
    if (!entry) return MakeError("Invalid UserID value: " + *user);
    request.mutable_filter()->set_user(entry->pw_name);
  } else {
    passwd* me = getpwuid(getuid());
    request.mutable_filter()->set_user(me && me->pw_name ? me->pw_name : std::to_string(getuid()));
  }
  std::erase_if(rest, [](const std::string& word) {
    auto key = SplitKeyValue(word).first;
    return key == "jobname" || key == "name";
  });
  return rest;
}

}  // namespace

Result<v1::UpdateJobRequest> ParseJobUpdate(std::span<const std::string> words, int64_t now) {
  v1::UpdateJobRequest request;
  auto keys = TargetJobs(words, request);
  if (!keys) return std::move(keys).take_error();
  for (const std::string& word : *keys) {
    auto [key, value] = SplitKeyValue(word);
    if (word.find('=') == std::string::npos) return Unsupported(word);
    if (key == "timelimit") {
      auto limit = ParseDuration(value);
      if (!limit) return MakeError("Invalid TimeLimit value: " + value);
      request.set_time_limit_seconds(*limit);
    } else if (key == "nice") {
      std::string_view digits = value;
      int64_t sign = digits.starts_with('-') ? -1 : 1;
      if (digits.starts_with('-') || digits.starts_with('+')) digits.remove_prefix(1);
      auto nice = ParseInt64(digits);
      if (!nice || *nice > 2147483645) return MakeError("Invalid nice value: " + value);
      request.set_nice(static_cast<int32_t>(sign * *nice));
    } else if (key == "partition") {
      request.set_partition(value);
    } else if (key == "name" || key == "jobname") {
      request.set_name(value);
    } else if (key == "qos") {
      request.set_qos(value);
    } else if (IsJobUpdateKey(key)) {
      JobUpdate check;
      if (Status parsed = ParseJobUpdateKey(key, value, now, check); !parsed)
        return std::move(parsed).take_error();
      request.add_settings(word);
    } else {
      return Unsupported(word);
    }
  }
  if (request.settings_size() == 0 && !request.has_time_limit_seconds() && !request.has_nice() &&
      !request.has_partition() && !request.has_name() && !request.has_qos())
    return MakeError("No changes specified");
  return request;
}

namespace {

// State= values as Slurm spells them (any case), and what Drover sends for each.
constexpr std::pair<std::string_view, std::string_view> kNodeStates[] = {
    {"drain", "drain"}, {"resume", "resume"},
    {"down", "down"},   {"undrain", "undrain"},
    {"fail", "fail"},   {"noresp", "noresp"},
    {"idle", "resume"}, {"cancel_reboot", "cancel_reboot"}};

// States of scontrol.1 that belong to features Drover does not have: what to do instead.
constexpr std::pair<std::string_view, std::string_view> kNoSuchNodeStates[] = {
    {"future", "nodes are added by slurm.conf and a restart"},
    {"power_down", "Drover has no power saving (SuspendProgram)"},
    {"power_down_asap", "Drover has no power saving (SuspendProgram)"},
    {"power_down_force", "Drover has no power saving (SuspendProgram)"},
    {"power_up", "Drover has no power saving (ResumeProgram)"}};

Result<std::string> NodeStateOf(const std::string& word, const std::string& value) {
  std::string state = ToLower(value);
  for (const auto& [name, sent] : kNodeStates)
    if (state == name) return std::string(sent);
  for (const auto& [name, why] : kNoSuchNodeStates)
    if (state == name) return MakeError(fmt::format("Invalid input: {} ({})", word, why));
  return MakeError(fmt::format(
      "Invalid input: {}\nRequest aborted\nValid states are: NoResp DRAIN FAIL RESUME UNDRAIN "
      "DOWN IDLE CANCEL_REBOOT",
      word));
}

}  // namespace

Result<v1::RebootRequest> ParseReboot(std::span<const std::string> words) {
  v1::RebootRequest request;
  for (const std::string& word : words) {
    auto [key, value] = SplitKeyValue(word);
    if (ToLower(word) == "asap") {
      request.set_asap(true);
    } else if (key == "nextstate") {
      std::string next = ToLower(value);
      if (next != "resume" && next != "down")
        return MakeError("Invalid nextstate: " + value + " (nextstate=RESUME or DOWN)");
      request.set_next_state(next == "down" ? "DOWN" : "RESUME");
    } else if (key == "reason") {
      request.set_reason(value);
    } else if (word.find('=') != std::string::npos || !request.nodes().empty()) {
      return MakeError("Invalid input: " + word);
    } else {
      request.set_nodes(ToLower(word) == "all" ? "ALL" : word);
    }
  }
  if (request.nodes().empty())
    return MakeError("Missing node list. Specify ALL|<NodeList> to reboot");
  return request;
}

Result<v1::UpdateNodeRequest> ParseNodeUpdate(std::span<const std::string> words) {
  auto target = TargetOf(words, "node", "nodename");
  if (!target) return std::move(target).take_error();
  v1::UpdateNodeRequest request;
  request.set_nodes(target->first);
  for (size_t i = target->second; i < words.size(); ++i) {
    auto [key, value] = SplitKeyValue(words[i]);
    if (key == "state") {
      auto state = NodeStateOf(words[i], value);
      if (!state) return std::move(state).take_error();
      request.set_state(*state);
    } else if (key == "reason") {
      request.set_reason(value);
    } else if (key == "weight") {
      auto weight = ParseUint64(value);
      if (!weight || *weight == 0 || *weight >= UINT32_MAX)
        return MakeError(fmt::format("Invalid weight: {}", value));
      request.set_weight(static_cast<uint32_t>(*weight));
    } else if (key == "features" || key == "availablefeatures") {
      request.set_features(value);
    } else if (key == "activefeatures") {
      request.set_active_features(value);
    } else if (key == "comment") {
      request.set_comment(value);
    } else if (key == "extra") {
      request.set_extra(value);
    } else {
      return Unsupported(words[i]);
    }
  }
  if (request.state().empty() && request.reason().empty() && !request.has_weight() &&
      !request.has_features() && !request.has_active_features() && !request.has_comment() &&
      !request.has_extra())
    return MakeError("No changes specified");
  return request;
}

Result<v1::UpdatePartitionRequest> ParsePartitionUpdate(std::span<const std::string> words,
                                                        bool create) {
  v1::UpdatePartitionRequest request;
  request.set_create(create);
  size_t i = 0;
  if (i < words.size() && EqualsIgnoreCase(words[i], "partition")) ++i;
  for (; i < words.size(); ++i) {
    auto [key, value] = SplitKeyValue(words[i]);
    if (words[i].find('=') == std::string::npos) return Unsupported(words[i]);
    if (key == "partitionname" || key == "partition") {
      request.set_name(value);
      continue;
    }
    std::string_view name = std::string_view(words[i]).substr(0, words[i].find('='));
    if (!IsPartitionKey(name)) return Unsupported(words[i]);
    request.add_settings(words[i]);
  }
  if (request.name().empty()) return MakeError("PartitionName must be given.");
  if (!create && request.settings_size() == 0) return MakeError("No changes specified");
  return request;
}

Result<v1::ReservationRequest> ParseReservation(std::span<const std::string> words, int64_t now) {
  v1::ReservationRequest request;
  size_t i = 0;
  if (i < words.size() && EqualsIgnoreCase(words[i], "reservation")) ++i;
  for (; i < words.size(); ++i) {
    auto [key, value] = SplitKeyValue(words[i]);
    if (words[i].find('=') == std::string::npos)
      return MakeError(fmt::format("Invalid input: {}", words[i]));
    if (key == "reservationname" || key == "reservation" || key == "resvname") {
      request.set_name(value);
    } else if (key == "starttime") {
      auto time = ParseSlurmTime(value, now);
      if (!time) return MakeError("Invalid starttime: " + value);
      request.set_start_time(*time);
    } else if (key == "endtime") {
      auto time = ParseSlurmTime(value, now);
      if (!time) return MakeError("Invalid endtime: " + value);
      request.set_end_time(*time);
    } else if (key == "duration") {
      auto duration = ParseDuration(value);
      if (!duration) return MakeError("Invalid duration: " + value);
      request.set_duration_seconds(*duration);
    } else if (key == "nodes" || key == "nodelist") {
      request.set_node_list(value);
    } else if (key == "nodecnt" || key == "nodecount") {
      auto count = ParseUint64(value);
      if (!count || *count == 0 || *count > UINT32_MAX)
        return MakeError("Invalid node count: " + value);
      request.set_node_count(static_cast<uint32_t>(*count));
    } else if (key == "tres") {
      request.set_tres(value);
    } else if (key == "users" || key == "user") {
      request.set_users(value);
    } else if (key == "accounts" || key == "account") {
      request.set_accounts(value);
    } else if (key == "flags") {
      request.set_flags(value);
    } else if (key == "partitionname" || key == "partition") {
      request.set_partition(value);
    } else {
      return MakeError(
          fmt::format("Unknown parameter: {} (Drover takes ReservationName, "
                      "StartTime, EndTime, Duration, Nodes, NodeCnt, TRES, Users, "
                      "Accounts, Flags, PartitionName)",
                      words[i]));
    }
  }
  return request;
}

}  // namespace drover::cli::scontrol
