// Loading a cluster's configuration: slurm.conf, then gres.conf and topology.conf from the same
// folder, then the checks that span files. See cluster_config.h.
#include "common/cluster_config.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

#include "common/cgroup_conf.h"
#include "common/gres_conf.h"
#include "common/hostlist.h"
#include "common/job_container_conf.h"
#include "common/slurm_conf.h"
#include "common/text.h"
#include "common/topology_conf.h"

namespace drover {
namespace {

// TLS needs the whole set: a certificate without its key or CA would leave one side unable to
// talk to the other, so a partial set is an error that names what is missing.
void CheckTls(const TlsSettings& tls, const SourceLocation& file, Diagnostics& diagnostics) {
  std::vector<std::string> set, missing;
  for (const auto& [key, value] :
       {std::pair<std::string, const std::string*>{"DroverTLSCertFile", &tls.cert_file},
        {"DroverTLSKeyFile", &tls.key_file},
        {"DroverTLSCAFile", &tls.ca_file}})
    (value->empty() ? missing : set).push_back(key);
  if (!set.empty() && !missing.empty())
    diagnostics.Error(file, fmt::format("{} set without {}: TLS needs DroverTLSCertFile, "
                                        "DroverTLSKeyFile and DroverTLSCAFile together (or none "
                                        "of them, for plain TCP)",
                                        fmt::join(set, " and "), fmt::join(missing, " and ")));
  if (set.empty() && (tls.require_client_cert || !tls.server_name.empty()))
    diagnostics.Error(file, fmt::format("{} needs TLS: set DroverTLSCertFile, DroverTLSKeyFile "
                                        "and DroverTLSCAFile too",
                                        tls.require_client_cert ? "DroverTLSRequireClientCert"
                                                                : "DroverTLSServerName"));
}

void CheckCluster(ClusterConfig& config, Diagnostics& diagnostics) {
  SourceLocation file{config.conf_path, 0};
  const ClusterSettings& settings = config.settings;
  if (settings.cluster_name.empty())
    diagnostics.Error(file, "ClusterName is not set; add a line such as ClusterName=mycluster");
  CheckTls(settings.tls, file, diagnostics);
  if (config.nodes.empty()) diagnostics.Error(file, "no nodes are defined; add a NodeName= line");
  if (config.partitions.empty())
    diagnostics.Warning(file,
                        "no partitions are defined; jobs cannot be submitted until a "
                        "PartitionName= line is added");
  int defaults = 0;
  for (PartitionConfig& partition : config.partitions) {
    if (!partition.is_default) continue;
    if (++defaults > 1) {
      diagnostics.Warning(
          partition.defined_at,
          fmt::format("partition {} is also Default=YES; {} stays the default", partition.name,
                      config.partitions[config.DefaultPartition()].name));
      partition.is_default = false;
    }
  }
  if (defaults == 0 && !config.partitions.empty())
    diagnostics.Warning(file, "no partition is Default=YES; jobs must name one with -p");
  for (const PartitionConfig& partition : config.partitions)
    if (partition.nodes.empty())
      diagnostics.Warning(partition.defined_at,
                          fmt::format("partition {} has no nodes", partition.name));
}

// Reads `name` beside slurm.conf when present; nullopt when absent.
std::optional<std::vector<ConfLine>> ReadCompanion(const ClusterConfig& config,
                                                   const std::string& name, std::string& path_out,
                                                   Diagnostics& diagnostics) {
  std::filesystem::path path = std::filesystem::path(config.conf_path).parent_path() / name;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  path_out = path.string();
  ConfReadOptions options;
  options.allow_include = false;
  return ReadConfFile(path_out, diagnostics, options);
}

// Everything after reading: the three files' lines to a checked ClusterConfig.
void Build(ConfigLoad& load, const std::vector<ConfLine>& slurm,
           const std::optional<std::vector<ConfLine>>& gres,
           const std::optional<std::vector<ConfLine>>& topology,
           const std::optional<std::vector<ConfLine>>& cgroup,
           const std::optional<std::vector<ConfLine>>& job_container) {
  ClusterConfig& config = load.config;
  Diagnostics& diagnostics = load.diagnostics;
  KeyReporter reporter;
  ApplySlurmConf(slurm, config, diagnostics, reporter);
  if (cgroup) ApplyCgroupConf(*cgroup, config, diagnostics, reporter);
  if (job_container) ApplyJobContainerConf(*job_container, config, diagnostics, reporter);
  CheckJobContainer(config, diagnostics);
  std::vector<GpuShareLine> shares;
  if (gres) shares = ApplyGresConf(*gres, config, diagnostics, reporter);
  FinishGpus(config, shares, diagnostics);
  std::string topology_name =
      config.topology_conf_path.empty() ? std::string("topology.conf") : config.topology_conf_path;
  if (config.settings.topology == TopologyKind::kFlat) {
    if (topology)
      diagnostics.Warning({topology_name, 0},
                          "topology.conf is ignored: TopologyPlugin is not set; add "
                          "TopologyPlugin=topology/tree (or topology/block) to use it");
  } else if (!topology) {
    diagnostics.Error(
        {config.conf_path, 0},
        fmt::format(
            "TopologyPlugin={} needs a topology.conf beside slurm.conf",
            config.settings.topology == TopologyKind::kBlock ? "topology/block" : "topology/tree"));
  } else {
    ApplyTopologyConf(*topology, config, diagnostics, reporter);
  }
  CheckCluster(config, diagnostics);
}

}  // namespace

int ClusterConfig::FindNode(std::string_view name) const {
  auto it = node_index.find(std::string(name));
  return it == node_index.end() ? -1 : it->second;
}

std::vector<int> ClusterConfig::ResolveNodes(const std::vector<std::string>& names,
                                             std::vector<std::string>& unknown) const {
  std::vector<int> indexes;
  indexes.reserve(names.size());
  for (const std::string& name : names) {
    int index = FindNode(name);
    if (index < 0)
      unknown.push_back(name);
    else
      indexes.push_back(index);
  }
  return indexes;
}

std::string UndefinedNodesMessage(const std::vector<std::string>& unknown) {
  if (unknown.size() == 1)
    return fmt::format("node '{}' is not defined by any NodeName line", unknown.front());
  return fmt::format("nodes {} are not defined by any NodeName line",
                     CompressHostlistSorted(unknown));
}

int ClusterConfig::FindPartition(std::string_view name) const {
  for (size_t i = 0; i < partitions.size(); ++i)
    if (partitions[i].name == name) return static_cast<int>(i);
  return -1;
}

int ClusterConfig::DefaultPartition() const {
  for (size_t i = 0; i < partitions.size(); ++i)
    if (partitions[i].is_default) return static_cast<int>(i);
  return -1;
}

ConfigLoad LoadClusterConfig(const std::string& path) {
  ConfigLoad load;
  load.config.conf_path = path;
  std::vector<ConfLine> slurm = ReadConfFile(path, load.diagnostics);
  if (load.diagnostics.has_errors() && slurm.empty()) return load;
  auto gres = ReadCompanion(load.config, "gres.conf", load.config.gres_conf_path, load.diagnostics);
  auto topology =
      ReadCompanion(load.config, "topology.conf", load.config.topology_conf_path, load.diagnostics);
  auto cgroup =
      ReadCompanion(load.config, "cgroup.conf", load.config.cgroup_conf_path, load.diagnostics);
  auto job_container = ReadCompanion(load.config, "job_container.conf",
                                     load.config.job_container_conf_path, load.diagnostics);
  Build(load, slurm, gres, topology, cgroup, job_container);
  return load;
}

ConfigLoad LoadClusterConfigText(const std::string& slurm_conf,
                                 const std::optional<std::string>& gres_conf,
                                 const std::optional<std::string>& topology_conf,
                                 const std::optional<std::string>& cgroup_conf,
                                 const std::optional<std::string>& job_container_conf) {
  ConfigLoad load;
  load.config.conf_path = "slurm.conf";
  Diagnostics& diagnostics = load.diagnostics;
  std::vector<ConfLine> slurm = ReadConfText(slurm_conf, "slurm.conf", diagnostics);
  std::optional<std::vector<ConfLine>> gres, topology;
  if (gres_conf) {
    load.config.gres_conf_path = "gres.conf";
    gres = ReadConfText(*gres_conf, "gres.conf", diagnostics);
  }
  if (topology_conf) {
    load.config.topology_conf_path = "topology.conf";
    topology = ReadConfText(*topology_conf, "topology.conf", diagnostics);
  }
  std::optional<std::vector<ConfLine>> cgroup;
  if (cgroup_conf) {
    load.config.cgroup_conf_path = "cgroup.conf";
    cgroup = ReadConfText(*cgroup_conf, "cgroup.conf", diagnostics);
  }
  std::optional<std::vector<ConfLine>> job_container;
  if (job_container_conf) {
    load.config.job_container_conf_path = "job_container.conf";
    job_container = ReadConfText(*job_container_conf, "job_container.conf", diagnostics);
  }
  Build(load, slurm, gres, topology, cgroup, job_container);
  return load;
}

std::string ControllerHostAddress(const ClusterSettings& settings, const ControllerHost& host) {
  std::string name = host.address.empty() ? host.name : host.address;
  if (name.find(':') != std::string::npos && !name.starts_with('[')) name = "[" + name + "]";
  return fmt::format("{}:{}", name, host.port ? host.port : settings.controller_port);
}

std::string ControllerAddress(const ClusterSettings& settings) {
  if (settings.controller_hosts.empty())
    return fmt::format("127.0.0.1:{}", settings.controller_port);
  return ControllerHostAddress(settings, settings.controller_hosts.front());
}

std::vector<std::string> ControllerAddresses(const ClusterSettings& settings) {
  std::vector<std::string> addresses;
  for (const ControllerHost& host : settings.controller_hosts)
    addresses.push_back(ControllerHostAddress(settings, host));
  if (addresses.empty()) addresses.push_back(ControllerAddress(settings));
  return addresses;
}

namespace {

std::string ListenAddress(const std::string& host, int port) {
  if (host.empty()) return fmt::format("0.0.0.0:{}", port);
  bool ipv6 = host.find(':') != std::string::npos && !host.starts_with('[');
  return ipv6 ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

}  // namespace

std::string ControllerListenAddress(const ClusterSettings& settings, int port) {
  return ListenAddress(settings.controller_listen_host, port ? port : settings.controller_port);
}

std::string AgentListenAddress(const ClusterSettings& settings, const NodeConfig& node) {
  return ListenAddress(settings.agent_listen_host, node.port ? node.port : settings.agent_port);
}

std::string ResolveConfPath(const std::string& explicit_path) {
  if (!explicit_path.empty()) return explicit_path;
  for (const char* variable : {"DROVER_CONF", "SLURM_CONF"}) {
    const char* value = std::getenv(variable);
    if (value && *value) return value;
  }
  return "/etc/slurm/slurm.conf";
}

std::string ConfigLoad::ErrorText() const {
  std::string text;
  for (const Diagnostic& error : diagnostics.errors()) {
    if (!text.empty()) text += '\n';
    text += error.ToString();
  }
  return text;
}

}  // namespace drover
