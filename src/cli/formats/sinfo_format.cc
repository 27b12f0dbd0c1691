// sinfo's tables from partition and node records (see formats.h): Slurm 22.05's grouping of
// nodes into lines (per partition, then per value of every node field the format shows), its
// -o fields, default formats, widths and sort order.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "cli/formats/formats.h"
#include "common/hostlist.h"
#include "common/text.h"

namespace drover::cli {
namespace {

using columns::Pad;

constexpr int kMinFieldSize = 9;  // sinfo's MIN_NODE_FIELD_SIZE and MIN_PART_FIELD_SIZE
constexpr uint32_t kDrainFlag = 0x200, kNoRespondFlag = 0x800, kFailFlag = 0x2000;

struct NodeFacts {
  std::string name;
  std::string state;        // Drover's upper-case Slurm name, "*" when not responding
  uint32_t state_code = 0;  // Slurm's node_state value: base state and flags
  const NodeConfig* config = nullptr;
  uint32_t alloc_cpus = 0;
  const v1::NodeStatus* status = nullptr;
  uint64_t alloc_mem = 0;              // MiB the running jobs hold
  std::set<int32_t> alloc_gpus = {};   // GPU indexes the running jobs hold whole
  uint64_t alloc_shares = 0;           // GPU shares (shard, mps) they hold
  std::set<int32_t> shared_gpus = {};  // on these GPUs
  std::set<int32_t> alloc_nvme = {};   // NVMe drives they hold

  uint32_t cpus() const { return config ? config->cpus : 0; }
  bool drained() const { return state.starts_with("DRAIN"); }
  bool down() const { return state.starts_with("DOWN"); }
};

struct Group {
  size_t partition_index;
  const v1::Partition* partition;
  std::vector<const NodeFacts*> nodes;
  std::string part_key = {}, node_key = {};  // what lines must match to merge (BuildGroups)
  std::set<const NodeFacts*> members = {};
};

uint32_t StateCode(std::string_view state) {
  uint32_t flags = state.ends_with("*") ? kNoRespondFlag : 0;
  if (state.starts_with("DOWN")) return 1 | flags;
  if (state.starts_with("IDLE")) return 2 | flags;
  if (state.starts_with("ALLOCATED")) return 3 | flags;
  if (state.starts_with("MIXED")) return 5 | flags;
  if (state.starts_with("DRAINED")) return 2 | kDrainFlag | flags;
  if (state.starts_with("DRAINING")) return 5 | kDrainFlag | flags;
  if (state.starts_with("FAILING")) return 5 | kDrainFlag | kFailFlag | flags;
  if (state.starts_with("FAIL")) return 2 | kDrainFlag | kFailFlag | flags;
  if (state.starts_with("RESERVED")) return 6 | flags;
  if (state.starts_with("MAINT")) return 7 | flags;
  return flags;  // UNKNOWN
}

// Takes a reboot's flag ("+REBOOT_REQUESTED", "+REBOOT_ISSUED") off `base`: sinfo's mark for it
// ("@": pending, "^": issued), or "".
std::string_view TakeRebootFlag(std::string_view& base) {
  size_t at = base.find("+REBOOT_");
  if (at == std::string_view::npos) return "";
  std::string_view flag = base.substr(at);
  base = base.substr(0, at);
  return flag == "+REBOOT_ISSUED" ? "^" : "@";
}

std::string CompactState(std::string_view state) {
  static constexpr std::pair<std::string_view, std::string_view> kCompact[] = {
      {"IDLE", "idle"},     {"MIXED", "mix"},   {"ALLOCATED", "alloc"}, {"DRAINED", "drain"},
      {"DRAINING", "drng"}, {"DOWN", "down"},   {"UNKNOWN", "unk"},     {"COMPLETING", "comp"},
      {"FAIL", "fail"},     {"FUTURE", "futr"}, {"RESERVED", "resv"},   {"MAINT", "maint"},
      {"FAILING", "failg"}};
  bool star = state.ends_with("*");
  std::string_view base = star ? state.substr(0, state.size() - 1) : state;
  std::string_view reboot = TakeRebootFlag(base);
  for (const auto& [name, code] : kCompact)
    if (name == base) return std::string(code) + std::string(reboot) + (star ? "*" : "");
  return ToLower(state);
}

// Slurm's convert_num_unit with exact conversion: 2048 -> "2K", 1000 -> "1000".
std::string WithUnit(uint64_t value) {
  static constexpr std::string_view kUnits = " KMGTP";
  size_t unit = 0;
  while (value >= 1024 && value % 1024 == 0 && unit + 1 < kUnits.size()) {
    value /= 1024;
    ++unit;
  }
  return unit ? fmt::format("{}{}", value, kUnits[unit]) : std::to_string(value);
}

// _build_min_max_*_string: "8", "4+" (range false), "1-4" or "1-infinite" (range true).
std::string MinMax(uint64_t min, uint64_t max, bool range, bool units) {
  auto text = [units](uint64_t v) { return units ? WithUnit(v) : std::to_string(v); };
  if (min == max) return text(max);
  if (!range) return text(min) + "+";
  return text(min) + "-" + (max == UINT64_MAX ? "infinite" : text(max));
}

// The node hardware fields: c d m w X Y Z.
uint64_t ConfigNumber(char letter, const NodeConfig& node) {
  switch (letter) {
    case 'c':
      return node.cpus;
    case 'd':
      return node.tmp_disk_mb;
    case 'm':
      return node.real_memory_mb;
    case 'w':
      return node.weight;
    case 'X':
      return node.boards * node.sockets;
    case 'Y':
      return node.cores_per_socket;
    default:
      return node.threads_per_core;
  }
}

// One value for the line's nodes: "8", or "4+" when they differ (sinfo -e splits them).
std::string GroupMinMax(const Group& group, char letter, bool noconvert) {
  uint64_t min = UINT64_MAX, max = 0;
  for (const NodeFacts* node : group.nodes) {
    if (!node->config) return "N/A";
    min = std::min(min, ConfigNumber(letter, *node->config));
    max = std::max(max, ConfigNumber(letter, *node->config));
  }
  bool units = std::string_view("cXYZ").find(letter) != std::string_view::npos && !noconvert;
  return group.nodes.empty() ? "0" : MinMax(min, max, false, units);
}

struct Counts {
  uint32_t nodes_alloc = 0, nodes_idle = 0, nodes_other = 0;
  uint32_t cpus_alloc = 0, cpus_idle = 0, cpus_other = 0, cpus_total = 0;
};

Counts Count(const Group& group) {
  Counts c;
  for (const NodeFacts* node : group.nodes) {
    const std::string& s = node->state;
    if (node->drained() || node->down())
      ++c.nodes_other;
    else if (s.starts_with("ALLOCATED") || s.starts_with("MIXED") || s.starts_with("COMPLETING"))
      ++c.nodes_alloc;
    else if (s.starts_with("IDLE"))
      ++c.nodes_idle;
    else
      ++c.nodes_other;
    uint32_t cpus = node->cpus(), used = std::min(node->alloc_cpus, cpus);
    c.cpus_alloc += used;
    c.cpus_total += cpus;
    (node->drained() || node->down() ? c.cpus_other : c.cpus_idle) += cpus - used;
  }
  return c;
}

std::string PartitionText(const Group& group, int width) {
  std::string name = group.partition->name();
  if (group.partition->is_default()) {
    if (width == 0 || static_cast<int>(name.size()) < width)
      name += "*";
    else
      name[width - 1] = '*';
  }
  return name;
}

std::string TimeLimitText(int64_t seconds) {
  return columns::IsUnlimited(seconds) ? "infinite" : columns::ElapsedText(seconds);
}

std::string NodeNames(const Group& group, std::string (*get)(const NodeFacts&)) {
  std::vector<std::string> names;
  for (const NodeFacts* node : group.nodes) names.push_back(get(*node));
  return CompressHostlistSorted(names);
}

std::string ReasonText(const Group& group) {
  if (group.nodes.empty() || group.nodes.front()->status->reason().empty()) return "none";
  return group.nodes.front()->status->reason();
}

std::string UserText(const Group& group, const SinfoOptions& options, bool with_uid) {
  if (group.nodes.empty() || group.nodes.front()->status->reason().empty()) return "Unknown";
  uint32_t uid = group.nodes.front()->status->reason_uid();
  std::string name = columns::UserName(options.user_name, uid);
  return with_uid ? fmt::format("{}({})", name, uid) : name;
}

// GresUsed: "gpu:2(IDX:0-1)", "gpu:0(IDX:N/A)".
std::string GresUsed(const NodeFacts& node) {
  if (!node.config || node.config->gres.empty()) return "(null)";
  std::vector<uint32_t> indexes(node.alloc_gpus.begin(), node.alloc_gpus.end());
  std::string index_text = indexes.empty() ? "N/A" : columns::ArrayRanges(indexes);
  std::string used = fmt::format("gpu:{}(IDX:{})", indexes.size(), index_text);
  if (!node.config->gpu_sharing.empty()) {  // "shard:3(IDX:1)": the shares and their GPUs
    std::vector<uint32_t> shared(node.shared_gpus.begin(), node.shared_gpus.end());
    used += fmt::format(",{}:{}(IDX:{})", node.config->gpu_sharing, node.alloc_shares,
                        shared.empty() ? "N/A" : columns::ArrayRanges(shared));
  }
  if (!node.config->nvme.empty()) {
    std::vector<uint32_t> drives(node.alloc_nvme.begin(), node.alloc_nvme.end());
    used += fmt::format(",nvme:{}(IDX:{})", drives.size(),
                        drives.empty() ? "N/A" : columns::ArrayRanges(drives));
  }
  return used;
}

std::string FirstConfig(const Group& group, std::string (*get)(const NodeConfig&)) {
  if (group.nodes.empty() || !group.nodes.front()->config) return "N/A";
  std::string text = get(*group.nodes.front()->config);
  return text.empty() ? "(null)" : text;
}

// The controller's Gres= (its GPUs by type and socket, as the agents reported them), else the
// configuration's.
std::string GresOf(const Group& group) {
  if (!group.nodes.empty() && group.nodes.front()->status &&
      !group.nodes.front()->status->gres().empty())
    return group.nodes.front()->status->gres();
  return FirstConfig(group, [](const NodeConfig& n) { return FormatGres(n.gres); });
}

std::string AvailFeatures(const Group& group) {
  if (group.nodes.empty() || !group.nodes.front()->config) return "N/A";
  const NodeFacts& first = *group.nodes.front();
  std::string text = columns::AvailableFeatures(*first.status, *first.config);
  return text.empty() ? "(null)" : text;
}

// clang-format off
constexpr std::pair<char, std::string_view> kHeaders[] = {
    {'a', "AVAIL"}, {'A', "NODES(A/I)"}, {'b', "ACTIVE_FEATURES"}, {'B', "MAX_CPUS_PER_NODE"},
    {'c', "CPUS"}, {'C', "CPUS(A/I/O/T)"}, {'d', "TMP_DISK"}, {'D', "NODES"}, {'e', "FREE_MEM"},
    {'E', "REASON"}, {'f', "AVAIL_FEATURES"}, {'F', "NODES(A/I/O/T)"}, {'g', "GROUPS"},
    {'G', "GRES"}, {'h', "OVERSUBSCRIBE"}, {'H', "TIMESTAMP"}, {'I', "PRIO_JOB_FACTOR"},
    {'l', "TIMELIMIT"}, {'L', "DEFAULTTIME"}, {'m', "MEMORY"}, {'M', "PREEMPT_MODE"},
    {'n', "HOSTNAMES"}, {'N', "NODELIST"}, {'o', "NODE_ADDR"}, {'O', "CPU_LOAD"},
    {'p', "PRIO_TIER"}, {'P', "PARTITION"}, {'r', "ROOT"}, {'R', "PARTITION"}, {'s', "JOB_SIZE"},
    {'S', "ALLOCNODES"}, {'t', "STATE"}, {'T', "STATE"}, {'u', "USER"}, {'U', "USER"},
    {'v', "VERSION"}, {'V', "CLUSTER"}, {'w', "WEIGHT"}, {'X', "SOCKETS"}, {'Y', "CORES"},
    {'Z', "THREADS"}, {'z', "S:C:T"},
    // -O fields without a letter: digits, which a -o string can never name (they are widths).
    {'1', "ALLOCMEM"}, {'2', "COMMENT"}, {'3', "EXTRA"}, {'4', "GRES_USED"}, {'5', "PORT"},
    {'6', "STATECOMPLETE"},
};

// -O names and the field each prints.
constexpr std::pair<std::string_view, char> kLongFields[] = {
    {"allocmem", '1'}, {"allocnodes", 'S'}, {"available", 'a'}, {"cluster", 'V'},
    {"comment", '2'}, {"cores", 'Y'}, {"cpus", 'c'}, {"cpusload", 'O'}, {"cpusstate", 'C'},
    {"defaulttime", 'L'}, {"disk", 'd'}, {"extra", '3'}, {"features", 'f'},
    {"features_act", 'b'}, {"freemem", 'e'}, {"gres", 'G'}, {"gresused", '4'}, {"groups", 'g'},
    {"maxcpuspernode", 'B'}, {"memory", 'm'}, {"nodeaddr", 'o'}, {"nodeai", 'A'},
    {"nodeaiot", 'F'}, {"nodehost", 'n'}, {"nodelist", 'N'}, {"nodes", 'D'},
    {"oversubscribe", 'h'}, {"partition", 'P'}, {"partitionname", 'R'}, {"port", '5'},
    {"preemptmode", 'M'}, {"priorityjobfactor", 'I'}, {"prioritytier", 'p'}, {"priority", 'p'},
    {"reason", 'E'}, {"root", 'r'}, {"size", 's'}, {"socketcorethread", 'z'}, {"sockets", 'X'},
    {"statecompact", 't'}, {"statelong", 'T'}, {"statecomplete", '6'}, {"threads", 'Z'},
    {"time", 'l'}, {"timestamp", 'H'}, {"user", 'u'}, {"userlong", 'U'}, {"version", 'v'},
    {"weight", 'w'},
};

char LongFieldLetter(std::string_view name) {
  for (const auto& [known, letter] : kLongFields)
    if (known == name) return letter;
  return 0;
}

// -O into %-fields; "All" is every -o field, '|' after each, as Slurm prints it.
columns::PercentFormat LongFormat(std::string_view fields) {
  columns::PercentFormat format = columns::ParseLongFormat(fields);
  std::vector<columns::FieldSpec> out;
  for (columns::FieldSpec& field : format.fields) {
    if (field.name == "all") {
      for (const auto& [letter, header] : kHeaders)
        if (!std::isdigit(static_cast<unsigned char>(letter)))
          out.push_back({letter, {}, 0, false, "|", std::string(1, letter)});
      continue;
    }
    field.letter = LongFieldLetter(field.name);
    out.push_back(std::move(field));
  }
  format.fields = std::move(out);
  return format;
}
// clang-format on

const std::string_view* FindHeader(char letter) {
  for (const auto& [known, header] : kHeaders)
    if (known == letter) return &header;
  return nullptr;
}

struct SinfoContext {
  const SinfoOptions& options;
  const ClusterConfig* cluster;
  int node_width = 0, partition_width = 0;  // the computed widths ("#"); 0 when not in use
};

std::string AvailText(const std::string& state) {
  static const std::map<std::string, std::string> kAvail = {
      {"UP", "up"}, {"DOWN", "down"}, {"DRAIN", "drain"}, {"INACTIVE", "inactive"}};
  auto it = kAvail.find(state);
  return it == kAvail.end() ? "unknown" : it->second;
}

std::string JobSizeText(const v1::Partition& part) {
  uint64_t max = part.max_nodes() ? part.max_nodes() : UINT64_MAX;
  uint64_t min = part.min_nodes() < 1 ? 1 : part.min_nodes();
  return MinMax(min, max, true, true);
}

std::string Features(const NodeConfig& n) {
  return Join(n.features, ",");
}
std::string Name(const NodeFacts& n) {
  return n.name;
}
std::string Hostname(const NodeFacts& n) {
  return n.config ? n.config->hostname : n.name;
}
std::string Address(const NodeFacts& n) {
  return n.config ? n.config->address : n.name;
}

std::string Value(char letter, const Group& group, const SinfoContext& ctx) {
  const v1::Partition& part = *group.partition;
  const NodeFacts* first = group.nodes.empty() ? nullptr : group.nodes.front();
  Counts c = Count(group);
  int64_t reason_time = first ? first->status->reason_time() : 0;
  // clang-format off
  switch (letter) {
    case 'a': return AvailText(part.state());
    case 'A': return fmt::format("{}/{}", c.nodes_alloc, c.nodes_idle);
    case 'b': return FirstConfig(group, Features);
    case 'f': return AvailFeatures(group);
    case 'B': return "UNLIMITED";
    case 'c': case 'd': case 'm': case 'w': case 'X': case 'Y': case 'Z':
      return GroupMinMax(group, letter, ctx.options.noconvert);
    case 'C': return fmt::format("{}/{}/{}/{}", c.cpus_alloc, c.cpus_idle, c.cpus_other, c.cpus_total);
    case 'D': return std::to_string(group.nodes.size());
    case 'E': return ReasonText(group);
    case 'F': return fmt::format("{}/{}/{}/{}", c.nodes_alloc, c.nodes_idle, c.nodes_other, group.nodes.size());
    case 'g': case 'S': return "all";
    case 'G': return GresOf(group);
    case 'h': return part.over_subscribe().empty() ? "NO" : part.over_subscribe();
    case 'H': return reason_time ? columns::IsoTime(reason_time) : "Unknown";
    case 'I': return std::to_string(part.priority_job_factor());
    case 'l': return TimeLimitText(part.max_time_seconds());
    case 'L': return part.default_time_seconds() == -1 ? "n/a" : TimeLimitText(part.default_time_seconds());
    case 'M': return part.preempt_mode().empty() ? "OFF" : part.preempt_mode();
    case 'n': return NodeNames(group, Hostname);
    case 'N': return NodeNames(group, Name);
    case 'o': return NodeNames(group, Address);
    case 'p': return std::to_string(part.priority_tier());
    case 'P': return PartitionText(group, ctx.partition_width);
    case 'r': return part.root_only() ? "yes" : "no";
    case 'R': return part.name();
    case 's': return JobSizeText(part);
    case 't': return first ? CompactState(first->state) : "n/a";
    case 'T': return first ? ToLower(first->state) : "n/a";
    case 'u': return UserText(group, ctx.options, false);
    case 'U': return UserText(group, ctx.options, true);
    case 'V': return ctx.cluster ? ctx.cluster->settings.cluster_name : "N/A";
    case 'z':
      if (!first || !first->config) return "N/A";
      return GroupMinMax(group, 'X', ctx.options.noconvert) + ":" +
             GroupMinMax(group, 'Y', ctx.options.noconvert) + ":" +
             GroupMinMax(group, 'Z', ctx.options.noconvert);
    case '1': return std::to_string(first ? first->alloc_mem : 0);
    case '2': return first && !first->status->comment().empty() ? first->status->comment() : "(null)";
    case '3': return first && !first->status->extra().empty() ? first->status->extra() : "(null)";
    case '4': return first ? GresUsed(*first) : "N/A";
    case '5':
      if (!first || !first->config) return "N/A";
      return std::to_string(first->config->port ? first->config->port
                            : ctx.cluster       ? ctx.cluster->settings.agent_port
                                                : 0);
    case '6': return first ? ToLower(first->state) : "n/a";
    default: return "N/A";  // e (free memory), O (CPU load), v (version): not reported
  }
  // clang-format on
}

// What must match for two lines to merge: the value of every field the format shows that
// `wanted` names, computed on a probe line of one partition (and one node).
std::string Key(const Group& probe, std::string_view letters, std::string_view wanted,
                const SinfoContext& ctx) {
  std::string key;
  for (char letter : letters)
    if (wanted.find(letter) != std::string_view::npos)
      key += Value(letter == 'C' ? 'c' : letter, probe, ctx) + '\x1f';
  return key;
}

std::vector<NodeFacts> CollectNodes(const std::vector<v1::NodeStatus>& nodes,
                                    const ClusterConfig* cluster, std::span<const v1::Job> jobs) {
  std::map<std::string, uint32_t> allocated;
  std::map<std::string, std::pair<uint64_t, std::set<int32_t>>> held;    // memory, GPUs
  std::map<std::string, std::pair<uint64_t, std::set<int32_t>>> shared;  // shares, their GPUs
  std::map<std::string, std::set<int32_t>> drives;                       // NVMe
  for (const v1::Job& job : jobs) {
    if (job.state() != "RUNNING" && job.state() != "SUSPENDED" && job.state() != "COMPLETING")
      continue;
    for (const v1::NodeAllocation& node : job.allocation()) {
      if (!cluster || node.node() < 0 || static_cast<size_t>(node.node()) >= cluster->nodes.size())
        continue;
      const std::string& name = cluster->nodes[node.node()].name;
      allocated[name] += columns::AllocatedCpus(node, cluster);
      held[name].first += node.memory_mb();
      drives[name].insert(node.nvme().begin(), node.nvme().end());
      if (node.shares()) {
        shared[name].first += node.shares();
        shared[name].second.insert(node.gpus().begin(), node.gpus().end());
      } else {
        held[name].second.insert(node.gpus().begin(), node.gpus().end());
      }
    }
  }
  std::vector<NodeFacts> out;
  for (const v1::NodeStatus& status : nodes) {
    NodeFacts facts{status.name(), status.state(), StateCode(status.state()), nullptr, 0, &status};
    int index = cluster ? cluster->FindNode(status.name()) : -1;
    if (index >= 0) facts.config = &cluster->nodes[index];
    if (auto memory = held.find(status.name()); memory != held.end()) {
      facts.alloc_mem = memory->second.first;
      facts.alloc_gpus = memory->second.second;
    }
    if (auto held_drives = drives.find(status.name()); held_drives != drives.end())
      facts.alloc_nvme = held_drives->second;
    if (auto shares = shared.find(status.name()); shares != shared.end()) {
      facts.alloc_shares = shares->second.first;
      facts.shared_gpus = shares->second.second;
    }
    auto it = allocated.find(status.name());
    if (it != allocated.end())
      facts.alloc_cpus = it->second;
    else if (facts.state.starts_with("ALLOCATED") || facts.state.starts_with("DRAINING"))
      facts.alloc_cpus = jobs.empty() ? facts.cpus() : 0;
    out.push_back(std::move(facts));
  }
  return out;
}

// sinfo -t's names and the node states each selects (Drover's upper-case names; "*" marks a
// node that does not respond). States Drover has no such node in (CLOUD, POWER_*, ...) are
// accepted and select none, as on a Slurm cluster without them.
constexpr std::string_view kStateNames[] = {"alloc",         "allocated",
                                            "cloud",         "comp",
                                            "completing",    "down",
                                            "drain",         "drained",
                                            "draining",      "fail",
                                            "future",        "futr",
                                            "idle",          "maint",
                                            "mix",           "mixed",
                                            "no_respond",    "npc",
                                            "perfctrs",      "planned",
                                            "power_down",    "powering_down",
                                            "powered_down",  "powering_up",
                                            "reboot_issued", "reboot_requested",
                                            "resv",          "reserved",
                                            "unk",           "unknown"};

bool InState(const NodeFacts& node, std::string_view wanted) {
  std::string_view state = node.state;
  bool star = state.ends_with("*");
  if (star) state.remove_suffix(1);
  std::string_view reboot = TakeRebootFlag(state);
  if (wanted == "reboot_requested") return reboot == "@";
  if (wanted == "reboot_issued") return reboot == "^";
  bool busy = node.alloc_cpus > 0;
  if (wanted == "alloc" || wanted == "allocated")
    return state == "ALLOCATED" || (state == "DRAINING" && node.alloc_cpus >= node.cpus());
  if (wanted == "mix" || wanted == "mixed")
    return state == "MIXED" || (state == "DRAINING" && busy && node.alloc_cpus < node.cpus());
  if (wanted == "comp" || wanted == "completing") return state == "COMPLETING";
  if (wanted == "down") return state.starts_with("DOWN");
  if (wanted == "drain") return state == "DRAINED" || state == "DRAINING";
  if (wanted == "drained") return state == "DRAINED";
  if (wanted == "draining") return state == "DRAINING";
  if (wanted == "fail") return state == "FAIL";
  if (wanted == "future" || wanted == "futr") return state == "FUTURE";
  if (wanted == "idle") return state == "IDLE";
  if (wanted == "maint") return state == "MAINT";
  if (wanted == "no_respond") return star;
  if (wanted == "resv" || wanted == "reserved") return state == "RESERVED";
  if (wanted == "unk" || wanted == "unknown") return state == "UNKNOWN";
  return false;
}

// -t, -d, -r: whether sinfo reports on the node at all.
bool Reported(const NodeFacts& node, const SinfoOptions& options) {
  bool responding = !node.state.ends_with("*");
  if ((options.dead && responding) || (options.responding && !responding)) return false;
  if (options.states.empty()) return true;
  for (const std::string& item : options.states) {
    if (item == "all") return true;
    bool all = true;  // "a&b": every one of them
    for (const std::string& state : Split(item, '&')) all = all && InState(node, state);
    if (all) return true;
  }
  return false;
}

// _build_sinfo_data: each node of each partition joins the first line whose partition and node
// fields (those the format shows) match, or starts a new one; with -N each has its own line.
std::vector<Group> BuildGroups(const std::vector<v1::Partition>& partitions,
                               const std::vector<NodeFacts>& facts, std::string_view letters,
                               const SinfoContext& ctx) {
  const SinfoOptions& options = ctx.options;
  std::string_view node_fields = options.exact ? "nofbGEHuUtTcCdmwzXYZ" : "nofbGEHuUtT";
  std::map<std::string, const NodeFacts*> by_name;
  for (const NodeFacts& node : facts) by_name[node.name] = &node;
  std::vector<Group> groups;
  bool shown_when_empty =
      !options.node_oriented && letters.find_first_of("PR") != std::string_view::npos;
  std::map<std::pair<std::string, std::string>, size_t> lines;  // keys -> index in groups
  std::map<std::string, size_t> empty;  // partition key -> its line while it has no node
  std::vector<std::string> part_keys(partitions.size());
  for (size_t p = 0; p < partitions.size(); ++p) {
    if (partitions[p].hidden() && !options.all) continue;
    part_keys[p] = Key({p, &partitions[p], {}}, letters, "asLlPRrhMpI", ctx);
    if (!shown_when_empty) continue;
    empty.try_emplace(part_keys[p], groups.size());
    groups.push_back({p, &partitions[p], {}, part_keys[p]});
  }
  for (size_t p = 0; p < partitions.size(); ++p) {
    const v1::Partition& part = partitions[p];
    const std::string& part_key = part_keys[p];
    auto names = ExpandHostlist(part.node_list());
    if ((part.hidden() && !options.all) || !names) continue;
    for (const std::string& name : names.value()) {
      auto found = by_name.find(name);
      if (found == by_name.end()) continue;
      const NodeFacts* node = found->second;
      if (options.list_reasons && !node->drained() && !node->down()) continue;
      if (options.node_oriented) {
        groups.push_back({p, &part, {node}});
        continue;
      }
      std::string node_key = Key({p, &part, {node}}, letters, node_fields, ctx);
      auto [line, added] = lines.try_emplace({part_key, node_key}, groups.size());
      if (added) {
        auto waiting = empty.find(part_key);  // the partition's line, shown even without nodes
        if (waiting == empty.end()) {
          groups.push_back({p, &part, {}, part_key, node_key});
        } else {
          line->second = waiting->second;
          empty.erase(waiting);
        }
      }
      Group& group = groups[line->second];
      if (group.members.insert(node).second) group.nodes.push_back(node);  // once per line
    }
  }
  return groups;
}

// Numbers compare as numbers where the names first differ: n2 before n10.
bool NodeNameLess(std::string_view a, std::string_view b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  if (i < a.size() && i < b.size() && std::isdigit(static_cast<unsigned char>(a[i])) &&
      std::isdigit(static_cast<unsigned char>(b[i])))
    return std::stoll(std::string(a.substr(i, 18))) < std::stoll(std::string(b.substr(i, 18)));
  return a < b;
}

void SortGroups(std::vector<Group>& groups, bool node_oriented) {
  auto first = [](const Group& g) {
    return g.nodes.empty() ? std::string() : g.nodes.front()->name;
  };
  if (node_oriented) {
    std::stable_sort(groups.begin(), groups.end(), [&](const Group& a, const Group& b) {
      return NodeNameLess(first(a), first(b));
    });
    return;
  }
  auto state = [](const Group& g) { return g.nodes.empty() ? 0u : g.nodes.front()->state_code; };
  std::stable_sort(groups.begin(), groups.end(), [&](const Group& a, const Group& b) {
    if (a.partition_index != b.partition_index) return a.partition_index < b.partition_index;
    return state(a) > state(b);  // "#P,-t"
  });
}

// Values compare as numbers when both are, else as text.
int CompareValues(const std::string& a, const std::string& b) {
  char* end_a = nullptr;
  char* end_b = nullptr;
  double x = std::strtod(a.c_str(), &end_a), y = std::strtod(b.c_str(), &end_b);
  if (!a.empty() && !b.empty() && *end_a == 0 && *end_b == 0) return x < y ? -1 : x > y ? 1 : 0;
  return a.compare(b);
}

// -S: "+P,-m", "#P" (partitions in configuration order); last key first, stable, as Slurm.
void SortBy(std::vector<Group>& groups, std::string_view spec, const SinfoContext& ctx) {
  std::vector<std::string> keys = Split(std::string(spec), ',');
  for (auto key = keys.rbegin(); key != keys.rend(); ++key) {
    std::string_view text = Trim(*key);
    bool reverse = text.starts_with('-');
    bool configured = text.starts_with('#');
    if (reverse || configured || text.starts_with('+')) text.remove_prefix(1);
    if (text.empty()) continue;
    char letter = text.front();
    std::stable_sort(groups.begin(), groups.end(), [&](const Group& a, const Group& b) {
      int diff = configured && letter == 'P' ? (a.partition_index < b.partition_index   ? -1
                                                : a.partition_index > b.partition_index ? 1
                                                                                        : 0)
                 : letter == 'N' ? (NodeNameLess(Value('N', a, ctx), Value('N', b, ctx))   ? -1
                                    : NodeNameLess(Value('N', b, ctx), Value('N', a, ctx)) ? 1
                                                                                           : 0)
                                 : CompareValues(Value(letter, a, ctx), Value(letter, b, ctx));
      return reverse ? diff > 0 : diff < 0;
    });
  }
}

std::string_view DefaultFormat(const SinfoOptions& options) {
  if (options.summarize) return "%9P %.5a %.10l %.16F %N";
  if (options.node_oriented)
    return options.long_format ? "%N %.6D %.9P %.11T %4c %.8z %.6m %.8d %.6w %.8f %20E"
                               : "%N %.6D %.9P %6t";
  if (options.list_reasons)
    return options.long_format ? "%20E %12U %19H %6t %N" : "%20E %9u %19H %N";
  return options.long_format ? "%9P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N"
                             : "%9P %.5a %.10l %.6D %.6t %N";
}

std::string FormatLine(const columns::PercentFormat& format, const Group* group,
                       const SinfoContext& ctx) {
  std::string line = format.prefix;
  for (const columns::FieldSpec& field : format.fields) {
    const std::string_view* header = FindHeader(field.letter);
    if (!header) {  // echoed, '%' and all
      line += "%" + field.token;
      continue;
    }
    int width = field.width;
    if (ctx.node_width && field.letter == 'N') width = ctx.node_width;
    if (ctx.partition_width && (field.letter == 'P' || field.letter == 'R'))
      width = ctx.partition_width;
    bool is_list = field.letter == 'N' || field.letter == 'n' || field.letter == 'o';
    if (group)
      line += Pad(Value(field.letter, *group, ctx), width, field.right);
    else
      line += Pad(*header, width, field.right, !is_list);
    line += field.suffix;
  }
  return line + "\n";
}

}  // namespace

std::string FormatSinfo(const std::vector<v1::Partition>& partitions,
                        const std::vector<v1::NodeStatus>& nodes, const ClusterConfig* cluster,
                        const SinfoOptions& options, std::span<const v1::Job> jobs) {
  bool defaults = options.format.empty() && options.long_fields.empty();
  columns::PercentFormat format =
      !options.format.empty()        ? columns::ParsePercentFormat(options.format)
      : !options.long_fields.empty() ? LongFormat(options.long_fields)
                                     : columns::ParsePercentFormat(DefaultFormat(options));
  std::string letters;
  for (const columns::FieldSpec& field : format.fields)
    if (FindHeader(field.letter)) letters += field.letter;

  SinfoContext ctx{options, cluster};
  std::vector<NodeFacts> facts = CollectNodes(nodes, cluster, jobs);
  std::erase_if(facts, [&](const NodeFacts& node) { return !Reported(node, options); });
  std::vector<Group> groups = BuildGroups(partitions, facts, letters, ctx);
  SortGroups(groups, options.node_oriented);
  if (!options.sort.empty()) SortBy(groups, options.sort, ctx);

  // The defaults' "#" widths: all but -R's format have them.
  bool reasons = options.list_reasons && !options.summarize && !options.node_oriented;
  bool computed = defaults && !reasons;
  if (computed && options.node_oriented && !options.summarize) {
    ctx.node_width = kMinFieldSize;
    for (const Group& g : groups)
      ctx.node_width = std::max<int>(ctx.node_width, Value('N', g, ctx).size());
  }
  if (computed) {
    ctx.partition_width = kMinFieldSize;
    for (const Group& g : groups)
      ctx.partition_width = std::max<int>(
          ctx.partition_width, g.partition->name().size() + (g.partition->is_default() ? 1 : 0));
  }

  std::string out;
  if (!options.no_header && (options.long_format || options.dated))
    out += columns::DateLine(options.now) + "\n";
  if (!options.cluster_line.empty()) out += options.cluster_line + "\n";
  if (!options.no_header) out += FormatLine(format, nullptr, ctx);
  for (const Group& group : groups) out += FormatLine(format, &group, ctx);
  return out;
}

std::vector<std::string> SinfoLongFormatErrors(std::string_view fields) {
  std::vector<std::string> errors;
  for (const columns::FieldSpec& field : columns::ParseLongFormat(fields).fields)
    if (field.name != "all" && !LongFieldLetter(field.name))
      errors.push_back("Invalid node format specification: " +
                       field.token.substr(0, field.token.find(':')));
  return errors;
}

std::optional<std::string> SinfoStatesError(const std::vector<std::string>& states) {
  for (const std::string& item : states) {
    if (item == "all") continue;
    for (const std::string& state : Split(item, '&')) {
      bool known = false;
      for (std::string_view name : kStateNames) known = known || name == state;
      if (!known) return fmt::format("Bad state string: \"{}\"", state);
    }
  }
  return std::nullopt;
}

std::string FormatSinfoReservations(const std::vector<v1::Reservation>& reservations,
                                    const SinfoOptions& options) {
  std::string out = options.cluster_line.empty() ? "" : options.cluster_line + "\n";
  if (!options.no_header)
    out += "RESV_NAME     STATE           START_TIME             END_TIME     DURATION  NODELIST\n";
  for (const v1::Reservation& resv : reservations) {
    bool active = resv.start_time() <= options.now && options.now < resv.end_time();
    int64_t secs = std::max<int64_t>(0, resv.end_time() - resv.start_time());
    std::string duration =
        secs >= 86400 ? fmt::format("{}-{:02}:{:02}:{:02}", secs / 86400, secs / 3600 % 24,
                                    secs / 60 % 60, secs % 60)
                      : fmt::format("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    out += fmt::format("{:<10} {:>8}  {:>19}  {:>19}  {:>11}  {}\n", resv.name(),
                       active ? "ACTIVE" : "INACTIVE", columns::IsoTime(resv.start_time()),
                       columns::IsoTime(resv.end_time()), duration, resv.node_list());
  }
  return out;
}

std::vector<std::string> SinfoFormatErrors(std::string_view format) {
  std::vector<std::string> errors;
  for (const columns::FieldSpec& field : columns::ParsePercentFormat(format).fields)
    if (!FindHeader(field.letter))
      errors.push_back(fmt::format("Invalid node format specification: {}",
                                   field.letter ? std::string(1, field.letter) : ""));
  return errors;
}

}  // namespace drover::cli
