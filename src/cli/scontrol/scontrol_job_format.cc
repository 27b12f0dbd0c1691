// `scontrol show job`: Slurm 22.05's job record (slurm_sprint_job_info) from a job record, and
// the rendering every scontrol record shares (see scontrol_format.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

#include "cli/scontrol/scontrol_format.h"
#include "common/duration.h"
#include "common/hostlist.h"
#include "common/licenses.h"
#include "common/text.h"

namespace drover::cli::scontrol {
namespace {

constexpr uint32_t kNoTask = UINT32_MAX;

std::string OrNull(const std::string& text) {
  return text.empty() ? "(null)" : text;
}

// slurm_make_time_str: 0 (and "never") print as Unknown.
std::string TimeOrUnknown(int64_t time) {
  return time > 0 && !columns::IsUnlimited(time) ? columns::IsoTime(time) : "Unknown";
}

bool IsPending(const v1::Job& job) {
  return job.state() == "PENDING";
}
bool Started(const v1::Job& job) {
  return !IsPending(job) && job.start_time() > 0;
}

const PartitionConfig* JobPartition(const v1::Job& job, const ShowContext& ctx) {
  if (!ctx.cluster) return nullptr;
  std::string name = job.partition_name();
  if (name.empty() && job.spec().partitions_size()) name = job.spec().partitions(0);
  int index = name.empty() ? ctx.cluster->DefaultPartition() : ctx.cluster->FindPartition(name);
  return index >= 0 ? &ctx.cluster->partitions[index] : nullptr;
}

std::string PartitionText(const v1::Job& job, const ShowContext& ctx) {
  if (!job.partition_name().empty()) return job.partition_name();
  if (job.spec().partitions_size())
    return Join({job.spec().partitions().begin(), job.spec().partitions().end()}, ",");
  const PartitionConfig* fallback = JobPartition(job, ctx);
  return fallback ? fallback->name : "(null)";
}

// The limit that applies: the job's, else its partition's DefaultTime, else its MaxTime.
int64_t TimeLimit(const v1::Job& job, const ShowContext& ctx) {
  int64_t limit =
      job.time_limit_seconds() ? job.time_limit_seconds() : job.spec().time_limit_seconds();
  if (limit) return limit;
  const PartitionConfig* partition = JobPartition(job, ctx);
  if (!partition) return kUnlimitedSeconds;
  return partition->default_time_seconds.value_or(partition->max_time_seconds);
}

std::string LimitText(int64_t seconds) {
  return columns::IsUnlimited(seconds) ? "UNLIMITED" : FormatDurationPadded(seconds);
}

int64_t RunTime(const v1::Job& job, int64_t now) {
  if (!Started(job)) return 0;
  int64_t end = job.end_time() && job.state() != "RUNNING" ? job.end_time() : now;
  if (job.state() == "SUSPENDED") end = job.suspend_time();
  return std::max<int64_t>(0, end - job.start_time() - job.suspended_seconds());
}

uint32_t RequestedNodes(const v1::JobSpec& spec) {
  return std::max<uint32_t>(spec.min_nodes(), 1);
}

// At least one task per node, as Slurm counts them.
uint32_t Tasks(const v1::JobSpec& spec) {
  if (spec.ntasks_per_node() && !spec.ntasks())
    return spec.ntasks_per_node() * RequestedNodes(spec);
  return std::max(spec.ntasks(), RequestedNodes(spec));
}

uint32_t RequestedCpus(const v1::JobSpec& spec) {
  return Tasks(spec) * std::max<uint32_t>(spec.cpus_per_task(), 1);
}

uint64_t RequestedGpus(const v1::JobSpec& spec) {
  if (spec.gpus()) return spec.gpus();
  if (spec.gpus_per_node()) return uint64_t{spec.gpus_per_node()} * RequestedNodes(spec);
  return uint64_t{spec.gpus_per_task()} * Tasks(spec);
}

// Per node: "MinMemoryCPU=100M" or "MinMemoryNode=4000M".
std::string MinMemoryText(const v1::JobSpec& spec, const ShowContext& ctx) {
  if (spec.mem_per_node_mb()) return "MinMemoryNode=" + MemoryText(spec.mem_per_node_mb());
  if (spec.mem_per_cpu_mb()) return "MinMemoryCPU=" + MemoryText(spec.mem_per_cpu_mb());
  if (spec.mem_per_gpu_mb()) return "MinMemoryNode=0";  // per GPU: in TRES and JOB_GRES
  uint64_t per_cpu = ctx.cluster ? ctx.cluster->settings.def_mem_per_cpu_mb : 0;
  if (per_cpu) return "MinMemoryCPU=" + MemoryText(per_cpu);
  uint64_t per_node = ctx.cluster ? ctx.cluster->settings.def_mem_per_node_mb : 0;
  return "MinMemoryNode=" + (per_node ? MemoryText(per_node) : "0");
}

uint64_t RequestedMemory(const v1::JobSpec& spec, const ShowContext& ctx) {
  uint32_t cpus = RequestedCpus(spec), nodes = RequestedNodes(spec);
  if (spec.mem_per_node_mb()) return spec.mem_per_node_mb() * nodes;
  if (spec.mem_per_cpu_mb()) return spec.mem_per_cpu_mb() * cpus;
  if (spec.mem_per_gpu_mb()) return spec.mem_per_gpu_mb() * RequestedGpus(spec);
  if (!ctx.cluster) return 0;
  const ClusterSettings& settings = ctx.cluster->settings;
  if (settings.def_mem_per_cpu_mb) return settings.def_mem_per_cpu_mb * cpus;
  return settings.def_mem_per_node_mb * nodes;
}

struct Allocated {
  uint32_t cpus = 0;
  uint64_t memory_mb = 0, gpus = 0;
  columns::SharedGres shares;
};

Allocated AllocationOf(const v1::Job& job, const ShowContext& ctx) {
  Allocated out;
  for (const v1::NodeAllocation& node : job.allocation()) {
    out.cpus += columns::AllocatedCpus(node, ctx.cluster);
    out.memory_mb += node.memory_mb();
    out.gpus += columns::AllocatedGpus(node);
  }
  out.shares = {columns::SharedGresOf(job.spec()).name, columns::AllocatedShares(job)};
  return out;
}

std::string GpuGres(std::string_view type, uint64_t count) {
  return type.empty() ? fmt::format("gpu:{}", count) : fmt::format("gpu:{}:{}", type, count);
}

std::string GpuGres(const v1::JobSpec& spec, uint64_t count) {
  return GpuGres(spec.gpu_type(), count);
}

// The type of the GPUs a job holds: as asked for, else as configured on its first node.
std::string AllocatedGpuType(const v1::Job& job, const ShowContext& ctx) {
  if (!job.spec().gpu_type().empty() || !ctx.cluster) return job.spec().gpu_type();
  for (const v1::NodeAllocation& node : job.allocation()) {
    if (node.node() < 0 || static_cast<size_t>(node.node()) >= ctx.cluster->nodes.size()) continue;
    const std::vector<GpuDevice>& devices = ctx.cluster->nodes[node.node()].gpus;
    for (int gpu : node.gpus())
      if (gpu >= 0 && static_cast<size_t>(gpu) < devices.size()) return devices[gpu].type;
  }
  return "";
}

// Slurm expands these in StdOut/StdErr/StdIn: %% %A %a %j %J %u %x %N %n %t %s.
std::string ExpandPath(const std::string& pattern, const v1::Job& job) {
  const v1::JobSpec& spec = job.spec();
  bool array = spec.array_job_id() && spec.array_task_id() != kNoTask;
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    size_t j = i + 1;
    while (j < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[j]))) ++j;
    if (j == pattern.size()) {
      out += pattern.substr(i);
      break;
    }
    int width = j > i + 1 ? std::stoi(pattern.substr(i + 1, j - i - 1)) : 0;
    auto number = [&](uint64_t value) { return fmt::format("{:0{}}", value, std::min(width, 10)); };
    switch (pattern[j]) {
      case '%':
        out += '%';
        break;
      case 'A':
        out += number(array ? spec.array_job_id() : spec.job_id());
        break;
      case 'a':
        out += array ? number(spec.array_task_id()) : "4294967294";
        break;
      case 'j':
      case 'J':
        out += number(spec.job_id());
        break;
      case 'u':
        out += spec.user();
        break;
      case 'x':
        out += spec.name();
        break;
      case 'N': {
        auto names = ExpandHostlist(job.node_list());
        out += names && !names->empty() ? names->front() : "";
        break;
      }
      case 'n':
      case 't':
      case 's':
        out += number(0);
        break;
      default:
        out += pattern.substr(i, j - i + 1);
    }
    i = j;
  }
  return out;
}

std::string StdoutPath(const v1::Job& job) {
  const v1::JobSpec& spec = job.spec();
  std::string path = spec.stdout_path();
  if (path.empty()) {
    bool array = spec.array_job_id() && spec.array_task_id() != kNoTask;
    path = array ? "slurm-%A_%a.out" : "slurm-%j.out";
  }
  if (path.front() != '/' && !spec.work_dir().empty()) path = spec.work_dir() + "/" + path;
  return ExpandPath(path, job);
}

std::string OtherPath(const std::string& pattern, const v1::Job& job) {
  std::string path = pattern;
  if (!path.empty() && path.front() != '/' && !job.spec().work_dir().empty())
    path = job.spec().work_dir() + "/" + path;
  return ExpandPath(path, job);
}

std::string NameAndId(const UserNameLookup& lookup, uint32_t id) {
  return fmt::format("{}({})", columns::UserName(lookup, id), id);
}

// When the job could first start: held or waiting on a dependency, not known yet.
int64_t EligibleTime(const v1::Job& job) {
  const v1::JobSpec& spec = job.spec();
  if (IsPending(job) && (spec.hold() != v1::JobSpec::NONE || job.reason() == "Dependency" ||
                         job.reason() == "JobHeldUser" || job.reason() == "JobHeldAdmin"))
    return 0;
  return spec.begin_time() ? spec.begin_time() : spec.submit_time();
}

std::string EndTimeText(const v1::Job& job, int64_t limit) {
  if (!Started(job)) return "Unknown";
  if (job.state() == "RUNNING" || job.state() == "SUSPENDED") {
    if (columns::IsUnlimited(limit) || job.end_time() >= kUnlimitedSeconds) return "Unknown";
    return TimeOrUnknown(job.end_time() ? job.end_time()
                                        : job.start_time() + job.suspended_seconds() + limit);
  }
  return TimeOrUnknown(job.end_time());
}

int64_t PriorityOf(const v1::Job& job, const ShowContext& ctx) {
  if (job.spec().hold() != v1::JobSpec::NONE) return 0;
  auto it = ctx.priorities.find(job.spec().job_id());
  return it == ctx.priorities.end() ? 0 : it->second;
}

std::string NumNodesText(const v1::Job& job) {
  const v1::JobSpec& spec = job.spec();
  if (job.allocation_size()) return std::to_string(job.allocation_size());
  if (spec.max_nodes()) return fmt::format("{}-{}", RequestedNodes(spec), spec.max_nodes());
  return std::to_string(RequestedNodes(spec));
}

// -d: JOB_GRES and a "  Nodes=... CPU_IDs=... Mem=... GRES=..." line per run of nodes with
// the same CPUs, memory and GPUs.
void AddDetails(const v1::Job& job, const ShowContext& ctx, Record& record) {
  uint64_t gpus = 0;
  for (const v1::NodeAllocation& node : job.allocation()) gpus += columns::AllocatedGpus(node);
  std::string type = AllocatedGpuType(job, ctx);
  std::string shared = columns::SharedGresOf(job.spec()).name;
  uint64_t shares = columns::AllocatedShares(job);
  std::vector<std::string> job_gres;
  if (gpus) job_gres.push_back(GpuGres(type, gpus));
  if (shares) job_gres.push_back(fmt::format("{}:{}", shared, shares));
  size_t drives = 0;
  for (const v1::NodeAllocation& node : job.allocation()) drives += node.nvme_size();
  if (drives) job_gres.push_back(fmt::format("nvme:{}", drives));
  record.lines.push_back("JOB_GRES=" + (job_gres.empty() ? "(null)" : Join(job_gres, ",")));
  std::vector<std::string> names;
  std::string last;
  auto flush = [&] {
    if (!names.empty())
      record.lines.push_back(fmt::format("  Nodes={} {}", CompressHostlist(names), last));
    names.clear();
  };
  for (const v1::NodeAllocation& node : job.allocation()) {
    std::string name = std::to_string(node.node());
    int threads = 1;
    if (ctx.cluster && node.node() >= 0 &&
        static_cast<size_t>(node.node()) < ctx.cluster->nodes.size()) {
      name = ctx.cluster->nodes[node.node()].name;
      threads = std::max(ctx.cluster->nodes[node.node()].threads_per_core, 1);
    }
    std::vector<uint32_t> cpu_ids;
    for (int core : node.cores())
      for (int t = 0; t < threads; ++t)
        cpu_ids.push_back(static_cast<uint32_t>(core * threads + t));
    std::string gres;
    if (node.gpus_size()) {
      std::vector<uint32_t> indexes(node.gpus().begin(), node.gpus().end());
      gres = fmt::format("{}(IDX:{})",
                         node.shares() ? fmt::format("{}:{}", shared, node.shares())
                                       : GpuGres(type, indexes.size()),
                         columns::ArrayRanges(indexes));
    }
    if (node.nvme_size()) {
      std::vector<uint32_t> held(node.nvme().begin(), node.nvme().end());
      gres += fmt::format("{}nvme:{}(IDX:{})", gres.empty() ? "" : ",", held.size(),
                          columns::ArrayRanges(held));
    }
    std::string rest = fmt::format("CPU_IDs={} Mem={} GRES={}", columns::ArrayRanges(cpu_ids),
                                   node.memory_mb(), gres);
    // Drover's: the GPUs' UUIDs where the node reported them (NVML), in IDX's order.
    if (std::any_of(node.gpu_uuids().begin(), node.gpu_uuids().end(),
                    [](const std::string& uuid) { return !uuid.empty(); }))
      rest += fmt::format(" GPU_UUIDs={}", fmt::join(node.gpu_uuids(), ","));
    if (rest != last) flush();
    last = rest;
    names.push_back(name);
  }
  flush();
}

void AddTresPer(const v1::JobSpec& spec, Record& record) {
  if (spec.gpus_per_node())
    record.lines.push_back("TresPerNode=gres:" + GpuGres(spec, spec.gpus_per_node()));
  if (spec.gpus()) record.lines.push_back("TresPerJob=gres:" + GpuGres(spec, spec.gpus()));
  if (spec.gpus_per_task())
    record.lines.push_back("TresPerTask=gres:" + GpuGres(spec, spec.gpus_per_task()));
  if (columns::SharedGres shares = columns::SharedGresOf(spec); shares.per_node)
    record.lines.push_back(fmt::format("TresPerNode=gres:{}:{}", shares.name, shares.per_node));
}

}  // namespace

std::string MemoryText(uint64_t mb) {
  if (mb && mb % (1024 * 1024) == 0) return fmt::format("{}T", mb / (1024 * 1024));
  if (mb && mb % 1024 == 0) return fmt::format("{}G", mb / 1024);
  return fmt::format("{}M", mb);
}

std::string TresText(uint32_t cpus, uint64_t memory_mb, uint32_t nodes, bool billing, uint64_t gpus,
                     const columns::SharedGres& shares) {
  std::string out = fmt::format("cpu={}", cpus);
  if (memory_mb) out += ",mem=" + MemoryText(memory_mb);
  if (nodes) out += fmt::format(",node={}", nodes);
  if (billing) out += fmt::format(",billing={}", cpus);
  if (gpus) out += fmt::format(",gres/gpu={}", gpus);
  if (shares.per_node) out += fmt::format(",gres/{}={}", shares.name, shares.per_node);
  return out;
}

std::string Render(std::span<const Record> records, bool one_liner) {
  const std::string_view separator = one_liner ? " " : "\n   ";
  std::string out;
  for (const Record& record : records) {
    for (size_t i = 0; i < record.lines.size(); ++i) {
      if (i) out += separator;
      out += record.lines[i];
    }
    if (record.trailing_separator) out += separator;
    out += one_liner ? "\n" : "\n\n";
  }
  return out;
}

namespace {

// JobId ... ExitCode (and DerivedExitCode with -d).
void AddStateLines(const v1::Job& job, const ShowContext& ctx, Record& record) {
  const v1::JobSpec& spec = job.spec();
  auto& lines = record.lines;
  std::string head = fmt::format("JobId={}", spec.job_id());
  if (spec.array_job_id() && spec.array_task_id() != kNoTask) {
    head += fmt::format(" ArrayJobId={} ArrayTaskId={}", spec.array_job_id(), spec.array_task_id());
    if (spec.array_max_running())
      head += fmt::format(" ArrayTaskThrottle={}", spec.array_max_running());
  }
  lines.push_back(head + " JobName=" + spec.name());
  lines.push_back(fmt::format("UserId={} GroupId={} MCS_label=N/A",
                              NameAndId(ctx.user_name, spec.uid()),
                              NameAndId(ctx.group_name, spec.gid())));
  lines.push_back(fmt::format("Priority={} Nice={} Account={} QOS={}", PriorityOf(job, ctx),
                              spec.nice(), OrNull(spec.account()), OrNull(spec.qos())));
  lines.push_back(fmt::format("JobState={} Reason={} Dependency={}", job.state(),
                              job.reason().empty() ? "None" : job.reason(),
                              DependencyText(spec.dependency())));
  lines.push_back(fmt::format("Requeue={} Restarts={} BatchFlag={} Reboot=0 ExitCode={}:{}",
                              spec.requeue() ? 1 : 0, job.restart_count(),
                              spec.interactive() ? 0 : 1, job.exit_code(), job.exit_signal()));
  if (ctx.details) lines.push_back("DerivedExitCode=0:0");
}

// RunTime ... Scheduler: a waiting job's StartTime is the plan's.
void AddTimeLines(const v1::Job& job, const ShowContext& ctx, const v1::PlannedStart* planned,
                  Record& record) {
  const v1::JobSpec& spec = job.spec();
  auto& lines = record.lines;
  int64_t limit = TimeLimit(job, ctx);
  lines.push_back(fmt::format(
      "RunTime={} TimeLimit={} TimeMin={}", FormatDurationPadded(RunTime(job, ctx.now)),
      LimitText(limit),
      spec.time_min_seconds() ? LimitText(spec.time_min_seconds()) : std::string("N/A")));
  int64_t eligible = EligibleTime(job);
  lines.push_back(fmt::format("SubmitTime={} EligibleTime={}", TimeOrUnknown(spec.submit_time()),
                              TimeOrUnknown(eligible)));
  lines.push_back("AccrueTime=" + TimeOrUnknown(eligible));
  int64_t start = Started(job)     ? job.start_time()
                  : planned        ? planned->start_time()
                  : IsPending(job) ? spec.begin_time()
                                   : 0;
  lines.push_back(fmt::format("StartTime={} EndTime={} Deadline={}", TimeOrUnknown(start),
                              EndTimeText(job, limit),
                              spec.deadline() ? columns::IsoTime(spec.deadline()) : "N/A"));
  int64_t evaluated = Started(job) ? job.start_time() : spec.submit_time();
  lines.push_back(fmt::format(
      "SuspendTime={} SecsPreSuspend={} LastSchedEval={} Scheduler={}",
      job.state() == "SUSPENDED" && job.suspend_time() ? columns::IsoTime(job.suspend_time())
                                                       : "None",
      job.state() == "SUSPENDED" ? RunTime(job, ctx.now) : 0, TimeOrUnknown(evaluated),
      job.sched_by() == "SchedBackfill" ? "Backfill" : "Main"));
}

// Partition ... MinCPUsNode: where the job runs or is planned to, and its size.
void AddNodeLines(const v1::Job& job, const ShowContext& ctx, const v1::PlannedStart* planned,
                  Record& record) {
  const v1::JobSpec& spec = job.spec();
  auto& lines = record.lines;
  lines.push_back(fmt::format("Partition={} AllocNode:Sid=(null):0", PartitionText(job, ctx)));
  std::vector<std::string> required(spec.nodelist().begin(), spec.nodelist().end());
  std::vector<std::string> excluded(spec.exclude().begin(), spec.exclude().end());
  lines.push_back(fmt::format("ReqNodeList={} ExcNodeList={}", OrNull(CompressHostlist(required)),
                              OrNull(CompressHostlist(excluded))));
  lines.push_back("NodeList=" + job.node_list() +
                  (planned && !planned->node_list().empty()
                       ? " SchedNodeList=" + planned->node_list()
                       : std::string()));
  if (job.allocation_size() && !spec.interactive()) {
    auto names = ExpandHostlist(job.node_list());
    if (!job.batch_host().empty())
      lines.push_back("BatchHost=" + job.batch_host());
    else if (names && !names->empty())
      lines.push_back("BatchHost=" + names->front());
  }
  Allocated allocated = AllocationOf(job, ctx);
  uint32_t cpus = job.allocation_size() ? allocated.cpus : RequestedCpus(spec);
  lines.push_back(fmt::format("NumNodes={} NumCPUs={} NumTasks={} CPUs/Task={} ReqB:S:C:T=0:0:*:*",
                              NumNodesText(job), cpus, Tasks(spec),
                              std::max<uint32_t>(spec.cpus_per_task(), 1)));
  std::string tres =
      job.allocation_size()
          ? TresText(allocated.cpus, allocated.memory_mb, job.allocation_size(), true,
                     allocated.gpus, allocated.shares)
          : TresText(cpus, RequestedMemory(spec, ctx), RequestedNodes(spec), true,
                     RequestedGpus(spec), columns::SharedGresOn(spec, RequestedNodes(spec)));
  lines.push_back("TRES=" + tres);
  lines.push_back(
      fmt::format("Socks/Node=* NtasksPerN:B:S:C={}:0:*:* CoreSpec=*", spec.ntasks_per_node()));
  if (ctx.details && job.allocation_size()) AddDetails(job, ctx, record);
  uint32_t min_cpus =
      std::max<uint32_t>(spec.ntasks_per_node(), 1) * std::max<uint32_t>(spec.cpus_per_task(), 1);
  lines.push_back(
      fmt::format("MinCPUsNode={} {} MinTmpDiskNode=0", min_cpus, MinMemoryText(spec, ctx)));
}

// Features ... StdOut: what the job asked for besides its size, and its files.
void AddRequestLines(const v1::Job& job, Record& record) {
  const v1::JobSpec& spec = job.spec();
  auto& lines = record.lines;
  lines.push_back(fmt::format("Features={} DelayBoot=00:00:00", OrNull(spec.constraint())));
  if (!spec.prefer().empty()) lines.push_back("Prefer=" + spec.prefer());
  if (!spec.reservation().empty()) lines.push_back("Reservation=" + spec.reservation());
  lines.push_back(fmt::format("OverSubscribe={} Contiguous={} Licenses={} Network=(null)",
                              spec.exclusive() || job.exclusive() ? "NO"
                              : spec.oversubscribe()              ? "YES"
                                                                  : "OK",
                              spec.contiguous() ? 1 : 0,
                              OrNull(NormalisedLicenses(spec.licenses()))));
  lines.push_back("Command=(null)");
  lines.push_back("WorkDir=" + OrNull(spec.work_dir()));
  if (!spec.admin_comment().empty()) lines.push_back("AdminComment=" + spec.admin_comment());
  if (!spec.comment().empty()) lines.push_back("Comment=" + spec.comment());
  if (!spec.interactive()) {
    std::string out = StdoutPath(job);
    lines.push_back("StdErr=" +
                    (spec.stderr_path().empty() ? out : OtherPath(spec.stderr_path(), job)));
    lines.push_back("StdIn=" +
                    (spec.stdin_path().empty() ? "/dev/null" : OtherPath(spec.stdin_path(), job)));
    lines.push_back("StdOut=" + out);
  }
  lines.push_back("Power=");
}

}  // namespace

Record JobRecord(const v1::Job& job, const ShowContext& ctx) {
  Record record;
  record.trailing_separator = true;
  auto plan = ctx.planned.find(job.spec().job_id());
  const v1::PlannedStart* planned = plan == ctx.planned.end() ? nullptr : &plan->second;
  AddStateLines(job, ctx, record);
  AddTimeLines(job, ctx, planned, record);
  AddNodeLines(job, ctx, planned, record);
  AddRequestLines(job, record);
  AddTresPer(job.spec(), record);
  // --mail-type: whom and for what, as Slurm prints it for a job that mails.
  if (!job.spec().mail_type().empty())
    record.lines.push_back(
        fmt::format("MailUser={} MailType={}", job.spec().mail_user(), job.spec().mail_type()));
  return record;
}

}  // namespace drover::cli::scontrol
