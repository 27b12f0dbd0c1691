// squeue's table from job records (see formats.h): Slurm 22.05's -o fields, its default, -l and
// --start formats, folding of pending array tasks, its state filter and its sort order.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "cli/formats/formats.h"
#include "common/hostlist.h"
#include "common/text.h"

namespace drover::cli {
namespace {

using columns::Pad;

constexpr uint32_t kNoTask = UINT32_MAX;
constexpr std::string_view kDefaultFormat = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
constexpr std::string_view kLongFormat = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R";
constexpr std::string_view kStartFormat = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R";

struct QueueRow {
  const v1::Job* job;
  std::vector<uint32_t> folded_tasks;  // pending tasks shown as one line ("123_[0-9]")
  std::string reason;
};

struct QueueContext {
  const SqueueOptions& options;
  int64_t now;
};

struct Cell {
  std::string text;
  bool cut = true;  // cut to the column width when right-justified
};

std::string_view StateCode(std::string_view state) {
  static constexpr std::pair<std::string_view, std::string_view> kCodes[] = {
      {"PENDING", "PD"},   {"RUNNING", "R"},    {"SUSPENDED", "S"},       {"COMPLETING", "CG"},
      {"COMPLETED", "CD"}, {"FAILED", "F"},     {"CANCELLED", "CA"},      {"TIMEOUT", "TO"},
      {"NODE_FAIL", "NF"}, {"PREEMPTED", "PR"}, {"OUT_OF_MEMORY", "OOM"}, {"BOOT_FAIL", "BF"},
      {"DEADLINE", "DL"},  {"REQUEUED", "RQ"},  {"CONFIGURING", "CF"}};
  for (const auto& [name, code] : kCodes)
    if (name == state) return code;
  return state;
}

bool IsArrayTask(const v1::Job& job) {
  return job.spec().array_job_id() != 0 && job.spec().array_task_id() != kNoTask;
}
bool IsPending(const v1::Job& job) {
  return job.state() == "PENDING";
}

std::string JobIdText(const QueueRow& row) {
  const v1::JobSpec& spec = row.job->spec();
  if (!row.folded_tasks.empty()) {
    std::string tasks = columns::ArrayRanges(row.folded_tasks);
    if (spec.array_max_running()) tasks += fmt::format("%{}", spec.array_max_running());
    return fmt::format("{}_[{}]", spec.array_job_id(), tasks);
  }
  if (IsArrayTask(*row.job)) return fmt::format("{}_{}", spec.array_job_id(), spec.array_task_id());
  return std::to_string(spec.job_id());
}

const v1::Partition* DefaultPartition(const QueueContext& ctx) {
  for (const v1::Partition& partition : ctx.options.partitions)
    if (partition.is_default()) return &partition;
  return nullptr;
}

std::string PartitionText(const v1::Job& job, const QueueContext& ctx) {
  if (!job.partition_name().empty()) return job.partition_name();
  if (job.spec().partitions_size() > 0)
    return Join({job.spec().partitions().begin(), job.spec().partitions().end()}, ",");
  const v1::Partition* fallback = DefaultPartition(ctx);
  return fallback ? fallback->name() : "";
}

// The limit in seconds (INT64_MAX: unlimited); nullopt when neither job nor partition says.
std::optional<int64_t> TimeLimit(const v1::Job& job, const QueueContext& ctx) {
  int64_t limit =
      job.time_limit_seconds() ? job.time_limit_seconds() : job.spec().time_limit_seconds();
  if (limit) return columns::IsUnlimited(limit) ? INT64_MAX : limit;
  std::string name = PartitionText(job, ctx);
  for (const v1::Partition& partition : ctx.options.partitions) {
    if (partition.name() != name.substr(0, name.find(','))) continue;
    int64_t part = partition.default_time_seconds() >= 0 ? partition.default_time_seconds()
                                                         : partition.max_time_seconds();
    return columns::IsUnlimited(part) ? INT64_MAX : part;
  }
  return std::nullopt;
}

int64_t TimeUsed(const v1::Job& job, int64_t now) {
  if (job.start_time() == 0 || IsPending(job)) return 0;
  int64_t end = job.end_time() ? job.end_time() : now;
  if (job.state() == "RUNNING") end = now;
  if (job.state() == "SUSPENDED") end = job.suspend_time();
  return std::max<int64_t>(0, end - job.start_time() - job.suspended_seconds());
}

// Slurm's _print_secs: negative or over a year prints INVALID.
std::string Seconds(int64_t secs) {
  if (secs < 0 || secs > 365 * 86400) return "INVALID";
  return columns::ElapsedText(secs);
}

const v1::PlannedStart* Planned(const v1::Job& job, const QueueContext& ctx) {
  auto it = ctx.options.planned.find(job.spec().job_id());
  return it == ctx.options.planned.end() ? nullptr : &it->second;
}

// A waiting job's start is the plan's, else its --begin; N/A when neither says.
int64_t StartTime(const v1::Job& job, const QueueContext& ctx) {
  if (job.start_time() || !IsPending(job)) return job.start_time();
  if (const v1::PlannedStart* plan = Planned(job, ctx)) return plan->start_time();
  return job.spec().begin_time();
}

int64_t Priority(const v1::Job& job, const QueueContext& ctx) {
  auto it = ctx.options.priorities.find(job.spec().job_id());
  if (it != ctx.options.priorities.end()) return it->second;
  if (job.spec().hold() != v1::JobSpec::NONE) return 0;
  return INT32_MAX - static_cast<int64_t>(job.spec().job_id());  // older ranks higher
}

int64_t PrintedPriority(const v1::Job& job, const QueueContext& ctx) {
  auto it = ctx.options.priorities.find(job.spec().job_id());
  return it == ctx.options.priorities.end() ? 0 : it->second;
}

uint32_t NodeCount(const v1::Job& job) {
  if (job.allocation_size()) return job.allocation_size();
  return std::max<uint32_t>(job.spec().min_nodes(), 1);
}

uint32_t CpuCount(const v1::Job& job) {
  if (!job.allocation_size()) return columns::RequestedCpus(job.spec());
  uint32_t cpus = 0;
  for (const v1::NodeAllocation& node : job.allocation())
    cpus += columns::AllocatedCpus(node, nullptr);
  return cpus;
}

std::string OrNull(const std::string& text) {
  return text.empty() ? "(null)" : text;
}

std::string TimeText(int64_t time) {
  return time ? columns::IsoTime(time) : "N/A";
}

std::string LimitText(std::optional<int64_t> limit, int64_t used) {
  if (!limit) return "NOT_SET";
  if (*limit == INT64_MAX) return "UNLIMITED";
  return Seconds(*limit - used);
}

std::string DependencyText(const v1::Dependency& dependency) {
  static constexpr std::string_view kTypes[] = {"after",      "afterany",  "afterok",
                                                "afternotok", "aftercorr", "singleton"};
  std::vector<std::string> terms;
  for (const auto& term : dependency.terms()) {
    std::string_view type = kTypes[std::clamp<int>(term.type(), 0, 5)];
    terms.push_back(term.type() == v1::Dependency::SINGLETON
                        ? std::string(type)
                        : fmt::format("{}:{}", type, term.job_id()));
  }
  return OrNull(Join(terms, dependency.any() ? "?" : ","));
}

std::string ListText(const google::protobuf::RepeatedPtrField<std::string>& names) {
  return CompressHostlist(std::vector<std::string>(names.begin(), names.end()));
}

Cell NodesOrReason(const QueueRow& row) {
  const std::string& state = row.job->state();
  if (state != "COMPLETING" && (state == "PENDING" || state == "TIMEOUT" || state == "FAILED"))
    return {"(" + row.reason + ")"};
  return {row.job->node_list(), false};
}

// Every letter squeue knows, with its header; fields the records do not hold print Slurm's text
// for "unset".
// clang-format off
constexpr std::pair<char, std::string_view> kHeaders[] = {
    {'a', "ACCOUNT"}, {'A', "JOBID"}, {'b', "TRES_PER_NODE"}, {'B', "EXEC_HOST"},
    {'c', "MIN_CPUS"}, {'C', "CPUS"}, {'d', "MIN_TMP_DISK"}, {'D', "NODES"}, {'e', "END_TIME"},
    {'E', "DEPENDENCY"}, {'f', "FEATURES"}, {'F', "ARRAY_JOB_ID"}, {'g', "GROUP"}, {'G', "GROUP"},
    {'h', "OVER_SUBSCRIBE"}, {'H', "SOCKETS_PER_NODE"}, {'i', "JOBID"}, {'I', "CORES_PER_SOCKET"},
    {'j', "NAME"}, {'J', "THREADS_PER_CORE"}, {'k', "COMMENT"}, {'K', "ARRAY_TASK_ID"},
    {'l', "TIME_LIMIT"}, {'L', "TIME_LEFT"}, {'m', "MIN_MEMORY"}, {'M', "TIME"},
    {'n', "REQ_NODES"}, {'N', "NODELIST"}, {'o', "COMMAND"}, {'O', "CONTIGUOUS"},
    {'p', "PRIORITY"}, {'P', "PARTITION"}, {'q', "QOS"}, {'Q', "PRIORITY"}, {'r', "REASON"},
    {'R', "NODELIST(REASON)"}, {'s', "SELECT_JOBINFO"}, {'S', "START_TIME"}, {'t', "ST"},
    {'T', "STATE"}, {'u', "USER"}, {'U', "USER"}, {'v', "RESERVATION"}, {'V', "SUBMIT_TIME"},
    {'w', "WCKEY"}, {'W', "LICENSES"}, {'x', "EXC_NODES"}, {'X', "CORE_SPEC"}, {'y', "NICE"},
    {'Y', "SCHEDNODES"}, {'z', "S:C:T"}, {'Z', "WORK_DIR"},
};
// clang-format on

const std::string_view* FindHeader(char letter) {
  for (const auto& [known, header] : kHeaders)
    if (known == letter) return &header;
  return nullptr;
}

std::string ArrayTaskText(const QueueRow& row) {
  if (!row.folded_tasks.empty()) return columns::ArrayRanges(row.folded_tasks);
  if (!IsArrayTask(*row.job)) return "N/A";
  return std::to_string(row.job->spec().array_task_id());
}

std::string EndTimeText(const QueueRow& row, const QueueContext& ctx) {
  if (row.job->state() == "RUNNING" && TimeLimit(*row.job, ctx) == INT64_MAX) return "NONE";
  return TimeText(IsPending(*row.job) ? 0 : row.job->end_time());
}

std::string MemoryText(const v1::JobSpec& spec) {
  uint64_t mb = spec.mem_per_node_mb() ? spec.mem_per_node_mb() : spec.mem_per_cpu_mb();
  return mb ? fmt::format("{}M", mb) : "0";
}

std::string FirstNode(const v1::Job& job) {
  auto names = ExpandHostlist(job.node_list());
  return names && !names.value().empty() ? names.value().front() : "n/a";
}

Cell Value(char letter, const QueueRow& row, const QueueContext& ctx) {
  const v1::Job& job = *row.job;
  const v1::JobSpec& spec = job.spec();
  // clang-format off
  switch (letter) {
    case 'a': return {spec.account()};
    case 'A': return {std::to_string(spec.job_id())};
    case 'B': return {FirstNode(job)};
    case 'c': return {std::to_string(std::max<uint32_t>(spec.cpus_per_task(), 1))};
    case 'C': return {std::to_string(CpuCount(job))};
    case 'd': return {"0"};
    case 'D': return {std::to_string(NodeCount(job))};
    case 'e': return {EndTimeText(row, ctx)};
    case 'E': return {DependencyText(spec.dependency())};
    case 'f': return {OrNull(spec.constraint())};
    case 'F': return {std::to_string(spec.array_job_id() ? spec.array_job_id() : spec.job_id())};
    case 'g': case 'G': return {std::to_string(spec.gid())};
    case 'h': return {spec.exclusive() ? "NO" : "OK"};
    case 'H': case 'I': case 'J': return {"*"};
    case 'i': return {JobIdText(row)};
    case 'j': return {spec.name()};
    case 'k': return {OrNull(spec.comment())};
    case 'K': return {ArrayTaskText(row)};
    case 'l': return {LimitText(TimeLimit(job, ctx), 0), false};
    case 'L': return {LimitText(TimeLimit(job, ctx), TimeUsed(job, ctx.now)), false};
    case 'm': return {MemoryText(spec)};
    case 'M': return {Seconds(TimeUsed(job, ctx.now)), false};
    case 'n': return {ListText(spec.nodelist())};
    case 'N': return {job.node_list(), false};
    case 'O': return {"0"};
    case 'p': return {fmt::format("{:16.14f}", PrintedPriority(job, ctx) / 4294967295.0)};
    case 'P': return {PartitionText(job, ctx)};
    case 'q': return {spec.qos().empty() ? "normal" : spec.qos()};
    case 'Q': return {std::to_string(PrintedPriority(job, ctx))};
    case 'r': return {row.reason};
    case 'R': return NodesOrReason(row);
    case 'S': return {TimeText(StartTime(job, ctx))};
    case 't': return {std::string(StateCode(job.state()))};
    case 'T': return {job.state()};
    case 'u': return {spec.user().empty() ? std::to_string(spec.uid()) : spec.user()};
    case 'U': return {std::to_string(spec.uid())};
    case 'v': return {OrNull(spec.reservation())};
    case 'V': return {TimeText(spec.submit_time())};
    case 'x': return {ListText(spec.exclude())};
    case 'y': return {std::to_string(spec.nice())};
    case 'Y': {
      const v1::PlannedStart* plan = IsPending(job) ? Planned(job, ctx) : nullptr;
      return {plan && !plan->node_list().empty() ? plan->node_list() : "(null)", false};
    }
    case 'z': return {"*:*:*"};
    case 'Z': return {spec.work_dir()};
    case 'b': case 'X': return {"N/A"};
    default:
      return {"(null)"};  // o, s, w, W: not recorded
  }
  // clang-format on
}

bool StateSelected(const v1::Job& job, const SqueueOptions& options) {
  std::string_view state = job.state();
  if (options.states.empty()) {
    if (options.start) return state == "PENDING";
    return state == "PENDING" || state == "RUNNING" || state == "SUSPENDED" ||
           state == "COMPLETING" || state == "CONFIGURING";
  }
  for (const std::string& wanted : options.states) {
    if (EqualsIgnoreCase(wanted, "all") || EqualsIgnoreCase(wanted, state) ||
        EqualsIgnoreCase(wanted, StateCode(state)))
      return true;
  }
  return false;
}

// Pending tasks of one array with the same name and partition share a line, as squeue's
// _combine_pending_array_tasks does; their differing reasons are joined with ','.
std::vector<QueueRow> FoldPendingTasks(std::vector<QueueRow> rows, const QueueContext& ctx) {
  std::vector<QueueRow> out;
  std::map<std::tuple<uint64_t, std::string, std::string>, size_t> heads;  // -> index in out
  for (QueueRow& row : rows) {
    const v1::Job& job = *row.job;
    if (!ctx.options.array_unfold && IsPending(job) && IsArrayTask(job)) {
      auto [it, first] = heads.try_emplace(
          {job.spec().array_job_id(), job.spec().name(), PartitionText(job, ctx)}, out.size());
      if (!first) {
        QueueRow& head = out[it->second];
        if (head.folded_tasks.empty())
          head.folded_tasks.push_back(head.job->spec().array_task_id());
        head.folded_tasks.push_back(job.spec().array_task_id());
        if (head.reason.find(row.reason) == std::string::npos) head.reason += "," + row.reason;
        continue;
      }
    }
    out.push_back(std::move(row));
  }
  return out;
}

int Compare(int64_t a, int64_t b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

// One -S key; 0 for letters this formatter does not sort by.
int CompareBy(char key, const QueueRow& a, const QueueRow& b, const QueueContext& ctx) {
  const v1::Job &x = *a.job, &y = *b.job;
  switch (key) {
    case 'i': {
      auto id = [](const v1::Job& j) {
        return IsArrayTask(j) ? j.spec().array_job_id() : j.spec().job_id();
      };
      int diff = Compare(id(x), id(y));
      return diff ? diff : Compare(x.spec().array_task_id(), y.spec().array_task_id());
    }
    case 'j':
      return x.spec().name().compare(y.spec().name());
    case 'u':
      return x.spec().user().compare(y.spec().user());
    case 'U':
      return Compare(x.spec().uid(), y.spec().uid());
    case 'P':
      return PartitionText(x, ctx).compare(PartitionText(y, ctx));
    case 't':
      return StateCode(x.state()).compare(StateCode(y.state()));
    case 'T':
      return x.state().compare(y.state());
    case 'p':
    case 'Q':
      return Compare(Priority(x, ctx), Priority(y, ctx));
    case 'M':
      return Compare(TimeUsed(x, ctx.now), TimeUsed(y, ctx.now));
    case 'D':
      return Compare(NodeCount(x), NodeCount(y));
    case 'C':
      return Compare(CpuCount(x), CpuCount(y));
    case 'V':
      return Compare(x.spec().submit_time(), y.spec().submit_time());
    case 'e':
      return Compare(x.end_time(), y.end_time());
    case 'l':
      return Compare(TimeLimit(x, ctx).value_or(0), TimeLimit(y, ctx).value_or(0));
    case 'S': {
      // squeue's _get_start_time: unknown starts last (22.05 printed held jobs after dated
      // ones), past starts of pending jobs count as now.
      auto start = [&](const v1::Job& j) {
        int64_t t = StartTime(j, ctx);
        if (t == 0) return INT64_MAX;
        return IsPending(j) && t < ctx.now ? ctx.now : t;
      };
      return Compare(start(x), start(y));
    }
    default:
      return 0;
  }
}

void SortRows(std::vector<QueueRow>& rows, const QueueContext& ctx) {
  auto sort_by = [&](char key, bool reverse) {
    std::stable_sort(rows.begin(), rows.end(), [&](const QueueRow& a, const QueueRow& b) {
      int diff = CompareBy(key, a, b, ctx);
      return reverse ? diff > 0 : diff < 0;
    });
  };
  sort_by('S', true);  // squeue sorts by start time (latest first) before its -S keys
  std::string spec = ctx.options.sort;
  if (spec.empty()) spec = ctx.options.start ? "S" : "P,t,-p";
  for (size_t i = spec.size(); i-- > 0;) {  // last key first, as Slurm does
    char key = spec[i];
    if (key == ',' || key == '+' || key == '-') continue;
    sort_by(key, i > 0 && spec[i - 1] == '-');
  }
}

std::string FormatLine(const columns::PercentFormat& format, const QueueRow* row,
                       const QueueContext& ctx) {
  std::string line = format.prefix;
  for (const columns::FieldSpec& field : format.fields) {
    const std::string_view* header = FindHeader(field.letter);
    if (!header) {  // squeue echoes an unknown field, '%' and all
      line += "%" + field.token;
      continue;
    }
    if (row) {
      Cell cell = Value(field.letter, *row, ctx);
      line += Pad(cell.text, field.width, field.right, cell.cut);
    } else {
      bool is_list = field.letter == 'N' || field.letter == 'R' || field.letter == 'Y';
      line += Pad(*header, field.width, field.right, !is_list);
    }
    line += field.suffix;
  }
  return line + "\n";
}

}  // namespace

std::string FormatSqueue(const std::vector<v1::Job>& jobs, const SqueueOptions& options,
                         int64_t now) {
  QueueContext ctx{options, now};
  std::string_view text = options.format;
  if (text.empty())
    text = options.start ? kStartFormat : options.long_format ? kLongFormat : kDefaultFormat;
  columns::PercentFormat format = columns::ParsePercentFormat(text);

  std::vector<QueueRow> rows;
  for (const v1::Job& job : jobs) {
    if (!StateSelected(job, options)) continue;
    rows.push_back({&job, {}, job.reason().empty() ? "None" : job.reason()});
  }
  rows = FoldPendingTasks(std::move(rows), ctx);
  SortRows(rows, ctx);

  std::string out;
  if (!options.no_header && options.long_format) out += columns::DateLine(now) + "\n";
  if (!options.no_header) out += FormatLine(format, nullptr, ctx);
  for (const QueueRow& row : rows) out += FormatLine(format, &row, ctx);
  return out;
}

std::vector<std::string> SqueueFormatErrors(std::string_view format) {
  std::vector<std::string> errors;
  for (const columns::FieldSpec& field : columns::ParsePercentFormat(format).fields)
    if (!FindHeader(field.letter))
      errors.push_back(fmt::format("Invalid job format specification: {}",
                                   field.letter ? std::string(1, field.letter) : ""));
  return errors;
}

}  // namespace drover::cli
