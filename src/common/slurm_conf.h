// slurm.conf: the cluster keys, NodeName, NodeSet and PartitionName lines. Turns the lines
// that conf_reader produced into ClusterConfig's settings, nodes and partitions. gres.conf and
// topology.conf are applied afterwards by their own files; cluster_config.cc runs the whole.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "common/cluster_config.h"
#include "common/conf_fields.h"
#include "common/conf_reader.h"

namespace drover {

// Remembers which keys were already reported as having no effect, so each is said once.
struct KeyReporter {
  std::set<std::string> reported;  // lower-case "file-kind:key"

  // A key that is neither implemented nor in `documented`: a warning with a suggestion from
  // `implemented` and `documented`. A documented one: "accepted, has no effect" once.
  void Report(Diagnostics& diagnostics, const SourceLocation& where, std::string_view key,
              std::string_view kind, std::span<const std::string_view> implemented,
              std::span<const std::string_view> documented);

  // A key Drover reads but does not act on yet (`unenforced`), or a value of one it reads (a
  // SchedulerParameters option, a PrivateData word): "read but not enforced" once.
  void ReportUnenforced(Diagnostics& diagnostics, const SourceLocation& where, std::string_view key,
                        std::string_view kind, std::span<const std::string_view> unenforced);
  void ReportUnenforcedValue(Diagnostics& diagnostics, const SourceLocation& where,
                             std::string_view what);
};

const std::vector<ConfField<ClusterSettings>>& ClusterSettingsFields();

// Value parsers shared with the command-line side.
std::optional<PreemptMode> ParsePreemptMode(std::string_view value);
std::string FormatPreemptMode(const PreemptMode& mode);

// Applies every line of slurm.conf to `config`.
void ApplySlurmConf(const std::vector<ConfLine>& lines, ClusterConfig& config,
                    Diagnostics& diagnostics, KeyReporter& reporter);

// Node and partition lines (slurm_conf_nodes.cc, slurm_conf_partitions.cc).
struct NodeSet {
  std::string name;
  std::vector<std::string> node_names;
};
void AddNodeLine(const ConfLine& line, std::vector<ConfPair>& defaults, ClusterConfig& config,
                 Diagnostics& diagnostics, KeyReporter& reporter);
void AddPartitionLine(const ConfLine& line, std::vector<ConfPair>& defaults,
                      const std::vector<NodeSet>& node_sets, ClusterConfig& config,
                      Diagnostics& diagnostics, KeyReporter& reporter);
// Finishes node definitions once every line is read (CPU counts, emulated GPUs, indexes).
void FinishNodes(ClusterConfig& config, Diagnostics& diagnostics);

}  // namespace drover
