// slurm.conf lines to ClusterConfig: dispatches each line by its first key, applies cluster
// keys through the settings table, and reports keys without effect once and unknown keys with
// a suggestion. Node lines are read before partition lines, as Slurm does, so a partition may
// name nodes defined further down.
#include "common/slurm_conf.h"

#include <fmt/format.h>

#include <map>

#include "common/documented_keys.h"
#include "common/hostlist.h"
#include "common/launch_settings.h"

namespace drover {
namespace {

template <typename Target>
std::vector<std::string_view> FieldNames(const std::vector<ConfField<Target>>& fields) {
  std::vector<std::string_view> names;
  for (const auto& field : fields) names.push_back(field.name);
  return names;
}

bool IsLineKind(const ConfLine& line, std::string_view kind) {
  return EqualsIgnoreCase(line.pairs.front().key, kind);
}

// The parts of a read key that have no effect yet: SchedulerParameters options Drover does not
// know, PrivateData and AccountingStorageEnforce words it does not enforce.
void ReportUnenforcedParts(const ConfLine& line, const std::string& key,
                           const ClusterSettings& settings, Diagnostics& diagnostics,
                           KeyReporter& reporter) {
  if (key == "schedulerparameters")
    for (const auto& [option, value] : settings.scheduler_params.other)
      reporter.ReportUnenforcedValue(diagnostics, line.where,
                                     fmt::format("SchedulerParameters option '{}'", option));
  if (key == "accountingstorageenforce")
    for (const std::string& word : settings.accounting_storage_enforce)
      if (!EqualsIgnoreCase(word, "associations") && !EqualsIgnoreCase(word, "limits") &&
          !EqualsIgnoreCase(word, "qos") && !EqualsIgnoreCase(word, "safe"))
        reporter.ReportUnenforcedValue(diagnostics, line.where,
                                       fmt::format("AccountingStorageEnforce={}", word));
  if (key != "privatedata") return;
  const PrivateData& data = settings.private_data;
  const std::pair<bool, std::string_view> words[] = {
      {data.accounts, "accounts"}, {data.cloud, "cloud"},           {data.events, "events"},
      {data.nodes, "nodes"},       {data.partitions, "partitions"}, {data.users, "users"}};
  for (const auto& [set, word] : words)
    if (set)
      reporter.ReportUnenforcedValue(diagnostics, line.where, fmt::format("PrivateData={}", word));
}

void ApplyClusterPair(const ConfLine& line, const ConfPair& pair, ClusterConfig& config,
                      Diagnostics& diagnostics, KeyReporter& reporter,
                      std::map<std::string, int>& first_seen, LaunchSettings& launch) {
  const auto& fields = ClusterSettingsFields();
  const ConfField<ClusterSettings>* field = FindField(fields, pair.key);
  if (const auto* launch_field = FindField(LaunchSettingsFields(), pair.key);
      !field && launch_field) {
    // Only the launching commands act on it (launch_settings.h): checked here as they read it.
    if (SetResult error = launch_field->set(launch, pair.value))
      diagnostics.Error(line.where, fmt::format("{}: {}", launch_field->name, *error));
    return;
  }
  if (!field) {
    static const std::vector<std::string_view> implemented = FieldNames(fields);
    reporter.Report(diagnostics, line.where, pair.key, "slurm.conf", implemented,
                    SlurmConfDocumentedKeys());
    return;
  }
  std::string key = ToLower(field->name);
  bool repeatable = key == "slurmctldhost" || key == "controlmachine";
  auto [it, inserted] = first_seen.emplace(key, line.where.line);
  if (!inserted && !repeatable) {
    diagnostics.Warning(line.where, fmt::format("{} is set again; this value replaces the one "
                                                "from line {}",
                                                field->name, it->second));
    it->second = line.where.line;
  }
  if (SetResult error = field->set(config.settings, pair.value)) {
    diagnostics.Error(line.where, fmt::format("{}: {}", field->name, *error));
    return;
  }
  ReportUnenforcedParts(line, key, config.settings, diagnostics, reporter);
  reporter.ReportUnenforced(diagnostics, line.where, field->name, "slurm.conf",
                            SlurmConfUnenforcedKeys());
}

void AddNodeSet(const ConfLine& line, const ClusterConfig& config, std::vector<NodeSet>& sets,
                Diagnostics& diagnostics) {
  NodeSet set{line.pairs.front().value, {}};
  for (size_t i = 1; i < line.pairs.size(); ++i) {
    const ConfPair& pair = line.pairs[i];
    if (EqualsIgnoreCase(pair.key, "Nodes")) {
      auto names = ExpandHostlist(pair.value);
      if (!names) {
        diagnostics.Error(line.where, fmt::format("NodeSet {}: {}", set.name, names.error()));
        return;
      }
      set.node_names.insert(set.node_names.end(), names->begin(), names->end());
    } else if (EqualsIgnoreCase(pair.key, "Feature")) {
      for (const NodeConfig& node : config.nodes)
        for (const std::string& feature : node.features)
          if (feature == pair.value) set.node_names.push_back(node.name);
    } else {
      diagnostics.Error(line.where, fmt::format("NodeSet {}: unknown key '{}' (expected Nodes= "
                                                "or Feature=)",
                                                set.name, pair.key));
      return;
    }
  }
  sets.push_back(std::move(set));
}

}  // namespace

void KeyReporter::Report(Diagnostics& diagnostics, const SourceLocation& where,
                         std::string_view key, std::string_view kind,
                         std::span<const std::string_view> implemented,
                         std::span<const std::string_view> documented) {
  for (std::string_view name : documented) {
    if (!EqualsIgnoreCase(name, key)) continue;
    if (reported.insert(ToLower(fmt::format("{}:{}", kind, name))).second)
      diagnostics.Warning(where, fmt::format("'{}' is accepted but has no effect in Drover", name));
    return;
  }
  std::vector<std::string_view> candidates(implemented.begin(), implemented.end());
  candidates.insert(candidates.end(), documented.begin(), documented.end());
  auto suggestion = ClosestMatch(key, candidates);
  std::string hint = suggestion ? fmt::format(" — did you mean '{}'?", *suggestion)
                                : std::string(" — it is ignored");
  diagnostics.Warning(where, fmt::format("unknown {} key '{}'{}", kind, key, hint));
}

void KeyReporter::ReportUnenforced(Diagnostics& diagnostics, const SourceLocation& where,
                                   std::string_view key, std::string_view kind,
                                   std::span<const std::string_view> unenforced) {
  for (std::string_view name : unenforced)
    if (EqualsIgnoreCase(name, key) &&
        reported.insert(ToLower(fmt::format("{}:{}", kind, name))).second)
      diagnostics.Warning(where, fmt::format("'{}' is read but not enforced by Drover yet", name));
}

void KeyReporter::ReportUnenforcedValue(Diagnostics& diagnostics, const SourceLocation& where,
                                        std::string_view what) {
  if (reported.insert(ToLower(fmt::format("value:{}", what))).second)
    diagnostics.Warning(where, fmt::format("{} is read but not enforced by Drover yet", what));
}

void ApplySlurmConf(const std::vector<ConfLine>& lines, ClusterConfig& config,
                    Diagnostics& diagnostics, KeyReporter& reporter) {
  std::vector<ConfPair> node_defaults, partition_defaults;
  std::vector<const ConfLine*> partition_lines, node_set_lines;
  std::map<std::string, int> first_seen;
  LaunchSettings launch;  // checked only: the commands read these keys themselves
  for (const ConfLine& line : lines) {
    if (IsLineKind(line, "NodeName")) {
      AddNodeLine(line, node_defaults, config, diagnostics, reporter);
    } else if (IsLineKind(line, "PartitionName")) {
      partition_lines.push_back(&line);
    } else if (IsLineKind(line, "NodeSet")) {
      node_set_lines.push_back(&line);
    } else if (IsLineKind(line, "DownNodes") || IsLineKind(line, "FrontendName")) {
      reporter.Report(diagnostics, line.where, line.pairs.front().key, "slurm.conf", {},
                      SlurmConfDocumentedKeys());
    } else if (line.pairs.size() > 1 &&
               !FindField(ClusterSettingsFields(), line.pairs.front().key)) {
      // A misspelt line kind ("PartitoinName=p Nodes=..."): one warning, not one per key.
      ApplyClusterPair(line, line.pairs.front(), config, diagnostics, reporter, first_seen, launch);
    } else {
      for (const ConfPair& pair : line.pairs)
        ApplyClusterPair(line, pair, config, diagnostics, reporter, first_seen, launch);
    }
  }
  FinishNodes(config, diagnostics);
  std::vector<NodeSet> node_sets;
  for (const ConfLine* line : node_set_lines) AddNodeSet(*line, config, node_sets, diagnostics);
  for (const ConfLine* line : partition_lines)
    AddPartitionLine(*line, partition_defaults, node_sets, config, diagnostics, reporter);
}

}  // namespace drover
