// job_container.conf; see job_container_conf.h.
#include "common/job_container_conf.h"

#include <fmt/format.h>

#include <string_view>

#include "common/conf_fields.h"
#include "common/hostlist.h"
#include "common/text.h"

namespace drover {
namespace {

constexpr std::string_view kImplemented[] = {"AutoBasePath", "BasePath", "Dirs", "NodeName"};
// Documented keys Drover accepts without acting on them.
constexpr std::string_view kDocumented[] = {"InitScript", "Shared", "EntireStepInNS"};

bool Absolute(std::string_view path) {
  return !path.empty() && path.front() == '/';
}

}  // namespace

const std::string& JobContainerConf::BasePathFor(const std::string& node) const {
  auto it = node_base_paths.find(node);
  return it != node_base_paths.end() ? it->second : base_path;
}

void ApplyJobContainerConf(const std::vector<ConfLine>& lines, ClusterConfig& config,
                           Diagnostics& diagnostics, KeyReporter& reporter) {
  JobContainerConf& conf = config.settings.job_container;
  for (const ConfLine& line : lines) {
    std::vector<std::string> nodes;  // a NodeName= line: its BasePath is theirs
    bool for_nodes = false;
    for (const ConfPair& pair : line.pairs) {
      if (EqualsIgnoreCase(pair.key, "NodeName")) {
        auto names = ExpandHostlist(pair.value);
        if (!names) {
          diagnostics.Error(line.where, fmt::format("NodeName={}: {}", pair.value, names.error()));
          break;
        }
        for (const std::string& name : *names)
          if (config.FindNode(name) < 0)
            diagnostics.Error(line.where, UndefinedNodesMessage({name}));
        nodes = std::move(*names);
        for_nodes = true;
      } else if (EqualsIgnoreCase(pair.key, "BasePath")) {
        if (!Absolute(pair.value)) {
          diagnostics.Error(line.where, fmt::format("BasePath={}: give an absolute path (e.g. "
                                                    "/var/nvme/jobs)",
                                                    pair.value));
          continue;
        }
        if (!for_nodes) conf.base_path = pair.value;
        for (const std::string& node : nodes) conf.node_base_paths[node] = pair.value;
      } else if (EqualsIgnoreCase(pair.key, "AutoBasePath")) {
        auto yes = conf::ParseBool(pair.value);
        if (!yes)
          diagnostics.Error(line.where,
                            fmt::format("AutoBasePath={}: expected true or false", pair.value));
        else
          conf.auto_base_path = *yes;
      } else if (EqualsIgnoreCase(pair.key, "Dirs")) {
        std::vector<std::string> dirs;
        for (const std::string& item : Split(pair.value, ',')) {
          std::string dir(Trim(item));
          if (dir.empty()) continue;
          if (!Absolute(dir) || dir == "/") {
            diagnostics.Error(line.where,
                              fmt::format("Dirs={}: each directory must be an absolute path "
                                          "other than / (e.g. /tmp,/dev/shm)",
                                          pair.value));
            dirs.clear();
            break;
          }
          dirs.push_back(std::move(dir));
        }
        if (!dirs.empty()) conf.dirs = std::move(dirs);
      } else {
        reporter.Report(diagnostics, line.where, pair.key, "job_container.conf", kImplemented,
                        kDocumented);
      }
    }
  }
}

void CheckJobContainer(const ClusterConfig& config, Diagnostics& diagnostics) {
  const JobContainerConf& conf = config.settings.job_container;
  if (!conf.tmpfs) return;
  for (const NodeConfig& node : config.nodes)
    if (conf.BasePathFor(node.name).empty()) {
      diagnostics.Error(
          {config.job_container_conf_path.empty() ? config.conf_path
                                                  : config.job_container_conf_path,
           0},
          fmt::format("JobContainerType=job_container/tmpfs needs a BasePath for node {}: add "
                      "BasePath=/path to job_container.conf beside slurm.conf",
                      node.name));
      return;
    }
}

}  // namespace drover
