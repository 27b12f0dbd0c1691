// See task_binding.h.
#include "common/task_binding.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>

#include "common/text.h"

namespace drover {

const char kCpuBindHelp[] =
    "CPU bind options:\n"
    "    --cpu-bind=         Bind tasks to CPUs\n"
    "        q[uiet]         quietly bind before task runs (default)\n"
    "        v[erbose]       verbosely report binding before task runs\n"
    "        no[ne]          don't bind tasks to CPUs (default)\n"
    "        rank            bind by task rank\n"
    "        map_cpu:<list>  specify a CPU ID binding for each task\n"
    "                        where <list> is <cpuid1>,<cpuid2>,...<cpuidN>\n"
    "        mask_cpu:<list> specify a CPU ID binding mask for each task\n"
    "                        where <list> is <mask1>,<mask2>,...<maskN>\n"
    "        rank_ldom       bind task by rank to CPUs in a NUMA\n"
    "                        locality domain\n"
    "        map_ldom:<list> specify a NUMA locality domain ID\n"
    "                        for each task where <list> is\n"
    "                        <ldom1>,<ldom2>,...<ldomN>\n"
    "        mask_ldom:<list> specify a NUMA locality domain ID mask\n"
    "                        for each task where <list> is\n"
    "                        <mask1>,<mask2>,...<maskN>\n"
    "        sockets         auto-generated masks bind to sockets\n"
    "        cores           auto-generated masks bind to cores\n"
    "        threads         auto-generated masks bind to threads\n"
    "        ldoms           auto-generated masks bind to NUMA locality\n"
    "                        domains\n"
    "        help            show this help message\n";

namespace {

constexpr uint32_t kMaxId = 4096;  // CPU_SETSIZE: the ids a mask can hold

// "0x1f" or "1f" as the set of its bits.
std::optional<std::vector<uint32_t>> MaskBits(std::string_view text) {
  if (text.starts_with("0x") || text.starts_with("0X")) text.remove_prefix(2);
  if (text.empty() || text.size() > kMaxId / 4) return std::nullopt;
  std::vector<uint32_t> bits;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = static_cast<char>(std::tolower(static_cast<unsigned char>(text[text.size() - 1 - i])));
    int value = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (value < 0) return std::nullopt;
    for (int bit = 0; bit < 4; ++bit)
      if (value & (1 << bit))
        bits.push_back(static_cast<uint32_t>(i * 4 + static_cast<size_t>(bit)));
  }
  return bits;
}

// A map entry: decimal, or hex after 0x.
std::optional<uint32_t> MapId(std::string_view text) {
  int base = 10;
  if (text.starts_with("0x") || text.starts_with("0X")) {
    text.remove_prefix(2);
    base = 16;
  }
  uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value >= kMaxId)
    return std::nullopt;
  return static_cast<uint32_t>(value);
}

// "0,1*2,3" (after "map_cpu:") into its entries; `mask`: each entry a hex mask.
std::optional<IdSets> ParseList(const std::vector<std::string>& words, bool mask) {
  IdSets list;
  for (const std::string& word : words) {
    std::string_view entry = word;
    uint64_t repeat = 1;
    if (size_t star = entry.find('*'); star != std::string_view::npos) {
      auto count = ParseUint64(entry.substr(star + 1));
      if (!count || *count == 0 || *count > kMaxId) return std::nullopt;
      repeat = *count;
      entry = entry.substr(0, star);
    }
    std::vector<uint32_t> ids;
    if (mask) {
      auto bits = MaskBits(entry);
      if (!bits) return std::nullopt;
      ids = std::move(*bits);
    } else {
      auto id = MapId(entry);
      if (!id) return std::nullopt;
      ids = {*id};
    }
    for (uint64_t i = 0; i < repeat; ++i) list.push_back(ids);
  }
  if (list.empty()) return std::nullopt;
  return list;
}

bool IsListValue(std::string_view word) {
  return !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) || c == 'x' || c == 'X' || c == '*';
  });
}

// The words of a binding option: keywords, and a list ("map_cpu:0" then the values after it).
struct Words {
  std::vector<std::string> keywords;
  std::string list_kind;  // "map_cpu", ...; empty: none
  std::vector<std::string> list;
};

Words SplitWords(std::string_view text) {
  Words words;
  for (const std::string& word : Split(text, ',')) {
    if (word.empty()) continue;  // no option given, or ",," as Slurm's strtok skips it
    if (!words.list_kind.empty() && words.list.size() > 0 && IsListValue(word)) {
      words.list.push_back(word);
      continue;
    }
    if (size_t colon = word.find(':'); colon != std::string::npos) {
      words.list_kind = ToLower(word.substr(0, colon));
      words.list = {word.substr(colon + 1)};
      words.keywords.push_back(words.list_kind);
      continue;
    }
    words.keywords.push_back(ToLower(word));
  }
  return words;
}

Error Unrecognized(std::string_view option, std::string_view word) {
  return MakeError(fmt::format("unrecognized --{} argument \"{}\"", option, word));
}

const std::map<std::string, CpuBindType, std::less<>> kCpuBindTypes = {
    {"no", CpuBindType::kNone},          {"none", CpuBindType::kNone},
    {"rank", CpuBindType::kRank},        {"map_cpu", CpuBindType::kMap},
    {"mask_cpu", CpuBindType::kMask},    {"rank_ldom", CpuBindType::kRankLdom},
    {"map_ldom", CpuBindType::kMapLdom}, {"mask_ldom", CpuBindType::kMaskLdom},
    {"socket", CpuBindType::kSockets},   {"sockets", CpuBindType::kSockets},
    {"core", CpuBindType::kCores},       {"cores", CpuBindType::kCores},
    {"thread", CpuBindType::kThreads},   {"threads", CpuBindType::kThreads},
    {"ldom", CpuBindType::kLdoms},       {"ldoms", CpuBindType::kLdoms},
};

}  // namespace

Result<CpuBind> ParseCpuBind(std::string_view text) {
  Words words = SplitWords(text);
  CpuBind bind;
  for (const std::string& word : words.keywords) {
    if (word == "q" || word == "quiet") {
      bind.verbose = false;
    } else if (word == "v" || word == "verbose") {
      bind.verbose = true;
    } else if (auto it = kCpuBindTypes.find(word); it != kCpuBindTypes.end()) {
      bind.type = it->second;
    } else {
      return Unrecognized("cpu-bind", word);
    }
  }
  bool listed = bind.type == CpuBindType::kMap || bind.type == CpuBindType::kMask ||
                bind.type == CpuBindType::kMapLdom || bind.type == CpuBindType::kMaskLdom;
  if (listed) {
    bool mask = bind.type == CpuBindType::kMask || bind.type == CpuBindType::kMaskLdom;
    auto list = ParseList(words.list, mask);
    if (!list)
      return MakeError(
          fmt::format("missing or bad list for \"--cpu-bind={}:<list>\"", words.list_kind));
    bind.list = std::move(*list);
    bind.list_text = Join(words.list, ",");
  } else if (!words.list_kind.empty()) {
    return Unrecognized("cpu-bind", words.list_kind + ":" + Join(words.list, ","));
  }
  return bind;
}

Variables CpuBindVariables(const CpuBind& bind) {
  static const std::map<CpuBindType, std::string_view> kTypes = {
      {CpuBindType::kDefault, ""},          {CpuBindType::kNone, "none"},
      {CpuBindType::kRank, "rank"},         {CpuBindType::kMap, "map_cpu:"},
      {CpuBindType::kMask, "mask_cpu:"},    {CpuBindType::kRankLdom, "rank_ldom"},
      {CpuBindType::kMapLdom, "map_ldom:"}, {CpuBindType::kMaskLdom, "mask_ldom:"},
      {CpuBindType::kSockets, "sockets"},   {CpuBindType::kCores, "cores"},
      {CpuBindType::kThreads, "threads"},   {CpuBindType::kLdoms, "ldoms"},
  };
  std::string verbose = bind.verbose ? "verbose" : "quiet";
  std::string type(kTypes.at(bind.type));
  return {{"SLURM_CPU_BIND_VERBOSE", verbose},
          {"SLURM_CPU_BIND_TYPE", type},
          {"SLURM_CPU_BIND_LIST", bind.list_text},
          {"SLURM_CPU_BIND", verbose + "," + type + bind.list_text}};
}

namespace {

uint32_t SocketOf(const NodeShape& node, uint32_t cpu) {
  return cpu / std::max(node.cores_per_socket * node.threads_per_core, 1u);
}

uint32_t CoreOf(const NodeShape& node, uint32_t cpu) {
  return cpu / std::max(node.threads_per_core, 1u);
}

// The step's CPUs grouped into units (threads, cores or sockets), in id order.
std::vector<std::vector<uint32_t>> Units(CpuBindType type, const NodeShape& node,
                                         std::span<const uint32_t> step_cpus) {
  std::map<uint32_t, std::vector<uint32_t>> units;
  for (uint32_t cpu : step_cpus) {
    uint32_t key = type == CpuBindType::kThreads ? cpu
                   : type == CpuBindType::kCores ? CoreOf(node, cpu)
                                                 : SocketOf(node, cpu);
    units[key].push_back(cpu);
  }
  std::vector<std::vector<uint32_t>> ordered;
  for (auto& [key, cpus] : units) ordered.push_back(std::move(cpus));
  return ordered;
}

// Units in the order tasks take them: block in id order; cyclic and fcyclic one socket after
// another (cyclic keeps a task's units on one socket: its share is taken whole from there).
std::vector<std::vector<uint32_t>> Ordered(std::vector<std::vector<uint32_t>> units,
                                           const NodeShape& node, std::string_view distribution,
                                           uint32_t per_task) {
  if (distribution == "block" || units.empty()) return units;
  std::map<uint32_t, std::vector<std::vector<uint32_t>>> by_socket;
  for (auto& unit : units) by_socket[SocketOf(node, unit.front())].push_back(std::move(unit));
  uint32_t take = distribution == "fcyclic" ? 1 : per_task;
  std::vector<std::vector<uint32_t>> ordered;
  std::map<uint32_t, size_t> next;
  for (bool any = true; any;) {
    any = false;
    for (auto& [socket, list] : by_socket)
      for (uint32_t i = 0; i < take && next[socket] < list.size(); ++i) {
        ordered.push_back(list[next[socket]++]);
        any = true;
      }
  }
  return ordered;
}

std::vector<uint32_t> AutoCpus(CpuBindType type, const NodeShape& node,
                               std::span<const uint32_t> step_cpus, const TaskSlot& slot,
                               std::string_view distribution) {
  if (type == CpuBindType::kLdoms) type = CpuBindType::kSockets;  // no NUMA: ldom = socket
  uint32_t per_task =
      type == CpuBindType::kThreads ? slot.cpus_per_task
      : type == CpuBindType::kCores
          ? (slot.cpus_per_task + node.threads_per_core - 1) / std::max(node.threads_per_core, 1u)
          : 1;
  per_task = std::max(per_task, 1u);
  auto units = Ordered(Units(type, node, step_cpus), node, distribution, per_task);
  std::vector<uint32_t> cpus;
  for (uint32_t i = 0; i < per_task && !units.empty(); ++i) {
    const auto& unit = units[(slot.local_id * per_task + i) % units.size()];
    cpus.insert(cpus.end(), unit.begin(), unit.end());
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::vector<uint32_t> SocketCpus(const NodeShape& node, std::span<const uint32_t> sockets) {
  std::vector<uint32_t> cpus;
  for (uint32_t cpu = 0; cpu < node.cpus(); ++cpu)
    if (std::find(sockets.begin(), sockets.end(), SocketOf(node, cpu) % node.sockets) !=
        sockets.end())
      cpus.push_back(cpu);
  return cpus;
}

// An explicit binding's CPUs on a whole node; those not on the node are dropped.
std::vector<uint32_t> ExplicitCpus(const CpuBind& bind, const NodeShape& node,
                                   const TaskSlot& slot) {
  const std::vector<uint32_t> none;
  const std::vector<uint32_t>& entry =
      bind.list.empty() ? none : bind.list[slot.local_id % bind.list.size()];
  std::vector<uint32_t> cpus;
  switch (bind.type) {
    case CpuBindType::kRank:
      return {slot.local_id % node.cpus()};
    case CpuBindType::kRankLdom: {
      uint32_t socket = slot.local_id % node.sockets;
      return SocketCpus(node, std::span<const uint32_t>(&socket, 1));
    }
    case CpuBindType::kMapLdom:
    case CpuBindType::kMaskLdom:
      return SocketCpus(node, entry);
    default:
      for (uint32_t cpu : entry)
        if (cpu < node.cpus()) cpus.push_back(cpu);
      return cpus;
  }
}

}  // namespace

std::optional<std::vector<uint32_t>> TaskCpus(const CpuBind& bind, const NodeShape& node,
                                              std::span<const uint32_t> step_cpus,
                                              const TaskSlot& slot,
                                              std::string_view socket_distribution) {
  std::vector<uint32_t> all(step_cpus.begin(), step_cpus.end());
  switch (bind.type) {
    case CpuBindType::kDefault:
    case CpuBindType::kNone:
      return std::nullopt;
    case CpuBindType::kSockets:
    case CpuBindType::kCores:
    case CpuBindType::kThreads:
    case CpuBindType::kLdoms:
      return AutoCpus(bind.type, node, step_cpus, slot, socket_distribution);
    default:
      break;
  }
  if (step_cpus.size() != node.cpus()) return all;  // "entire node must be allocated"
  std::vector<uint32_t> cpus = ExplicitCpus(bind, node, slot);
  if (cpus.empty()) return all;  // "doesn't match available CPUs": the step's
  return cpus;
}

std::string CpuBindLabel(const CpuBind& bind) {
  switch (bind.type) {
    case CpuBindType::kDefault:
    case CpuBindType::kNone:
      return "cpu-bind=NONE";
    case CpuBindType::kRank:
      return "cpu-bind=RANK";
    case CpuBindType::kMap:
      return "cpu-bind=MAP ";
    case CpuBindType::kMask:
      return "cpu-bind=MASK";
    case CpuBindType::kRankLdom:
      return "cpu-bind=LDRANK";
    case CpuBindType::kMapLdom:
      return "cpu-bind=LDMAP ";
    case CpuBindType::kMaskLdom:
      return "cpu-bind=LDMASK";
    case CpuBindType::kSockets:
      return "cpu-bind-sockets=MASK";
    case CpuBindType::kCores:
      return "cpu-bind-cores=MASK";
    case CpuBindType::kThreads:
      return "cpu-bind-threads=MASK";
    case CpuBindType::kLdoms:
      return "cpu-bind-ldoms=MASK";
  }
  return "cpu-bind=UNK ";
}

std::string MaskText(std::span<const uint32_t> ids) {
  uint32_t top = 0;
  for (uint32_t id : ids) top = std::max(top, id + 1);
  std::string text;
  for (int64_t nibble = (int64_t{top} + 3) / 4 - 1; nibble >= 0; --nibble) {
    int value = 0;
    for (uint32_t id : ids)
      if (id / 4 == static_cast<uint32_t>(nibble)) value |= 1 << (id % 4);
    text += "0123456789abcdef"[value];
  }
  return text.empty() ? "0" : text;
}

Result<MemBind> ParseMemBind(std::string_view text) {
  Words words = SplitWords(text);
  MemBind bind;
  for (const std::string& word : words.keywords) {
    if (word == "q" || word == "quiet") {
      bind.verbose = false;
    } else if (word == "v" || word == "verbose") {
      bind.verbose = true;
    } else if (word == "prefer") {
      bind.prefer = true;
    } else if (word == "sort" || word == "nosort") {
      continue;  // zonesort is for Intel KNL nodes only
    } else if (word == "no" || word == "none") {
      bind.type = MemBindType::kNone;
    } else if (word == "local") {
      bind.type = MemBindType::kLocal;
    } else if (word == "rank") {
      bind.type = MemBindType::kRank;
    } else if (word == "map_mem" || word == "mask_mem") {
      bind.type = word == "map_mem" ? MemBindType::kMap : MemBindType::kMask;
      auto list = ParseList(words.list, bind.type == MemBindType::kMask);
      if (!list)
        return MakeError(fmt::format("missing or bad list for \"--mem-bind={}:<list>\"", word));
      bind.list = std::move(*list);
      bind.list_text = Join(words.list, ",");
    } else {
      return Unrecognized("mem-bind", word);
    }
  }
  return bind;
}

namespace {

std::string_view MemBindTypeName(MemBindType type) {
  switch (type) {
    case MemBindType::kNone:
      return "none";
    case MemBindType::kLocal:
      return "local";
    case MemBindType::kRank:
      return "rank";
    case MemBindType::kMap:
      return "map_mem:";
    case MemBindType::kMask:
      return "mask_mem:";
    case MemBindType::kDefault:
      break;
  }
  return "";
}

}  // namespace

Variables MemBindVariables(const MemBind& bind) {
  std::string verbose = bind.verbose ? "verbose" : "quiet";
  std::string type(MemBindTypeName(bind.type));
  Variables variables = {
      {"SLURM_MEM_BIND_VERBOSE", verbose},
      {"SLURM_MEM_BIND_TYPE", type},
      {"SLURM_MEM_BIND_LIST", bind.list_text},
      {"SLURM_MEM_BIND", verbose + "," + (bind.prefer ? "prefer," : "") + type + bind.list_text}};
  if (bind.prefer) variables.emplace_back("SLURM_MEM_BIND_PREFER", "prefer");
  return variables;
}

Result<std::optional<std::vector<uint32_t>>> TaskMemoryNodes(const MemBind& bind,
                                                             const TaskSlot& slot,
                                                             std::span<const uint32_t> local_nodes,
                                                             uint32_t numa_nodes) {
  std::vector<uint32_t> nodes;
  switch (bind.type) {
    case MemBindType::kDefault:
    case MemBindType::kNone:
      return std::optional<std::vector<uint32_t>>();
    case MemBindType::kLocal:
      return std::optional<std::vector<uint32_t>>(
          std::vector<uint32_t>(local_nodes.begin(), local_nodes.end()));
    case MemBindType::kRank:
      nodes = {slot.local_id};
      break;
    case MemBindType::kMap:
    case MemBindType::kMask:
      nodes = bind.list[slot.local_id % bind.list.size()];
      break;
  }
  for (uint32_t node : nodes)
    if (node >= numa_nodes)
      return MakeError(
          fmt::format("NUMA node {} does not exist; cannot bind local task {} to it "
                      "(--mem-bind={})",
                      node, slot.local_id, MemBindTypeName(bind.type)));
  return std::optional<std::vector<uint32_t>>(std::move(nodes));
}

std::string MemBindLabel(const MemBind& bind) {
  std::string mode = bind.prefer ? " PREFER " : "=";
  switch (bind.type) {
    case MemBindType::kDefault:
    case MemBindType::kNone:
      return "mem-bind=NONE";
    case MemBindType::kLocal:
      return "mem-bind" + mode + "LOC";
    case MemBindType::kRank:
      return "mem-bind" + mode + "RANK";
    case MemBindType::kMap:
      return "mem-bind" + mode + "MAP";
    case MemBindType::kMask:
      return "mem-bind" + mode + "MASK";
  }
  return "mem-bind=UNK";
}

Result<GpuBind> ParseGpuBind(std::string_view text) {
  Words words = SplitWords(text);
  GpuBind bind;
  for (const std::string& word : words.keywords) {
    if (word == "verbose") {
      bind.verbose = true;
    } else if (word == "none") {
      bind.type = GpuBindType::kNone;
    } else if (word == "closest") {
      bind.type = GpuBindType::kClosest;
    } else if (word == "map_gpu" || word == "mask_gpu") {
      bind.type = word == "map_gpu" ? GpuBindType::kMap : GpuBindType::kMask;
      auto list = ParseList(words.list, bind.type == GpuBindType::kMask);
      if (!list) return MakeError(fmt::format("Invalid --gpu-bind argument: {}", text));
      bind.list = std::move(*list);
    } else if (word == "single" || word == "per_task") {
      auto count = words.list.size() == 1 ? ParseUint64(words.list[0]) : std::nullopt;
      if (!count || *count == 0 || *count > kMaxId)
        return MakeError(fmt::format("Invalid --gpu-bind argument: {}", text));
      bind.type = word == "single" ? GpuBindType::kSingle : GpuBindType::kPerTask;
      bind.count = static_cast<uint32_t>(*count);
    } else {
      return MakeError(fmt::format("Invalid --gpu-bind argument: {}", text));
    }
  }
  return bind;
}

std::vector<uint32_t> TaskGpus(const GpuBind& bind, std::span<const uint32_t> step_gpus,
                               const TaskSlot& slot) {
  std::vector<uint32_t> all(step_gpus.begin(), step_gpus.end());
  if (all.empty()) return all;
  switch (bind.type) {
    case GpuBindType::kNone:
    case GpuBindType::kClosest:
      return all;
    case GpuBindType::kSingle:
      return {all[(slot.local_id / bind.count) % all.size()]};
    case GpuBindType::kPerTask: {
      std::vector<uint32_t> gpus;
      for (uint32_t i = 0; i < bind.count && i < all.size(); ++i)
        gpus.push_back(all[(slot.local_id * bind.count + i) % all.size()]);
      std::sort(gpus.begin(), gpus.end());
      return gpus;
    }
    case GpuBindType::kMap:
    case GpuBindType::kMask:
      break;
  }
  std::vector<uint32_t> gpus;
  for (uint32_t gpu : bind.list[slot.local_id % bind.list.size()])
    if (std::find(all.begin(), all.end(), gpu) != all.end()) gpus.push_back(gpu);
  if (gpus.empty()) return {all.front()};
  return gpus;
}

}  // namespace drover
