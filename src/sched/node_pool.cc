// Free resources per node and the choice of exact cores and GPUs on one node; see node_pool.h.
// GPUs are chosen as the NVLink-best connected set (then fewest sockets, then lowest indexes);
// cores first from the chosen GPUs' local cores, then best-fit by socket.
#include "sched/node_pool.h"

#include <algorithm>
#include <bit>
#include <tuple>

namespace drover::sched {
namespace {

bool TestBit(const uint64_t* bits, int i) {
  return (bits[i / 64] >> (i % 64)) & 1;
}
void ClearBit(uint64_t* bits, int i) {
  bits[i / 64] &= ~(uint64_t{1} << (i % 64));
}

int GpuPosition(const NodeConfig& node, int device_index) {
  // Devices are usually listed by index: /dev/nvidia0 first.
  if (device_index >= 0 && static_cast<size_t>(device_index) < node.gpus.size() &&
      node.gpus[device_index].index == device_index)
    return device_index;
  for (size_t p = 0; p < node.gpus.size(); ++p)
    if (node.gpus[p].index == device_index) return static_cast<int>(p);
  return -1;
}

int Links(const NodeConfig& node, int a, int b) {
  const std::vector<int>& links = node.gpus[a].links;
  if (links.size() != node.gpus.size()) return 0;
  return std::max(links[b], 0);
}

}  // namespace

bool HasGresFor(const NodeConfig& node, const NodeRequest& request) {
  if (node.nvme.size() < static_cast<size_t>(request.nvme)) return false;
  if (request.shares == 0) return true;
  if (node.gpu_sharing != request.share_gres) return false;
  return std::any_of(node.gpus.begin(), node.gpus.end(), [&](const GpuDevice& gpu) {
    return gpu.shares >= request.shares &&
           (request.gpu_type.empty() || gpu.type == request.gpu_type);
  });
}

NodePool::NodePool(const ClusterConfig& cluster, const std::vector<NodeState>& states)
    : cluster_(cluster), nodes_(cluster.nodes.size()), gpu_offset_(cluster.nodes.size() + 1) {
  size_t max_gpus = 0, core_words = 0;
  std::vector<uint32_t> weights;
  for (size_t i = 0; i < cluster.nodes.size(); ++i) {
    const NodeConfig& config = cluster.nodes[i];
    max_gpus = std::max(max_gpus, config.gpus.size());
    nodes_[i].core_offset = static_cast<uint32_t>(core_words);
    core_words += static_cast<size_t>(config.cores() + 63) / 64;
    gpu_offset_[i + 1] = gpu_offset_[i] + static_cast<uint32_t>(config.gpus.size());
    weights.push_back(config.weight);
  }
  std::sort(weights.begin(), weights.end());
  weights.erase(std::unique(weights.begin(), weights.end()), weights.end());
  int per_weight = static_cast<int>(max_gpus) + 1;
  buckets_.resize(weights.size() * static_cast<size_t>(per_weight));
  for (size_t w = 0; w < weights.size(); ++w)
    for (int g = 0; g < per_weight; ++g) {
      Bucket& bucket = buckets_[w * static_cast<size_t>(per_weight) + static_cast<size_t>(g)];
      bucket.weight = weights[w];
      bucket.gpus = g;
    }
  count_by_free_gpus_.assign(max_gpus + 1, 0);
  core_bits_.assign(core_words, 0);
  if (std::any_of(cluster.partitions.begin(), cluster.partitions.end(), [](const auto& p) {
        using Mode = OverSubscribe::Mode;
        return (p.over_subscribe.mode == Mode::kYes || p.over_subscribe.mode == Mode::kForce) &&
               p.over_subscribe.max_share > 1;
      }))
    core_uses_.assign(core_words * 64, 0);
  gpu_socket_.assign(gpu_offset_.back(), -1);
  if (std::any_of(cluster.nodes.begin(), cluster.nodes.end(),
                  [](const NodeConfig& node) { return !node.gpu_sharing.empty(); })) {
    shares_free_.assign(gpu_offset_.back(), 0);
    share_jobs_.assign(gpu_offset_.back(), 0);
    share_until_.assign(gpu_offset_.back(), 0);
  }
  for (size_t i = 0; i < cluster.nodes.size(); ++i) {
    const NodeConfig& config = cluster.nodes[i];
    nodes_[i].bucket_base = static_cast<int>(
        (std::lower_bound(weights.begin(), weights.end(), config.weight) - weights.begin()) *
        per_weight);
    for (size_t p = 0; p < config.gpus.size(); ++p)
      if (!config.gpus[p].cores.empty())
        gpu_socket_[gpu_offset_[i] + p] =
            config.gpus[p].cores.front() / std::max(config.cores_per_socket, 1);
    SetIdle(static_cast<int>(i), states.empty() || states[i] == NodeState::kUp);
    Index(static_cast<int>(i));
  }
}

void NodePool::SetIdle(int i, bool usable) {
  const NodeConfig& config = cluster_.nodes[i];
  Node& node = nodes_[i];
  int cores = config.cores();
  uint64_t* bits = CoreBits(i);
  for (int c = 0; c < cores; c += 64)
    bits[c / 64] = cores - c >= 64 ? ~uint64_t{0} : (uint64_t{1} << (cores - c)) - 1;
  if (!core_uses_.empty())
    std::fill_n(core_uses_.begin() + size_t{node.core_offset} * 64,
                static_cast<size_t>(cores + 63) / 64 * 64, uint8_t{0});
  node.free_core_count = cores;
  node.free_memory_mb = config.real_memory_mb;
  int gpus = static_cast<int>(std::min<size_t>(config.gpus.size(), 64));
  node.free_gpus = gpus == 64 ? ~uint64_t{0} : (uint64_t{1} << gpus) - 1;
  node.free_gpu_count = gpus;
  size_t drives = std::min<size_t>(config.nvme.size(), 64);
  node.free_nvme = drives == 64 ? ~uint64_t{0} : (uint64_t{1} << drives) - 1;
  node.jobs = 0;
  node.usable = usable;
  if (!shares_free_.empty())
    for (size_t p = 0; p < config.gpus.size(); ++p) {
      shares_free_[gpu_offset_[i] + p] = config.gpus[p].shares;
      share_jobs_[gpu_offset_[i] + p] = 0;
      share_until_[gpu_offset_[i] + p] = 0;
    }
}

void NodePool::ResetNode(int node, bool usable) {
  Unindex(node);
  SetIdle(node, usable);
  Index(node);
}

bool NodePool::SameState(const NodePool& other) const {
  if (nodes_.size() != other.nodes_.size()) return false;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& a = nodes_[i];
    const Node& b = other.nodes_[i];
    if (std::tie(a.core_offset, a.free_core_count, a.free_memory_mb, a.free_gpus, a.free_gpu_count,
                 a.free_nvme, a.jobs, a.bucket_base, a.usable) !=
        std::tie(b.core_offset, b.free_core_count, b.free_memory_mb, b.free_gpus, b.free_gpu_count,
                 b.free_nvme, b.jobs, b.bucket_base, b.usable))
      return false;
  }
  if (buckets_.size() != other.buckets_.size()) return false;
  for (size_t k = 0; k < buckets_.size(); ++k) {
    const Bucket& a = buckets_[k];
    const Bucket& b = other.buckets_[k];
    if (a.weight != b.weight || a.gpus != b.gpus || a.members != b.members) return false;
    // A bucket's bits are allocated when its first node enters, and kept when it empties.
    for (size_t w = 0; w < std::max(a.bits.size(), b.bits.size()); ++w)
      if ((w < a.bits.size() ? a.bits[w] : 0) != (w < b.bits.size() ? b.bits[w] : 0)) return false;
  }
  return core_bits_ == other.core_bits_ && core_uses_ == other.core_uses_ &&
         gpu_socket_ == other.gpu_socket_ && gpu_offset_ == other.gpu_offset_ &&
         shares_free_ == other.shares_free_ && share_jobs_ == other.share_jobs_ &&
         share_until_ == other.share_until_ && count_by_free_gpus_ == other.count_by_free_gpus_;
}

void NodePool::Index(int node) {
  if (!nodes_[node].usable) return;
  Bucket& bucket = buckets_[nodes_[node].bucket_base + nodes_[node].free_gpu_count];
  if (bucket.bits.empty()) bucket.bits.assign((nodes_.size() + 63) / 64, 0);
  bucket.bits[node / 64] |= uint64_t{1} << (node % 64);
  ++bucket.members;
  ++count_by_free_gpus_[nodes_[node].free_gpu_count];
}

void NodePool::Unindex(int node) {
  if (!nodes_[node].usable) return;
  Bucket& bucket = buckets_[nodes_[node].bucket_base + nodes_[node].free_gpu_count];
  bucket.bits[node / 64] &= ~(uint64_t{1} << (node % 64));
  --bucket.members;
  --count_by_free_gpus_[nodes_[node].free_gpu_count];
}

int NodePool::CountWithFreeGpus(int gpus) const {
  int count = 0;
  for (size_t g = std::max(gpus, 0); g < count_by_free_gpus_.size(); ++g)
    count += count_by_free_gpus_[g];
  return count;
}

void NodePool::Take(const Allocation& allocation, bool shared, int64_t end) {
  for (const NodeAllocation& part : allocation.nodes)
    Commit(part, allocation.exclusive, shared, end);
}

void NodePool::Commit(const NodeAllocation& part, bool exclusive, bool shared, int64_t end) {
  Unindex(part.node);
  Node& node = nodes_[part.node];
  const NodeConfig& config = cluster_.nodes[part.node];
  uint64_t* cores = CoreBits(part.node);
  if (!core_uses_.empty()) {
    uint8_t* uses = core_uses_.data() + size_t{node.core_offset} * 64;
    if (exclusive) std::fill(uses, uses + config.cores(), kHeldAlone);
    for (int core : part.cores)
      if (core >= 0 && core < config.cores())
        uses[core] = shared && uses[core] < kHeldAlone - 1 ? uses[core] + 1 : kHeldAlone;
  }
  if (exclusive) {  // the whole node: nothing to pick apart
    std::fill(cores, cores + (config.cores() + 63) / 64, 0);
    node.free_core_count = 0;
    node.free_memory_mb = 0;
    node.free_gpus = 0;
    node.free_gpu_count = 0;
    node.free_nvme = 0;
    if (!shares_free_.empty())
      std::fill(shares_free_.begin() + gpu_offset_[part.node],
                shares_free_.begin() + gpu_offset_[part.node + 1], 0);
    ++node.jobs;
    return Index(part.node);
  }
  // A word at a time: a running job's cores are taken every pass, 64 to a node on big nodes.
  int words = (config.cores() + 63) / 64, word = -1;
  uint64_t mask = 0;
  auto flush = [&] {
    if (word < 0) return;
    node.free_core_count -= std::popcount(cores[word] & mask);
    cores[word] &= ~mask;
  };
  for (int core : part.cores) {
    if (core < 0 || core / 64 >= words) continue;
    if (core / 64 != word) {
      flush();
      word = core / 64;
      mask = 0;
    }
    mask |= uint64_t{1} << (core % 64);
  }
  flush();
  node.free_memory_mb -= std::min(node.free_memory_mb, part.memory_mb);
  for (int device : part.gpus) {
    int position = GpuPosition(config, device);
    if (position < 0 || position >= 64) continue;
    if (!shares_free_.empty()) {
      uint32_t& left = shares_free_[gpu_offset_[part.node] + position];
      if (part.shares > 0) {
        left -= std::min(left, part.shares);
        ++share_jobs_[gpu_offset_[part.node] + position];
        int64_t& until = share_until_[gpu_offset_[part.node] + position];
        until = std::max(until, end);
      } else {
        left = 0;
      }
    }
    if (!((node.free_gpus >> position) & 1)) continue;
    node.free_gpus &= ~(uint64_t{1} << position);
    --node.free_gpu_count;
  }
  for (int drive : part.nvme)
    if (drive >= 0 && drive < 64) node.free_nvme &= ~(uint64_t{1} << drive);
  ++node.jobs;
  Index(part.node);
}

int NodePool::CoresNeeded(int node, const NodeRequest& request) const {
  const NodeConfig& config = cluster_.nodes[node];
  if (request.exclusive) return config.cores();
  int threads = std::max(config.threads_per_core, 1);
  return std::max(1, (request.cpus + threads - 1) / threads);
}

int NodePool::ShareableCores(int node, int share) const {
  const uint8_t* uses = core_uses_.data() + size_t{nodes_[node].core_offset} * 64;
  return static_cast<int>(std::count_if(uses, uses + cluster_.nodes[node].cores(),
                                        [share](uint8_t used) { return used < share; }));
}

int NodePool::AvailableCores(int node, const NodeRequest& request) const {
  if (request.share <= 1 || core_uses_.empty()) return nodes_[node].free_core_count;
  return ShareableCores(node, request.share);
}

int NodePool::planned_free_gpus(int node) const {
  int free = nodes_[node].free_gpu_count;
  if (share_jobs_.empty()) return free;
  for (uint32_t p = gpu_offset_[node]; p < gpu_offset_[node + 1]; ++p)
    free -= std::max(share_jobs_[p] - 1, 0);
  return free;
}

int64_t NodePool::free_shares(int node) const {
  if (shares_free_.empty()) return 0;
  int64_t free = 0;
  for (uint32_t p = gpu_offset_[node]; p < gpu_offset_[node + 1]; ++p) free += shares_free_[p];
  return free;
}

int NodePool::ChooseSharedGpu(int node, const NodeRequest& request) const {
  const NodeConfig& config = cluster_.nodes[node];
  if (shares_free_.empty() || config.gpu_sharing != request.share_gres) return -1;
  int best = -1;
  for (size_t p = 0; p < config.gpus.size() && p < 64; ++p) {
    uint32_t left = shares_free_[gpu_offset_[node] + p];
    if (left < request.shares ||
        (!request.gpu_type.empty() && config.gpus[p].type != request.gpu_type))
      continue;
    if (best < 0 || left < shares_free_[gpu_offset_[node] + static_cast<uint32_t>(best)])
      best = static_cast<int>(p);
  }
  return best;
}

bool NodePool::MightFit(int node, const NodeRequest& request) const {
  const Node& free = nodes_[node];
  const NodeConfig& config = cluster_.nodes[node];
  if (!free.usable || free.free_gpu_count < request.gpus) return false;
  if (request.shares > 0 && ChooseSharedGpu(node, request) < 0) return false;
  if (std::popcount(free.free_nvme) < request.nvme) return false;
  if (request.exclusive && free.jobs > 0) return false;
  if (request.max_cpus_per_node && static_cast<uint64_t>(request.cpus) > request.max_cpus_per_node)
    return false;
  if (request.cpus > config.cpus || AvailableCores(node, request) < CoresNeeded(node, request))
    return false;
  uint64_t memory = request.whole_memory ? config.real_memory_mb : request.memory_mb;
  if (free.free_memory_mb < memory) return false;
  if (request.whole_memory && free.free_memory_mb < config.real_memory_mb) return false;
  return free.free_gpu_count >= request.gpus;
}

std::optional<NodeAllocation> NodePool::Fit(int node, const NodeRequest& request) const {
  if (!MightFit(node, request)) return std::nullopt;
  const NodeConfig& config = cluster_.nodes[node];
  std::vector<int> gpu_positions = ChooseGpus(node, request);
  if (static_cast<int>(gpu_positions.size()) < request.gpus) return std::nullopt;
  NodeAllocation allocation;
  allocation.node = node;
  if (request.shares > 0) {
    int shared = ChooseSharedGpu(node, request);
    if (shared < 0) return std::nullopt;
    gpu_positions = {shared};
    allocation.shares = request.shares;
  }
  // NVMe drives: the lowest free ones (an --exclusive job gets all).
  for (size_t d = 0; d < config.nvme.size() && d < 64; ++d)
    if ((request.exclusive || static_cast<int>(allocation.nvme.size()) < request.nvme) &&
        ((nodes_[node].free_nvme >> d) & 1))
      allocation.nvme.push_back(static_cast<int>(d));
  if (request.exclusive) {
    for (int c = 0; c < config.cores(); ++c) allocation.cores.push_back(c);
    allocation.memory_mb = config.real_memory_mb;
    // A sharing job's shares are on one GPU, though it holds the node.
    for (int position : gpu_positions) allocation.gpus.push_back(config.gpus[position].index);
    if (request.shares == 0)
      for (const GpuDevice& gpu : config.gpus) allocation.gpus.push_back(gpu.index);
    std::sort(allocation.gpus.begin(), allocation.gpus.end());
    allocation.gpus.erase(std::unique(allocation.gpus.begin(), allocation.gpus.end()),
                          allocation.gpus.end());
    return allocation;
  }
  allocation.cores = ChooseCores(node, CoresNeeded(node, request), gpu_positions,
                                 request.enforce_binding, request.share);
  // enforce-binding: too few cores local to any GPUs free together (a sharing job's GPU is the
  // one its shares are on: no other group is tried)
  if (allocation.cores.empty() && !(request.enforce_binding && request.shares == 0 &&
                                    ChooseBound(node, request, gpu_positions, allocation.cores)))
    return std::nullopt;
  allocation.memory_mb = request.whole_memory ? config.real_memory_mb : request.memory_mb;
  for (int position : gpu_positions) allocation.gpus.push_back(config.gpus[position].index);
  std::sort(allocation.gpus.begin(), allocation.gpus.end());
  return allocation;
}

// --gres-flags=enforce-binding when the best-linked GPUs lack free local cores: GPUs that share
// their local cores (gres.conf Cores=, usually a socket's), group by group, until one group's
// GPUs and cores suffice.
bool NodePool::ChooseBound(int node, const NodeRequest& request, std::vector<int>& gpu_positions,
                           std::vector<int>& cores) const {
  const NodeConfig& config = cluster_.nodes[node];
  std::map<std::vector<int>, std::vector<int>> groups;  // local cores -> free GPU positions
  for (size_t p = 0; p < config.gpus.size() && p < 64; ++p)
    if (((nodes_[node].free_gpus >> p) & 1) &&
        (request.gpu_type.empty() || config.gpus[p].type == request.gpu_type))
      groups[config.gpus[p].cores].push_back(static_cast<int>(p));
  for (const auto& [local, positions] : groups) {
    if (static_cast<int>(positions.size()) < request.gpus) continue;
    std::vector<int> chosen(positions.begin(), positions.begin() + request.gpus);
    cores = ChooseCores(node, CoresNeeded(node, request), chosen, true, request.share);
    if (cores.empty()) continue;
    gpu_positions = std::move(chosen);
    return true;
  }
  return false;
}

// The free GPUs of the requested type, grown greedily from each seed by NVLink count, then
// same socket, then index; the set with the most links, fewest sockets and lowest indexes wins.
std::vector<int> NodePool::ChooseGpus(int node, const NodeRequest& request) const {
  const NodeConfig& config = cluster_.nodes[node];
  std::vector<int> candidates;
  for (size_t p = 0; p < config.gpus.size() && p < 64; ++p)
    if (((nodes_[node].free_gpus >> p) & 1) &&
        (request.gpu_type.empty() || config.gpus[p].type == request.gpu_type))
      candidates.push_back(static_cast<int>(p));
  if (request.gpus <= 0 || static_cast<int>(candidates.size()) < request.gpus) return {};
  if (static_cast<int>(candidates.size()) == request.gpus) return candidates;
  const int* socket = gpu_socket_.data() + gpu_offset_[node];
  std::vector<int> best;
  std::tuple<int, int, int> best_score{-1, 0, 0};
  for (int seed : candidates) {
    std::vector<int> chosen{seed};
    while (static_cast<int>(chosen.size()) < request.gpus) {
      int pick = -1;
      std::tuple<int, int, int> pick_score{-1, 0, 0};
      for (int c : candidates) {
        if (std::find(chosen.begin(), chosen.end(), c) != chosen.end()) continue;
        int links = 0;
        for (int member : chosen) links += Links(config, member, c);
        std::tuple<int, int, int> score{links, socket[c] == socket[seed] ? 1 : 0, -c};
        if (score > pick_score) pick_score = score, pick = c;
      }
      chosen.push_back(pick);
    }
    int links = 0;
    std::set<int> sockets;
    int index_sum = 0;
    for (size_t i = 0; i < chosen.size(); ++i) {
      sockets.insert(socket[chosen[i]]);
      index_sum += chosen[i];
      for (size_t j = i + 1; j < chosen.size(); ++j) links += Links(config, chosen[i], chosen[j]);
    }
    std::tuple<int, int, int> score{links, -static_cast<int>(sockets.size()), -index_sum};
    if (score > best_score) best_score = score, best = chosen;
  }
  std::sort(best.begin(), best.end());
  return best;
}

namespace {

// Whether every chosen GPU says which cores are local to it (gres.conf Cores=): only then can
// --gres-flags=enforce-binding bind anything.
bool BindingKnown(const NodeConfig& config, const std::vector<int>& gpu_positions) {
  return !gpu_positions.empty() &&
         std::all_of(gpu_positions.begin(), gpu_positions.end(),
                     [&](int position) { return !config.gpus[position].cores.empty(); });
}

// Each GPU's local cores in turn, one at a time, so that every GPU gets some while any are free.
template <typename Take>
void TakeLocalInTurn(const NodeConfig& config, const std::vector<int>& gpu_positions, Take take) {
  std::vector<size_t> next(gpu_positions.size(), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t g = 0; g < gpu_positions.size(); ++g) {
      const std::vector<int>& local = config.gpus[gpu_positions[g]].cores;
      while (next[g] < local.size() && !take(local[next[g]])) ++next[g];
      progress = progress || next[g] < local.size();
      if (next[g] < local.size()) ++next[g];
    }
  }
}

}  // namespace

// Cores local to the chosen GPUs first; then the socket with the fewest free cores that still
// holds the rest (keeping whole sockets free), else sockets in order.
std::vector<int> NodePool::ChooseCores(int node, int count, const std::vector<int>& gpu_positions,
                                       bool enforce_binding, int share) const {
  const NodeConfig& config = cluster_.nodes[node];
  const uint64_t* bits = CoreBits(node);
  std::vector<uint64_t> free(bits, bits + (config.cores() + 63) / 64);
  std::vector<int> chosen;
  auto take = [&](int core) {
    if (static_cast<int>(chosen.size()) >= count || core >= config.cores() ||
        !TestBit(free.data(), core))
      return false;
    ClearBit(free.data(), core);
    chosen.push_back(core);
    return true;
  };
  if (enforce_binding && BindingKnown(config, gpu_positions)) {
    TakeLocalInTurn(config, gpu_positions, take);
    if (share > 1 && !core_uses_.empty()) {
      // Idle local cores first, then shared local ones.
      const uint8_t* uses = core_uses_.data() + size_t{nodes_[node].core_offset} * 64;
      TakeLocalInTurn(config, gpu_positions, [&](int core) {
        if (static_cast<int>(chosen.size()) >= count || core >= config.cores() || uses[core] == 0 ||
            uses[core] >= share || std::find(chosen.begin(), chosen.end(), core) != chosen.end())
          return false;
        chosen.push_back(core);
        return true;
      });
    }
    bool each = std::all_of(gpu_positions.begin(), gpu_positions.end(), [&](int position) {
      const std::vector<int>& local = config.gpus[position].cores;
      return std::any_of(chosen.begin(), chosen.end(), [&](int core) {
        return std::find(local.begin(), local.end(), core) != local.end();
      });
    });
    if (static_cast<int>(chosen.size()) < count || !each) return {};
    std::sort(chosen.begin(), chosen.end());
    return chosen;
  }
  for (int position : gpu_positions)
    for (int core : config.gpus[position].cores) take(core);
  int per_socket = std::max(config.cores_per_socket, 1);
  int sockets = config.cores() / per_socket;
  while (static_cast<int>(chosen.size()) < count) {
    int remaining = count - static_cast<int>(chosen.size());
    int best_socket = -1, best_free = 0;
    for (int s = 0; s < sockets; ++s) {
      int socket_free = 0;
      for (int c = s * per_socket; c < (s + 1) * per_socket; ++c)
        socket_free += TestBit(free.data(), c);
      if (socket_free == 0) continue;
      bool suffices = socket_free >= remaining;
      bool best_suffices = best_free >= remaining;
      if (best_socket < 0 || (suffices && (!best_suffices || socket_free < best_free)) ||
          (!suffices && !best_suffices && socket_free > best_free)) {
        best_socket = s;
        best_free = socket_free;
      }
    }
    if (best_socket < 0) break;
    for (int c = best_socket * per_socket; c < (best_socket + 1) * per_socket; ++c) take(c);
  }
  if (static_cast<int>(chosen.size()) < count && share > 1 && !core_uses_.empty())
    TakeShared(node, count, chosen, share);
  if (static_cast<int>(chosen.size()) < count) return {};
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

// Busy cores that sharing jobs hold, fewest jobs first (then lowest index), until `count`.
void NodePool::TakeShared(int node, int count, std::vector<int>& chosen, int share) const {
  const uint8_t* uses = core_uses_.data() + size_t{nodes_[node].core_offset} * 64;
  std::vector<std::pair<uint8_t, int>> shared;
  for (int core = 0; core < cluster_.nodes[node].cores(); ++core)
    if (uses[core] > 0 && uses[core] < share) shared.emplace_back(uses[core], core);
  std::sort(shared.begin(), shared.end());
  for (const auto& [used, core] : shared) {
    if (static_cast<int>(chosen.size()) >= count) break;
    chosen.push_back(core);
  }
}

}  // namespace drover::sched
