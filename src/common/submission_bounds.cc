// See submission_bounds.h. Each check is a few comparisons over sizes the message already holds;
// the first failure is the answer.
#include "common/submission_bounds.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "common/duration.h"

namespace drover {
namespace {

Status TooLong(std::string_view field, size_t size, size_t limit) {
  return MakeError(fmt::format("{} is {} bytes; the limit is {}", field, size, limit));
}

// A list's entry count and total bytes (entries and their separators).
Status CheckList(std::string_view field, std::span<const std::string> list, size_t max_entries,
                 size_t max_bytes) {
  if (list.size() > max_entries)
    return MakeError(
        fmt::format("{} has {} entries; the limit is {}", field, list.size(), max_entries));
  size_t bytes = 0;
  for (const std::string& entry : list) bytes += entry.size() + 1;
  if (bytes > max_bytes) return TooLong(field, bytes, max_bytes);
  return OkStatus();
}

Status CheckStrings(const JobSpec& spec) {
  struct Field {
    std::string_view name, value;
    size_t limit;
  };
  const Field fields[] = {
      {"--job-name", spec.name, kMaxNameLength},
      {"--account", spec.account, kMaxNameLength},
      {"--qos", spec.qos, kMaxNameLength},
      {"the user name", spec.user, kMaxNameLength},
      {"--comment", spec.comment, kMaxNameLength},
      {"--constraint", spec.constraint, kMaxNameLength},
      {"--reservation", spec.reservation, kMaxNameLength},
      {"the GPU type", spec.gpu_type, kMaxNameLength},
      {"--chdir", spec.work_dir, kMaxPathLength},
      {"--output", spec.stdout_path, kMaxPathLength},
      {"--error", spec.stderr_path, kMaxPathLength},
      {"--input", spec.stdin_path, kMaxPathLength},
  };
  for (const Field& field : fields)
    if (Status s = CheckLength(field.name, field.value, field.limit); !s) return s;
  for (const GresSpec& gres : spec.other_gres)
    if (Status s = CheckLength("--gres", gres.name + ":" + gres.type, kMaxNameLength); !s) return s;
  return OkStatus();
}

Status CheckLists(const JobSpec& spec) {
  struct List {
    std::string_view name;
    const std::vector<std::string>& entries;
    size_t max_entries, max_bytes;
  };
  const List lists[] = {
      {"--partition", spec.partitions, kMaxNameLength, kMaxNameLength},
      {"--nodelist", spec.nodelist, kMaxListEntries, kMaxNodeListLength},
      {"--exclude", spec.exclude, kMaxListEntries, kMaxNodeListLength},
      {"the environment", spec.environment, kMaxListEntries, kMaxListBytes},
      {"the script's arguments", spec.script_args, kMaxListEntries, kMaxListBytes},
  };
  for (const List& list : lists)
    if (Status s = CheckList(list.name, list.entries, list.max_entries, list.max_bytes); !s)
      return s;
  if (spec.dependency.terms.size() > kMaxDependencies)
    return MakeError(fmt::format("--dependency has {} jobs; the limit is {}",
                                 spec.dependency.terms.size(), kMaxDependencies));
  if (spec.other_gres.size() > kMaxGres)
    return MakeError(
        fmt::format("--gres has {} entries; the limit is {}", spec.other_gres.size(), kMaxGres));
  return OkStatus();
}

Status CheckRange(std::string_view field, int64_t value, int64_t min, int64_t max) {
  if (value >= min && value <= max) return OkStatus();
  return MakeError(fmt::format("{}={} is out of range (from {} to {})", field, value, min, max));
}

Status CheckTimes(const JobSpec& spec) {
  if (Status s = CheckTimeLimit("--time", spec.time_limit_seconds); !s) return s;
  if (Status s = CheckTimeLimit("--time-min", spec.time_min_seconds); !s) return s;
  if (Status s = CheckRange("--begin (seconds since 1970)", spec.begin_time, 0, kMaxTimestamp); !s)
    return s;
  if (Status s = CheckRange("--signal's time", spec.signal_seconds, 0, kMaxSignalSeconds); !s)
    return s;
  if (Status s = CheckRange("--signal", spec.signal_number, 0, 64); !s) return s;
  if (spec.switch_wait_seconds != -1)
    if (Status s =
            CheckRange("--switches' wait", spec.switch_wait_seconds, 0, kMaxTimeLimitSeconds);
        !s)
      return s;
  if (Status s = CheckRange("--nice", spec.nice, -kMaxNice, kMaxNice); !s) return s;
  for (const DependencyTerm& term : spec.dependency.terms)
    if (Status s = CheckRange("--dependency's +time (seconds)", term.delay_seconds, 0,
                              kMaxTimeLimitSeconds);
        !s)
      return s;
  return OkStatus();
}

// a * b within `max`, without overflowing on the way.
bool ProductFits(uint64_t a, uint64_t b, uint64_t max) {
  return a == 0 || b <= max / a;
}

Status Overflow(std::string_view what, uint64_t a, std::string_view a_name, uint64_t b,
                std::string_view b_name, uint64_t max) {
  return MakeError(
      fmt::format("{}={} with {}={} asks for more than {} {}", a_name, a, b_name, b, max, what));
}

Status CheckCounts(const JobSpec& spec) {
  constexpr uint64_t k32 = std::numeric_limits<uint32_t>::max();
  constexpr uint64_t k64 = std::numeric_limits<uint64_t>::max();
  if (!ProductFits(spec.ntasks, spec.cpus_per_task, k32))
    return Overflow("CPUs", spec.ntasks, "--ntasks", spec.cpus_per_task, "--cpus-per-task", k32);
  if (!ProductFits(spec.ntasks_per_node, spec.min_nodes, k32))
    return Overflow("tasks", spec.ntasks_per_node, "--ntasks-per-node", spec.min_nodes, "--nodes",
                    k32);
  if (!ProductFits(spec.gpus_per_task, spec.ntasks, k32))
    return Overflow("GPUs", spec.gpus_per_task, "--gpus-per-task", spec.ntasks, "--ntasks", k32);
  if (!ProductFits(spec.gpus_per_node, spec.min_nodes, k32))
    return Overflow("GPUs", spec.gpus_per_node, "--gpus-per-node", spec.min_nodes, "--nodes", k32);
  if (!ProductFits(spec.cpus_per_gpu, spec.gpus, k32))
    return Overflow("CPUs", spec.cpus_per_gpu, "--cpus-per-gpu", spec.gpus, "--gpus", k32);
  uint64_t cpus = uint64_t{spec.ntasks} * spec.cpus_per_task;
  if (!ProductFits(spec.mem_per_cpu_mb, cpus, k64))
    return Overflow("MB of memory", spec.mem_per_cpu_mb, "--mem-per-cpu", cpus, "CPUs", k64);
  uint64_t gpus = std::max<uint64_t>(spec.gpus, uint64_t{spec.gpus_per_node} * spec.min_nodes);
  if (!ProductFits(spec.mem_per_gpu_mb, gpus, k64))
    return Overflow("MB of memory", spec.mem_per_gpu_mb, "--mem-per-gpu", gpus, "GPUs", k64);
  if (!ProductFits(spec.mem_per_node_mb, spec.min_nodes, k64))
    return Overflow("MB of memory", spec.mem_per_node_mb, "--mem", spec.min_nodes, "--nodes", k64);
  return OkStatus();
}

}  // namespace

Status CheckLength(std::string_view field, std::string_view value, size_t limit) {
  return value.size() > limit ? TooLong(field, value.size(), limit) : OkStatus();
}

Status CheckTimeLimit(std::string_view field, int64_t seconds) {
  if (seconds == kUnlimitedSeconds || (seconds >= 0 && seconds <= kMaxTimeLimitSeconds))
    return OkStatus();
  if (seconds < 0)
    return MakeError(fmt::format("Invalid time limit: {}={} seconds is negative", field, seconds));
  return MakeError(
      fmt::format("Invalid time limit: {}={} seconds is more than {} minutes (use "
                  "UNLIMITED for no limit)",
                  field, seconds, kMaxTimeLimitSeconds / 60));
}

Status CheckSubmission(const JobSpec& spec, std::string_view script,
                       const ClusterSettings& settings) {
  uint64_t max_script = static_cast<uint64_t>(settings.scheduler_params.max_script_size);
  if (script.size() > max_script)
    return MakeError(fmt::format(
        "the batch script is {} bytes; the limit is max_script_size={} (SchedulerParameters)",
        script.size(), max_script));
  if (Status s = CheckStrings(spec); !s) return s;
  if (Status s = CheckLists(spec); !s) return s;
  if (Status s = CheckTimes(spec); !s) return s;
  return CheckCounts(spec);
}

}  // namespace drover
