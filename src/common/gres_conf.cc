// gres.conf lines to GpuDevice records on each node; see gres_conf.h.
#include "common/gres_conf.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <tuple>

#include "common/documented_keys.h"
#include "common/hostlist.h"

namespace drover {
namespace {

struct GresLine {
  std::vector<int> nodes;  // empty: every node
  bool all_nodes = true;
  std::string name, type, flags;
  std::vector<std::string> files;
  std::optional<uint64_t> count;
  std::vector<int> cores;
  std::vector<int> links;
  bool has_links = false;
  std::string autodetect;
};

// The device index of "/dev/nvidia3" is 3: the trailing number of the file name.
std::optional<int> DeviceIndex(const std::string& file) {
  size_t end = file.size(), start = end;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(file[start - 1]))) --start;
  if (start == end) return std::nullopt;
  auto number = ParseInt64(std::string_view(file).substr(start));
  if (!number || *number > 1 << 20) return std::nullopt;
  return static_cast<int>(*number);
}

Result<std::vector<int>> ParseLinks(std::string_view text) {
  std::vector<int> links;
  for (const std::string& item : Split(text, ',')) {
    auto number = ParseInt64(Trim(item));
    if (!number || *number < -1 || *number > 1 << 16)
      return MakeError(
          fmt::format("invalid Links '{}' (expected one number per GPU on the node: "
                      "-1 for the GPU itself, 0 for no link, N for N NVLinks)",
                      text));
    links.push_back(static_cast<int>(*number));
  }
  return links;
}

// Reads one line's keys; false when it is unusable (reported).
bool ReadLine(const ConfLine& line, const ClusterConfig& config, GresLine& out,
              Diagnostics& diagnostics, KeyReporter& reporter) {
  for (const ConfPair& pair : line.pairs) {
    auto fail = [&](const std::string& message) {
      diagnostics.Error(line.where, fmt::format("{}: {}", pair.key, message));
      return false;
    };
    const std::string key = ToLower(pair.key);
    if (key == "nodename") {
      auto names = ExpandHostlist(pair.value);
      if (!names) return fail(names.error());
      out.all_nodes = false;
      std::vector<std::string> unknown;
      out.nodes = config.ResolveNodes(*names, unknown);
      if (!unknown.empty()) return fail(UndefinedNodesMessage(unknown));
    } else if (key == "name") {
      out.name = pair.value;
    } else if (key == "type") {
      out.type = pair.value;
    } else if (key == "file" || key == "multiplefiles") {
      auto files = ExpandHostlist(pair.value);
      if (!files) return fail(files.error());
      if (key == "multiplefiles") files->resize(std::min<size_t>(files->size(), 1));
      out.files = std::move(*files);
    } else if (key == "count") {
      auto count = ParseMemoryMB(pair.value);  // Slurm accepts K/M/G multipliers here
      auto plain = ParseUint64(pair.value);
      if (!plain && !count) return fail(fmt::format("invalid count '{}'", pair.value));
      out.count = plain ? *plain : *count;
    } else if (key == "cores") {
      auto cores = ParseIndexList(pair.value);
      if (!cores) return fail(cores.error());
      out.cores = std::move(*cores);
    } else if (key == "links") {
      auto links = ParseLinks(pair.value);
      if (!links) return fail(links.error());
      out.links = std::move(*links);
      out.has_links = true;
    } else if (key == "flags") {
      out.flags = pair.value;
    } else if (key == "autodetect") {
      out.autodetect = ToLower(pair.value);
      if (out.autodetect != "off" && out.autodetect != "nvml" && out.autodetect != "nvidia" &&
          out.autodetect != "rsmi" && out.autodetect != "oneapi" && out.autodetect != "nrt")
        return fail(fmt::format("invalid value '{}' (expected off or nvml)", pair.value));
    } else {
      static const std::vector<std::string_view> implemented = {
          "AutoDetect", "Cores",         "Count", "File",     "Flags",
          "Links",      "MultipleFiles", "Name",  "NodeName", "Type"};
      reporter.Report(diagnostics, line.where, pair.key, "gres.conf", implemented,
                      GresConfDocumentedKeys());
    }
  }
  return true;
}

Status CheckLine(const GresLine& gres, const NodeConfig& node) {
  for (int core : gres.cores)
    if (core >= node.cores())
      return MakeError(
          fmt::format("node {}: Cores= names core {} but the node has {} cores "
                      "(0-{})",
                      node.name, core, node.cores(), node.cores() - 1));
  if (gres.has_links && gres.files.size() > 1)
    return MakeError("Links= describes one GPU; write one line per GPU (File=/dev/nvidiaN)");
  if (gres.count && !gres.files.empty() && *gres.count != gres.files.size())
    return MakeError(
        fmt::format("Count={} but File= names {} devices; drop Count or make them "
                    "agree",
                    *gres.count, gres.files.size()));
  return OkStatus();
}

void AddGpus(const GresLine& gres, const SourceLocation& where, NodeConfig& node,
             Diagnostics& diagnostics) {
  if (Status ok = CheckLine(gres, node); !ok) {
    diagnostics.Error(where, ok.error());
    return;
  }
  std::vector<GpuDevice> added;
  if (gres.files.empty()) {
    int next = 0;
    for (const GpuDevice& gpu : node.gpus) next = std::max(next, gpu.index + 1);
    for (uint64_t i = 0; i < gres.count.value_or(1) && i < 4096; ++i)
      added.push_back(
          {gres.type, next + static_cast<int>(i), "", gres.cores, gres.links, "", "", "", 0, -1});
  }
  for (const std::string& file : gres.files) {
    auto index = DeviceIndex(file);
    if (!index) {
      diagnostics.Error(where, fmt::format("File={}: a GPU device file must end in its index "
                                           "(e.g. /dev/nvidia0)",
                                           file));
      return;
    }
    added.push_back({gres.type, *index, file, gres.cores, gres.links, "", "", "", 0, -1});
  }
  for (GpuDevice& gpu : added) {
    for (const GpuDevice& existing : node.gpus) {
      if (existing.index == gpu.index) {
        diagnostics.Error(where,
                          fmt::format("node {}: GPU {} is declared twice", node.name, gpu.index));
        return;
      }
    }
    node.gpus.Mutable().push_back(std::move(gpu));
  }
}

// Name=nvme: one drive per File= (its mount point, an absolute path), or Count emulated ones.
void AddNvme(const GresLine& gres, const SourceLocation& where, NodeConfig& node,
             Diagnostics& diagnostics) {
  if (gres.count && !gres.files.empty() && *gres.count != gres.files.size()) {
    diagnostics.Error(where, fmt::format("Count={} but File= names {} NVMe mount points; drop "
                                         "Count or make them agree",
                                         *gres.count, gres.files.size()));
    return;
  }
  std::vector<std::string> mounts = gres.files;
  if (mounts.empty()) mounts.resize(gres.count.value_or(1));
  for (const std::string& mount : mounts) {
    if (!mount.empty() && mount.front() != '/') {
      diagnostics.Error(where, fmt::format("File={}: an NVMe drive is named by its mount point, "
                                           "an absolute path (e.g. File=/local/nvme0)",
                                           mount));
      return;
    }
    if (node.nvme.size() >= 64) {
      diagnostics.Error(where, fmt::format("node {}: more than 64 NVMe drives", node.name));
      return;
    }
    node.nvme.push_back({static_cast<int>(node.nvme.size()), mount});
  }
}

uint64_t DeclaredGpus(const NodeConfig& node, const std::string& type) {
  uint64_t count = 0;
  for (const GresSpec& gres : node.gres)
    if (gres.name == "gpu" && (type.empty() || gres.type == type)) count += gres.count;
  return count;
}

std::string DescribeDeclared(const NodeConfig& node) {
  std::vector<GresSpec> gpus;
  for (const GresSpec& gres : node.gres)
    if (gres.name == "gpu") gpus.push_back(gres);
  return gpus.empty() ? "no Gres=gpu" : "Gres=" + FormatGres(gpus);
}

// What is wrong with one node's GPUs, with "{}" standing for the node; empty when nothing is.
std::vector<std::string> NodeGpuProblems(const NodeConfig& node) {
  std::vector<std::string> problems;
  uint64_t declared = DeclaredGpus(node, "");
  if (declared != node.gpus.size()) {
    problems.push_back(
        fmt::format("{{}}: slurm.conf declares {} but gres.conf describes {} GPU{}; "
                    "make them agree",
                    DescribeDeclared(node), node.gpus.size(), node.gpus.size() == 1 ? "" : "s"));
    return problems;
  }
  for (const GresSpec& gres : node.gres) {
    if (gres.name != "gpu" || gres.type.empty()) continue;
    auto described = std::count_if(node.gpus.begin(), node.gpus.end(),
                                   [&](const GpuDevice& gpu) { return gpu.type == gres.type; });
    if (static_cast<uint64_t>(described) != gres.count)
      problems.push_back(
          fmt::format("{{}}: slurm.conf declares {} {} GPUs but gres.conf "
                      "describes {} of Type={}; make them agree",
                      gres.count, gres.type, described, gres.type));
  }
  for (const GpuDevice& gpu : node.gpus) {
    if (!gpu.links.empty() && gpu.links.size() != node.gpus.size())
      problems.push_back(fmt::format("{{}}: GPU {} has Links= for {} GPUs but the node has {}",
                                     gpu.index, gpu.links.size(), node.gpus.size()));
  }
  return problems;
}

}  // namespace

Result<std::vector<int>> ParseIndexList(std::string_view text) {
  std::vector<int> indexes;
  auto expanded = ExpandHostlist(fmt::format("i[{}]", text), 1 << 20);
  if (!expanded || Trim(text).empty())
    return MakeError(fmt::format("invalid index list '{}' (expected e.g. 0-7 or 0-3,8-11)", text));
  for (const std::string& item : *expanded) {
    auto number = ParseInt64(std::string_view(item).substr(1));
    if (!number || *number > 1 << 20)
      return MakeError(
          fmt::format("invalid index list '{}' (expected e.g. 0-7 or 0-3,8-11)", text));
    indexes.push_back(static_cast<int>(*number));
  }
  return indexes;
}

bool IsGpuSharing(std::string_view name) {
  return name == "shard" || name == "mps";
}

std::vector<GpuShareLine> ApplyGresConf(const std::vector<ConfLine>& lines, ClusterConfig& config,
                                        Diagnostics& diagnostics, KeyReporter& reporter) {
  std::vector<GpuShareLine> shares;
  std::string global_autodetect = "off";
  std::vector<std::string> node_autodetect(config.nodes.size());  // per-node AutoDetect=
  for (const ConfLine& line : lines) {
    GresLine gres;
    if (!ReadLine(line, config, gres, diagnostics, reporter)) continue;
    if (gres.name.empty()) {
      if (!gres.autodetect.empty() && gres.all_nodes) global_autodetect = gres.autodetect;
      for (int index : gres.nodes) node_autodetect[index] = gres.autodetect;
      if (!gres.autodetect.empty()) continue;
      diagnostics.Error(line.where, "a GRES line needs Name= (e.g. Name=gpu)");
      continue;
    }
    if (!gres.all_nodes && gres.nodes.empty()) continue;
    std::vector<int> targets = gres.nodes;
    if (gres.all_nodes)
      for (size_t i = 0; i < config.nodes.size(); ++i) targets.push_back(static_cast<int>(i));
    for (int index : targets) {
      NodeConfig& node = config.nodes[index];
      if (!gres.autodetect.empty()) node_autodetect[index] = gres.autodetect;
      if (gres.name == "gpu") AddGpus(gres, line.where, node, diagnostics);
      if (gres.name == "nvme") AddNvme(gres, line.where, node, diagnostics);
      if (IsGpuSharing(gres.name)) {
        GpuShareLine share{index, gres.name, gres.count.value_or(0), {}, line.where};
        for (const std::string& file : gres.files) {
          auto device = DeviceIndex(file);
          if (!device) {
            diagnostics.Error(line.where,
                              fmt::format("File={}: a {} line names GPU device files, each "
                                          "ending in its index (e.g. /dev/nvidia0)",
                                          file, gres.name));
            break;
          }
          share.gpu_indexes.push_back(*device);
        }
        if (!gres.count)
          diagnostics.Error(line.where,
                            fmt::format("Name={} needs Count= (the {} of the GPUs "
                                        "it names, e.g. Count=8)",
                                        gres.name, gres.name == "mps" ? "MPS units" : "shards"));
        else
          shares.push_back(std::move(share));
      }
    }
  }
  for (size_t i = 0; i < config.nodes.size(); ++i) {
    const std::string& mode = node_autodetect[i].empty() ? global_autodetect : node_autodetect[i];
    config.nodes[i].gpus_autodetect = mode != "off";
  }
  const auto by_index = [](const GpuDevice& a, const GpuDevice& b) { return a.index < b.index; };
  for (NodeConfig& node : config.nodes) {
    if (std::is_sorted(node.gpus.begin(), node.gpus.end(), by_index)) continue;
    std::vector<GpuDevice>& gpus = node.gpus.Mutable();
    std::sort(gpus.begin(), gpus.end(), by_index);
  }
  return shares;
}

namespace {

// `count` over `gpus` as evenly as Slurm splits it: the first ones get one more.
void SplitEvenly(uint64_t count, const std::vector<GpuDevice*>& gpus) {
  for (size_t i = 0; i < gpus.size(); ++i)
    gpus[i]->shares += static_cast<uint32_t>(count / gpus.size() + (i < count % gpus.size()));
}

// The node's Gres=shard:N (or mps:N) over its GPUs; an error (with "{}" for the node) when it
// cannot be.
std::string ShareGpus(NodeConfig& node, const std::vector<const GpuShareLine*>& lines) {
  std::string sharing;
  uint64_t declared = 0;
  for (const GresSpec& gres : node.gres) {
    if (!IsGpuSharing(gres.name)) continue;
    if (!sharing.empty() && sharing != gres.name)
      return "{}: Gres= declares both shard and mps; a node shares its GPUs one way "
             "(keep one of them)";
    if (!gres.type.empty())
      return fmt::format(
          "{{}}: Gres={}:{}:{}: {} takes no type (it follows the GPUs' types); "
          "write Gres={}:{}",
          gres.name, gres.type, gres.count, gres.name, gres.name, gres.count);
    sharing = gres.name;
    declared += gres.count;
  }
  for (const GpuShareLine* line : lines)
    if (sharing.empty() || line->name != sharing)
      return fmt::format(
          "{{}}: gres.conf shares GPUs as {} but slurm.conf's Gres= declares "
          "{}; add {}:N to the node's Gres=",
          line->name, sharing.empty() ? "no sharing" : sharing, line->name);
  if (sharing.empty()) return "";
  if (node.gpus.empty())
    return fmt::format(
        "{{}}: Gres={}:{} shares GPUs but the node has none; add gpu:N to its "
        "Gres=",
        sharing, declared);
  if (declared > uint64_t{UINT32_MAX} * node.gpus.size())
    return fmt::format("{{}}: Gres={}:{} is too large", sharing, declared);
  node.gpu_sharing = sharing;
  std::vector<GpuDevice>& own = node.gpus.Mutable();  // the node's alone from here
  for (GpuDevice& gpu : own) gpu.shares = 0;
  if (lines.empty()) {
    std::vector<GpuDevice*> all;
    for (GpuDevice& gpu : own) all.push_back(&gpu);
    SplitEvenly(declared, all);
    return "";
  }
  uint64_t described = 0;
  for (const GpuShareLine* line : lines) {
    std::vector<GpuDevice*> gpus;
    for (GpuDevice& gpu : own)
      if (line->gpu_indexes.empty() || std::find(line->gpu_indexes.begin(), line->gpu_indexes.end(),
                                                 gpu.index) != line->gpu_indexes.end())
        gpus.push_back(&gpu);
    if (gpus.size() != (line->gpu_indexes.empty() ? node.gpus.size() : line->gpu_indexes.size()))
      return fmt::format("{{}}: gres.conf line {} names a GPU the node does not have",
                         line->where.line);
    SplitEvenly(line->count, gpus);
    described += line->count;
  }
  if (described != declared)
    return fmt::format(
        "{{}}: slurm.conf declares Gres={}:{} but gres.conf describes {}; make "
        "them agree",
        sharing, declared, described);
  return "";
}

}  // namespace

void FinishGpus(ClusterConfig& config, const std::vector<GpuShareLine>& shares,
                Diagnostics& diagnostics) {
  // The same problem on many nodes of one line is one error naming them all.
  std::map<std::tuple<std::string, int, std::string>, std::vector<std::string>> problems;
  // The emulated GPUs of nodes declared alike (the nodes of one line, or of lines in a row with
  // the same Gres=) are one shared list.
  const NodeConfig* last_built = nullptr;
  for (NodeConfig& node : config.nodes) {
    if (!node.gpus.empty()) {
      for (std::string& problem : NodeGpuProblems(node)) {
        problems[{node.defined_at.file, node.defined_at.line, std::move(problem)}].push_back(
            node.name);
      }
      continue;
    }
    // Declared in slurm.conf only: emulated GPUs, or ones NVML will find on the node.
    if (last_built && last_built->gres == node.gres) {
      node.gpus = last_built->gpus;
      continue;
    }
    uint64_t declared = 0;
    for (const GresSpec& gres : node.gres) declared += gres.name == "gpu" ? gres.count : 0;
    std::vector<GpuDevice> gpus;
    gpus.reserve(static_cast<size_t>(std::min<uint64_t>(declared, 4096)));
    int index = 0;
    for (const GresSpec& gres : node.gres) {
      if (gres.name != "gpu") continue;
      for (uint64_t i = 0; i < gres.count && index < 4096; ++i)
        gpus.push_back({gres.type, index++, "", {}, {}, "", "", "", 0, -1});
    }
    node.gpus = std::move(gpus);
    last_built = &node;
  }
  // Gres=nvme:N: what gres.conf describes must agree; without lines, N emulated drives.
  for (NodeConfig& node : config.nodes) {
    uint64_t declared = 0;
    for (const GresSpec& gres : node.gres)
      if (gres.name == "nvme") declared += gres.count;
    if (node.nvme.empty() && declared > 64)
      problems[{node.defined_at.file, node.defined_at.line, "{}: more than 64 NVMe drives"}]
          .push_back(node.name);
    else if (node.nvme.empty())
      for (uint64_t i = 0; i < declared; ++i) node.nvme.push_back({static_cast<int>(i), ""});
    else if (declared != node.nvme.size())
      problems[{node.defined_at.file, node.defined_at.line,
                fmt::format("{{}}: slurm.conf declares Gres=nvme:{} but gres.conf describes {} "
                            "NVMe drive{}; make them agree",
                            declared, node.nvme.size(), node.nvme.size() == 1 ? "" : "s")}]
          .push_back(node.name);
  }
  std::vector<std::vector<const GpuShareLine*>> share_lines(config.nodes.size());
  for (const GpuShareLine& line : shares) share_lines[line.node].push_back(&line);
  for (size_t i = 0; i < config.nodes.size(); ++i) {
    NodeConfig& node = config.nodes[i];
    std::string problem = ShareGpus(node, share_lines[i]);
    if (!problem.empty())
      problems[{node.defined_at.file, node.defined_at.line, std::move(problem)}].push_back(
          node.name);
  }
  for (const auto& [key, names] : problems) {
    const auto& [file, line, problem] = key;
    std::string who =
        names.size() == 1 ? "node " + names.front() : "nodes " + CompressHostlist(names);
    diagnostics.Error({file, line}, fmt::format(fmt::runtime(problem), who));
  }
}

GpuList::GpuList(std::vector<GpuDevice> gpus)
    : shared_(gpus.empty() ? nullptr : std::make_shared<std::vector<GpuDevice>>(std::move(gpus))) {}

std::vector<GpuDevice>& GpuList::Mutable() {
  if (!shared_)
    shared_ = std::make_shared<std::vector<GpuDevice>>();
  else if (shared_.use_count() > 1)
    shared_ = std::make_shared<std::vector<GpuDevice>>(*shared_);
  else  // the last other owner's release, on another thread, happens before this write
    std::atomic_thread_fence(std::memory_order_acquire);
  return *shared_;
}

const std::vector<GpuDevice>& GpuList::Empty() {
  static const std::vector<GpuDevice> kNone;
  return kNone;
}

uint64_t NodeConfig::gpu_count() const {
  return gpus.size();
}

uint32_t NodeConfig::gpu_shares(int index) const {
  for (const GpuDevice& gpu : gpus)
    if (gpu.index == index) return gpu.shares;
  return 0;
}

}  // namespace drover
