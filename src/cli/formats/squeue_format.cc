// squeue's table from job records (see formats.h): Slurm 22.05's -o fields, its default, -l and
// --start formats, folding of pending array tasks, its state filter and its sort order.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "cli/formats/formats.h"
#include "common/hostlist.h"
#include "common/licenses.h"
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
  // -P: the one partition this line is for, one of its job's (which outlives the rows); null
  // otherwise. A pointer, not a copy: every row would carry a second string for -P alone.
  const std::string* partition = nullptr;
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

// Slurm's convert_num_unit from MiB: exact multiples of 1024 go up a unit ("2G") unless
// --noconvert; 0 prints as "0".
std::string Megabytes(uint64_t mb, bool noconvert) {
  if (mb == 0) return "0";
  static constexpr std::string_view kUnits = "MGTP";
  size_t unit = 0;
  while (!noconvert && mb % 1024 == 0 && unit + 1 < kUnits.size()) {
    mb /= 1024;
    ++unit;
  }
  return fmt::format("{}{}", mb, kUnits[unit]);
}

std::string MemoryText(const v1::JobSpec& spec, bool noconvert) {
  uint64_t mb = spec.mem_per_node_mb() ? spec.mem_per_node_mb() : spec.mem_per_cpu_mb();
  return Megabytes(mb, noconvert);
}

// A GPU count as Slurm's TRES strings print it: "gres:gpu:2", "gres:gpu:a100:2".
std::string GpuTres(const v1::JobSpec& spec, uint64_t count) {
  if (!count) return "";
  return spec.gpu_type().empty() ? fmt::format("gres:gpu:{}", count)
                                 : fmt::format("gres:gpu:{}:{}", spec.gpu_type(), count);
}

// %b: the TRES per node a job asked for (--gres, --gpus-per-node); N/A when none.
std::string TresPerNode(const v1::JobSpec& spec) {
  std::vector<std::string> items;
  if (spec.gpus_per_node()) items.push_back(GpuTres(spec, spec.gpus_per_node()));
  for (const v1::Gres& gres : spec.other_gres())
    items.push_back(gres.type().empty()
                        ? fmt::format("gres:{}:{}", gres.name(), gres.count())
                        : fmt::format("gres:{}:{}:{}", gres.name(), gres.type(), gres.count()));
  return items.empty() ? "N/A" : Join(items, ",");
}

// %z: -B's sockets:cores:threads per node, "*" for each part not asked for.
std::string SocketsCoresThreads(const v1::JobSpec& spec) {
  auto part = [](uint32_t n) { return n ? std::to_string(n) : std::string("*"); };
  return part(spec.min_sockets()) + ":" + part(spec.min_cores_per_socket()) + ":" +
         part(spec.min_threads_per_core());
}

std::string GroupText(const v1::JobSpec& spec, const QueueContext& ctx) {
  return ctx.options.group_name ? ctx.options.group_name(spec.gid()) : std::to_string(spec.gid());
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
    case 'd': return {Megabytes(spec.min_tmp_disk_mb(), ctx.options.noconvert)};
    case 'D': return {std::to_string(NodeCount(job))};
    case 'e': return {EndTimeText(row, ctx)};
    case 'E': return {DependencyText(spec.dependency())};
    case 'f': return {OrNull(spec.constraint())};
    case 'F': return {std::to_string(spec.array_job_id() ? spec.array_job_id() : spec.job_id())};
    case 'b': return {TresPerNode(spec)};
    case 'g': return {GroupText(spec, ctx)};
    case 'G': return {std::to_string(spec.gid())};
    case 'h': return {spec.exclusive() ? "NO" : spec.oversubscribe() ? "YES" : "OK"};
    case 'H': case 'I': case 'J': return {"*"};
    case 'i': return {JobIdText(row)};
    case 'j': return {spec.name()};
    case 'k': return {OrNull(spec.comment())};
    case 'K': return {ArrayTaskText(row)};
    case 'l': return {LimitText(TimeLimit(job, ctx), 0), false};
    case 'L': return {LimitText(TimeLimit(job, ctx), TimeUsed(job, ctx.now)), false};
    case 'm': return {MemoryText(spec, ctx.options.noconvert)};
    case 'M': return {Seconds(TimeUsed(job, ctx.now)), false};
    case 'n': return {ListText(spec.nodelist())};
    case 'N': return {job.node_list(), false};
    case 'O': return {spec.contiguous() ? "1" : "0"};
    case 'p': return {fmt::format("{:16.14f}", PrintedPriority(job, ctx) / 4294967295.0)};
    case 'P': return {row.partition ? *row.partition : PartitionText(job, ctx)};
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
    case 'z': return {SocketsCoresThreads(spec)};
    case 'Z': return {spec.work_dir()};
    case 'X': return {"N/A"};  // no core specialization
    case 'W': return {OrNull(NormalisedLicenses(spec.licenses()))};
    default:
      // o: the script's path is not recorded; s: no select plugin data; w: no wckeys. Slurm
      // prints "(null)" for each on such a cluster.
      return {"(null)"};
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

// The key that folds a pending array task into the line of an earlier one: pending tasks of
// one array with the same name and partition share a line, as squeue's
// _combine_pending_array_tasks does; their differing reasons are joined with ','.
using FoldKey = std::tuple<uint64_t, std::string, std::string>;

bool Folds(const v1::Job& job, const QueueContext& ctx) {
  return !ctx.options.array_unfold && IsPending(job) && IsArrayTask(job);
}

FoldKey FoldKeyOf(const v1::Job& job, const QueueContext& ctx) {
  return {job.spec().array_job_id(), job.spec().name(), PartitionText(job, ctx)};
}

std::string ReasonOf(const v1::Job& job) {
  return job.reason().empty() ? "None" : job.reason();
}

// One row's value for one -S key, computed once per row and key (a comparison looks up maps
// and builds strings, and a sort of 100,000 rows makes millions of them): numbers first, then
// text. Letters this formatter does not sort by give equal keys.
struct SortKey {
  int64_t first = 0, second = 0;
  std::string text;
  int Compare(const SortKey& other) const {
    if (first != other.first) return first < other.first ? -1 : 1;
    if (second != other.second) return second < other.second ? -1 : 1;
    return text.compare(other.text);
  }
};

SortKey KeyOf(char key, const QueueRow& row, const QueueContext& ctx) {
  const v1::Job& job = *row.job;
  switch (key) {
    case 'i':
      return {
          static_cast<int64_t>(IsArrayTask(job) ? job.spec().array_job_id() : job.spec().job_id()),
          static_cast<int64_t>(job.spec().array_task_id()),
          {}};
    case 'j':
      return {0, 0, job.spec().name()};
    case 'u':
      return {0, 0, job.spec().user()};
    case 'U':
      return {static_cast<int64_t>(job.spec().uid()), 0, {}};
    case 'P':
      return {0, 0, row.partition ? *row.partition : PartitionText(job, ctx)};
    case 't':
      return {0, 0, std::string(StateCode(job.state()))};
    case 'T':
      return {0, 0, job.state()};
    case 'p':
    case 'Q':
      return {Priority(job, ctx), 0, {}};
    case 'M':
      return {TimeUsed(job, ctx.now), 0, {}};
    case 'D':
      return {static_cast<int64_t>(NodeCount(job)), 0, {}};
    case 'C':
      return {static_cast<int64_t>(CpuCount(job)), 0, {}};
    case 'V':
      return {job.spec().submit_time(), 0, {}};
    case 'e':
      return {job.end_time(), 0, {}};
    case 'l':
      return {TimeLimit(job, ctx).value_or(0), 0, {}};
    case 'S': {
      // squeue's _get_start_time: unknown starts last (22.05 printed held jobs after dated
      // ones), past starts of pending jobs count as now.
      int64_t t = StartTime(job, ctx);
      if (t == 0) return {INT64_MAX, 0, {}};
      return {IsPending(job) && t < ctx.now ? ctx.now : t, 0, {}};
    }
    default:
      return {};
  }
}

// The rows in squeue's order: one stable sort per key, last key first, each over row indexes
// and the keys computed once.
std::vector<const QueueRow*> SortRows(const std::vector<QueueRow>& rows, const QueueContext& ctx) {
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) order[i] = i;
  std::vector<SortKey> keys(rows.size());
  auto sort_by = [&](char key, bool reverse) {
    for (size_t i = 0; i < rows.size(); ++i) keys[i] = KeyOf(key, rows[i], ctx);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      int diff = keys[a].Compare(keys[b]);
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
  std::vector<const QueueRow*> sorted;
  sorted.reserve(rows.size());
  for (size_t i : order) sorted.push_back(&rows[i]);
  return sorted;
}

// ---------- -O/--Format: fields by name ----------

std::string TimeOrNa(int64_t time) {
  return time > 0 ? columns::IsoTime(time) : "N/A";
}

// When the job could first start: its submission, or its --begin when later; unknown while held.
int64_t EligibleTime(const v1::Job& job) {
  if (IsPending(job) && job.spec().hold() != v1::JobSpec::NONE) return 0;
  return std::max(job.spec().submit_time(), job.spec().begin_time());
}

int64_t PendingSeconds(const v1::Job& job, int64_t now) {
  int64_t end = job.start_time() ? job.start_time() : now;
  return std::max<int64_t>(0, end - EligibleTime(job));
}

std::string Count(uint64_t value) {
  return std::to_string(value);
}

std::string AllocatedTres(const v1::Job& job) {
  if (!job.allocation_size()) return "(null)";
  uint64_t cpus = 0, mem = 0, gpus = 0;
  for (const v1::NodeAllocation& node : job.allocation()) {
    cpus += columns::AllocatedCpus(node, nullptr);
    mem += node.memory_mb();
    gpus += columns::AllocatedGpus(node);
  }
  std::string text = fmt::format("cpu={},mem={},node={},billing={}", cpus, Megabytes(mem, false),
                                 job.allocation_size(), cpus);
  if (gpus) text += fmt::format(",gres/gpu={}", gpus);
  if (uint64_t shares = columns::AllocatedShares(job); shares)
    text += fmt::format(",gres/{}={}", columns::SharedGresOf(job.spec()).name, shares);
  return text;
}

std::string OrNullText(std::string text) {
  return text.empty() ? "(null)" : text;
}

using NamedValue = Cell (*)(const QueueRow&, const QueueContext&);

// A -O name: the %-letter it prints as, or its own header and value.
struct LongField {
  std::string_view name;
  char letter;
  std::string_view header = {};
  NamedValue value = nullptr;
};

// clang-format off
const LongField kLongFields[] = {
    {"account", 'a'}, {"jobid", 'A'}, {"gres", 'b'}, {"tres-per-node", 'b'}, {"batchhost", 'B'},
    {"mincpus", 'c'}, {"numcpus", 'C'}, {"mintmpdisk", 'd'}, {"numnodes", 'D'},
    {"endtime", 'e'}, {"dependency", 'E'}, {"feature", 'f'}, {"arrayjobid", 'F'},
    {"groupname", 'g'}, {"groupid", 'G'}, {"oversubscribe", 'h'}, {"shared", 'h'},
    {"sockets", 'H'}, {"jobarrayid", 'i'}, {"cores", 'I'}, {"name", 'j'}, {"threads", 'J'},
    {"comment", 'k'}, {"arraytaskid", 'K'}, {"timelimit", 'l'}, {"timeleft", 'L'},
    {"minmemory", 'm'}, {"timeused", 'M'}, {"reqnodes", 'n'}, {"nodelist", 'N'},
    {"command", 'o'}, {"contiguous", 'O'}, {"priority", 'p'}, {"partition", 'P'}, {"qos", 'q'},
    {"prioritylong", 'Q'}, {"reason", 'r'}, {"reasonlist", 'R'}, {"selectjobinfo", 's'},
    {"starttime", 'S'}, {"statecompact", 't'}, {"state", 'T'}, {"userid", 'U'},
    {"username", 'u'}, {"reservation", 'v'}, {"submittime", 'V'}, {"wckey", 'w'},
    {"licenses", 'W'}, {"corespec", 'X'}, {"nice", 'y'}, {"schednodes", 'Y'}, {"sct", 'z'},
    {"workdir", 'Z'},
    {"numtasks", 0, "TASKS", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {Count(r.job->spec().ntasks() ? r.job->spec().ntasks() : NodeCount(*r.job))}; }},
    {"cluster", 0, "CLUSTER", [](const QueueRow&, const QueueContext& c) -> Cell {
      return {OrNullText(c.options.cluster_name)}; }},
    {"accruetime", 0, "ACCRUE_TIME", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {TimeOrNa(EligibleTime(*r.job))}; }},
    {"eligibletime", 0, "ELIGIBLE_TIME", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {TimeOrNa(EligibleTime(*r.job))}; }},
    {"pendingtime", 0, "PENDING_TIME", [](const QueueRow& r, const QueueContext& c) -> Cell {
      return {Count(PendingSeconds(*r.job, c.now))}; }},
    {"lastschedeval", 0, "LAST_SCHED_EVAL", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {TimeOrNa(r.job->spec().submit_time())}; }},
    {"preempttime", 0, "PREEMPT_TIME", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {TimeOrNa(r.job->preempted_at())}; }},
    {"resizetime", 0, "RESIZE_TIME", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"N/A"}; }},
    {"deadline", 0, "DEADLINE", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {TimeOrNa(r.job->spec().deadline())}; }},
    {"admin_comment", 0, "ADMIN_COMMENT", [](const QueueRow& r, const QueueContext&) -> Cell {
      const std::string& text = r.job->spec().admin_comment();
      return {text.empty() ? "(null)" : text}; }},
    {"system_comment", 0, "SYSTEM_COMMENT", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"(null)"}; }},
    {"allocnodes", 0, "ALLOC_NODES", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"(null)"}; }},
    {"allocsid", 0, "ALLOC_SID", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"0"}; }},
    {"associd", 0, "ASSOC_ID", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"0"}; }},
    {"batchflag", 0, "BATCH_FLAG", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {r.job->spec().interactive() ? "0" : "1"}; }},
    {"boardspernode", 0, "BOARDS_PER_NODE", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"0"}; }},
    {"sperboard", 0, "SOCKETS_PER_BOARD", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"0"}; }},
    {"burstbuffer", 0, "BURST_BUFFER", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"(null)"}; }},
    {"burstbufferstate", 0, "BURST_BUFFER_STATE",
     [](const QueueRow&, const QueueContext&) -> Cell { return {"(null)"}; }},
    {"clusterfeature", 0, "CLUSTER_FEATURE", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"(null)"}; }},
    {"container", 0, "CONTAINER", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"(null)"}; }},
    {"prefer", 0, "PREFER", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"(null)"}; }},
    {"cpuspertask", 0, "CPUS_PER_TASK", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {Count(std::max<uint32_t>(r.job->spec().cpus_per_task(), 1))}; }},
    {"cpus-per-task", 0, "CPUS_PER_TASK", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {Count(std::max<uint32_t>(r.job->spec().cpus_per_task(), 1))}; }},
    {"cpus-per-tres", 0, "CPUS_PER_TRES", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {OrNullText(GpuTres(r.job->spec(), r.job->spec().cpus_per_gpu()))}; }},
    {"mem-per-tres", 0, "MEM_PER_TRES", [](const QueueRow& r, const QueueContext&) -> Cell {
      uint64_t mb = r.job->spec().mem_per_gpu_mb();
      return {mb ? fmt::format("gres:gpu:{}", mb) : "(null)"}; }},
    {"tres", 0, "TRES_ALLOC", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {AllocatedTres(*r.job)}; }},
    {"tres-alloc", 0, "TRES_ALLOC", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {AllocatedTres(*r.job)}; }},
    {"tres-per-job", 0, "TRES_PER_JOB", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {OrNullText(GpuTres(r.job->spec(), r.job->spec().gpus()))}; }},
    {"tres-per-task", 0, "TRES_PER_TASK", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {OrNullText(GpuTres(r.job->spec(), r.job->spec().gpus_per_task()))}; }},
    {"tres-per-socket", 0, "TRES_PER_SOCKET", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"(null)"}; }},
    {"tres-bind", 0, "TRES_BIND", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"(null)"}; }},
    {"tres-freq", 0, "TRES_FREQ", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"(null)"}; }},
    {"delayboot", 0, "DELAY_BOOT", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"0:00"}; }},
    {"derivedec", 0, "DERIVED_EC", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"0:0"}; }},
    {"exit_code", 0, "EXIT_CODE", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {fmt::format("{}:{}", r.job->exit_code(), r.job->exit_signal())}; }},
    {"origin", 0, "ORIGIN", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"(null)"}; }},
    {"originraw", 0, "ORIGIN_RAW", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"(null)"}; }},
    {"siblingsactive", 0, "ACTIVE_SIBLINGS", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"(null)"}; }},
    {"siblingsactiveraw", 0, "ACTIVE_SIBLINGS_RAW",
     [](const QueueRow&, const QueueContext&) -> Cell { return {"(null)"}; }},
    {"siblingsviable", 0, "VIABLE_SIBLINGS", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"(null)"}; }},
    {"siblingsviableraw", 0, "VIABLE_SIBLINGS_RAW",
     [](const QueueRow&, const QueueContext&) -> Cell { return {"(null)"}; }},
    {"maxcpus", 0, "MAX_CPUS", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"0"}; }},
    {"maxnodes", 0, "MAX_NODES", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {Count(r.job->spec().max_nodes())}; }},
    {"network", 0, "NETWORK", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"(null)"}; }},
    {"ntpercore", 0, "NTASKS_PER_CORE", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"0"}; }},
    {"ntpernode", 0, "NTASKS_PER_NODE", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {Count(r.job->spec().ntasks_per_node())}; }},
    {"ntpersocket", 0, "NTASKS_PER_SOCKET", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"0"}; }},
    {"ntperboard", 0, "NTASKS_PER_BOARD", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"0"}; }},
    {"profile", 0, "PROFILE", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"NotSet"}; }},
    {"reboot", 0, "REBOOT", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"0"}; }},
    {"reqswitch", 0, "REQ_SWITCH", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {Count(r.job->spec().switches())}; }},
    {"wait4switch", 0, "WAIT4SWITCH", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {Seconds(r.job->spec().switch_wait_seconds())}; }},
    {"requeue", 0, "REQUEUE", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {r.job->spec().requeue() ? "1" : "0"}; }},
    {"restartcnt", 0, "RESTARTCNT", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {Count(r.job->restart_count())}; }},
    {"stderr", 0, "STDERR", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {OrNullText(r.job->spec().stderr_path())}; }},
    {"stdin", 0, "STDIN", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {r.job->spec().stdin_path().empty() ? "/dev/null" : r.job->spec().stdin_path()}; }},
    {"stdout", 0, "STDOUT", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {OrNullText(r.job->spec().stdout_path())}; }},
    {"mintime", 0, "MIN_TIME", [](const QueueRow& r, const QueueContext&) -> Cell {
      return {Seconds(r.job->spec().time_min_seconds())}; }},
    {"mcslabel", 0, "MCSLABEL", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"N/A"}; }},
    {"hetjobid", 0, "HET_JOB_ID", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"N/A"}; }},
    {"packjobid", 0, "HET_JOB_ID", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"N/A"}; }},
    {"hetjoboffset", 0, "HET_JOB_OFFSET", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"N/A"}; }},
    {"packjoboffset", 0, "HET_JOB_OFFSET", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"N/A"}; }},
    {"hetjobidset", 0, "HET_JOB_ID_SET", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"(null)"}; }},
    {"packjobidset", 0, "HET_JOB_ID_SET", [](const QueueRow&, const QueueContext&) -> Cell {
      return {"(null)"}; }},
};
// clang-format on

const LongField* FindLongField(std::string_view name) {
  for (const LongField& field : kLongFields)
    if (field.name == name) return &field;
  if (name.starts_with("numtask")) return FindLongField("numtasks");  // Slurm matches 7 letters
  return nullptr;
}

// A field of either grammar: its header (nullptr when unknown) and its value for a row.
const std::string_view* FieldHeader(const columns::FieldSpec& field) {
  if (field.name.empty()) return FindHeader(field.letter);
  const LongField* known = FindLongField(field.name);
  if (!known) return nullptr;
  return known->letter ? FindHeader(known->letter) : &known->header;
}

Cell FieldValue(const columns::FieldSpec& field, const QueueRow& row, const QueueContext& ctx) {
  if (field.name.empty()) return Value(field.letter, row, ctx);
  const LongField* known = FindLongField(field.name);
  return known->letter ? Value(known->letter, row, ctx) : known->value(row, ctx);
}

char ListLetter(const columns::FieldSpec& field) {
  if (field.name.empty()) return field.letter;
  const LongField* known = FindLongField(field.name);
  return known ? known->letter : 0;
}

std::string FormatLine(const columns::PercentFormat& format, const QueueRow* row,
                       const QueueContext& ctx) {
  std::string line = format.prefix;
  for (const columns::FieldSpec& field : format.fields) {
    const std::string_view* header = FieldHeader(field);
    if (!header) {  // squeue echoes an unknown %-field, '%' and all; an unknown -O one is blank
      if (field.name.empty()) line += "%" + field.token;
      continue;
    }
    if (row) {
      Cell cell = FieldValue(field, *row, ctx);
      line += Pad(cell.text, field.width, field.right, cell.cut);
    } else {
      char letter = ListLetter(field);
      bool is_list = letter == 'N' || letter == 'R' || letter == 'Y';
      line += Pad(*header, field.width, field.right, !is_list);
    }
    line += field.suffix;
  }
  return line + "\n";
}

columns::PercentFormat ChosenFormat(const SqueueOptions& options, std::string_view fallback) {
  if (!options.format.empty()) return columns::ParsePercentFormat(options.format);
  if (!options.long_fields.empty()) return columns::ParseLongFormat(options.long_fields);
  return columns::ParsePercentFormat(fallback);
}

// -P: a pending job that may run in several partitions has a line for each.
std::vector<QueueRow> PerPartition(std::vector<QueueRow> rows) {
  std::vector<QueueRow> out;
  for (QueueRow& row : rows) {
    const v1::JobSpec& spec = row.job->spec();
    if (!IsPending(*row.job) || spec.partitions_size() < 2) {
      out.push_back(std::move(row));
      continue;
    }
    for (const std::string& partition : spec.partitions()) {
      out.push_back(row);
      out.back().partition = &partition;
    }
  }
  return out;
}

// The date line of -l, -i and -v, then -M's cluster line.
std::string Preamble(const SqueueOptions& options, int64_t now) {
  std::string out;
  if (!options.no_header && (options.long_format || options.dated))
    out = columns::DateLine(now) + "\n";
  if (!options.cluster_line.empty()) out += options.cluster_line + "\n";
  return out;
}

// ---------- -s/--steps ----------

constexpr uint32_t kBatchStep = 0xFFFFFFFB;  // SLURM_BATCH_SCRIPT: sorts after numbered steps

struct StepRow {
  const v1::Job* job;
  const v1::Step* step;  // nullptr: the batch step
};

uint32_t StepNumber(const StepRow& row) {
  return row.step ? row.step->step_id() : kBatchStep;
}

std::string StepIdText(const StepRow& row) {
  const v1::JobSpec& spec = row.job->spec();
  std::string job = IsArrayTask(*row.job)
                        ? fmt::format("{}_{}", spec.array_job_id(), spec.array_task_id())
                        : std::to_string(spec.job_id());
  return row.step ? fmt::format("{}.{}", job, row.step->step_id()) : job + ".batch";
}

std::string StepNodes(const StepRow& row) {
  return row.step ? row.step->node_list() : FirstNode(*row.job);
}

int64_t StepStart(const StepRow& row) {
  return row.step ? row.step->start_time() : row.job->start_time();
}

Cell StepValue(char letter, const StepRow& row, const QueueContext& ctx) {
  const v1::Job& job = *row.job;
  const v1::JobSpec& spec = job.spec();
  // clang-format off
  switch (letter) {
    case 'A': return {Count(row.step ? row.step->ntasks() : 1)};
    case 'b': return {TresPerNode(spec)};
    case 'i': return {StepIdText(row)};
    case 'j': return {row.step ? row.step->name() : "batch"};
    case 'l': return {LimitText(TimeLimit(job, ctx), 0), false};
    case 'M': return {Seconds(std::max<int64_t>(0, ctx.now - StepStart(row))), false};
    case 'N': return {StepNodes(row), false};
    case 'P': return {PartitionText(job, ctx)};
    case 'S': return {TimeText(StepStart(row))};
    case 'U': return {Count(spec.uid())};
    default: return {spec.user().empty() ? Count(spec.uid()) : spec.user()};  // 'u'
  }
  // clang-format on
}

// clang-format off
constexpr std::pair<char, std::string_view> kStepHeaders[] = {
    {'A', "TASKS"}, {'b', "TRES_PER_NODE"}, {'i', "STEPID"}, {'j', "NAME"},
    {'l', "TIME_LIMIT"}, {'M', "TIME"}, {'N', "NODELIST"}, {'P', "PARTITION"},
    {'S', "START_TIME"}, {'U', "USER"}, {'u', "USER"},
};
// clang-format on

using StepNamed = Cell (*)(const StepRow&, const QueueContext&);
struct StepField {
  std::string_view name;
  char letter;
  std::string_view header = {};
  StepNamed value = nullptr;
};

// clang-format off
const StepField kStepFields[] = {
    {"numtasks", 'A'}, {"gres", 'b'}, {"tres-per-node", 'b'}, {"stepid", 'i'},
    {"stepname", 'j'}, {"timelimit", 'l'}, {"timeused", 'M'}, {"nodes", 'N'},
    {"partition", 'P'}, {"starttime", 'S'}, {"userid", 'U'}, {"username", 'u'},
    {"cluster", 0, "CLUSTER", [](const StepRow&, const QueueContext& c) -> Cell {
      return {OrNullText(c.options.cluster_name)}; }},
    {"arrayjobid", 0, "ARRAY_JOB_ID", [](const StepRow& r, const QueueContext&) -> Cell {
      const v1::JobSpec& spec = r.job->spec();
      return {Count(spec.array_job_id() ? spec.array_job_id() : spec.job_id())}; }},
    {"arraytaskid", 0, "ARRAY_TASK_ID", [](const StepRow& r, const QueueContext&) -> Cell {
      return {IsArrayTask(*r.job) ? Count(r.job->spec().array_task_id()) : "N/A"}; }},
    {"jobid", 0, "JOBID", [](const StepRow& r, const QueueContext&) -> Cell {
      return {Count(r.job->spec().job_id())}; }},
    {"numcpus", 0, "CPUS", [](const StepRow& r, const QueueContext&) -> Cell {
      return {Count(r.step ? r.step->cpus() : CpuCount(*r.job))}; }},
    {"stepstate", 0, "STATE", [](const StepRow& r, const QueueContext&) -> Cell {
      return {r.step ? r.step->state() : r.job->state()}; }},
    {"network", 0, "NETWORK", [](const StepRow&, const QueueContext&) -> Cell {
      return {"(null)"}; }},
    {"cpufreq", 0, "CPUFREQ", [](const StepRow&, const QueueContext&) -> Cell {
      return {"Unknown"}; }},
    {"resvports", 0, "RESV_PORTS", [](const StepRow&, const QueueContext&) -> Cell {
      return {"(null)"}; }},
    {"cpus-per-tres", 0, "CPUS_PER_TRES", [](const StepRow& r, const QueueContext&) -> Cell {
      return {OrNullText(GpuTres(r.job->spec(), r.job->spec().cpus_per_gpu()))}; }},
    {"mem-per-tres", 0, "MEM_PER_TRES", [](const StepRow& r, const QueueContext&) -> Cell {
      uint64_t mb = r.job->spec().mem_per_gpu_mb();
      return {mb ? fmt::format("gres:gpu:{}", mb) : "(null)"}; }},
    {"tres-bind", 0, "TRES_BIND", [](const StepRow&, const QueueContext&) -> Cell {
      return {"(null)"}; }},
    {"tres-freq", 0, "TRES_FREQ", [](const StepRow&, const QueueContext&) -> Cell {
      return {"(null)"}; }},
    {"tres-per-job", 0, "TRES_PER_STEP", [](const StepRow& r, const QueueContext&) -> Cell {
      return {OrNullText(GpuTres(r.job->spec(), r.job->spec().gpus()))}; }},
    {"tres-per-step", 0, "TRES_PER_STEP", [](const StepRow& r, const QueueContext&) -> Cell {
      return {OrNullText(GpuTres(r.job->spec(), r.job->spec().gpus()))}; }},
    {"tres-per-socket", 0, "TRES_PER_SOCKET", [](const StepRow&, const QueueContext&) -> Cell {
      return {"(null)"}; }},
    {"tres-per-task", 0, "TRES_PER_TASK", [](const StepRow& r, const QueueContext&) -> Cell {
      return {OrNullText(GpuTres(r.job->spec(), r.job->spec().gpus_per_task()))}; }},
};
// clang-format on

const std::string_view* StepHeader(char letter) {
  for (const auto& [known, header] : kStepHeaders)
    if (known == letter) return &header;
  return nullptr;
}

const StepField* FindStepField(std::string_view name) {
  for (const StepField& field : kStepFields)
    if (field.name == name) return &field;
  if (name.starts_with("numtask")) return FindStepField("numtasks");
  return nullptr;
}

const std::string_view* StepFieldHeader(const columns::FieldSpec& field) {
  if (field.name.empty()) return StepHeader(field.letter);
  const StepField* known = FindStepField(field.name);
  if (!known) return nullptr;
  return known->letter ? StepHeader(known->letter) : &known->header;
}

std::string FormatStepLine(const columns::PercentFormat& format, const StepRow* row,
                           const QueueContext& ctx) {
  std::string line = format.prefix;
  for (const columns::FieldSpec& field : format.fields) {
    const std::string_view* header = StepFieldHeader(field);
    if (!header) {
      if (field.name.empty()) line += "%" + field.token;
      continue;
    }
    if (!row) {
      line += Pad(*header, field.width, field.right, true) + field.suffix;
      continue;
    }
    const StepField* named = field.name.empty() ? nullptr : FindStepField(field.name);
    Cell cell = named && !named->letter
                    ? named->value(*row, ctx)
                    : StepValue(named ? named->letter : field.letter, *row, ctx);
    line += Pad(cell.text, field.width, field.right, cell.cut) + field.suffix;
  }
  return line + "\n";
}

// -s LIST: "12.0", "12_3.batch", "12.batch"; empty: every step.
bool StepWanted(const StepRow& row, const std::vector<std::string>& wanted) {
  if (wanted.empty()) return true;
  std::string id = StepIdText(row);
  std::string plain = fmt::format("{}.{}", row.job->spec().job_id(),
                                  row.step ? std::to_string(row.step->step_id()) : "batch");
  return std::find(wanted.begin(), wanted.end(), id) != wanted.end() ||
         std::find(wanted.begin(), wanted.end(), plain) != wanted.end();
}

std::vector<StepRow> CollectSteps(const std::vector<v1::Job>& jobs, const SqueueOptions& options) {
  std::vector<StepRow> rows;
  for (const v1::Job& job : jobs) {
    if (job.state() != "RUNNING" && job.state() != "SUSPENDED" && job.state() != "COMPLETING")
      continue;
    for (const v1::Step& step : job.steps())
      if (step.state() == "RUNNING" && StepWanted({&job, &step}, options.step_ids))
        rows.push_back({&job, &step});
    if (!job.spec().interactive() && StepWanted({&job, nullptr}, options.step_ids))
      rows.push_back({&job, nullptr});
  }
  // Slurm's default step order, "P,i": partition, then job and step id (batch last).
  std::stable_sort(rows.begin(), rows.end(), [](const StepRow& a, const StepRow& b) {
    auto key = [](const StepRow& r) {
      return std::make_tuple(r.job->partition_name(), r.job->spec().job_id(), StepNumber(r));
    };
    return key(a) < key(b);
  });
  return rows;
}

std::string FormatSteps(const std::vector<v1::Job>& jobs, const SqueueOptions& options,
                        int64_t now) {
  QueueContext ctx{options, now};
  columns::PercentFormat format =
      ChosenFormat(options, options.long_format ? "%.15i %.8j %.9P %.8u %.9l %.9M %N"
                                                : "%.15i %.8j %.9P %.8u %.9M %N");
  std::string out = Preamble(options, now);
  if (!options.no_header) out += FormatStepLine(format, nullptr, ctx);
  for (const StepRow& row : CollectSteps(jobs, options)) out += FormatStepLine(format, &row, ctx);
  return out;
}

}  // namespace

std::string DependencyText(const v1::Dependency& dependency) {
  static constexpr std::string_view kTypes[] = {"after",      "afterany",  "afterok",
                                                "afternotok", "aftercorr", "singleton"};
  std::vector<std::string> terms;
  for (const auto& term : dependency.terms()) {
    std::string_view type = kTypes[std::clamp<int>(term.type(), 0, 5)];
    std::string text = term.type() == v1::Dependency::SINGLETON
                           ? std::string(type)
                           : fmt::format("{}:{}", type, term.job_id());
    if (term.has_array_task_id()) text += fmt::format("_{}", term.array_task_id());
    terms.push_back(std::move(text));
  }
  return OrNull(Join(terms, dependency.any() ? "?" : ","));
}

std::string FormatSqueue(const std::vector<v1::Job>& jobs, const SqueueOptions& options,
                         int64_t now) {
  if (options.steps) return FormatSteps(jobs, options, now);
  SqueueLines lines(options, now);
  for (const v1::Job& job : jobs)
    if (lines.NeedsLine(job)) lines.Add(job);
  return lines.Format();
}

struct SqueueLines::State {
  QueueContext ctx;
  std::vector<QueueRow> rows;
  std::map<FoldKey, size_t> heads;  // -> the index in rows of the line its tasks fold into
};

SqueueLines::SqueueLines(const SqueueOptions& options, int64_t now)
    : state_(std::make_unique<State>(State{{options, now}, {}, {}})) {}

SqueueLines::~SqueueLines() = default;

bool SqueueLines::NeedsLine(const v1::Job& job) {
  if (!StateSelected(job, state_->ctx.options)) return false;
  if (!Folds(job, state_->ctx)) return true;
  auto found = state_->heads.find(FoldKeyOf(job, state_->ctx));
  if (found == state_->heads.end()) return true;
  QueueRow& head = state_->rows[found->second];
  if (head.folded_tasks.empty()) head.folded_tasks.push_back(head.job->spec().array_task_id());
  head.folded_tasks.push_back(job.spec().array_task_id());
  std::string reason = ReasonOf(job);
  if (head.reason.find(reason) == std::string::npos) head.reason += "," + reason;
  return false;
}

void SqueueLines::Add(const v1::Job& job) {
  if (Folds(job, state_->ctx))
    state_->heads.try_emplace(FoldKeyOf(job, state_->ctx), state_->rows.size());
  state_->rows.push_back({&job, {}, ReasonOf(job)});
}

size_t SqueueLines::size() const {
  return state_->rows.size();
}

std::vector<const v1::Job*> SqueueLines::Jobs() const {
  std::vector<const v1::Job*> jobs;
  jobs.reserve(state_->rows.size());
  for (const QueueRow& row : state_->rows) jobs.push_back(row.job);
  return jobs;
}

std::string SqueueLines::Format() {
  const QueueContext& ctx = state_->ctx;
  const SqueueOptions& options = ctx.options;
  columns::PercentFormat format = ChosenFormat(options, options.start         ? kStartFormat
                                                        : options.long_format ? kLongFormat
                                                                              : kDefaultFormat);
  std::vector<QueueRow> rows = std::move(state_->rows);
  state_->heads.clear();
  if (options.per_partition) rows = PerPartition(std::move(rows));
  std::string out = Preamble(options, ctx.now);
  if (!options.no_header) out += FormatLine(format, nullptr, ctx);
  for (const QueueRow* row : SortRows(rows, ctx)) out += FormatLine(format, row, ctx);
  return out;
}

std::vector<std::string> SqueueLongFormatErrors(std::string_view fields, bool steps) {
  std::vector<std::string> errors;
  for (const columns::FieldSpec& field : columns::ParseLongFormat(fields).fields) {
    bool known =
        steps ? FindStepField(field.name) != nullptr : FindLongField(field.name) != nullptr;
    std::string name = field.token.substr(0, field.token.find(':'));
    if (!known)
      errors.push_back(steps ? "Invalid job step format specification: " + name
                             : "Invalid job format specification: " + name);
  }
  return errors;
}

std::vector<std::string> SqueueFormatErrors(std::string_view format, bool steps) {
  std::vector<std::string> errors;
  for (const columns::FieldSpec& field : columns::ParsePercentFormat(format).fields)
    if (steps ? !StepHeader(field.letter) : !FindHeader(field.letter))
      errors.push_back(fmt::format(fmt::runtime(steps ? "Invalid job step format specification: {}"
                                                      : "Invalid job format specification: {}"),
                                   field.letter ? std::string(1, field.letter) : ""));
  return errors;
}

}  // namespace drover::cli
