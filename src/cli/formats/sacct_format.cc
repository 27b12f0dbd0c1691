// sacct's table from job records (see formats.h): Slurm 22.05's field names, widths and
// truncation ("CANCELLED+"), its parsable forms, a job's batch step, and requeued runs (-D).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <pwd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <deque>
#include <map>
#include <optional>

#include "cli/formats/formats.h"
#include "common/duration.h"
#include "common/hostlist.h"
#include "common/text.h"

namespace drover::cli {
namespace {

constexpr uint32_t kNoTask = UINT32_MAX;
constexpr std::string_view kDefaultFields =
    "jobid,jobname,partition,account,alloccpus,state,exitcode";
constexpr std::string_view kBriefFields = "jobid,state,exitcode";

enum class Kind { kText, kNumber, kTime };  // how print_fields prints it: cut with '+', or not
// clang-format off
enum class Id {
  kUnknown, kAccount, kAllocCpus, kAllocNodes, kAllocTres, kCluster, kComment, kConstraints,
  kCpuTime, kCpuTimeRaw, kDerivedExitCode, kElapsed, kElapsedRaw, kEligible, kEnd, kExitCode, kGid,
  kGroup, kJobId, kJobIdRaw, kJobName, kNNodes, kNodeList, kNTasks, kPartition, kQos, kReason,
  kReqCpus, kReqMem, kReqNodes, kReqTres, kReservation, kStart, kState, kSubmit, kSuspended,
  kTimelimit, kTimelimitRaw, kUid, kUser, kWorkDir, kReserved, kResvCpu, kResvCpuRaw, kFlags,
  kAdminComment,
  // Measured use (a step's own; the job's row sums the CPU times of its ended steps).
  kTotalCpu, kUserCpu, kSystemCpu, kAveCpu, kMinCpu, kMinCpuNode, kMinCpuTask, kAveRss, kMaxRss,
  kMaxRssNode, kMaxRssTask, kTresInAve, kTresInMax, kTresInMaxNode, kTresInMaxTask, kTresInMin,
  kTresInMinNode, kTresInMinTask, kTresInTot,
  kAllocGpus,  // Drover's: the job's GPUs by node, index and UUID
};
// clang-format on

struct Field {
  std::string_view name;
  int width;  // negative: left-justified
  Kind kind;
  Id id;
  // What Slurm prints for a job and for a step when nothing is gathered (jobacct_gather/none).
  const char* job_constant = nullptr;
  const char* step_constant = nullptr;
};

// Every field of sacct 22.05, in its order (prefixes match the first). Fields the records do
// not hold (disk, pages and virtual memory statistics, ...) print blank; energy is 0, as
// Slurm's with no energy plugin.
// clang-format off
constexpr Field kFields[] = {
    {"Account", 10, Kind::kText, Id::kAccount}, {"AdminComment", 15, Kind::kText, Id::kAdminComment},
    {"AllocCPUS", 10, Kind::kNumber, Id::kAllocCpus},
    {"AllocNodes", 10, Kind::kText, Id::kAllocNodes},
    {"AllocTRES", 10, Kind::kText, Id::kAllocTres}, {"AssocID", 7, Kind::kNumber, Id::kUnknown},
    {"AveCPU", 10, Kind::kText, Id::kAveCpu},
    {"AveCPUFreq", 10, Kind::kText, Id::kUnknown, nullptr, "0"},
    {"AveDiskRead", 14, Kind::kText, Id::kUnknown},
    {"AveDiskWrite", 14, Kind::kText, Id::kUnknown}, {"AvePages", 10, Kind::kText, Id::kUnknown},
    {"AveRSS", 10, Kind::kText, Id::kAveRss}, {"AveVMSize", 10, Kind::kText, Id::kUnknown},
    {"BlockID", 16, Kind::kText, Id::kUnknown}, {"Cluster", 10, Kind::kText, Id::kCluster},
    {"Comment", 14, Kind::kText, Id::kComment}, {"Constraints", 19, Kind::kText, Id::kConstraints},
    {"ConsumedEnergy", 14, Kind::kText, Id::kUnknown, nullptr, "0"},
    {"ConsumedEnergyRaw", 17, Kind::kNumber, Id::kUnknown, nullptr, "0"},
    {"Container", 19, Kind::kText, Id::kUnknown}, {"CPUTime", 10, Kind::kTime, Id::kCpuTime},
    {"CPUTimeRAW", 10, Kind::kNumber, Id::kCpuTimeRaw},
    {"DBIndex", 10, Kind::kNumber, Id::kUnknown},
    {"DerivedExitCode", 15, Kind::kText, Id::kDerivedExitCode},
    {"Elapsed", 10, Kind::kTime, Id::kElapsed}, {"ElapsedRaw", 10, Kind::kNumber, Id::kElapsedRaw},
    {"Eligible", 19, Kind::kTime, Id::kEligible}, {"End", 19, Kind::kTime, Id::kEnd},
    {"ExitCode", 8, Kind::kText, Id::kExitCode}, {"Flags", 19, Kind::kText, Id::kFlags},
    {"GID", 6, Kind::kNumber, Id::kGid}, {"Group", 9, Kind::kText, Id::kGroup},
    {"JobID", -12, Kind::kText, Id::kJobId}, {"JobIDRaw", -12, Kind::kText, Id::kJobIdRaw},
    {"JobName", 10, Kind::kText, Id::kJobName},
    {"Layout", 9, Kind::kText, Id::kUnknown, nullptr, "Unknown"},
    {"MaxDiskRead", 12, Kind::kText, Id::kUnknown},
    {"MaxDiskReadNode", 15, Kind::kText, Id::kUnknown},
    {"MaxDiskReadTask", 15, Kind::kNumber, Id::kUnknown},
    {"MaxDiskWrite", 12, Kind::kText, Id::kUnknown},
    {"MaxDiskWriteNode", 16, Kind::kText, Id::kUnknown},
    {"MaxDiskWriteTask", 16, Kind::kNumber, Id::kUnknown},
    {"MaxPages", 8, Kind::kText, Id::kUnknown}, {"MaxPagesNode", 12, Kind::kText, Id::kUnknown},
    {"MaxPagesTask", 14, Kind::kNumber, Id::kUnknown}, {"MaxRSS", 10, Kind::kText, Id::kMaxRss},
    {"MaxRSSNode", 10, Kind::kText, Id::kMaxRssNode}, {"MaxRSSTask", 10, Kind::kNumber, Id::kMaxRssTask},
    {"MaxVMSize", 10, Kind::kText, Id::kUnknown}, {"MaxVMSizeNode", 14, Kind::kText, Id::kUnknown},
    {"MaxVMSizeTask", 14, Kind::kNumber, Id::kUnknown},
    {"McsLabel", 12, Kind::kText, Id::kUnknown}, {"MinCPU", 10, Kind::kText, Id::kMinCpu},
    {"MinCPUNode", 10, Kind::kText, Id::kMinCpuNode}, {"MinCPUTask", 10, Kind::kNumber, Id::kMinCpuTask},
    {"NCPUS", 10, Kind::kNumber, Id::kAllocCpus}, {"NNodes", 8, Kind::kNumber, Id::kNNodes},
    {"NodeList", 15, Kind::kText, Id::kNodeList}, {"NTasks", 8, Kind::kNumber, Id::kNTasks},
    {"Partition", 10, Kind::kText, Id::kPartition}, {"Priority", 10, Kind::kNumber, Id::kUnknown},
    {"QOS", 10, Kind::kText, Id::kQos}, {"QOSRAW", 6, Kind::kNumber, Id::kUnknown},
    {"Reason", 22, Kind::kText, Id::kReason},
    {"ReqCPUFreq", 10, Kind::kText, Id::kUnknown, "Unknown", "0"},
    {"ReqCPUFreqGov", 13, Kind::kText, Id::kUnknown, "Unknown", "0"},
    {"ReqCPUFreqMax", 13, Kind::kText, Id::kUnknown, "Unknown", "0"},
    {"ReqCPUFreqMin", 13, Kind::kText, Id::kUnknown, "Unknown", "0"},
    {"ReqCPUS", 8, Kind::kNumber, Id::kReqCpus}, {"ReqMem", 10, Kind::kText, Id::kReqMem},
    {"ReqNodes", 8, Kind::kText, Id::kReqNodes}, {"ReqTRES", 10, Kind::kText, Id::kReqTres},
    {"Reservation", 20, Kind::kText, Id::kReservation},
    {"ReservationId", 13, Kind::kNumber, Id::kUnknown},
    {"Reserved", 10, Kind::kTime, Id::kReserved}, {"ResvCPU", 10, Kind::kTime, Id::kResvCpu},
    {"ResvCPURAW", 10, Kind::kNumber, Id::kResvCpuRaw}, {"Start", 19, Kind::kTime, Id::kStart},
    {"State", 10, Kind::kText, Id::kState}, {"Submit", 19, Kind::kTime, Id::kSubmit},
    {"SubmitLine", 20, Kind::kText, Id::kUnknown}, {"Suspended", 10, Kind::kTime, Id::kSuspended},
    {"SystemComment", 15, Kind::kText, Id::kUnknown},
    {"SystemCPU", 10, Kind::kText, Id::kSystemCpu},
    {"Timelimit", 10, Kind::kText, Id::kTimelimit},
    {"TimelimitRaw", 10, Kind::kText, Id::kTimelimitRaw},
    {"TotalCPU", 10, Kind::kText, Id::kTotalCpu},
    {"TRESUsageInAve", 14, Kind::kText, Id::kTresInAve},
    {"TRESUsageInMax", 14, Kind::kText, Id::kTresInMax},
    {"TRESUsageInMaxNode", 18, Kind::kText, Id::kTresInMaxNode},
    {"TRESUsageInMaxTask", 18, Kind::kText, Id::kTresInMaxTask},
    {"TRESUsageInMin", 14, Kind::kText, Id::kTresInMin},
    {"TRESUsageInMinNode", 18, Kind::kText, Id::kTresInMinNode},
    {"TRESUsageInMinTask", 18, Kind::kText, Id::kTresInMinTask},
    {"TRESUsageInTot", 14, Kind::kText, Id::kTresInTot},
    {"TRESUsageOutAve", 15, Kind::kText, Id::kUnknown},
    {"TRESUsageOutMax", 15, Kind::kText, Id::kUnknown},
    {"TRESUsageOutMaxNode", 19, Kind::kText, Id::kUnknown},
    {"TRESUsageOutMaxTask", 19, Kind::kText, Id::kUnknown},
    {"TRESUsageOutMin", 15, Kind::kText, Id::kUnknown},
    {"TRESUsageOutMinNode", 19, Kind::kText, Id::kUnknown},
    {"TRESUsageOutMinTask", 19, Kind::kText, Id::kUnknown},
    {"TRESUsageOutTot", 15, Kind::kText, Id::kUnknown}, {"UID", 6, Kind::kNumber, Id::kUid},
    {"User", 9, Kind::kText, Id::kUser},
    {"UserCPU", 10, Kind::kText, Id::kUserCpu},
    {"WCKey", 10, Kind::kText, Id::kUnknown}, {"WCKeyID", 10, Kind::kNumber, Id::kUnknown, "0"},
    {"WorkDir", 20, Kind::kText, Id::kWorkDir},
};
// Drover's own: found after Slurm's (so that none of their prefixes finds these first), and
// neither in ALL nor in --helpformat, which stay Slurm's.
constexpr Field kDroverFields[] = {
    {"AllocGPUs", 30, Kind::kText, Id::kAllocGpus},
};
// clang-format on

// One run of a job: the current one, or an earlier one kept in its history.
struct Run {
  int64_t start = 0, end = 0, suspended = 0;
  std::string state = {};
  int32_t exit_code = 0, exit_signal = 0;
  std::vector<std::string> nodes = {};
  uint32_t cpus = 0, first_node_cpus = 0, gpus = 0;
  uint64_t memory_mb = 0, first_node_memory_mb = 0;
  columns::SharedGres shares = {};  // the GPU shares held (or asked for, pending), in all
  bool started() const { return start != 0; }
};

struct Row {
  const v1::Job* job;
  Run run;
  bool batch = false;                  // the ".batch" step
  const v1::Step* step = nullptr;      // an srun step ("N.0")
  std::vector<uint32_t> folded_tasks;  // pending array tasks shown as "123_[1-5]"
  bool current = true;                 // the job's current run (-D shows earlier ones too)
};

struct Context {
  const SacctOptions& options;
};

uint32_t RequestedNodes(const v1::JobSpec& spec) {
  return std::max<uint32_t>(spec.min_nodes(), 1);
}

uint64_t RequestedMemory(const v1::JobSpec& spec, const Context& ctx) {
  uint32_t cpus = columns::RequestedCpus(spec), nodes = RequestedNodes(spec);
  if (spec.mem_per_node_mb()) return spec.mem_per_node_mb() * nodes;
  if (spec.mem_per_cpu_mb()) return spec.mem_per_cpu_mb() * cpus;
  const ClusterConfig* cluster = ctx.options.cluster;
  if (!cluster) return 0;
  if (cluster->settings.def_mem_per_cpu_mb) return cluster->settings.def_mem_per_cpu_mb * cpus;
  return cluster->settings.def_mem_per_node_mb * nodes;
}

uint32_t RequestedGpus(const v1::JobSpec& spec) {
  if (spec.gpus()) return spec.gpus();
  if (spec.gpus_per_node()) return spec.gpus_per_node() * RequestedNodes(spec);
  return spec.gpus_per_task() * std::max<uint32_t>(spec.ntasks(), 1);
}

std::string MemoryText(uint64_t mb) {
  if (mb && mb % (1024 * 1024) == 0) return fmt::format("{}T", mb / (1024 * 1024));
  if (mb && mb % 1024 == 0) return fmt::format("{}G", mb / 1024);
  return fmt::format("{}M", mb);
}

// Slurm's TRES string, sorted by name: "billing=2,cpu=2,gres/gpu=1,mem=200M,node=1".
std::string TresText(uint32_t cpus, uint32_t gpus, uint64_t memory_mb, size_t nodes, bool billing,
                     const columns::SharedGres& shares = {}) {
  std::string out = billing ? fmt::format("billing={},", cpus) : "";
  out += fmt::format("cpu={}", cpus);
  if (gpus) out += fmt::format(",gres/gpu={}", gpus);
  if (shares.per_node) out += fmt::format(",gres/{}={}", shares.name, shares.per_node);
  if (memory_mb) out += ",mem=" + MemoryText(memory_mb);
  return out + fmt::format(",node={}", nodes);
}

// -T: a run's start and end cut to the window (a running job's end is the window's).
void Truncate(Run& run, const Context& ctx) {
  const SacctSelection* selection = ctx.options.selection;
  if (!selection || !selection->truncate || !run.started()) return;
  run.start = std::max(run.start, selection->start);
  if (selection->end && (run.end == 0 || run.end > selection->end)) run.end = selection->end;
}

Run CurrentRun(const v1::Job& job, const Context& ctx) {
  Run run{.start = job.start_time(),
          .end = job.end_time(),
          .suspended = job.suspended_seconds(),
          .state = job.state(),
          .exit_code = job.exit_code(),
          .exit_signal = job.exit_signal()};
  if (job.state() == "PENDING") run.start = run.end = 0;
  if (job.state() == "RUNNING" || job.state() == "SUSPENDED") run.end = 0;
  Truncate(run, ctx);
  run.shares = {columns::SharedGresOf(job.spec()).name, columns::AllocatedShares(job)};
  if (auto names = ExpandHostlist(job.node_list()); names) run.nodes = std::move(names).value();
  for (int i = 0; i < job.allocation_size(); ++i) {
    const v1::NodeAllocation& node = job.allocation(i);
    uint32_t cpus = columns::AllocatedCpus(node, ctx.options.cluster);
    run.cpus += cpus;
    run.memory_mb += node.memory_mb();
    run.gpus += static_cast<uint32_t>(columns::AllocatedGpus(node));
    if (i == 0) run.first_node_cpus = cpus, run.first_node_memory_mb = node.memory_mb();
  }
  return run;
}

Run EarlierRun(const v1::Job& job, const v1::JobRun& earlier, const Context& ctx) {
  Run run{.start = earlier.start_time(),
          .end = earlier.end_time(),
          .state = earlier.state(),
          .exit_code = earlier.exit_code(),
          .exit_signal = earlier.exit_signal(),
          .cpus = columns::RequestedCpus(job.spec())};
  const ClusterConfig* cluster = ctx.options.cluster;
  for (int node : earlier.nodes())
    if (cluster && node >= 0 && static_cast<size_t>(node) < cluster->nodes.size())
      run.nodes.push_back(cluster->nodes[node].name);
  run.first_node_cpus = run.cpus / std::max<uint32_t>(earlier.nodes_size(), 1);
  run.memory_mb = RequestedMemory(job.spec(), ctx);
  run.gpus = RequestedGpus(job.spec());
  run.shares = columns::SharedGresOn(job.spec(), std::max(earlier.nodes_size(), 1));
  return run;
}

// A memory figure as sacct's convert_num_unit prints it, `value` counted in kUnits[`unit`]
// (0: bytes, 2: MB): with --noconvert as it is, with its unit's letter; in --units' unit; else
// scaled by 1024 while it stays a whole or half unit ("1036K", "1.50M", "2G"). 0 is "0".
constexpr std::string_view kUnits = " KMGTP";
std::string SizeText(uint64_t value, size_t unit, const Context& ctx) {
  if (value == 0) return "0";
  auto scaled = static_cast<double>(value);
  size_t forced = ctx.options.units ? kUnits.find(ctx.options.units) : std::string_view::npos;
  if (forced != std::string_view::npos && forced != 0) {
    for (; unit < forced; ++unit) scaled /= 1024;
    for (; unit > forced; --unit) scaled *= 1024;
  } else if (!ctx.options.no_convert) {
    for (; scaled >= 1024 && std::fmod(std::floor(scaled), 512) == 0 && unit + 1 < kUnits.size();
         ++unit)
      scaled /= 1024;
  }
  std::string suffix = unit ? std::string(1, kUnits[unit]) : "";
  if (scaled == std::floor(scaled))
    return fmt::format("{}{}", static_cast<uint64_t>(scaled), suffix);
  return fmt::format("{:.2f}{}", scaled, suffix);
}

bool EndedByController(std::string_view state) {  // the job's own exit code then reads 0:0
  return state == "CANCELLED" || state == "TIMEOUT" || state == "NODE_FAIL" ||
         state == "PREEMPTED" || state == "BOOT_FAIL" || state == "DEADLINE" || state == "REQUEUED";
}

// Slurm's SLURM_EXTERN_CONT: the step that holds a job's allocation under PrologFlags=Contain.
constexpr uint32_t kExternStep = 0xfffffffc;

std::string StepIdText(uint32_t id) {
  return id == kExternStep ? "extern" : std::to_string(id);
}

// The extern step Slurm records for every started job when PrologFlags has Contain (or X11,
// which implies it): all the job's nodes and CPUs, one task per node, from start to end.
std::optional<v1::Step> ExternStep(const Run& run, const Context& ctx) {
  const ClusterConfig* cluster = ctx.options.cluster;
  if (!cluster || !run.started() || run.nodes.empty()) return std::nullopt;
  const std::vector<std::string>& flags = cluster->settings.prolog_flags;
  if (std::find(flags.begin(), flags.end(), "CONTAIN") == flags.end() &&
      std::find(flags.begin(), flags.end(), "X11") == flags.end())
    return std::nullopt;
  v1::Step step;
  step.set_step_id(kExternStep);
  step.set_name("extern");
  step.set_start_time(run.start);
  step.set_end_time(run.end);
  step.set_state(!run.end ? "RUNNING" : EndedByController(run.state) ? "CANCELLED" : "COMPLETED");
  step.set_ntasks(static_cast<uint32_t>(run.nodes.size()));
  for (size_t i = 0; i < run.nodes.size(); ++i) step.add_nodes(static_cast<int32_t>(i));
  step.set_node_list(CompressHostlist(run.nodes));
  step.set_cpus(run.cpus);
  return step;
}

std::string JobIdText(const Row& row) {
  const v1::JobSpec& spec = row.job->spec();
  std::string id = std::to_string(spec.job_id());
  if (!row.folded_tasks.empty())
    id = fmt::format("{}_[{}]", spec.array_job_id(), columns::ArrayRanges(row.folded_tasks));
  else if (spec.array_job_id() && spec.array_task_id() != kNoTask)
    id = fmt::format("{}_{}", spec.array_job_id(), spec.array_task_id());
  if (row.step) return fmt::format("{}.{}", id, StepIdText(row.step->step_id()));
  return row.batch ? id + ".batch" : id;
}

// The partition it ran in, else the ones it asked for, else the default one.
std::string PartitionText(const v1::Job& job, const Context& ctx) {
  if (!job.partition_name().empty()) return job.partition_name();
  const v1::JobSpec& spec = job.spec();
  if (spec.partitions_size())
    return Join({spec.partitions().begin(), spec.partitions().end()}, ",");
  const ClusterConfig* cluster = ctx.options.cluster;
  int fallback = cluster ? cluster->DefaultPartition() : -1;
  return fallback >= 0 ? cluster->partitions[fallback].name : "";
}

std::string StateText(const Row& row) {
  const std::string& state = row.run.state;
  if (row.batch) return EndedByController(state) ? "CANCELLED" : state;
  if (row.step) return state;
  if (state == "CANCELLED") return fmt::format("CANCELLED by {}", row.job->cancelled_by());
  return state;
}

// --use-local-uid: the UID this machine's passwd gives the user, else the recorded one.
uint32_t UidOf(const v1::JobSpec& spec, const Context& ctx) {
  if (!ctx.options.use_local_uid || spec.user().empty()) return spec.uid();
  struct passwd entry {};
  struct passwd* found = nullptr;
  char buffer[4096];
  getpwnam_r(spec.user().c_str(), &entry, buffer, sizeof buffer, &found);
  return found ? found->pw_uid : spec.uid();
}

int64_t Elapsed(const Row& row, const Context& ctx) {
  if (!row.run.started()) return 0;
  int64_t end = row.run.end ? row.run.end : ctx.options.now;
  return std::max<int64_t>(0, end - row.run.start - row.run.suspended);
}

// How long a started job waited once eligible.
std::optional<int64_t> Reserved(const Row& row) {
  const v1::JobSpec& spec = row.job->spec();
  if (!row.run.started()) return std::nullopt;
  int64_t eligible = spec.begin_time() ? spec.begin_time() : spec.submit_time();
  return std::max<int64_t>(0, row.run.start - eligible);
}

uint32_t Cpus(const Row& row) {
  if (row.batch) return row.run.first_node_cpus;
  if (row.step) return row.step->cpus();
  if (row.run.started()) return row.run.cpus;
  return row.run.state == "PENDING" ? 0 : columns::RequestedCpus(row.job->spec());
}

std::string TimelimitText(const v1::Job& job, bool raw) {
  int64_t limit =
      job.time_limit_seconds() ? job.time_limit_seconds() : job.spec().time_limit_seconds();
  if (limit == 0) return "Partition_Limit";
  if (columns::IsUnlimited(limit)) return "UNLIMITED";
  return raw ? std::to_string(limit / 60) : FormatDurationPadded(limit);
}

std::string AllocTres(const Run& run) {
  return TresText(run.cpus, run.gpus, run.memory_mb, run.nodes.size(), true, run.shares);
}

std::string ReqTres(const Row& row, const Context& ctx) {
  const v1::JobSpec& spec = row.job->spec();
  if (row.run.started() && row.run.cpus) return AllocTres(row.run);
  return TresText(columns::RequestedCpus(spec), RequestedGpus(spec), RequestedMemory(spec, ctx),
                  RequestedNodes(spec), true, columns::SharedGresOn(spec, RequestedNodes(spec)));
}

// "n1:0=GPU-1f…,n1:1=GPU-77…": each GPU of the job's current run by node, index and UUID (the
// index alone where the node reported none); blank without GPUs.
std::optional<std::string> AllocGpus(const v1::Job& job, const Context& ctx) {
  std::vector<std::string> parts;
  const ClusterConfig* cluster = ctx.options.cluster;
  for (const v1::NodeAllocation& node : job.allocation()) {
    std::string name =
        cluster && node.node() >= 0 && static_cast<size_t>(node.node()) < cluster->nodes.size()
            ? cluster->nodes[node.node()].name
            : std::to_string(node.node());
    for (int i = 0; i < node.gpus_size(); ++i) {
      const std::string& uuid = i < node.gpu_uuids_size() ? node.gpu_uuids(i) : std::string();
      parts.push_back(uuid.empty() ? fmt::format("{}:{}", name, node.gpus(i))
                                   : fmt::format("{}:{}={}", name, node.gpus(i), uuid));
    }
  }
  if (parts.empty()) return std::nullopt;
  return Join(parts, ",");
}

// A batch step's own value; "" blank, nullopt the job's.
std::optional<std::string> StepValue(Id id, const Row& row) {
  const Run& run = row.run;
  // clang-format off
  switch (id) {
    case Id::kAllocNodes: case Id::kNNodes:
      return row.step ? std::to_string(row.step->nodes_size()) : "1";
    case Id::kNTasks: return row.step ? std::to_string(row.step->ntasks()) : "1";
    case Id::kAllocTres:
      if (row.step) return TresText(row.step->cpus(), 0, 0, row.step->nodes_size(), false);
      return TresText(run.first_node_cpus, 0, run.first_node_memory_mb, 1, false);
    case Id::kEligible: case Id::kSubmit: return columns::IsoTime(run.start);
    case Id::kJobName: return row.step ? row.step->name() : "batch";
    case Id::kNodeList:
      if (row.step) return row.step->node_list();
      return run.nodes.empty() ? "" : run.nodes.front();
    case Id::kAdminComment: case Id::kComment: case Id::kConstraints: case Id::kDerivedExitCode:
    case Id::kGid: case Id::kGroup: case Id::kPartition: case Id::kQos: case Id::kReason:
    case Id::kReqMem: case Id::kReqTres: case Id::kReservation: case Id::kReserved: case Id::kResvCpu:
    case Id::kResvCpuRaw: case Id::kTimelimit: case Id::kTimelimitRaw: case Id::kUid:
    case Id::kUser: case Id::kWorkDir: case Id::kAllocGpus:
      return "";
    default: return std::nullopt;
  }
  // clang-format on
}

// Whole microseconds (as Slurm keeps CPU times), at most 285,000 years: the figures come
// from the user's srun, bounded but not trusted.
uint64_t Microseconds(double seconds) {
  constexpr double kMost = 9e12;  // seconds: 9e18 microseconds still fit
  return static_cast<uint64_t>(std::llround(std::clamp(seconds, 0.0, kMost) * 1e6));
}

// sacct's TotalCPU, UserCPU and SystemCPU: milliseconds under an hour ("01:05.500"), whole
// seconds from an hour up ("01:02:05", "1-01:00:00"), "00:MM:SS" with no milliseconds.
std::string CpuTimeText(double seconds) {
  uint64_t micros = Microseconds(seconds);
  uint64_t whole = micros / 1000000, ms = micros % 1000000 / 1000;
  uint64_t days = whole / 86400, hours = whole / 3600 % 24, minutes = whole / 60 % 60;
  if (days) return fmt::format("{}-{:02}:{:02}:{:02}", days, hours, minutes, whole % 60);
  if (hours) return fmt::format("{:02}:{:02}:{:02}", hours, minutes, whole % 60);
  if (ms) return fmt::format("{:02}:{:02}.{:03}", minutes, whole % 60, ms);
  return fmt::format("00:{:02}:{:02}", minutes, whole % 60);
}

// What a step row's tasks used (the batch script's for .batch); nullptr when nothing was
// measured (a running step, the extern step, an earlier run's batch step).
const v1::Usage* UsageOf(const Row& row) {
  const v1::Usage* usage = nullptr;
  if (row.step) usage = &row.step->task_usage();
  if (row.batch && row.current) usage = &row.job->batch_usage();
  return usage && usage->tasks() ? usage : nullptr;
}

// The job row's CPU times: the sum over its ended steps, as sacct adds them; 0 with -X, which
// fetches no steps.
struct CpuTimes {
  double user = 0, system = 0;
};
CpuTimes JobCpuTimes(const Row& row, const Context& ctx) {
  CpuTimes sum;
  if (!row.current || ctx.options.allocations) return sum;
  const v1::Job& job = *row.job;
  auto add = [&](const v1::Usage& usage) {
    sum.user += usage.user_cpu_seconds();
    sum.system += usage.system_cpu_seconds();
  };
  if (SacctShowsRow(ctx.options.selection, job, "batch")) add(job.batch_usage());
  for (const v1::Step& step : job.steps())
    if (step.end_time() && SacctShowsRow(ctx.options.selection, job, StepIdText(step.step_id())))
      add(step.task_usage());
  return sum;
}

// TRESUsageIn*: the measured TRES (cpu and mem; energy, disk, pages and vmem are not gathered,
// and Slurm leaves out what it did not gather) in Slurm's order.
enum class TresPart { kValue, kNode, kTask };
std::string TresUsageText(const v1::UsageStat& cpu, const v1::UsageStat& rss, TresPart part,
                          double cpu_value, uint64_t rss_bytes, bool max, const Context& ctx) {
  switch (part) {
    case TresPart::kNode:
      return fmt::format("cpu={},mem={}", max ? cpu.max_node() : cpu.min_node(),
                         max ? rss.max_node() : rss.min_node());
    case TresPart::kTask:
      return fmt::format("cpu={},mem={}", max ? cpu.max_task() : cpu.min_task(),
                         max ? rss.max_task() : rss.min_task());
    case TresPart::kValue:
      break;
  }
  return fmt::format("cpu={},mem={}",
                     FormatDurationPadded(static_cast<int64_t>(Microseconds(cpu_value) / 1000000)),
                     SizeText(rss_bytes, 0, ctx));
}

// The measured-use fields; nullopt prints blank.
std::optional<std::string> UsageValue(Id id, const Row& row, const Context& ctx) {
  if (!row.batch && !row.step) {
    CpuTimes times = JobCpuTimes(row, ctx);
    switch (id) {
      case Id::kTotalCpu:
        return CpuTimeText(times.user + times.system);
      case Id::kUserCpu:
        return CpuTimeText(times.user);
      case Id::kSystemCpu:
        return CpuTimeText(times.system);
      default:
        return std::nullopt;  // the statistics belong to steps
    }
  }
  const v1::Usage* usage = UsageOf(row);
  if (!usage) {
    bool time = id == Id::kTotalCpu || id == Id::kUserCpu || id == Id::kSystemCpu;
    return time ? std::optional<std::string>("00:00:00") : std::nullopt;
  }
  const v1::UsageStat& cpu = usage->cpu();
  const v1::UsageStat& rss = usage->rss();
  // Averages as Slurm takes them: the total over the tasks, in whole milliseconds and bytes.
  double ave_cpu = std::floor(cpu.total() * 1000 / usage->tasks()) / 1000;
  auto bytes = [](double kib) { return static_cast<uint64_t>(std::clamp(kib, 0.0, 1e15) * 1024); };
  uint64_t ave_rss = bytes(rss.total()) / usage->tasks();
  // clang-format off
  switch (id) {
    case Id::kTotalCpu: return CpuTimeText(usage->user_cpu_seconds() + usage->system_cpu_seconds());
    case Id::kUserCpu: return CpuTimeText(usage->user_cpu_seconds());
    case Id::kSystemCpu: return CpuTimeText(usage->system_cpu_seconds());
    case Id::kAveCpu: return CpuTimeText(std::floor(ave_cpu));
    case Id::kMinCpu: return CpuTimeText(std::floor(cpu.min()));
    case Id::kMinCpuNode: return cpu.min_node();
    case Id::kMinCpuTask: return std::to_string(cpu.min_task());
    case Id::kAveRss: return SizeText(ave_rss, 0, ctx);
    case Id::kMaxRss: return SizeText(bytes(rss.max()), 0, ctx);
    case Id::kMaxRssNode: return rss.max_node();
    case Id::kMaxRssTask: return std::to_string(rss.max_task());
    case Id::kTresInAve: return TresUsageText(cpu, rss, TresPart::kValue, ave_cpu, ave_rss, true, ctx);
    case Id::kTresInMax: return TresUsageText(cpu, rss, TresPart::kValue, cpu.max(), bytes(rss.max()), true, ctx);
    case Id::kTresInMaxNode: return TresUsageText(cpu, rss, TresPart::kNode, 0, 0, true, ctx);
    case Id::kTresInMaxTask: return TresUsageText(cpu, rss, TresPart::kTask, 0, 0, true, ctx);
    case Id::kTresInMin: return TresUsageText(cpu, rss, TresPart::kValue, cpu.min(), bytes(rss.min()), false, ctx);
    case Id::kTresInMinNode: return TresUsageText(cpu, rss, TresPart::kNode, 0, 0, false, ctx);
    case Id::kTresInMinTask: return TresUsageText(cpu, rss, TresPart::kTask, 0, 0, false, ctx);
    case Id::kTresInTot: return TresUsageText(cpu, rss, TresPart::kValue, cpu.total(), bytes(rss.total()), true, ctx);
    default: return std::nullopt;
  }
  // clang-format on
}

bool IsUsageField(Id id) {
  return id >= Id::kTotalCpu && id <= Id::kTresInTot;
}

// A field's fixed value on this row, or nullptr: the batch and extern steps have the step's,
// the job and its srun steps the job's, but energy is 0 on every step (no energy plugin).
const char* Constant(const Field& field, const Row& row) {
  bool step = row.batch || (row.step && row.step->step_id() == kExternStep);
  if (row.step && !step && field.name.starts_with("ConsumedEnergy")) return field.step_constant;
  return step ? field.step_constant : field.job_constant;
}

// nullopt prints blank. A batch step has values of its own (StepValue), else the job's.
std::optional<std::string> Value(Id id, const Row& row, const Context& ctx) {
  if (IsUsageField(id)) return UsageValue(id, row, ctx);
  if (row.batch || row.step) {
    std::optional<std::string> step = StepValue(id, row);
    if (step) return step->empty() ? std::nullopt : step;
  }
  const v1::Job& job = *row.job;
  const v1::JobSpec& spec = job.spec();
  const Run& run = row.run;
  auto or_blank = [](const std::string& text) {
    return text.empty() ? std::nullopt : std::optional(text);
  };
  std::optional<int64_t> reserved = Reserved(row);
  // clang-format off
  switch (id) {
    case Id::kAccount: return or_blank(spec.account());
    case Id::kAllocCpus: return std::to_string(Cpus(row));
    case Id::kAllocNodes: return std::to_string(run.started() ? run.nodes.size() : 0);
    case Id::kAllocTres: return run.started() ? std::optional(AllocTres(run)) : std::nullopt;
    case Id::kAllocGpus: return row.current ? AllocGpus(job, ctx) : std::nullopt;
    case Id::kCluster: return or_blank(ctx.options.cluster_name);
    case Id::kAdminComment: return or_blank(spec.admin_comment());
    case Id::kComment: return or_blank(spec.comment());
    case Id::kConstraints: return or_blank(spec.constraint());
    case Id::kCpuTime: return FormatDurationPadded(Elapsed(row, ctx) * Cpus(row));
    case Id::kCpuTimeRaw: return std::to_string(Elapsed(row, ctx) * Cpus(row));
    case Id::kDerivedExitCode: return "0:0";
    // The pass that started the job's current run (its steps and earlier runs have none).
    case Id::kFlags:
      return !row.batch && !row.step && run.started() && run.start == job.start_time()
                 ? or_blank(job.sched_by()) : std::nullopt;
    case Id::kElapsed: return FormatDurationPadded(Elapsed(row, ctx));
    case Id::kElapsedRaw: return std::to_string(Elapsed(row, ctx));
    case Id::kEligible: return columns::IsoTime(spec.begin_time() ? spec.begin_time() : spec.submit_time());
    case Id::kEnd: return run.end ? columns::IsoTime(run.end) : "Unknown";
    case Id::kExitCode:
      if (!row.batch && !row.step && EndedByController(run.state)) return "0:0";
      return fmt::format("{}:{}", run.exit_code, run.exit_signal);
    case Id::kGid: return std::to_string(spec.gid());
    case Id::kGroup: return columns::UserName(nullptr, spec.gid());
    case Id::kJobId: return JobIdText(row);
    case Id::kJobIdRaw:
      if (row.step) return fmt::format("{}.{}", spec.job_id(), StepIdText(row.step->step_id()));
      return std::to_string(spec.job_id()) + (row.batch ? ".batch" : "");
    case Id::kJobName: return or_blank(spec.name());
    case Id::kNNodes: return std::to_string(run.started() ? run.nodes.size() : RequestedNodes(spec));
    case Id::kNodeList: return run.started() ? CompressHostlist(run.nodes) : "None assigned";
    case Id::kPartition: return or_blank(PartitionText(job, ctx));
    case Id::kQos: return spec.qos().empty() ? "normal" : spec.qos();
    case Id::kReason: return job.reason().empty() ? "None" : job.reason();
    case Id::kReqCpus: return std::to_string(columns::RequestedCpus(spec));
    case Id::kReqMem: return SizeText(RequestedMemory(spec, ctx), 2, ctx);  // MB
    case Id::kReqNodes: return std::to_string(RequestedNodes(spec));
    case Id::kReqTres: return ReqTres(row, ctx);
    case Id::kReservation: return or_blank(spec.reservation());
    case Id::kStart: return run.started() ? columns::IsoTime(run.start) : "None";
    case Id::kState: return StateText(row);
    case Id::kSubmit: return columns::IsoTime(spec.submit_time());
    case Id::kSuspended: return FormatDurationPadded(run.suspended);
    case Id::kTimelimit: return TimelimitText(job, false);
    case Id::kTimelimitRaw: return TimelimitText(job, true);
    case Id::kUid: return std::to_string(UidOf(spec, ctx));
    case Id::kUser: return spec.user().empty() ? std::to_string(spec.uid()) : spec.user();
    case Id::kWorkDir: return or_blank(spec.work_dir());
    case Id::kReserved: return reserved ? std::optional(FormatDurationPadded(*reserved)) : std::nullopt;
    case Id::kResvCpu: return reserved ? std::optional(FormatDurationPadded(*reserved * Cpus(row))) : std::nullopt;
    case Id::kResvCpuRaw: return reserved ? std::optional(std::to_string(*reserved * Cpus(row))) : std::nullopt;
    default: return std::nullopt;
  }
  // clang-format on
}

struct Column {
  const Field* field;
  int width;
};

// sacct's -o parsing: "Name%width", case-insensitive prefixes, "ALL" (or a prefix of it).
Result<std::vector<Column>> ParseFields(const SacctOptions& options) {
  std::string list = options.fields;
  if (list.empty()) list = options.brief ? kBriefFields : kDefaultFields;
  std::vector<Column> out;
  for (std::string name : Split(list, ',')) {
    name = std::string(Trim(name));
    if (name.empty()) continue;
    std::optional<int> width;
    if (size_t percent = name.find('%'); percent != std::string::npos) {
      width = static_cast<int>(
          std::clamp<int64_t>(std::atoll(name.c_str() + percent + 1), -100000, 100000));
      name.resize(percent);
    }
    if (StartsWithIgnoreCase("ALL", name)) {
      for (const Field& field : kFields) out.push_back({&field, width.value_or(field.width)});
      continue;
    }
    auto named = [&](const Field& field) { return StartsWithIgnoreCase(field.name, name); };
    const Field* found = std::find_if(std::begin(kFields), std::end(kFields), named);
    if (found == std::end(kFields))
      found = std::find_if(std::begin(kDroverFields), std::end(kDroverFields), named);
    if (found == std::end(kDroverFields))
      return MakeError(fmt::format("Invalid field requested: \"{}\"", name));
    out.push_back({found, width.value_or(found->width)});
  }
  return out;
}

// print_fields_*: text longer than the column ends in '+'; numbers and times are never cut.
std::string Cell(const Column& column, const std::optional<std::string>& value) {
  size_t width = static_cast<size_t>(std::abs(column.width));
  std::string text = value.value_or(" ");
  if (value && column.field->kind == Kind::kText && text.size() > width && width > 0) {
    text.resize(width);
    text.back() = '+';
  } else if (!value || column.field->kind == Kind::kText) {
    text = text.substr(0, width);
  }
  return columns::Pad(text, static_cast<int>(width), column.width > 0, false) + " ";
}

std::string Line(const std::vector<Column>& selected,
                 const std::vector<std::optional<std::string>>& values,
                 const SacctOptions& options) {
  std::string line;
  std::string delimiter = options.delimiter.empty() ? "|" : options.delimiter;
  for (size_t i = 0; i < selected.size(); ++i) {
    if (options.parsable || options.parsable2) {
      line += values[i].value_or("");
      if (options.parsable || i + 1 < selected.size()) line += delimiter;
    } else {
      line += Cell(selected[i], values[i]);
    }
  }
  return line + "\n";
}

Row StepRow(const v1::Job& job, const v1::Step& step) {
  Run run{.start = step.start_time(),
          .end = step.end_time(),
          .state = step.state(),
          .exit_code = step.exit_code(),
          .exit_signal = step.exit_signal()};
  if (auto names = ExpandHostlist(step.node_list()); names) run.nodes = std::move(names).value();
  run.cpus = step.cpus();
  return {&job, std::move(run), false, &step, {}};
}

// `externs` keeps the extern steps the rows point to.
std::vector<Row> BuildRows(const std::vector<v1::Job>& jobs, const Context& ctx,
                           std::deque<v1::Step>& externs) {
  std::vector<Row> rows;
  std::map<uint64_t, size_t> pending_arrays;  // array job ID -> the row its tasks fold into
  for (const v1::Job& job : jobs) {
    const v1::JobSpec& spec = job.spec();
    bool pending_task =
        job.state() == "PENDING" && spec.array_job_id() && spec.array_task_id() != kNoTask;
    if (auto it = pending_arrays.find(spec.array_job_id());
        pending_task && it != pending_arrays.end()) {
      Row& head = rows[it->second];
      if (head.folded_tasks.empty()) head.folded_tasks.push_back(head.job->spec().array_task_id());
      head.folded_tasks.push_back(spec.array_task_id());
      continue;
    }
    std::vector<Run> runs;
    if (ctx.options.duplicates)
      for (const v1::JobRun& earlier : job.history()) runs.push_back(EarlierRun(job, earlier, ctx));
    runs.push_back(CurrentRun(job, ctx));
    for (size_t r = 0; r < runs.size(); ++r) {
      Run& run = runs[r];
      if (pending_task) pending_arrays[spec.array_job_id()] = rows.size();  // the last run's
      bool steps = run.started() && !run.nodes.empty() && !ctx.options.allocations;
      const SacctSelection* selection = ctx.options.selection;
      bool current = r + 1 == runs.size();
      if (SacctShowsRow(selection, job, ""))
        rows.push_back({&job, run, false, nullptr, {}, current});
      // salloc's and srun's own jobs run no batch script: only their srun steps.
      if (steps && !spec.interactive() && SacctShowsRow(selection, job, "batch"))
        rows.push_back({&job, run, true, nullptr, {}, current});
      if (!steps || r + 1 != runs.size()) continue;  // steps belong to the current run
      if (auto step = ExternStep(run, ctx); step && SacctShowsRow(selection, job, "extern"))
        rows.push_back(StepRow(job, externs.emplace_back(std::move(*step))));
      for (const v1::Step& step : job.steps())
        if (SacctShowsRow(selection, job, StepIdText(step.step_id())))
          rows.push_back(StepRow(job, step));
    }
  }
  return rows;
}

}  // namespace

Result<std::string> FormatSacct(const std::vector<v1::Job>& jobs, const SacctOptions& options) {
  Result<std::vector<Column>> parsed = ParseFields(options);
  if (!parsed) return std::move(parsed).take_error();
  const std::vector<Column>& selected = parsed.value();
  Context ctx{options};

  std::string out;
  if (!options.no_header) {
    std::vector<std::optional<std::string>> names;
    for (const Column& column : selected) names.emplace_back(std::string(column.field->name));
    if (options.parsable || options.parsable2) {
      out += Line(selected, names, options);
    } else {
      std::string header, dashes;
      for (const Column& column : selected) {
        size_t width = static_cast<size_t>(std::abs(column.width));
        header += columns::Pad(column.field->name.substr(0, width), static_cast<int>(width),
                               column.width > 0) +
                  " ";
        dashes += std::string(width, '-') + " ";
      }
      out += header + "\n" + dashes + "\n";
    }
  }
  std::deque<v1::Step> externs;
  for (const Row& row : BuildRows(jobs, ctx, externs)) {
    std::vector<std::optional<std::string>> values;
    for (const Column& column : selected) {
      const Field& field = *column.field;
      const char* constant = Constant(field, row);
      values.push_back(constant ? std::optional<std::string>(constant) : Value(field.id, row, ctx));
    }
    out += Line(selected, values, options);
  }
  return out;
}

namespace {

// {"seconds": 1, "microseconds": 500000}, as slurmrestd writes a CPU time.
nlohmann::json CpuTimeJson(double seconds) {
  uint64_t micros = Microseconds(seconds);
  return {{"seconds", micros / 1000000}, {"microseconds", micros % 1000000}};
}

nlohmann::json ExitCodeJson(const std::string& state, int32_t code, int32_t signal) {
  nlohmann::json exit = {{"status", signal ? "SIGNALED"
                                    : code ? "FAILED"
                                           : "SUCCESS"},
                         {"return_code", code}};
  if (signal) exit["signal"] = {{"signal_id", signal}, {"name", ""}};
  if (EndedByController(state)) exit = {{"status", "SUCCESS"}, {"return_code", 0}};
  return exit;
}

nlohmann::json TresJson(uint32_t cpus, uint64_t memory_mb, uint32_t nodes, uint32_t gpus) {
  nlohmann::json list = nlohmann::json::array();
  if (cpus) list.push_back({{"type", "cpu"}, {"name", ""}, {"id", 1}, {"count", cpus}});
  if (memory_mb) list.push_back({{"type", "mem"}, {"name", ""}, {"id", 2}, {"count", memory_mb}});
  if (nodes) list.push_back({{"type", "node"}, {"name", ""}, {"id", 4}, {"count", nodes}});
  if (gpus) list.push_back({{"type", "gres"}, {"name", "gpu"}, {"id", 1001}, {"count", gpus}});
  return list;
}

}  // namespace

namespace {

// The job's steps as sacct --json lists them: the batch step (when the job ran a script), then
// each srun step.
nlohmann::json StepsJson(const v1::Job& job, const Run& run, const Context& ctx) {
  const v1::JobSpec& spec = job.spec();
  nlohmann::json steps = nlohmann::json::array();
  auto step_json = [&](const std::string& id, const std::string& name, const Run& r, uint32_t tasks,
                       const std::string& nodes, size_t node_count, const v1::Usage& usage) {
    return nlohmann::json{
        {"step", {{"job_id", spec.job_id()}, {"id", id}, {"name", name}}},
        {"time",
         {{"start", r.start},
          {"end", r.end},
          {"elapsed", r.started() ? Elapsed({&job, r, true, nullptr, {}}, ctx) : 0},
          {"total", CpuTimeJson(usage.user_cpu_seconds() + usage.system_cpu_seconds())},
          {"user", CpuTimeJson(usage.user_cpu_seconds())},
          {"system", CpuTimeJson(usage.system_cpu_seconds())}}},
        {"state", r.state},
        {"exit_code", ExitCodeJson(r.state, r.exit_code, r.exit_signal)},
        {"nodes", {{"count", node_count}, {"range", nodes}}},
        {"tasks", {{"count", tasks}}},
        {"tres", {{"allocated", TresJson(r.cpus, 0, static_cast<uint32_t>(node_count), 0)}}}};
  };
  if (run.started() && !spec.interactive()) {
    Run batch = run;
    batch.cpus = run.first_node_cpus;
    batch.state = EndedByController(run.state) ? "CANCELLED" : run.state;
    steps.push_back(step_json(fmt::format("{}.batch", spec.job_id()), "batch", batch, 1,
                              run.nodes.empty() ? "" : run.nodes.front(), 1, job.batch_usage()));
  }
  std::vector<v1::Step> all;
  if (auto step = ExternStep(run, ctx)) all.push_back(std::move(*step));
  all.insert(all.end(), job.steps().begin(), job.steps().end());
  for (const v1::Step& step : all) {
    Run r{.start = step.start_time(),
          .end = step.end_time(),
          .state = step.state(),
          .exit_code = step.exit_code(),
          .exit_signal = step.exit_signal()};
    r.cpus = step.cpus();
    steps.push_back(step_json(fmt::format("{}.{}", spec.job_id(), StepIdText(step.step_id())),
                              step.name(), r, step.ntasks(), step.node_list(),
                              static_cast<size_t>(step.nodes_size()), step.task_usage()));
  }
  return steps;
}

nlohmann::json TimeJson(const v1::Job& job, const Row& row, const Context& ctx) {
  const v1::JobSpec& spec = job.spec();
  int64_t limit = job.time_limit_seconds() ? job.time_limit_seconds() : spec.time_limit_seconds();
  CpuTimes times = JobCpuTimes(row, ctx);
  return {
      {"submission", spec.submit_time()},
      {"eligible", spec.begin_time() ? spec.begin_time() : spec.submit_time()},
      {"start", row.run.start},
      {"end", row.run.end},
      {"elapsed", Elapsed(row, ctx)},
      {"suspended", job.suspended_seconds()},
      {"limit", columns::IsUnlimited(limit) ? nlohmann::json(nullptr) : nlohmann::json(limit / 60)},
      {"total", CpuTimeJson(times.user + times.system)},
      {"user", CpuTimeJson(times.user)},
      {"system", CpuTimeJson(times.system)}};
}

nlohmann::json TresRecordJson(const v1::JobSpec& spec, const Run& run, const Context& ctx) {
  return {{"requested", TresJson(columns::RequestedCpus(spec), RequestedMemory(spec, ctx),
                                 RequestedNodes(spec), RequestedGpus(spec))},
          {"allocated", run.started() ? TresJson(run.cpus, run.memory_mb,
                                                 static_cast<uint32_t>(run.nodes.size()), run.gpus)
                                      : nlohmann::json::array()}};
}

// One job's record, with the field names of Slurm's REST API (v0.0.38).
nlohmann::json JobJson(const v1::Job& job, const SacctOptions& options, const Context& ctx) {
  const v1::JobSpec& spec = job.spec();
  Run run = CurrentRun(job, ctx);
  Row row{&job, run, false, nullptr, {}};
  bool array = spec.array_job_id() && spec.array_task_id() != kNoTask;
  std::string state = job.state();
  return {{"account", spec.account()},
          {"allocation_nodes", run.started() ? run.nodes.size() : 0},
          {"array",
           {{"job_id", array ? spec.array_job_id() : 0},
            {"task_id", array ? nlohmann::json(spec.array_task_id()) : nlohmann::json(nullptr)},
            {"limits", {{"max", {{"running", {{"tasks", spec.array_max_running()}}}}}}}}},
          {"cluster", options.cluster_name},
          {"comment", {{"job", spec.comment()}}},
          {"constraints", spec.constraint()},
          {"derived_exit_code", {{"status", "SUCCESS"}, {"return_code", 0}}},
          {"exit_code", ExitCodeJson(state, job.exit_code(), job.exit_signal())},
          {"group", columns::UserName(nullptr, spec.gid())},
          {"job_id", spec.job_id()},
          {"name", spec.name()},
          {"nodes", run.started() ? CompressHostlist(run.nodes) : "None assigned"},
          {"partition", PartitionText(job, ctx)},
          {"priority", 0},
          {"qos", spec.qos().empty() ? "normal" : spec.qos()},
          {"required",
           {{"CPUs", columns::RequestedCpus(spec)}, {"memory", RequestedMemory(spec, ctx)}}},
          {"reservation", {{"name", spec.reservation()}}},
          {"state", {{"current", state}, {"reason", job.reason().empty() ? "None" : job.reason()}}},
          {"steps", StepsJson(job, run, ctx)},
          {"time", TimeJson(job, row, ctx)},
          {"tres", TresRecordJson(spec, run, ctx)},
          {"user", columns::UserName(nullptr, spec.uid())},
          {"user_id", spec.uid()},
          {"kill_request_user",
           state == "CANCELLED" ? columns::UserName(nullptr, job.cancelled_by()) : std::string()},
          {"working_directory", spec.work_dir()},
          {"restart_count", job.restart_count()}};
}

}  // namespace

const char kOpenapiMeta[] =
    R"({"plugin":{"type":"openapi/v0.0.38","name":"Slurm OpenAPI v0.0.38"},)"
    R"("Slurm":{"version":{"major":22,"micro":8,"minor":5},"release":"22.05.8"}})";

std::string FormatSacctJson(const std::vector<v1::Job>& jobs, const SacctOptions& options) {
  Context ctx{options};
  nlohmann::json out_jobs = nlohmann::json::array();
  for (const v1::Job& job : jobs) out_jobs.push_back(JobJson(job, options, ctx));
  nlohmann::json document = {{"meta", nlohmann::json::parse(kOpenapiMeta)},
                             {"errors", nlohmann::json::array()},
                             {"jobs", std::move(out_jobs)}};
  return document.dump(2) + "\n";
}

}  // namespace drover::cli

namespace drover::cli {

std::string SacctFieldHelp() {
  std::string out;
  size_t i = 0;
  for (const Field& field : kFields) {
    if (i & 3)
      out += ' ';
    else if (i)
      out += '\n';
    out += fmt::format("{:<19}", field.name);
    ++i;
  }
  return out + "\n";
}

}  // namespace drover::cli
