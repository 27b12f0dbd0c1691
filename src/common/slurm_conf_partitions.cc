// PartitionName lines of slurm.conf: DEFAULT lines, node lists (hostlists, NodeSets or ALL),
// limits, tiers, preemption and OverSubscribe, with Slurm's defaults.
#include <fmt/format.h>

#include "common/documented_keys.h"
#include "common/hostlist.h"
#include "common/partition_update.h"
#include "common/slurm_conf.h"
#include "common/tres.h"

namespace drover {
namespace {

using P = PartitionConfig;
using namespace conf;  // NOLINT: the setter builders read best unqualified in the table

SetResult SetMaxTime(P& p, std::string_view v) {
  auto seconds = ParseDuration(v);
  if (!seconds) return seconds.error();
  p.max_time_seconds = *seconds;
  return std::nullopt;
}

SetResult SetDefaultTime(P& p, std::string_view v) {
  if (EqualsIgnoreCase(v, "NONE")) {
    p.default_time_seconds.reset();
    return std::nullopt;
  }
  auto seconds = ParseDuration(v);
  if (!seconds) return seconds.error();
  p.default_time_seconds = *seconds;
  return std::nullopt;
}

SetResult SetOptionalMemory(std::optional<uint64_t> P::*member, P& p, std::string_view v) {
  if (EqualsIgnoreCase(v, "UNLIMITED") || EqualsIgnoreCase(v, "INFINITE")) {
    p.*member = 0;
    return std::nullopt;
  }
  auto mb = ParseMemoryMB(v);
  if (!mb) return mb.error();
  p.*member = *mb;
  return std::nullopt;
}

SetResult SetState(P& p, std::string_view v) {
  static const std::pair<std::string_view, PartitionState> kStates[] = {
      {"UP", PartitionState::kUp},
      {"DOWN", PartitionState::kDown},
      {"DRAIN", PartitionState::kDrain},
      {"INACTIVE", PartitionState::kInactive}};
  for (const auto& [name, state] : kStates) {
    if (EqualsIgnoreCase(v, name)) {
      p.state = state;
      return std::nullopt;
    }
  }
  return Invalid(v, "expected UP, DOWN, DRAIN or INACTIVE");
}

SetResult SetPreemptMode(P& p, std::string_view v) {
  auto mode = ParsePreemptMode(v);
  if (!mode) return Invalid(v, "expected OFF, CANCEL, REQUEUE or SUSPEND, optionally with ,GANG");
  p.preempt_mode = *mode;
  return std::nullopt;
}

// NO | EXCLUSIVE | YES[:N] | FORCE[:N]; N defaults to 4 as in Slurm.
SetResult SetOverSubscribe(P& p, std::string_view v) {
  using Mode = OverSubscribe::Mode;
  std::string_view word = v.substr(0, v.find(':'));
  OverSubscribe result;
  if (EqualsIgnoreCase(word, "NO")) {
    result.mode = Mode::kNo;
  } else if (EqualsIgnoreCase(word, "EXCLUSIVE")) {
    result.mode = Mode::kExclusive;
  } else if (EqualsIgnoreCase(word, "YES")) {
    result.mode = Mode::kYes;
    result.max_share = 4;
  } else if (EqualsIgnoreCase(word, "FORCE")) {
    result.mode = Mode::kForce;
    result.max_share = 4;
  } else {
    return Invalid(v, "expected NO, EXCLUSIVE, YES[:N] or FORCE[:N]");
  }
  if (word.size() < v.size()) {
    auto count = ParseInt64(v.substr(word.size() + 1));
    if (!count || *count < 1 || *count > 65535 ||
        (result.mode != Mode::kYes && result.mode != Mode::kForce))
      return Invalid(v, "expected NO, EXCLUSIVE, YES[:N] or FORCE[:N] with N from 1 to 65535");
    result.max_share = static_cast<int>(*count);
  }
  p.over_subscribe = result;
  return std::nullopt;
}

SetResult SetBillingWeights(P& p, std::string_view v) {
  auto weights = ParseTresWeights(v);
  if (!weights) return weights.error();
  p.billing_weights = std::move(*weights);
  return std::nullopt;
}

const std::vector<ConfField<P>>& Fields() {
  static const std::vector<ConfField<P>> fields = {
      {"Default", Bool(&P::is_default)},
      {"State", SetState},
      {"MaxTime", SetMaxTime},
      {"DefaultTime", SetDefaultTime},
      {"MaxNodes", Limit(&P::max_nodes, kUnlimitedCount)},
      {"MinNodes", Limit(&P::min_nodes, uint64_t{0})},
      {"MaxCPUsPerNode", Limit(&P::max_cpus_per_node, kUnlimitedCount)},
      {"PriorityTier", Integer(&P::priority_tier, 0, 65533)},
      {"PriorityJobFactor", Integer(&P::priority_job_factor, 0, 65533)},
      {"PreemptMode", SetPreemptMode},
      {"GraceTime", Integer(&P::grace_time_seconds, 0, UINT32_MAX)},
      {"OverSubscribe", SetOverSubscribe},
      {"Shared", SetOverSubscribe},
      {"ExclusiveUser", Bool(&P::exclusive_user)},
      {"Hidden", Bool(&P::hidden)},
      {"RootOnly", Bool(&P::root_only)},
      {"LLN", Bool(&P::least_loaded)},
      {"AllowAccounts", List(&P::allow_accounts)},
      {"DenyAccounts", List(&P::deny_accounts)},
      {"AllowGroups", List(&P::allow_groups)},
      {"AllowQos", List(&P::allow_qos)},
      {"DenyQos", List(&P::deny_qos)},
      {"DisableRootJobs",
       [](P& p, std::string_view v) -> SetResult {
         auto parsed = ParseBool(v);
         if (!parsed) return Invalid(v, "expected YES or NO");
         p.disable_root_jobs = *parsed;
         return std::nullopt;
       }},
      {"QOS", String(&P::qos)},
      {"DefMemPerCPU",
       [](P& p, auto v) { return SetOptionalMemory(&P::def_mem_per_cpu_mb, p, v); }},
      {"DefMemPerGPU",
       [](P& p, auto v) { return SetOptionalMemory(&P::def_mem_per_gpu_mb, p, v); }},
      {"MaxMemPerNode",
       [](P& p, auto v) { return SetOptionalMemory(&P::max_mem_per_node_mb, p, v); }},
      {"DefCpuPerGPU",
       [](P& p, std::string_view v) -> SetResult {
         auto n = ParseInt64(v);
         if (!n || *n < 0 || *n > 1 << 20) return Invalid(v, "expected a whole number of CPUs");
         p.def_cpu_per_gpu = *n;
         return std::nullopt;
       }},
      {"TRESBillingWeights", SetBillingWeights},
  };
  return fields;
}

void ApplyPair(const ConfLine& line, const ConfPair& pair, PartitionConfig& partition,
               Diagnostics& diagnostics, KeyReporter& reporter) {
  if (EqualsIgnoreCase(pair.key, "PartitionName") || EqualsIgnoreCase(pair.key, "Nodes")) return;
  if (const ConfField<P>* field = FindField(Fields(), pair.key)) {
    if (SetResult error = field->set(partition, pair.value))
      diagnostics.Error(line.where, fmt::format("{}: {}", field->name, *error));
    else
      reporter.ReportUnenforced(diagnostics, line.where, field->name, "partition",
                                PartitionLineUnenforcedKeys());
    return;
  }
  static const std::vector<std::string_view> implemented = [] {
    std::vector<std::string_view> names = {"PartitionName", "Nodes"};
    for (const auto& field : Fields()) names.push_back(field.name);
    return names;
  }();
  reporter.Report(diagnostics, line.where, pair.key, "PartitionName", implemented,
                  PartitionLineDocumentedKeys());
}

// Nodes=ALL, or a comma list whose items are NodeSet names or hostlists.
void ResolveNodes(const ConfLine& line, std::string_view expression,
                  const std::vector<NodeSet>& node_sets, const ClusterConfig& config,
                  PartitionConfig& partition, Diagnostics& diagnostics) {
  std::vector<bool> member(config.nodes.size(), false);
  for (const std::string& item : SplitTopLevel(expression)) {
    std::string_view part = Trim(item);
    if (EqualsIgnoreCase(part, "ALL")) {
      member.assign(config.nodes.size(), true);
      continue;
    }
    std::vector<std::string> names;
    auto set = std::find_if(node_sets.begin(), node_sets.end(),
                            [&](const NodeSet& s) { return s.name == part; });
    if (set != node_sets.end()) {
      names = set->node_names;
    } else if (auto expanded = ExpandHostlist(part)) {
      names = std::move(*expanded);
    } else {
      diagnostics.Error(line.where,
                        fmt::format("partition {}: Nodes: {}", partition.name, expanded.error()));
      continue;
    }
    std::vector<std::string> unknown;
    for (int index : config.ResolveNodes(names, unknown)) member[index] = true;
    if (!unknown.empty())
      diagnostics.Error(line.where, fmt::format("partition {}: {}", partition.name,
                                                UndefinedNodesMessage(unknown)));
  }
  // Partition node order is configuration order, as Slurm's node bitmaps give it.
  for (size_t i = 0; i < member.size(); ++i)
    if (member[i]) partition.nodes.push_back(static_cast<int>(i));
}

}  // namespace

void AddPartitionLine(const ConfLine& line, std::vector<ConfPair>& defaults,
                      const std::vector<NodeSet>& node_sets, ClusterConfig& config,
                      Diagnostics& diagnostics, KeyReporter& reporter) {
  const std::string& name = line.pairs.front().value;
  if (EqualsIgnoreCase(name, "DEFAULT")) {
    defaults.insert(defaults.end(), line.pairs.begin() + 1, line.pairs.end());
    return;
  }
  if (name.empty()) {
    diagnostics.Error(line.where, "PartitionName needs a name");
    return;
  }
  if (int existing = config.FindPartition(name); existing >= 0) {
    const SourceLocation& first = config.partitions[existing].defined_at;
    diagnostics.Error(line.where, fmt::format("partition {} is already defined at {}:{}", name,
                                              first.file, first.line));
    return;
  }
  PartitionConfig partition;
  partition.name = name;
  partition.defined_at = line.where;
  for (const ConfPair& pair : defaults) ApplyPair(line, pair, partition, diagnostics, reporter);
  for (const ConfPair& pair : line.pairs) ApplyPair(line, pair, partition, diagnostics, reporter);
  // Nodes from the line, else from a DEFAULT line.
  for (const ConfPair& pair : defaults)
    if (EqualsIgnoreCase(pair.key, "Nodes")) partition.nodes_expression = pair.value;
  for (const ConfPair& pair : line.pairs)
    if (EqualsIgnoreCase(pair.key, "Nodes")) partition.nodes_expression = pair.value;
  if (!partition.nodes_expression.empty())
    ResolveNodes(line, partition.nodes_expression, node_sets, config, partition, diagnostics);
  if (partition.min_nodes != 0 && partition.max_nodes != kUnlimitedCount &&
      partition.min_nodes > partition.max_nodes)
    diagnostics.Error(line.where, fmt::format("partition {}: MinNodes={} is above MaxNodes={}",
                                              name, partition.min_nodes, partition.max_nodes));
  if (partition.default_time_seconds &&
      *partition.default_time_seconds > partition.max_time_seconds)
    diagnostics.Warning(line.where, fmt::format("partition {}: DefaultTime is longer than MaxTime; "
                                                "jobs without --time get MaxTime",
                                                name));
  config.partitions.push_back(std::move(partition));
}

bool IsPartitionKey(std::string_view key) {
  return EqualsIgnoreCase(key, "PartitionName") || EqualsIgnoreCase(key, "Nodes") ||
         FindField(Fields(), key) != nullptr;
}

namespace {

// One "Key=Value" of scontrol onto `partition`; the error as scontrol reports it.
Status ApplySetting(const ClusterConfig& config, std::string_view word,
                    PartitionConfig& partition) {
  size_t eq = word.find('=');
  if (eq == std::string_view::npos)
    return MakeError(fmt::format("Update of this parameter is not supported: {}", word));
  std::string_view key = word.substr(0, eq), value = word.substr(eq + 1);
  if (EqualsIgnoreCase(key, "PartitionName")) return OkStatus();
  if (EqualsIgnoreCase(key, "Nodes")) {
    ConfLine line{{"scontrol", 0}, {}};
    Diagnostics diagnostics;
    PartitionConfig resolved;
    resolved.name = partition.name;
    ResolveNodes(line, value, {}, config, resolved, diagnostics);
    if (diagnostics.has_errors())
      return MakeError(
          fmt::format("Invalid node name specified ({})", diagnostics.errors().front().message));
    partition.nodes = std::move(resolved.nodes);
    partition.nodes_expression = std::string(value);
    return OkStatus();
  }
  const ConfField<P>* field = FindField(Fields(), key);
  if (!field) return MakeError(fmt::format("Update of this parameter is not supported: {}", word));
  if (SetResult error = field->set(partition, value))
    return MakeError(fmt::format("Invalid input: {} ({})", word, *error));
  return OkStatus();
}

}  // namespace

Status ApplyPartitionSettings(ClusterConfig& config, std::string_view name,
                              std::span<const std::string> settings, bool create) {
  int index = config.FindPartition(name);
  if (name.empty() || EqualsIgnoreCase(name, "DEFAULT") || (create ? index >= 0 : index < 0))
    return MakeError("Invalid partition name specified");
  PartitionConfig partition = create ? PartitionConfig{} : config.partitions[index];
  partition.name = std::string(name);
  bool was_default = partition.is_default;
  for (const std::string& word : settings)
    if (Status applied = ApplySetting(config, word, partition); !applied) return applied;
  if (partition.min_nodes != 0 && partition.max_nodes != kUnlimitedCount &&
      partition.min_nodes > partition.max_nodes)
    return MakeError(fmt::format("Invalid input: MinNodes={} is above MaxNodes={}",
                                 partition.min_nodes, partition.max_nodes));
  // One default partition, as in Slurm: the new one takes it.
  if (partition.is_default && !was_default)
    for (PartitionConfig& other : config.partitions) other.is_default = false;
  if (create)
    config.partitions.push_back(std::move(partition));
  else
    config.partitions[index] = std::move(partition);
  return OkStatus();
}

Status DeletePartition(ClusterConfig& config, std::string_view name) {
  int index = config.FindPartition(name);
  if (index < 0) return MakeError("Invalid partition name specified");
  config.partitions.erase(config.partitions.begin() + index);
  return OkStatus();
}

}  // namespace drover
