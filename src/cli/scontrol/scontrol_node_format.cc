// `scontrol show node|partition|reservation`: Slurm 22.05's records (slurm_sprint_node_table,
// slurm_sprint_partition_info, slurm_sprint_reservation_info) from the controller's records and
// the cluster's configuration.
#include <fmt/format.h>

#include <algorithm>

#include "cli/scontrol/scontrol_format.h"
#include "common/duration.h"
#include "common/gres.h"
#include "common/text.h"

namespace drover::cli::scontrol {
namespace {

std::string YesNo(bool value) {
  return value ? "YES" : "NO";
}

std::string ListOr(const std::vector<std::string>& items, std::string_view fallback) {
  return items.empty() ? std::string(fallback) : Join(items, ",");
}

struct NodeUse {
  uint32_t cpus = 0;
  uint64_t memory_mb = 0, gpus = 0, shares = 0;
  bool any = false;
};

NodeUse UseOf(int index, std::span<const v1::Job> jobs, const ShowContext& ctx) {
  NodeUse use;
  for (const v1::Job& job : jobs) {
    if (job.state() != "RUNNING" && job.state() != "SUSPENDED" && job.state() != "COMPLETING")
      continue;
    for (const v1::NodeAllocation& part : job.allocation()) {
      if (part.node() != index) continue;
      use.any = true;
      use.cpus += columns::AllocatedCpus(part, ctx.cluster);
      use.memory_mb += part.memory_mb();
      use.gpus += columns::AllocatedGpus(part);
      use.shares += part.shares();
    }
  }
  return use;
}

// scontrol's long state: "IDLE", "MIXED", "ALLOCATED", "DOWN", with "+DRAIN" and
// "+NOT_RESPONDING" (node_state_string_complete).
std::string NodeState(const v1::NodeStatus& node, const NodeUse& use, uint32_t cpus) {
  std::string base;
  if (node.down())
    base = "DOWN";
  else if (!node.registered() && !use.any)
    base = "UNKNOWN";
  else if (use.any)
    base = use.cpus >= cpus ? "ALLOCATED" : "MIXED";
  else
    base = "IDLE";
  if (!node.reservation().empty()) base += "+" + node.reservation();
  if (node.drain()) base += "+DRAIN";
  if (node.state().starts_with("FAIL")) base += "+FAIL";
  if (node.reboot_requested()) base += "+REBOOT_REQUESTED";
  if (node.state().find("+REBOOT_ISSUED") != std::string::npos) base += "+REBOOT_ISSUED";
  if (node.not_responding()) base += "+NOT_RESPONDING";
  return base;
}

std::string NodePartitions(const ClusterConfig& cluster, int index) {
  std::vector<std::string> names;
  for (const PartitionConfig& partition : cluster.partitions)
    if (std::find(partition.nodes.begin(), partition.nodes.end(), index) != partition.nodes.end())
      names.push_back(partition.name);
  return Join(names, ",");
}

std::string Count(uint64_t value) {
  return value >= kUnlimitedCount ? "UNLIMITED" : std::to_string(value);
}

const PartitionConfig* FindPartitionConfig(const v1::Partition& partition, const ShowContext& ctx) {
  if (!ctx.cluster) return nullptr;
  int index = ctx.cluster->FindPartition(partition.name());
  return index >= 0 ? &ctx.cluster->partitions[index] : nullptr;
}

}  // namespace

std::string BillingWeightsText(const PartitionConfig& partition) {
  std::vector<std::string> weights;
  for (const auto& [name, weight] : partition.billing_weights)
    weights.push_back(fmt::format("{}={}", name, weight));
  return Join(weights, ",");
}

std::string TimeLimitText(int64_t seconds) {
  return columns::IsUnlimited(seconds) || seconds >= kUnlimitedSeconds
             ? "UNLIMITED"
             : FormatDurationPadded(seconds);
}

Record NodeRecord(const v1::NodeStatus& node, int index, std::span<const v1::Job> jobs,
                  const ShowContext& ctx) {
  static const NodeConfig kUnknown;
  const NodeConfig& config =
      ctx.cluster && index >= 0 && static_cast<size_t>(index) < ctx.cluster->nodes.size()
          ? ctx.cluster->nodes[index]
          : kUnknown;
  NodeUse use = UseOf(index, jobs, ctx);
  Record record;
  auto& lines = record.lines;
  lines.push_back(
      fmt::format("NodeName={} CoresPerSocket={} ", node.name(), config.cores_per_socket));
  lines.push_back(fmt::format("CPUAlloc={} CPUEfctv={} CPUTot={} CPULoad=N/A", use.cpus,
                              config.cpus, config.cpus));
  std::string available = columns::AvailableFeatures(node, config);
  lines.push_back("AvailableFeatures=" + (available.empty() ? "(null)" : available));
  lines.push_back("ActiveFeatures=" + ListOr(config.features, "(null)"));
  // The controller's (the GPUs' types and sockets as the agent reported them), else slurm.conf's.
  std::string gres = !node.gres().empty() ? node.gres() : FormatGres(config.gres);
  lines.push_back("Gres=" + (gres.empty() ? std::string("(null)") : gres));
  std::string address = fmt::format("NodeAddr={} NodeHostName={} ",
                                    config.address.empty() ? node.name() : config.address,
                                    config.hostname.empty() ? node.name() : config.hostname);
  if (ctx.cluster && config.port && config.port != ctx.cluster->settings.agent_port)
    address += fmt::format("Port={} ", config.port);
  if (node.registered() && !ctx.version.empty()) address += "Version=" + ctx.version;
  lines.push_back(std::string(Trim(address)));
  lines.push_back(fmt::format("RealMemory={} AllocMem={} FreeMem=N/A Sockets={} Boards={}",
                              config.real_memory_mb, use.memory_mb, config.sockets, config.boards));
  lines.push_back(
      fmt::format("State={} ThreadsPerCore={} TmpDisk={} Weight={} Owner=N/A MCS_label=N/A",
                  NodeState(node, use, static_cast<uint32_t>(config.cpus)), config.threads_per_core,
                  config.tmp_disk_mb, config.weight));
  if (ctx.cluster)
    if (std::string partitions = NodePartitions(*ctx.cluster, index); !partitions.empty())
      lines.push_back("Partitions=" + partitions + " ");
  lines.push_back(fmt::format("BootTime={} SlurmdStartTime=None",
                              node.boot_time() ? columns::IsoTime(node.boot_time()) : "None"));
  lines.push_back("LastBusyTime=Unknown");
  uint64_t shares = 0;
  for (const GpuDevice& gpu : config.gpus) shares += gpu.shares;
  lines.push_back("CfgTRES=" + TresText(static_cast<uint32_t>(config.cpus), config.real_memory_mb,
                                        0, true, config.gpu_count(), {config.gpu_sharing, shares}));
  lines.push_back("AllocTRES=" + (use.any ? TresText(use.cpus, use.memory_mb, 0, false, use.gpus,
                                                     {config.gpu_sharing, use.shares})
                                          : ""));
  lines.push_back("CapWatts=n/a");
  lines.push_back("CurrentWatts=0 AveWatts=0");
  lines.push_back("ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s");
  if (!node.next_state().empty()) lines.push_back("NextState=" + node.next_state());
  if (!node.reason().empty())
    lines.push_back(fmt::format(
        "Reason={} [{}@{}]", node.reason(), columns::UserName(ctx.user_name, node.reason_uid()),
        node.reason_time() ? columns::IsoTime(node.reason_time()) : "Unknown"));
  if (!node.comment().empty()) lines.push_back("Comment=" + node.comment());
  if (!node.extra().empty()) lines.push_back("Extra=" + node.extra());
  return record;
}

Record PartitionRecord(const v1::Partition& partition, const ShowContext& ctx) {
  const PartitionConfig* config = FindPartitionConfig(partition, ctx);
  static const PartitionConfig kDefaults;
  const PartitionConfig& c = config ? *config : kDefaults;
  Record record;
  auto& lines = record.lines;
  lines.push_back("PartitionName=" + partition.name());
  std::string accounts = !c.allow_accounts.empty()  ? "AllowAccounts=" + Join(c.allow_accounts, ",")
                         : !c.deny_accounts.empty() ? "DenyAccounts=" + Join(c.deny_accounts, ",")
                                                    : "AllowAccounts=ALL";
  std::string qos = !c.allow_qos.empty()  ? "AllowQos=" + Join(c.allow_qos, ",")
                    : !c.deny_qos.empty() ? "DenyQos=" + Join(c.deny_qos, ",")
                                          : "AllowQos=ALL";
  lines.push_back(
      fmt::format("AllowGroups={} {} {}", ListOr(c.allow_groups, "ALL"), accounts, qos));
  lines.push_back(fmt::format("AllocNodes=ALL Default={} QoS={}", YesNo(partition.is_default()),
                              partition.qos().empty() ? "N/A" : partition.qos()));
  std::string default_time = partition.default_time_seconds() < 0
                                 ? "NONE"
                                 : TimeLimitText(partition.default_time_seconds());
  lines.push_back(fmt::format(
      "DefaultTime={} DisableRootJobs=NO ExclusiveUser={} GraceTime={} Hidden={}", default_time,
      YesNo(c.exclusive_user), partition.grace_time_seconds(), YesNo(partition.hidden())));
  lines.push_back(fmt::format(
      "MaxNodes={} MaxTime={} MinNodes={} LLN={} MaxCPUsPerNode={}",
      partition.max_nodes() ? std::to_string(partition.max_nodes()) : std::string("UNLIMITED"),
      TimeLimitText(partition.max_time_seconds()), partition.min_nodes(), YesNo(c.least_loaded),
      Count(c.max_cpus_per_node)));
  lines.push_back("Nodes=" + (partition.node_list().empty() ? "(null)" : partition.node_list()));
  lines.push_back(fmt::format(
      "PriorityJobFactor={} PriorityTier={} RootOnly={} ReqResv=NO OverSubscribe={}",
      partition.priority_job_factor(), partition.priority_tier(), YesNo(partition.root_only()),
      partition.over_subscribe().empty() ? "NO" : partition.over_subscribe()));
  std::string over_time = "NONE";
  if (ctx.cluster) {
    int64_t minutes = ctx.cluster->settings.over_time_limit_minutes;
    if (minutes >= kUnlimitedSeconds)
      over_time = "UNLIMITED";
    else if (minutes > 0)
      over_time = std::to_string(minutes);
  }
  lines.push_back(fmt::format("OverTimeLimit={} PreemptMode={}", over_time,
                              partition.preempt_mode().empty() ? "OFF" : partition.preempt_mode()));
  lines.push_back(fmt::format("State={} TotalCPUs={} TotalNodes={} SelectTypeParameters=NONE",
                              partition.state(), partition.total_cpus(), partition.total_nodes()));
  std::vector<std::string> defaults;
  if (c.def_cpu_per_gpu) defaults.push_back(fmt::format("DefCpuPerGPU={}", *c.def_cpu_per_gpu));
  if (c.def_mem_per_gpu_mb)
    defaults.push_back(fmt::format("DefMemPerGPU={}", *c.def_mem_per_gpu_mb));
  lines.push_back("JobDefaults=" + ListOr(defaults, "(null)"));
  std::string def_mem = c.def_mem_per_cpu_mb ? fmt::format("DefMemPerCPU={}", *c.def_mem_per_cpu_mb)
                                             : std::string("DefMemPerNode=UNLIMITED");
  lines.push_back(fmt::format(
      "{} MaxMemPerNode={}", def_mem,
      c.max_mem_per_node_mb ? std::to_string(*c.max_mem_per_node_mb) : std::string("UNLIMITED")));
  uint64_t memory = 0;
  if (ctx.cluster)
    for (int node : c.nodes) memory += ctx.cluster->nodes[node].real_memory_mb;
  lines.push_back("TRES=" + TresText(partition.total_cpus(), memory, partition.total_nodes(), true,
                                     partition.total_gpus()));
  if (!c.billing_weights.empty()) lines.push_back("TRESBillingWeights=" + BillingWeightsText(c));
  return record;
}

Record ReservationRecord(const v1::Reservation& reservation, const ShowContext& ctx) {
  Record record;
  auto& lines = record.lines;
  int64_t duration = std::max<int64_t>(0, reservation.end_time() - reservation.start_time());
  lines.push_back(fmt::format(
      "ReservationName={} StartTime={} EndTime={} Duration={}", reservation.name(),
      columns::IsoTime(reservation.start_time()),
      reservation.end_time() >= kUnlimitedSeconds ? std::string("Unknown")
                                                  : columns::IsoTime(reservation.end_time()),
      reservation.end_time() >= kUnlimitedSeconds ? std::string("UNLIMITED")
                                                  : TimeLimitText(duration)));
  uint32_t cores = 0;
  if (ctx.cluster)
    for (const std::string& name : reservation.nodes())
      if (int index = ctx.cluster->FindNode(name); index >= 0)
        cores += static_cast<uint32_t>(ctx.cluster->nodes[index].cpus);
  std::vector<std::string> flags(reservation.flags().begin(), reservation.flags().end());
  if (!reservation.node_list().empty()) flags.push_back("SPEC_NODES");
  lines.push_back(fmt::format(
      "Nodes={} NodeCnt={} CoreCnt={} Features=(null) PartitionName={} "
      "Flags={}",
      reservation.node_list().empty() ? "(null)" : reservation.node_list(),
      reservation.nodes_size(), cores,
      reservation.partition().empty() ? "(null)" : reservation.partition(), Join(flags, ",")));
  lines.push_back("TRES=" +
                  (reservation.tres().empty() ? fmt::format("cpu={}", cores) : reservation.tres()));
  bool active = ctx.now >= reservation.start_time() && ctx.now < reservation.end_time();
  std::vector<std::string> users(reservation.users().begin(), reservation.users().end());
  std::vector<std::string> accounts(reservation.accounts().begin(), reservation.accounts().end());
  lines.push_back(fmt::format(
      "Users={} Groups=(null) Accounts={} Licenses=(null) State={} BurstBuffer=(null) Watts=n/a",
      ListOr(users, "(null)"), ListOr(accounts, "(null)"), active ? "ACTIVE" : "INACTIVE"));
  lines.push_back("MaxStartDelay=(null)");
  return record;
}

}  // namespace drover::cli::scontrol
