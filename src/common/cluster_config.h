// ClusterConfig: the one validated picture of a cluster that slurm.conf, gres.conf and
// topology.conf describe. The scheduler and both daemons build on it; nothing downstream
// re-reads the files or re-checks what LoadClusterConfig has checked.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/diagnostics.h"
#include "common/duration.h"
#include "common/gres.h"
#include "common/licenses.h"
#include "common/retention.h"

namespace drover {

inline constexpr uint64_t kUnlimitedCount = UINT64_MAX;  // MaxNodes=UNLIMITED and the like

enum class SelectType { kConsTres, kLinear };
enum class TopologyKind { kFlat, kTree, kBlock };
enum class PriorityType { kBasic, kMultifactor };
enum class SchedulerType { kBackfill, kBuiltin };
enum class PreemptType { kNone, kPartitionPriority, kQos };
enum class AuthType { kMunge, kHmac, kNone };  // kHmac: auth/slurm
enum class EnforcePartLimits { kNo, kAny, kAll };
enum class UsageResetPeriod { kNone, kNow, kDaily, kWeekly, kMonthly, kQuarterly, kYearly };
enum class PartitionState { kUp, kDown, kDrain, kInactive };

// PreemptMode: one base mode, optionally with GANG and WITHIN.
struct PreemptMode {
  enum class Base { kOff, kCancel, kRequeue, kSuspend } base = Base::kOff;
  bool gang = false;
  bool within = false;
  bool operator==(const PreemptMode&) const = default;
};

// SelectTypeParameters.
struct ResourceSelection {
  enum class Unit { kCore, kCpu, kMemory, kSocket, kBoard } unit = Unit::kCore;
  bool memory = true;  // memory is a consumable resource (CR_*_Memory)
  bool pack_nodes = false;
  bool least_loaded = false;  // CR_LLN
};

// OverSubscribe=NO|EXCLUSIVE|YES[:N]|FORCE[:N].
struct OverSubscribe {
  enum class Mode { kNo, kExclusive, kYes, kForce } mode = Mode::kNo;
  int max_share = 1;
};

struct SchedulerParameters {
  int64_t bf_window_minutes = 1440;
  int64_t bf_resolution_seconds = 60;
  int64_t bf_interval_seconds = 30;
  bool bf_continue = false;
  int64_t bf_max_job_test = 500;
  int64_t bf_max_job_user = 0;  // 0: no limit
  int64_t default_queue_depth = 100;
  int64_t sched_min_interval_us = 2;
  int64_t sched_interval_seconds = 60;
  int64_t max_switch_wait_seconds = 300;
  bool conservative = false;     // Drover: reserve every blocked job, not only the top one
  bool enable_user_top = false;  // users may scontrol top their own jobs
  int64_t bf_reservation_depth = 1;
  int64_t max_script_size = 4 << 20;         // bytes of a batch script (Slurm: 4 MiB)
  std::map<std::string, std::string> other;  // accepted but without effect
};

// SlurmctldParameters' rl_* (Slurm 23.02): a token bucket per user for the controller's RPCs.
// A user's bucket starts full; each request takes a token; every refill_period_seconds adds
// refill_rate tokens, up to bucket_size. table_size users are tracked; root and SlurmUser are
// never limited.
struct RateLimitSettings {
  bool enabled = false;  // rl_enable
  uint32_t bucket_size = 30;
  uint32_t refill_rate = 2;
  uint32_t refill_period_seconds = 1;
  uint32_t table_size = 8192;
  uint32_t log_freq = 0;  // rl_log_freq: refusals logged per user per second; 0: all of them
};

struct SlurmctldParameters {
  RateLimitSettings rate_limit;
  std::map<std::string, std::string> other;  // accepted but without effect
};

struct ControllerHost {
  std::string name;
  std::string address;  // from "name(address)" or ControlAddr; empty: resolve name
  // Drover's: "name(address:port)" gives this controller a port of its own (several
  // controllers on one host, as `drover up` starts them); 0: SlurmctldPort.
  int port = 0;
};

// PrivateData: what users other than operators may not see of other users. Each flag is one
// of Slurm 22.05's words.
struct PrivateData {
  bool accounts = false, cloud = false, events = false, jobs = false, nodes = false,
       partitions = false, reservations = false, usage = false, users = false;
};

// TLS for the gRPC ports: all three files or none (LoadClusterConfig checks the set).
struct TlsSettings {
  std::string cert_file;  // DroverTLSCertFile: this host's certificate chain (PEM)
  std::string key_file;   // DroverTLSKeyFile: its private key (PEM)
  std::string ca_file;    // DroverTLSCAFile: the CA that signed the cluster's certificates
  bool require_client_cert = false;  // DroverTLSRequireClientCert: mutual TLS
  std::string server_name;  // DroverTLSServerName: the name clients expect; empty: the host dialled
  bool enabled() const { return !cert_file.empty(); }
};

// The cluster-wide keys of slurm.conf, with Slurm's defaults.
// cgroup.conf's keys that decide what a job's cgroup enforces (cgroup.conf(5), Slurm's
// defaults). They act only with TaskPlugin=task/cgroup.
struct CgroupConf {
  bool constrain_cores = false;
  bool constrain_devices = false;
  bool constrain_ram_space = false;
  bool constrain_swap_space = false;
  double allowed_ram_space = 100;  // percent of the job's allocated memory
  double allowed_swap_space = 0;   // percent of the allocated memory, on top of the RAM limit
  double max_ram_percent = 100;    // percent of the node's RealMemory: the RAM limit's ceiling
  double max_swap_percent = 100;   // percent of the node's RealMemory: the swap limit's ceiling
  uint64_t min_ram_space_mb = 30;  // the RAM limit's floor
};

// JobContainerType=job_container/tmpfs with job_container.conf (job_container.conf(5)): each
// job gets a private /tmp and /dev/shm on every node, made under BasePath and removed at its end.
struct JobContainerConf {
  bool tmpfs = false;  // JobContainerType=job_container/tmpfs
  std::string base_path;
  bool auto_base_path = false;  // AutoBasePath: create BasePath when missing
  std::vector<std::string> dirs = {"/tmp", "/dev/shm"};
  std::map<std::string, std::string> node_base_paths;  // NodeName=... BasePath=...
  const std::string& BasePathFor(const std::string& node) const;
};

// Where droverctld keeps its state, its job history and the accounting data: SQLite under
// StateSaveLocation (the default), or a PostgreSQL database (Drover's own keys,
// docs/configuration.md).
enum class StorageKind { kSqlite, kPostgres };
struct StorageSettings {
  StorageKind kind = StorageKind::kSqlite;  // StorageType: sqlite or postgresql
  std::string host = "localhost";           // StorageHost: a name, an address or a socket folder
  int port = 5432;                          // StoragePort
  std::string user = "drover";              // StorageUser
  std::string pass_file;                    // StoragePassFile: the password, in a file of its own
  std::string database = "drover";          // StorageLoc: the database's name
};

struct ClusterSettings {
  // cluster
  std::string cluster_name;
  std::vector<ControllerHost> controller_hosts;
  int controller_port = 7817;  // SlurmctldPort
  int agent_port = 7818;       // SlurmdPort
  std::string state_save_location = "/var/spool/slurmctld";
  std::string slurmd_spool_dir = "/var/spool/slurmd";
  std::string slurm_user = "root";
  std::string controller_log_file, agent_log_file;
  std::string controller_debug = "info", agent_debug = "info";
  std::string controller_pid_file = "/var/run/slurmctld.pid";
  std::string agent_pid_file = "/var/run/slurmd.pid";
  // Whether slurm.conf set them: the daemons write a pid file only then (several daemons of a
  // test or of `drover up` on one host would share the defaults).
  bool controller_pid_file_set = false, agent_pid_file_set = false;
  AuthType auth = AuthType::kMunge;
  std::string auth_info;                    // AuthInfo as written; auth::SettingsOf reads it
  std::vector<std::string> auth_alt_types;  // AuthAltTypes: auth/jwt (tokens; auth/jwt.h)
  std::string auth_alt_parameters;          // AuthAltParameters as written; auth::SettingsOf
  bool disable_root_jobs = false;           // DisableRootJobs: no job may run as root
  PrivateData private_data;
  int64_t group_update_time_seconds = 600;  // GroupUpdateTime: how long a user's groups are kept
  // Drover's own keys (docs/configuration.md): where the daemons listen, and TLS.
  std::string controller_listen_host;  // DroverControllerListen; empty: every interface
  std::string agent_listen_host;       // DroverAgentListen; empty: every interface
  int agent_metrics_port = 0;          // DroverAgentMetricsPort: each droverd's /metrics; 0: off
  TlsSettings tls;
  StorageSettings storage;

  // resources and selection
  SelectType select = SelectType::kConsTres;
  ResourceSelection selection;
  std::vector<std::string> gres_types;
  TopologyKind topology = TopologyKind::kFlat;
  std::vector<std::string> topology_params;
  uint64_t def_mem_per_cpu_mb = 0, def_mem_per_gpu_mb = 0, def_mem_per_node_mb = 0;
  uint64_t max_mem_per_cpu_mb = 0, max_mem_per_node_mb = 0;  // 0: unlimited
  int64_t def_cpu_per_gpu = 0;
  std::string proctrack_type = "proctrack/cgroup", task_plugin = "task/none";
  std::string job_acct_gather_type = "jobacct_gather/none";
  std::string job_acct_gather_frequency = "30";
  std::vector<std::string> job_acct_gather_params;  // JobAcctGatherParams (OverMemoryKill, ...)
  std::vector<std::string> dependency_params;       // DependencyParameters (kill_invalid_depend)
  // MailProg runs for --mail-type events ("" or missing: the controller logs that no mail went);
  // MailDomain qualifies a job's user when the job names no --mail-user.
  std::string mail_prog = "/bin/mail", mail_domain;
  CgroupConf cgroup;  // cgroup.conf beside slurm.conf
  std::string tmp_fs = "/tmp";

  // scheduling and priority
  SchedulerType scheduler = SchedulerType::kBackfill;
  SchedulerParameters scheduler_params;
  SlurmctldParameters controller_params;
  PriorityType priority = PriorityType::kBasic;
  uint32_t weight_age = 0, weight_fairshare = 0, weight_job_size = 0, weight_partition = 0,
           weight_qos = 0, weight_assoc = 0;
  std::vector<std::pair<std::string, double>> weight_tres;  // PriorityWeightTRES
  int64_t decay_half_life_seconds = 7 * 86400;              // 0: no decay
  int64_t priority_max_age_seconds = 7 * 86400;
  bool favor_small = false;
  std::vector<std::string> priority_flags;  // upper case, e.g. NO_FAIR_TREE
  int64_t priority_calc_period_seconds = 300;
  UsageResetPeriod usage_reset = UsageResetPeriod::kNone;
  // PurgeJobAfter: how long the job history keeps a finished job (default: for ever).
  Retention purge_job_after{};
  PreemptType preempt = PreemptType::kNone;
  PreemptMode preempt_mode;
  int64_t preempt_exempt_seconds = 0;
  uint64_t max_job_count = 10000;
  uint64_t first_job_id = 1;
  uint64_t max_array_size = 1001;
  uint64_t max_step_count = 40000;  // MaxStepCount: steps one job may create
  int64_t min_job_age_seconds = 300;
  int64_t over_time_limit_minutes = 0;  // kUnlimitedSeconds for UNLIMITED
  bool job_requeue = true;
  int64_t kill_wait_seconds = 30;
  // BatchStartTimeout: a batch job its node's agent does not report after this long is lost there.
  int64_t batch_start_timeout_seconds = 10;
  // TreeWidth: a message for many nodes goes down a tree of agents this wide.
  int64_t tree_width = 50;
  int64_t inactive_limit_seconds = 0;
  EnforcePartLimits enforce_part_limits = EnforcePartLimits::kNo;
  std::vector<LicenseCount> licenses;  // Licenses=: cluster-wide counts jobs take with -L

  // nodes, health, faults
  std::string health_check_program;
  int64_t health_check_interval_seconds = 0;
  std::vector<std::string> health_check_node_state = {"ANY"};
  // DroverGpuHealthResume=yes: a node drained by the built-in GPU probes for a condition that
  // clears (throttling, a link, a pending retirement) resumes once it has; XIDs never do.
  bool gpu_health_resume = false;
  JobContainerConf job_container;  // JobContainerType and job_container.conf
  std::string prolog, epilog;
  std::vector<std::string> prolog_flags;
  int64_t prolog_epilog_timeout_seconds = 0;  // 0: none
  int64_t slurmd_timeout_seconds = 300;
  int64_t slurmctld_timeout_seconds = 120;
  int return_to_service = 0;
  int64_t message_timeout_seconds = 10;
  int64_t unkillable_step_timeout_seconds = 60;
  int64_t resume_timeout_seconds = 60;  // also how long a rebooting node may take to come back
  std::string reboot_program;  // RebootProgram: what a node's agent runs for scontrol reboot

  // accounting
  std::string accounting_storage_type = "accounting_storage/none";
  std::vector<std::string> accounting_storage_enforce;
  std::vector<std::string> accounting_storage_tres;
  std::string accounting_storage_host;
  int accounting_storage_port = 6819;
  std::string job_comp_type = "jobcomp/none";
  // AccountingStoreFlags: what the job history keeps beyond the record. job_script and job_env
  // keep a batch job's script and environment after it leaves the live queue (sacct -B,
  // --env-vars); job_comment is accepted (the comment is always in the record).
  bool store_job_comment = false, store_job_env = false, store_job_script = false;

  bool fair_tree() const;  // priority/multifactor without NO_FAIR_TREE
};

struct GpuDevice {
  std::string type;        // "h100"; empty when untyped
  int index = 0;           // device index on its node (the N of /dev/nvidiaN)
  std::string file;        // empty for emulated GPUs and NVML-discovered ones
  std::vector<int> cores;  // cores local to this GPU (gres.conf Cores=); empty: any
  std::vector<int> links;  // per GPU index on the node: NVLink count, -1 for itself
  // What the node's agent found (NVML), once it registered; empty from the configuration.
  std::string uuid, name, pci_bus_id;
  uint64_t memory_mb = 0;
  int minor = -1;  // reported: the device file's number, matched to File='s index; -1: none
  // Shards (gres/shard) or MPS units (gres/mps) of this GPU that jobs may share (the node's
  // gpu_sharing says which); 0: the GPU is only given whole.
  uint32_t shares = 0;
  bool operator==(const GpuDevice&) const = default;
};

// A node's GPUs, by device index: one vector shared between the nodes whose GPUs are the same
// (the nodes of one NodeName line, or of lines in a row with the same Gres=, and copies of a
// node), copied on the first write to one of them. A 10,000-node, 8-GPU configuration holds 80,000
// GPU records otherwise, which every command that loads it pays for. Reads have the vector's const
// interface; writes go through Mutable(). Like a vector, one list is not for concurrent writes and
// reads.
class GpuList {
 public:
  using value_type = GpuDevice;
  using const_iterator = std::vector<GpuDevice>::const_iterator;

  GpuList() = default;
  GpuList(std::vector<GpuDevice> gpus);  // NOLINT: a list of GPUs is one
  GpuList(std::initializer_list<GpuDevice> gpus) : GpuList(std::vector<GpuDevice>(gpus)) {}

  const std::vector<GpuDevice>& all() const { return shared_ ? *shared_ : Empty(); }
  operator const std::vector<GpuDevice>&() const { return all(); }  // NOLINT: read as one
  const_iterator begin() const { return all().begin(); }
  const_iterator end() const { return all().end(); }
  size_t size() const { return shared_ ? shared_->size() : 0; }
  bool empty() const { return size() == 0; }
  const GpuDevice& operator[](size_t i) const { return (*shared_)[i]; }
  const GpuDevice& front() const { return shared_->front(); }
  const GpuDevice& back() const { return shared_->back(); }
  // This node's own vector, copied first if other nodes share it.
  std::vector<GpuDevice>& Mutable();
  bool SharedWith(const GpuList& other) const { return shared_ && shared_ == other.shared_; }
  bool operator==(const GpuList& other) const {
    return shared_ == other.shared_ || all() == other.all();
  }

 private:
  static const std::vector<GpuDevice>& Empty();
  std::shared_ptr<std::vector<GpuDevice>> shared_;  // null: no GPUs
};

// A node-local NVMe drive given to jobs whole (gres/nvme): its scratch directories go under
// `mount` (gres.conf File=); emulated ones (no File=) under the agent's spool.
struct NvmeDevice {
  int index = 0;
  std::string mount;
  bool operator==(const NvmeDevice&) const = default;
};

struct NodeConfig {
  std::string name;
  std::string hostname, address;  // NodeHostname, NodeAddr (default: the node's name)
  int port = 0;                   // 0: the cluster's SlurmdPort
  int boards = 1, sockets = 1, cores_per_socket = 1, threads_per_core = 1;
  int cpus = 1;
  uint64_t real_memory_mb = 1, tmp_disk_mb = 0, mem_spec_limit_mb = 0;
  int core_spec_count = 0;
  std::string cpu_spec_list;
  int restricted_cores_per_gpu = 0;
  std::vector<std::string> features;
  uint32_t weight = 1;
  std::vector<GresSpec> gres;    // as declared on the NodeName line
  GpuList gpus;                  // one per GPU, by device index
  bool gpus_autodetect = false;  // gres.conf AutoDetect=nvml: discovered by the agent
  // "shard" or "mps" when Gres= declares GPU sharing (GpuDevice::shares per GPU); empty: none.
  std::string gpu_sharing;
  std::vector<NvmeDevice> nvme;  // Gres=nvme:N, by index
  std::string state = "UNKNOWN";
  std::string reason;
  SourceLocation defined_at;

  int cores() const { return boards * sockets * cores_per_socket; }
  uint64_t gpu_count() const;
  uint32_t gpu_shares(int index) const;  // the shares of GPU `index` (device index); 0: none
};

struct PartitionConfig {
  std::string name;
  std::vector<int> nodes;        // indices into ClusterConfig::nodes, in configuration order
  std::string nodes_expression;  // as written (for display)
  bool is_default = false;
  PartitionState state = PartitionState::kUp;
  int64_t max_time_seconds = kUnlimitedSeconds;
  std::optional<int64_t> default_time_seconds;  // unset: MaxTime
  uint64_t max_nodes = kUnlimitedCount, min_nodes = 0;
  uint64_t max_cpus_per_node = kUnlimitedCount;
  uint32_t priority_tier = 1, priority_job_factor = 1;
  std::optional<PreemptMode> preempt_mode;  // unset: the cluster's
  int64_t grace_time_seconds = 0;
  OverSubscribe over_subscribe;
  bool exclusive_user = false, hidden = false, root_only = false, least_loaded = false;
  std::vector<std::string> allow_accounts, deny_accounts, allow_groups, allow_qos, deny_qos;
  std::optional<bool> disable_root_jobs;  // unset: the cluster's DisableRootJobs
  std::string qos;
  std::optional<uint64_t> def_mem_per_cpu_mb, def_mem_per_gpu_mb, max_mem_per_node_mb;
  std::optional<int64_t> def_cpu_per_gpu;                       // unset: the cluster's DefCpuPerGPU
  std::vector<std::pair<std::string, double>> billing_weights;  // TRESBillingWeights
  SourceLocation defined_at;
};

struct SwitchConfig {
  std::string name;
  int level = 0;                   // 0 for leaves
  int parent = -1;                 // index into Topology::switches, -1 for a root
  std::vector<int> children;       // switch indices
  std::vector<int> nodes;          // node indices directly attached (leaves)
  std::vector<int> subtree_nodes;  // every node below, in configuration order
  int64_t link_speed = 1;
  SourceLocation defined_at;
};

struct BlockConfig {
  std::string name;
  std::vector<int> nodes;
  SourceLocation defined_at;
};

struct TopologyConfig {
  TopologyKind kind = TopologyKind::kFlat;
  std::vector<SwitchConfig> switches;
  std::vector<BlockConfig> blocks;
  std::vector<int> block_sizes;  // BlockSizes, in nodes
  std::vector<int> node_leaf;    // per node: leaf switch index or -1
  std::vector<int> node_block;   // per node: block index or -1
  int root = -1;                 // the single top switch, -1 when there is none or several
};

struct ClusterConfig {
  std::string conf_path, gres_conf_path, topology_conf_path;  // empty when not read
  std::string cgroup_conf_path;                               // empty when not read
  std::string job_container_conf_path;                        // empty when not read
  ClusterSettings settings;
  std::vector<NodeConfig> nodes;
  std::vector<PartitionConfig> partitions;
  TopologyConfig topology;

  int FindNode(std::string_view name) const;  // -1 when unknown
  // Indexes of the named nodes; names no NodeName line defines go to `unknown`.
  std::vector<int> ResolveNodes(const std::vector<std::string>& names,
                                std::vector<std::string>& unknown) const;
  int FindPartition(std::string_view name) const;  // -1 when unknown
  int DefaultPartition() const;                    // -1 when none is Default=YES

  std::unordered_map<std::string, int> node_index;  // name -> index
};

struct ConfigLoad {
  ClusterConfig config;
  Diagnostics diagnostics;
  bool ok() const { return !diagnostics.has_errors(); }
  std::string ErrorText() const;  // every error as "file:line: message", one a line
};

// Reads slurm.conf at `path` and the gres.conf and topology.conf beside it (when present, or
// required by TopologyPlugin), then cross-checks them. Errors and warnings are collected, not
// stopped at: an administrator sees every problem at once.
ConfigLoad LoadClusterConfig(const std::string& path);

// "node 'n5' is not defined by any NodeName line" or "nodes n[5-9] are not defined by ...".
std::string UndefinedNodesMessage(const std::vector<std::string>& unknown);

// The same from text in memory (files named slurm.conf, gres.conf, topology.conf, cgroup.conf;
// no Include): for tests, fuzzing and the simulator's generated clusters.
ConfigLoad LoadClusterConfigText(
    const std::string& slurm_conf, const std::optional<std::string>& gres_conf = std::nullopt,
    const std::optional<std::string>& topology_conf = std::nullopt,
    const std::optional<std::string>& cgroup_conf = std::nullopt,
    const std::optional<std::string>& job_container_conf = std::nullopt);

// The slurm.conf to use: `explicit_path` when given, else $DROVER_CONF, else $SLURM_CONF, else
// /etc/slurm/slurm.conf.
std::string ResolveConfPath(const std::string& explicit_path);

// "host:port" of the (first) controller: SlurmctldHost's address or name, and SlurmctldPort;
// 127.0.0.1 when no SlurmctldHost is set.
std::string ControllerAddress(const ClusterSettings& settings);
// "host:port" of every controller, in SlurmctldHost's order (the primary first): where commands
// and agents look for the one in charge. One entry (ControllerAddress) when none is set.
std::vector<std::string> ControllerAddresses(const ClusterSettings& settings);
// "host:port" of one SlurmctldHost line.
std::string ControllerHostAddress(const ClusterSettings& settings, const ControllerHost& host);

// Where the daemons listen by default ("--listen" overrides): DroverControllerListen or
// DroverAgentListen (every interface when unset) with SlurmctldPort, or the node's Port or
// SlurmdPort. IPv6 addresses come back in brackets ("[::1]:7817").
// `port`, when given, replaces SlurmctldPort (a SlurmctldHost line's own port).
std::string ControllerListenAddress(const ClusterSettings& settings, int port = 0);
std::string AgentListenAddress(const ClusterSettings& settings, const NodeConfig& node);

}  // namespace drover
