// scontrol create|update|delete PartitionName: slurm.conf's partition keys changed at run time.
// The engine keeps slurm.conf's configuration (base_) and scontrol's changes apart: the
// configuration in force is the one with the changes applied (Derive), so the store keeps only
// the changes, a restart applies them again over slurm.conf, and `scontrol reconfigure` drops
// them, as Slurm's does without ReconfigFlags=KeepPartInfo.
#include <fmt/format.h>

#include "common/partition_update.h"
#include "ctld/engine/engine.h"

namespace drover::ctld {
namespace {

Status ApplyOverride(ClusterConfig& config, const std::string& name,
                     const PartitionOverride& change) {
  bool exists = config.FindPartition(name) >= 0;
  if (change.deleted) return exists ? DeletePartition(config, name) : OkStatus();
  if (change.created && exists)  // deleted and created again over slurm.conf's
    if (Status deleted = DeletePartition(config, name); !deleted) return deleted;
  return ApplyPartitionSettings(config, name, change.settings, change.created);
}

}  // namespace

void ApplyNodeOverrides(const NodeStatus& status, NodeConfig& node) {
  MergeReportedGpus(status.reported_gpus, node);
  if (status.weight) node.weight = *status.weight;
  if (status.active_features)
    node.features = *status.active_features;
  else if (status.features)
    node.features = *status.features;
}

void MergeReportedGpus(const std::vector<GpuDevice>& reported, NodeConfig& node) {
  // A different count is the configuration's to settle (fewer drains the node at registration).
  if (reported.empty() || reported.size() != node.gpus.size()) return;
  // Merged into a copy, which replaces the node's list only if it differs: nodes whose list is
  // shared (declared alike) keep sharing it when their reports change nothing.
  std::vector<GpuDevice> merged = node.gpus.all();
  for (size_t i = 0; i < merged.size(); ++i) {
    GpuDevice& gpu = merged[i];
    // gres.conf's File= numbers a GPU by its device file: matched by the reported minor; else
    // by index (NVML's order).
    auto found = std::find_if(reported.begin(), reported.end(), [&](const GpuDevice& r) {
      return !gpu.file.empty() && r.minor >= 0 ? r.minor == gpu.index : r.index == gpu.index;
    });
    const GpuDevice& from = found != reported.end() ? *found : reported[i];
    // gres.conf's File= GPUs keep their configured type; AutoDetect's (counts by type in
    // slurm.conf) take the type the agent matched NVML's name to (a MIG profile among them).
    if (gpu.type.empty() || (node.gpus_autodetect && gpu.file.empty() && !from.type.empty()))
      gpu.type = from.type;
    if (gpu.cores.empty()) gpu.cores = from.cores;
    if (gpu.links.empty() && from.links.size() == merged.size()) gpu.links = from.links;
    gpu.uuid = from.uuid;
    gpu.name = from.name;
    gpu.pci_bus_id = from.pci_bus_id;
    gpu.memory_mb = from.memory_mb;
  }
  // A core list beyond the node's cores (a mistaken report) is dropped.
  for (GpuDevice& gpu : merged)
    if (!gpu.cores.empty() && gpu.cores.back() >= node.sockets * node.cores_per_socket)
      gpu.cores.clear();
  if (merged != node.gpus.all()) node.gpus = std::move(merged);
}

void Engine::Adopt(std::shared_ptr<const ClusterConfig> next, EngineOutput* out) {
  // Running and finished jobs name their partition by index: follow it to the new one.
  std::vector<int> moved(cluster().partitions.size());
  for (size_t p = 0; p < moved.size(); ++p)
    moved[p] = next->FindPartition(cluster().partitions[p].name);
  std::vector<uint64_t> renumber;
  for (const auto& [id, job] : jobs_)
    if (job->partition >= 0 && moved[job->partition] != job->partition) renumber.push_back(id);
  for (uint64_t id : renumber) {
    Job& job = Mutable(id, *out);  // no jobs yet when `out` is null (start-up)
    job.partition = moved[job.partition];
  }
  config_ = std::move(next);
  min_cycle_interval_seconds_ = MinCycleInterval(options_, *config_);
  // AccountingStorageEnforce may have changed what the scheduler is given.
  if (accounting_) RebuildAccounting();
  if (out) out->reconfigured = true;
  schedule_requested_ = true;
}

std::vector<std::string> Engine::RestorePartitions(
    std::map<std::string, PartitionOverride> overrides) {
  std::vector<std::string> problems;
  ClusterConfig next = cluster();
  for (auto& [name, change] : overrides) {
    ClusterConfig trial = next;
    if (Status applied = ApplyOverride(trial, name, change); !applied) {
      problems.push_back(
          fmt::format("scontrol's change of partition {} no longer applies to "
                      "slurm.conf and is dropped: {}",
                      name, applied.error()));
      continue;
    }
    next = std::move(trial);
    partition_overrides_[name] = std::move(change);
  }
  Adopt(std::make_shared<const ClusterConfig>(std::move(next)), nullptr);
  return problems;
}

const PartitionOverride* Engine::FindPartitionOverride(const std::string& name) const {
  auto it = partition_overrides_.find(name);
  return it == partition_overrides_.end() ? nullptr : &it->second;
}

void Engine::On(const ChangePartition& event, EngineOutput& out) {
  auto refuse = [&](std::string why) {
    out.effects.push_back(Reply{event.token, false, std::move(why), {}, {}});
  };
  using Kind = ChangePartition::Kind;
  if (!IsOperator(event.caller)) return refuse("Access/permission denied");
  const std::string& name = event.name;
  auto next = std::make_shared<ClusterConfig>(cluster());
  Status applied =
      event.kind == Kind::kDelete
          ? DeletePartition(*next, name)
          : ApplyPartitionSettings(*next, name, event.settings, event.kind == Kind::kCreate);
  if (!applied) return refuse(applied.error());
  if (std::string refusal = ReconfigureRefusal(*next); !refusal.empty())
    return refuse(event.kind == Kind::kDelete ? "Partition is in use" : refusal);
  bool in_slurm_conf = base_->FindPartition(name) >= 0;
  PartitionOverride& change = partition_overrides_[name];
  if (event.kind == Kind::kUpdate) {
    change.settings.insert(change.settings.end(), event.settings.begin(), event.settings.end());
  } else {
    change =
        PartitionOverride{event.kind == Kind::kCreate ? event.settings : std::vector<std::string>{},
                          event.kind == Kind::kCreate, event.kind == Kind::kDelete};
  }
  if (change.deleted && !in_slurm_conf) partition_overrides_.erase(name);
  out.changed_partitions.push_back(name);
  // Default=YES took Default from another partition: that one's change says so, so that the
  // changes give the same result in any order.
  if (int before = cluster().DefaultPartition(); before >= 0) {
    const std::string& previous = cluster().partitions[before].name;
    int after = next->FindPartition(previous);
    if (previous != name && after >= 0 && !next->partitions[after].is_default) {
      partition_overrides_[previous].settings.push_back("Default=NO");
      out.changed_partitions.push_back(previous);
    }
  }
  Adopt(std::move(next), &out);
  out.effects.push_back(Reply{event.token, true, "", {}, {}});
}

}  // namespace drover::ctld
