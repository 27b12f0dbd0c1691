// What `scontrol show` prints, as Slurm 22.05 prints it: jobs, nodes, partitions, reservations
// and the configuration, as Key=Value records (multi-line or one line each) or as JSON. Pure
// functions of the controller's records and the cluster's configuration: they never call the
// controller, read a file or the clock (`now` comes in); times print in the local zone (TZ).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cli/formats/formats.h"
#include "common/cluster_config.h"
#include "proto/drover.pb.h"

namespace drover::cli::scontrol {

// What the records do not carry.
struct ShowContext {
  const ClusterConfig* cluster = nullptr;  // hardware, partitions' settings, defaults
  int64_t now = 0;                         // RunTime of running jobs
  bool details = false;                    // -d
  UserNameLookup user_name;                // uid -> name; unset: "root" for 0, else the number
  UserNameLookup group_name;               // gid -> name; same fallback
  std::map<uint64_t, int64_t> priorities;  // job ID -> priority (pending jobs)
  std::map<uint64_t, v1::PlannedStart> planned;  // job ID -> the plan's expected start
  std::string version;                           // Version= of a registered node
};

// One record: its lines, each of "Key=Value" words. Multi-line output indents every line after
// the first by three spaces and ends the record with a blank line; one-line output (-o) joins
// the lines with spaces. `trailing_separator` is Slurm's habit, in job records, of ending the
// last line with the separator too ("   \n" after the last line, or a trailing space).
struct Record {
  std::vector<std::string> lines;
  bool trailing_separator = false;
};

std::string Render(std::span<const Record> records, bool one_liner);

Record JobRecord(const v1::Job& job, const ShowContext& ctx);

// `index` is the node's place in ctx.cluster (required for nodes); `jobs` are the running jobs
// whose allocations give CPUAlloc, AllocMem and AllocTRES.
Record NodeRecord(const v1::NodeStatus& node, int index, std::span<const v1::Job> jobs,
                  const ShowContext& ctx);
Record PartitionRecord(const v1::Partition& partition, const ShowContext& ctx);
Record ReservationRecord(const v1::Reservation& reservation, const ShowContext& ctx);
// One srun step of a running job (`show step`).
Record StepRecord(const v1::Job& job, const v1::Step& step);

// `scontrol show config`: "Configuration data as of TIME" and "Key = Value" lines for the keys
// Drover reads, in Slurm's order.
std::string ConfigText(const ClusterConfig& cluster, int64_t now, std::string_view conf_path);
// Partition MaxTime/DefaultTime as scontrol prints them ("00:45:00", "UNLIMITED"), and a
// partition's TRESBillingWeights ("CPU=1,Mem=0.25G").
std::string TimeLimitText(int64_t seconds);
std::string BillingWeightsText(const PartitionConfig& partition);
// `scontrol write config`: the file Slurm's slurm_write_ctl_conf writes (`stamp` in its header):
// the same keys as slurm.conf lines in Slurm's groups (CONTROL, LOGGING & OTHER PATHS, ...; an
// unset one commented out as "#Key="), then a NodeName line per set of nodes alike and a
// PartitionName line per partition, from the controller's records (`nodes`, `partitions`) over
// slurm.conf's.
std::string WriteConfigText(const ClusterConfig& cluster, std::span<const v1::NodeStatus> nodes,
                            std::span<const v1::Partition> partitions, std::string_view stamp,
                            std::string_view conf_path);
// `show licenses [NAME]`: each license of slurm.conf's Licenses= (by name) with what running
// jobs hold; a NAME the cluster lacks prints nothing, as Slurm.
std::string LicensesText(const ClusterConfig& cluster, std::span<const v1::Job> jobs,
                         const std::optional<std::string>& name, bool one_liner);

// --json: {"jobs": [...]}, {"nodes": [...]}, ... with Slurm's REST field names where they exist.
std::string JobsJson(std::span<const v1::Job> jobs, const ShowContext& ctx);
std::string NodesJson(std::span<const v1::NodeStatus> nodes, std::span<const v1::Job> jobs,
                      const ShowContext& ctx);
std::string PartitionsJson(std::span<const v1::Partition> partitions, const ShowContext& ctx);
// sinfo --json: the nodes and the partitions, in one document.
std::string SinfoJson(std::span<const v1::NodeStatus> nodes, std::span<const v1::Job> jobs,
                      std::span<const v1::Partition> partitions, const ShowContext& ctx);
std::string ReservationsJson(std::span<const v1::Reservation> reservations, const ShowContext& ctx);

// Slurm's TRES string in scontrol's order: "cpu=2,mem=200M,node=2,billing=2,gres/gpu=2";
// `nodes` 0 leaves node= out and `billing` false leaves billing= out (a node's AllocTRES);
// GPU shares follow as "gres/shard=4".
std::string TresText(uint32_t cpus, uint64_t memory_mb, uint32_t nodes, bool billing, uint64_t gpus,
                     const columns::SharedGres& shares = {});
std::string MemoryText(uint64_t mb);  // "200M", "4G"

}  // namespace drover::cli::scontrol
