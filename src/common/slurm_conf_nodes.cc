// NodeName lines of slurm.conf: DEFAULT lines, hostlists of names with per-node hostnames,
// addresses and ports, and Slurm's rules for deriving CPUs from boards, sockets, cores and
// threads.
#include <fmt/format.h>

#include "common/documented_keys.h"
#include "common/hostlist.h"
#include "common/slurm_conf.h"

namespace drover {
namespace {

// A node line being read: the node's values plus what was given explicitly, since Slurm derives
// missing CPU topology values from the given ones.
struct NodeDraft {
  NodeConfig node;
  bool cpus_given = false, sockets_given = false, cores_given = false, threads_given = false;
  int sockets_per_board = 0;
};

using D = NodeDraft;
using conf::Invalid;

SetResult SetCount(int NodeConfig::*member, bool NodeDraft::*given, D& d, std::string_view v,
                   int max = 1 << 20) {
  auto number = ParseInt64(v);
  if (!number || *number < 1 || *number > max)
    return Invalid(v, fmt::format("expected a whole number from 1 to {}", max));
  d.node.*member = static_cast<int>(*number);
  if (given) d.*given = true;
  return std::nullopt;
}

SetResult SetMemoryField(uint64_t NodeConfig::*member, D& d, std::string_view v) {
  auto mb = ParseMemoryMB(v);
  if (!mb) return mb.error();
  d.node.*member = *mb;
  return std::nullopt;
}

SetResult SetState(D& d, std::string_view v) {
  for (std::string_view state :
       {"UNKNOWN", "CLOUD", "DOWN", "DRAIN", "FAIL", "FAILING", "FUTURE", "IDLE"}) {
    if (EqualsIgnoreCase(v, state)) {
      d.node.state = std::string(state);
      return std::nullopt;
    }
  }
  return Invalid(v, "expected UNKNOWN, CLOUD, DOWN, DRAIN, FAIL, FAILING or FUTURE");
}

SetResult SetFeatures(D& d, std::string_view v) {
  d.node.features.clear();
  for (const std::string& feature : Split(v, ','))
    if (!Trim(feature).empty()) d.node.features.emplace_back(Trim(feature));
  return std::nullopt;
}

SetResult SetGres(D& d, std::string_view v) {
  auto gres = ParseGres(v);
  if (!gres) return gres.error();
  d.node.gres = std::move(*gres);
  return std::nullopt;
}

const std::vector<ConfField<D>>& Fields() {
  static const std::vector<ConfField<D>> fields = {
      {"CPUs", [](D& d, auto v) { return SetCount(&NodeConfig::cpus, &D::cpus_given, d, v); }},
      {"Procs", [](D& d, auto v) { return SetCount(&NodeConfig::cpus, &D::cpus_given, d, v); }},
      {"Boards", [](D& d, auto v) { return SetCount(&NodeConfig::boards, nullptr, d, v); }},
      {"SocketsPerBoard",
       [](D& d, std::string_view v) -> SetResult {
         auto n = ParseInt64(v);
         if (!n || *n < 1 || *n > 1024) return Invalid(v, "expected a whole number from 1 to 1024");
         d.sockets_per_board = static_cast<int>(*n);
         return std::nullopt;
       }},
      {"Sockets",
       [](D& d, auto v) { return SetCount(&NodeConfig::sockets, &D::sockets_given, d, v); }},
      {"CoresPerSocket",
       [](D& d, auto v) { return SetCount(&NodeConfig::cores_per_socket, &D::cores_given, d, v); }},
      {"ThreadsPerCore",
       [](D& d, auto v) {
         return SetCount(&NodeConfig::threads_per_core, &D::threads_given, d, v);
       }},
      {"RealMemory",
       [](D& d, auto v) { return SetMemoryField(&NodeConfig::real_memory_mb, d, v); }},
      {"TmpDisk", [](D& d, auto v) { return SetMemoryField(&NodeConfig::tmp_disk_mb, d, v); }},
      {"MemSpecLimit",
       [](D& d, auto v) { return SetMemoryField(&NodeConfig::mem_spec_limit_mb, d, v); }},
      {"CoreSpecCount",
       [](D& d, std::string_view v) -> SetResult {
         auto n = ParseInt64(v);
         if (!n || *n < 0 || *n > 1 << 20) return Invalid(v, "expected a whole number of cores");
         d.node.core_spec_count = static_cast<int>(*n);
         return std::nullopt;
       }},
      {"CpuSpecList",
       [](D& d, std::string_view v) -> SetResult {
         d.node.cpu_spec_list = std::string(v);
         return std::nullopt;
       }},
      {"RestrictedCoresPerGPU",
       [](D& d, std::string_view v) -> SetResult {
         auto n = ParseInt64(v);
         if (!n || *n < 0 || *n > 1 << 20) return Invalid(v, "expected a whole number of cores");
         d.node.restricted_cores_per_gpu = static_cast<int>(*n);
         return std::nullopt;
       }},
      {"Gres", SetGres},
      {"Feature", SetFeatures},
      {"Features", SetFeatures},
      {"Weight",
       [](D& d, std::string_view v) -> SetResult {
         auto n = ParseInt64(v);
         if (!n || *n < 0 || *n > UINT32_MAX - 1)
           return Invalid(v, "expected a whole number from 0 to 4294967294");
         d.node.weight = static_cast<uint32_t>(*n);
         return std::nullopt;
       }},
      {"State", SetState},
      {"Reason",
       [](D& d, std::string_view v) -> SetResult {
         d.node.reason = std::string(v);
         return std::nullopt;
       }},
  };
  return fields;
}

// Keys handled per node rather than through the table.
constexpr std::string_view kPerNodeKeys[] = {"NodeName", "NodeHostname", "NodeAddr", "Port"};

bool IsPerNodeKey(std::string_view key) {
  for (std::string_view name : kPerNodeKeys)
    if (EqualsIgnoreCase(name, key)) return true;
  return false;
}

void ApplyPair(const ConfLine& line, const ConfPair& pair, NodeDraft& draft,
               Diagnostics& diagnostics, KeyReporter& reporter) {
  if (IsPerNodeKey(pair.key)) return;
  if (const ConfField<D>* field = FindField(Fields(), pair.key)) {
    if (SetResult error = field->set(draft, pair.value))
      diagnostics.Error(line.where, fmt::format("{}: {}", field->name, *error));
    return;
  }
  static const std::vector<std::string_view> implemented = [] {
    std::vector<std::string_view> names(std::begin(kPerNodeKeys), std::end(kPerNodeKeys));
    for (const auto& field : Fields()) names.push_back(field.name);
    return names;
  }();
  reporter.Report(diagnostics, line.where, pair.key, "NodeName", implemented,
                  NodeLineDocumentedKeys());
}

// Slurm's derivation: only CPUs given means one core per socket; otherwise CPUs is
// sockets x cores x threads, and a given CPUs must equal that or the core count.
void DeriveCpus(NodeDraft& draft, const SourceLocation& where, Diagnostics& diagnostics) {
  NodeConfig& node = draft.node;
  if (draft.sockets_per_board > 0) {
    node.sockets = draft.sockets_per_board;  // NodeConfig::sockets counts per board
  } else if (node.boards > 1 && draft.sockets_given) {
    if (node.sockets % node.boards != 0) {
      diagnostics.Error(where, fmt::format("node {}: Sockets={} is not a multiple of Boards={}",
                                           node.name, node.sockets, node.boards));
      return;
    }
    node.sockets /= node.boards;
  }
  bool layout_given = draft.sockets_given || draft.cores_given || draft.threads_given ||
                      draft.sockets_per_board > 0;
  if (draft.cpus_given && !layout_given) {
    node.sockets = node.cpus;
    return;
  }
  int threads = node.cores() * node.threads_per_core;
  if (!draft.cpus_given) {
    node.cpus = threads;
  } else if (node.cpus != threads && node.cpus != node.cores()) {
    diagnostics.Warning(where, fmt::format("node {}: CPUs={} does not match Sockets x "
                                           "CoresPerSocket x ThreadsPerCore = {}; using {}",
                                           node.name, node.cpus, threads, threads));
    node.cpus = threads;
  }
}

// NodeHostname and NodeAddr give one value for all nodes, or one per node.
bool ExpandPerNode(const ConfLine& line, std::string_view key, size_t count,
                   std::vector<std::string>& values, Diagnostics& diagnostics) {
  for (const ConfPair& pair : line.pairs) {
    if (!EqualsIgnoreCase(pair.key, key)) continue;
    auto names = ExpandHostlist(pair.value);
    if (!names) {
      diagnostics.Error(line.where, fmt::format("{}: {}", key, names.error()));
      return false;
    }
    if (names->size() != 1 && names->size() != count) {
      diagnostics.Error(line.where, fmt::format("{}={} names {} hosts but NodeName names {} "
                                                "nodes; give one per node or one for all",
                                                key, pair.value, names->size(), count));
      return false;
    }
    values = std::move(*names);
  }
  return true;
}

bool ExpandPorts(const ConfLine& line, size_t count, std::vector<int>& ports,
                 Diagnostics& diagnostics) {
  for (const ConfPair& pair : line.pairs) {
    if (!EqualsIgnoreCase(pair.key, "Port")) continue;
    auto list = ExpandHostlist("p[" + pair.value + "]");
    ports.clear();
    for (const std::string& item : list ? *list : std::vector<std::string>{}) {
      auto port = ParseInt64(std::string_view(item).substr(1));
      if (port && *port >= 1 && *port <= 65535) ports.push_back(static_cast<int>(*port));
    }
    if (!list || ports.size() != list->size() || (ports.size() != 1 && ports.size() != count)) {
      diagnostics.Error(line.where, fmt::format("Port={}: expected one port, or a range with "
                                                "one port per node ({} nodes)",
                                                pair.value, count));
      return false;
    }
  }
  return true;
}

}  // namespace

void AddNodeLine(const ConfLine& line, std::vector<ConfPair>& defaults, ClusterConfig& config,
                 Diagnostics& diagnostics, KeyReporter& reporter) {
  const std::string& names_expression = line.pairs.front().value;
  if (EqualsIgnoreCase(names_expression, "DEFAULT")) {
    defaults.insert(defaults.end(), line.pairs.begin() + 1, line.pairs.end());
    return;
  }
  auto names = ExpandHostlist(names_expression);
  if (!names) {
    diagnostics.Error(line.where, fmt::format("NodeName: {}", names.error()));
    return;
  }
  NodeDraft draft;
  for (const ConfPair& pair : defaults) ApplyPair(line, pair, draft, diagnostics, reporter);
  for (size_t i = 1; i < line.pairs.size(); ++i)
    ApplyPair(line, line.pairs[i], draft, diagnostics, reporter);
  std::vector<std::string> hostnames, addresses;
  std::vector<int> ports;
  if (!ExpandPerNode(line, "NodeHostname", names->size(), hostnames, diagnostics) ||
      !ExpandPerNode(line, "NodeAddr", names->size(), addresses, diagnostics) ||
      !ExpandPorts(line, names->size(), ports, diagnostics))
    return;
  draft.node.defined_at = line.where;
  // The first line's nodes at once: 10,000 nodes on one line without moves. Later lines grow
  // the vector and the index geometrically (an exact reserve per line was quadratic over
  // 10,000 lines of one node each).
  if (config.nodes.empty()) {
    config.nodes.reserve(names->size());
    config.node_index.reserve(names->size());
  }
  for (size_t i = 0; i < names->size(); ++i) {
    NodeDraft one = draft;
    one.node.name = (*names)[i];
    auto pick = [i](const std::vector<std::string>& values, const std::string& fallback) {
      return values.empty() ? fallback : values[values.size() == 1 ? 0 : i];
    };
    one.node.hostname = pick(hostnames, one.node.name);
    one.node.address = pick(addresses, one.node.hostname);
    if (!ports.empty()) one.node.port = ports[ports.size() == 1 ? 0 : i];
    auto [it, inserted] = config.node_index.emplace(one.node.name, config.nodes.size());
    if (!inserted) {
      const SourceLocation& first = config.nodes[it->second].defined_at;
      diagnostics.Error(line.where, fmt::format("node {} is already defined at {}:{}",
                                                one.node.name, first.file, first.line));
      continue;
    }
    DeriveCpus(one, line.where, diagnostics);
    config.nodes.push_back(std::move(one.node));
  }
}

void FinishNodes(ClusterConfig& config, Diagnostics& diagnostics) {
  const auto& types = config.settings.gres_types;
  std::vector<std::string> reported;
  for (const NodeConfig& node : config.nodes) {
    for (const GresSpec& gres : node.gres) {
      bool known = false;
      for (const std::string& type : types) known = known || EqualsIgnoreCase(type, gres.name);
      for (const std::string& name : reported) known = known || name == gres.name;
      if (!known) reported.push_back(gres.name);
      if (!known)
        diagnostics.Error(
            node.defined_at,
            fmt::format("node {}: Gres '{}' is not listed in GresTypes; add "
                        "GresTypes={}",
                        node.name, gres.name,
                        types.empty() ? gres.name : Join(types, ",") + "," + gres.name));
    }
  }
}

}  // namespace drover
