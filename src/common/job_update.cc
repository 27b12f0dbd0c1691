// See job_update.h.
#include "common/job_update.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/dependency.h"
#include "common/duration.h"
#include "common/gres.h"
#include "common/hostlist.h"
#include "common/licenses.h"
#include "common/mail_type.h"
#include "common/memory_size.h"
#include "common/slurm_time.h"
#include "common/text.h"

namespace drover {
namespace {

using Parser = Status (*)(std::string_view key, std::string_view value, int64_t now, JobSpec& spec);

struct Key {
  std::string_view name;  // as Slurm spells it; matched in any case
  JobField field;
  bool pending_only;  // Slurm refuses it for a started job (ESLURM_JOB_NOT_PENDING)
  Parser parse;
};

Error Invalid(std::string_view what, std::string_view value) {
  return MakeError(fmt::format("Invalid {} value: {}", what, value));
}

Result<uint32_t> Count(std::string_view what, std::string_view value, uint32_t min) {
  auto number = ParseUint64(value);
  if (!number || *number < min || *number >= UINT32_MAX) return Invalid(what, value);
  return static_cast<uint32_t>(*number);
}

Result<std::vector<std::string>> Hosts(std::string_view what, std::string_view value) {
  if (value.empty()) return std::vector<std::string>{};
  auto hosts = ExpandHostlist(value);
  if (!hosts) return Invalid(what, value);
  return hosts;
}

Status SetCount(std::string_view what, std::string_view value, uint32_t min, uint32_t& out) {
  auto count = Count(what, value, min);
  if (!count) return std::move(count).take_error();
  out = *count;
  return OkStatus();
}

Status SetMemory(std::string_view what, std::string_view value, JobSpec& spec, bool per_cpu) {
  auto mb = ParseMemoryMB(value);
  if (!mb) return Invalid(what, value);
  spec.mem_per_cpu_mb = per_cpu ? *mb : 0;
  spec.mem_per_node_mb = per_cpu ? 0 : *mb;
  spec.mem_per_gpu_mb = 0;
  return OkStatus();
}

// NumNodes=min[-max].
Status SetNodes(std::string_view value, JobSpec& spec) {
  size_t dash = value.find('-');
  auto min = Count("NumNodes", value.substr(0, dash), 1);
  if (!min) return std::move(min).take_error();
  uint32_t max = *min;
  if (dash != std::string_view::npos) {
    auto upper = Count("NumNodes", value.substr(dash + 1), *min);
    if (!upper) return std::move(upper).take_error();
    max = *upper;
  }
  spec.min_nodes = *min;
  spec.max_nodes = max;
  return OkStatus();
}

// Gres=gpu:2,nic:1 or TresPerNode=gres/gpu:2 (gres: and gres/ prefixes as Slurm prints them).
Status SetGres(std::string_view value, JobSpec& spec) {
  std::string text;
  for (std::string item : Split(std::string(value), ',')) {
    for (std::string_view prefix : {"gres/", "gres:"})
      if (StartsWithIgnoreCase(item, prefix)) item = item.substr(prefix.size());
    text += (text.empty() ? "" : ",") + item;
  }
  auto gres =
      text.empty() ? Result<std::vector<GresSpec>>(std::vector<GresSpec>{}) : ParseGres(text);
  if (!gres) return MakeError("Invalid generic resource (gres) specification");
  spec.other_gres.clear();
  spec.gpus_per_node = 0;
  spec.gpu_type.clear();
  for (const GresSpec& item : *gres) {
    if (item.name != "gpu") {
      spec.other_gres.push_back(item);
      continue;
    }
    spec.gpus_per_node = static_cast<uint32_t>(std::min<uint64_t>(item.count, UINT32_MAX - 1));
    spec.gpu_type = item.type;
  }
  return OkStatus();
}

// Switches=count[@max-time].
Status SetSwitches(std::string_view value, JobSpec& spec) {
  size_t at = value.find('@');
  auto count = Count("Switches", value.substr(0, at), 0);
  if (!count) return std::move(count).take_error();
  spec.switches = *count;
  if (at != std::string_view::npos) {
    auto wait = ParseDuration(value.substr(at + 1));
    if (!wait) return Invalid("Switches", value);
    spec.switch_wait_seconds = *wait;
  }
  return OkStatus();
}

Status SetBool(std::string_view what, std::string_view value, bool& out) {
  std::string lower = ToLower(value);
  if (lower == "1" || lower == "yes") {
    out = true;
  } else if (lower == "0" || lower == "no") {
    out = false;
  } else {
    return Invalid(what, value);
  }
  return OkStatus();
}

Status SetNodeList(std::string_view what, std::string_view value, std::vector<std::string>& out) {
  auto hosts = Hosts(what, value);
  if (!hosts) return std::move(hosts).take_error();
  out = std::move(*hosts);
  return OkStatus();
}

Status SetBegin(std::string_view what, std::string_view value, int64_t now, JobSpec& spec) {
  auto time = ParseSlurmTime(value, now);
  if (!time) return Invalid(what, value);
  spec.begin_time = *time;
  return OkStatus();
}

Status SetDependency(std::string_view value, JobSpec& spec) {
  auto dependency =
      value.empty() ? Result<DependencySpec>(DependencySpec{}) : ParseDependency(value);
  if (!dependency) return MakeError("Job dependency problem");
  spec.dependency = std::move(*dependency);
  return OkStatus();
}

Status SetTimeMin(std::string_view value, JobSpec& spec) {
  auto limit = ParseDuration(value);
  if (!limit) return Invalid("TimeMin", value);
  spec.time_min_seconds = *limit;
  return OkStatus();
}

Status SetOverSubscribe(std::string_view value, JobSpec& spec) {
  bool share = false;
  if (Status ok = SetBool("OverSubscribe", value, share); !ok) return ok;
  spec.exclusive = !share;
  spec.oversubscribe = share;
  return OkStatus();
}

// The form here; the controller checks the names and counts against slurm.conf's Licenses=
// (a request the cluster cannot grant is refused there with the same words).
Status SetLicenses(std::string_view value, JobSpec& spec) {
  if (!ParseLicenses(value)) return MakeError("Invalid license specification");
  spec.licenses = std::string(value);
  return OkStatus();
}

Status SetDeadline(std::string_view value, int64_t now, JobSpec& spec) {
  auto time = ParseSlurmTime(value, now);
  if (!time) return Invalid("Deadline", value);
  if (*time <= now)
    return MakeError(fmt::format("Invalid Deadline value: {} (it must be later than now)", value));
  spec.deadline = *time;
  return OkStatus();
}

Status SetMailType(std::string_view value, JobSpec& spec) {
  auto types = ParseMailTypes(value);
  if (!types) return Invalid("MailType", value);
  spec.mail_type = *types ? MailTypeText(*types) : "";
  return OkStatus();
}

// Empty: the controller names the job's user (at MailDomain), as at submission.
Status SetMailUser(std::string_view value, JobSpec& spec) {
  if (!value.empty() && !IsSafeMailUser(value)) return Invalid("MailUser", value);
  spec.mail_user = std::string(value);
  return OkStatus();
}

Status SetTmpDisk(std::string_view value, JobSpec& spec) {
  auto mb = ParseMemoryMB(value);
  if (!mb) return Invalid("MinTmpDiskNode", value);
  spec.min_tmp_disk_mb = *mb;
  return OkStatus();
}

// SiteFactor=[+-]N within Slurm's +/-2147483645.
Status SetSiteFactor(std::string_view value, JobSpec& spec) {
  std::string_view digits = value;
  int64_t sign = digits.starts_with('-') ? -1 : 1;
  if (digits.starts_with('-') || digits.starts_with('+')) digits.remove_prefix(1);
  auto number = ParseInt64(digits);
  if (!number || *number < 0 || *number > 2147483645) return Invalid("SiteFactor", value);
  spec.site_factor = static_cast<int32_t>(sign * *number);
  return OkStatus();
}

// Keys of features Drover does not have, taken as Slurm takes them without the feature: the
// value is checked and nothing changes (docs/cli.md says so for each).
Status CheckDelayBoot(std::string_view value) {
  if (!ParseDuration(value)) return Invalid("DelayBoot", value);
  return OkStatus();
}

// Each parser gets the key as Slurm spells it (for its message), the value and the clock.
constexpr Key kKeys[] = {
    {"Account", JobField::kAccount, true,
     [](auto, auto v, auto, JobSpec& s) { return s.account = v, OkStatus(); }},
    {"ArrayTaskThrottle", JobField::kArrayTaskThrottle, false,
     [](auto k, auto v, auto, JobSpec& s) { return SetCount(k, v, 0, s.array_max_running); }},
    {"Comment", JobField::kComment, false,
     [](auto, auto v, auto, JobSpec& s) { return s.comment = v, OkStatus(); }},
    {"CpusPerTask", JobField::kCpusPerTask, true,
     [](auto k, auto v, auto, JobSpec& s) { return SetCount(k, v, 1, s.cpus_per_task); }},
    {"Dependency", JobField::kDependency, true,
     [](auto, auto v, auto, JobSpec& s) { return SetDependency(v, s); }},
    {"EligibleTime", JobField::kBeginTime, true, SetBegin},
    {"StartTime", JobField::kBeginTime, true, SetBegin},
    {"ExcNodeList", JobField::kExclude, true,
     [](auto k, auto v, auto, JobSpec& s) { return SetNodeList(k, v, s.exclude); }},
    {"Features", JobField::kFeatures, true,
     [](auto, auto v, auto, JobSpec& s) { return s.constraint = v, OkStatus(); }},
    {"Gres", JobField::kGres, true, [](auto, auto v, auto, JobSpec& s) { return SetGres(v, s); }},
    {"TresPerNode", JobField::kGres, true,
     [](auto, auto v, auto, JobSpec& s) { return SetGres(v, s); }},
    {"Licenses", JobField::kLicenses, true,
     [](auto, auto v, auto, JobSpec& s) { return SetLicenses(v, s); }},
    {"MinMemoryCPU", JobField::kMemPerCpu, true,
     [](auto k, auto v, auto, JobSpec& s) { return SetMemory(k, v, s, true); }},
    {"MinMemoryNode", JobField::kMemPerNode, true,
     [](auto k, auto v, auto, JobSpec& s) { return SetMemory(k, v, s, false); }},
    {"NodeList", JobField::kNodeList, true,
     [](auto k, auto v, auto, JobSpec& s) { return SetNodeList(k, v, s.nodelist); }},
    {"ReqNodeList", JobField::kNodeList, true,
     [](auto k, auto v, auto, JobSpec& s) { return SetNodeList(k, v, s.nodelist); }},
    {"NumNodes", JobField::kNumNodes, true,
     [](auto, auto v, auto, JobSpec& s) { return SetNodes(v, s); }},
    {"ReqNodes", JobField::kNumNodes, true,
     [](auto, auto v, auto, JobSpec& s) { return SetNodes(v, s); }},
    {"NumTasks", JobField::kNumTasks, true,
     [](auto k, auto v, auto, JobSpec& s) { return SetCount(k, v, 1, s.ntasks); }},
    {"ReqProcs", JobField::kNumTasks, true,
     [](auto k, auto v, auto, JobSpec& s) { return SetCount(k, v, 1, s.ntasks); }},
    {"OverSubscribe", JobField::kOverSubscribe, true,
     [](auto, auto v, auto, JobSpec& s) { return SetOverSubscribe(v, s); }},
    {"Shared", JobField::kOverSubscribe, true,
     [](auto, auto v, auto, JobSpec& s) { return SetOverSubscribe(v, s); }},
    {"Requeue", JobField::kRequeue, false,
     [](auto k, auto v, auto, JobSpec& s) { return SetBool(k, v, s.requeue); }},
    {"ReservationName", JobField::kReservation, true,
     [](auto, auto v, auto, JobSpec& s) { return s.reservation = v, OkStatus(); }},
    {"StdErr", JobField::kStderr, true,
     [](auto, auto v, auto, JobSpec& s) { return s.stderr_path = v, OkStatus(); }},
    {"StdIn", JobField::kStdin, true,
     [](auto, auto v, auto, JobSpec& s) { return s.stdin_path = v, OkStatus(); }},
    {"StdOut", JobField::kStdout, true,
     [](auto, auto v, auto, JobSpec& s) { return s.stdout_path = v, OkStatus(); }},
    {"Switches", JobField::kSwitches, true,
     [](auto, auto v, auto, JobSpec& s) { return SetSwitches(v, s); }},
    {"wait-for-switch", JobField::kSwitchWait, true,
     [](auto k, auto v, auto, JobSpec& s) {
       uint32_t seconds = 0;
       if (Status ok = SetCount(k, v, 0, seconds); !ok) return ok;
       s.switch_wait_seconds = seconds;
       return OkStatus();
     }},
    {"TasksPerNode", JobField::kTasksPerNode, true,
     [](auto k, auto v, auto, JobSpec& s) { return SetCount(k, v, 1, s.ntasks_per_node); }},
    {"TimeMin", JobField::kTimeMin, true,
     [](auto, auto v, auto, JobSpec& s) { return SetTimeMin(v, s); }},
    {"WorkDir", JobField::kWorkDir, true,
     [](auto, auto v, auto, JobSpec& s) { return s.work_dir = v, OkStatus(); }},
    {"AdminComment", JobField::kAdminComment, false,
     [](auto, auto v, auto, JobSpec& s) { return s.admin_comment = v, OkStatus(); }},
    {"Contiguous", JobField::kContiguous, true,
     [](auto k, auto v, auto, JobSpec& s) { return SetBool(k, v, s.contiguous); }},
    {"Deadline", JobField::kDeadline, true,
     [](auto, auto v, auto now, JobSpec& s) { return SetDeadline(v, now, s); }},
    {"MailType", JobField::kMailType, false,
     [](auto, auto v, auto, JobSpec& s) { return SetMailType(v, s); }},
    {"MailUser", JobField::kMailUser, false,
     [](auto, auto v, auto, JobSpec& s) { return SetMailUser(v, s); }},
    {"MinCPUsNode", JobField::kMinCpusNode, true,
     [](auto k, auto v, auto, JobSpec& s) { return SetCount(k, v, 0, s.min_cpus_per_node); }},
    {"MinTmpDiskNode", JobField::kMinTmpDisk, true,
     [](auto, auto v, auto, JobSpec& s) { return SetTmpDisk(v, s); }},
    {"Prefer", JobField::kPrefer, true,
     [](auto, auto v, auto, JobSpec& s) { return s.prefer = v, OkStatus(); }},
    {"Priority", JobField::kPriority, true,
     [](auto k, auto v, auto, JobSpec& s) { return SetCount(k, v, 0, s.priority); }},
    {"ReqSockets", JobField::kReqSockets, true,
     [](auto k, auto v, auto, JobSpec& s) { return SetCount(k, v, 0, s.min_sockets); }},
    {"ReqCores", JobField::kReqCores, true,
     [](auto k, auto v, auto, JobSpec& s) { return SetCount(k, v, 0, s.min_cores_per_socket); }},
    {"ReqThreads", JobField::kReqThreads, true,
     [](auto k, auto v, auto, JobSpec& s) { return SetCount(k, v, 0, s.min_threads_per_core); }},
    {"SiteFactor", JobField::kSiteFactor, false,
     [](auto, auto v, auto, JobSpec& s) { return SetSiteFactor(v, s); }},
    {"BurstBuffer", JobField::kNoEffect, false, [](auto, auto, auto, JobSpec&) { return OkStatus(); }},
    {"DelayBoot", JobField::kNoEffect, false,
     [](auto, auto v, auto, JobSpec&) { return CheckDelayBoot(v); }},
    {"Reboot", JobField::kNoEffect, false,
     [](auto k, auto v, auto, JobSpec&) {
       bool ignored = false;
       return SetBool(k, v, ignored);
     }},
    {"WCKey", JobField::kNoEffect, false, [](auto, auto, auto, JobSpec&) { return OkStatus(); }},
};

// Slurm's "Only the Slurm administrator or root can change this parameter" keys.
bool OperatorOnly(JobField field) {
  return field == JobField::kAdminComment || field == JobField::kContiguous ||
         field == JobField::kDeadline || field == JobField::kMinTmpDisk ||
         field == JobField::kSiteFactor;
}

const Key* Find(std::string_view key) {
  for (const Key& entry : kKeys)
    if (EqualsIgnoreCase(entry.name, key)) return &entry;
  return nullptr;
}

const Key* Find(JobField field) {
  for (const Key& entry : kKeys)
    if (entry.field == field) return &entry;
  return nullptr;
}

// Copies one field's value from `from` into `to`.
void Copy(JobField field, const JobSpec& from, JobSpec& to) {
  switch (field) {
    case JobField::kAccount:
      to.account = from.account;
      break;
    case JobField::kArrayTaskThrottle:
      to.array_max_running = from.array_max_running;
      break;
    case JobField::kComment:
      to.comment = from.comment;
      break;
    case JobField::kCpusPerTask:
      to.cpus_per_task = from.cpus_per_task;
      break;
    case JobField::kDependency:
      to.dependency = from.dependency;
      break;
    case JobField::kBeginTime:
      to.begin_time = from.begin_time;
      break;
    case JobField::kExclude:
      to.exclude = from.exclude;
      break;
    case JobField::kFeatures:
      to.constraint = from.constraint;
      break;
    case JobField::kGres:
      to.other_gres = from.other_gres;
      to.gpus_per_node = from.gpus_per_node;
      to.gpu_type = from.gpu_type;
      break;
    case JobField::kMemPerCpu:
    case JobField::kMemPerNode:
      to.mem_per_cpu_mb = from.mem_per_cpu_mb;
      to.mem_per_node_mb = from.mem_per_node_mb;
      to.mem_per_gpu_mb = from.mem_per_gpu_mb;
      break;
    case JobField::kNodeList:
      to.nodelist = from.nodelist;
      break;
    case JobField::kNumNodes:
      to.min_nodes = from.min_nodes;
      to.max_nodes = from.max_nodes;
      break;
    case JobField::kNumTasks:
      to.ntasks = from.ntasks;
      break;
    case JobField::kOverSubscribe:
      to.exclusive = from.exclusive;
      to.oversubscribe = from.oversubscribe;
      break;
    case JobField::kRequeue:
      to.requeue = from.requeue;
      break;
    case JobField::kReservation:
      to.reservation = from.reservation;
      break;
    case JobField::kStderr:
      to.stderr_path = from.stderr_path;
      break;
    case JobField::kStdin:
      to.stdin_path = from.stdin_path;
      break;
    case JobField::kStdout:
      to.stdout_path = from.stdout_path;
      break;
    case JobField::kSwitches:
      to.switches = from.switches;
      to.switch_wait_seconds = from.switch_wait_seconds;
      break;
    case JobField::kTasksPerNode:
      to.ntasks_per_node = from.ntasks_per_node;
      break;
    case JobField::kTimeMin:
      to.time_min_seconds = from.time_min_seconds;
      break;
    case JobField::kWorkDir:
      to.work_dir = from.work_dir;
      break;
    case JobField::kLicenses:
      to.licenses = from.licenses;
      break;
    case JobField::kAdminComment:
      to.admin_comment = from.admin_comment;
      break;
    case JobField::kContiguous:
      to.contiguous = from.contiguous;
      break;
    case JobField::kDeadline:
      to.deadline = from.deadline;
      break;
    case JobField::kMailType:
      to.mail_type = from.mail_type;
      break;
    case JobField::kMailUser:
      to.mail_user = from.mail_user;
      break;
    case JobField::kMinCpusNode:
      to.min_cpus_per_node = from.min_cpus_per_node;
      break;
    case JobField::kMinTmpDisk:
      to.min_tmp_disk_mb = from.min_tmp_disk_mb;
      break;
    case JobField::kPrefer:
      to.prefer = from.prefer;
      break;
    case JobField::kPriority:
      to.priority = from.priority;
      break;
    case JobField::kReqSockets:
      to.min_sockets = from.min_sockets;
      break;
    case JobField::kReqCores:
      to.min_cores_per_socket = from.min_cores_per_socket;
      break;
    case JobField::kReqThreads:
      to.min_threads_per_core = from.min_threads_per_core;
      break;
    case JobField::kSiteFactor:
      to.site_factor = from.site_factor;
      break;
    case JobField::kSwitchWait:
      to.switch_wait_seconds = from.switch_wait_seconds;
      break;
    case JobField::kNoEffect:
      break;
  }
}

}  // namespace

bool IsJobUpdateKey(std::string_view key) {
  return Find(key) != nullptr;
}

Status ParseJobUpdateKey(std::string_view key, std::string_view value, int64_t now,
                         JobUpdate& update) {
  const Key* entry = Find(key);
  if (!entry) return MakeError(fmt::format("Update of this parameter is not supported: {}", key));
  if (Status parsed = entry->parse(entry->name, value, now, update.values); !parsed) return parsed;
  update.fields.push_back(entry->field);
  return OkStatus();
}

bool Updates(const JobUpdate& update, JobField field) {
  return std::find(update.fields.begin(), update.fields.end(), field) != update.fields.end();
}

std::string ApplyJobUpdate(const JobUpdate& update, bool pending, bool by_operator, JobSpec& spec) {
  for (JobField field : update.fields) {
    if (!by_operator && OperatorOnly(field)) return "Access/permission denied";
    if (!pending && Find(field)->pending_only) return "Job is no longer pending execution";
    Copy(field, update.values, spec);
  }
  return "";
}

bool IsSafeMailUser(std::string_view user) {
  return !user.empty() && user.size() <= 256 && user[0] != '-' &&
         user.find_first_not_of(
             "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
             "0123456789._%+@,-") == std::string_view::npos;
}

}  // namespace drover
