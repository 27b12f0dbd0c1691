// The pass; see scheduler.h and pass.h. Per job: eligibility (hold, begin time, dependencies,
// its advance reservation), then each of its partitions in turn: state, partition limits, QOS
// and association limits, FIFO's block, and placement now — best-fit on one node, or
// topology-aware over the candidates that can each hold the per-node share, never where the
// plan has promised the resources to someone else. A job that waits for resources is then
// planned ahead (pass_plan.cc).
#include "sched/scheduler.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <map>
#include <optional>
#include <span>

#include "common/accounting.h"
#include "sched/billing.h"
#include "sched/dependency.h"
#include "sched/pass.h"
#include "sched/placement.h"

namespace drover::sched {
namespace {

std::vector<int> JobPartitions(const ClusterConfig& cluster, const JobSpec& job) {
  std::vector<int> partitions;
  for (const std::string& name : job.partitions)
    if (int p = cluster.FindPartition(name); p >= 0) partitions.push_back(p);
  if (job.partitions.empty() && cluster.DefaultPartition() >= 0)
    partitions.push_back(cluster.DefaultPartition());
  return partitions;
}

// Whether the partition has enough nodes with each counted feature ("a100*2") at all.
bool CountsPossible(const ClusterConfig& cluster, int p, const Constraint& constraint) {
  std::vector<const std::vector<std::string>*> features;
  for (int node : cluster.partitions[p].nodes) features.push_back(&cluster.nodes[node].features);
  return constraint.CountsMet(features);
}

// --contiguous: the first run of `count` consecutive node indexes among the candidates.
std::optional<std::vector<int>> ContiguousRun(std::vector<int> candidates, int count) {
  std::sort(candidates.begin(), candidates.end());
  size_t start = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (i > 0 && candidates[i] != candidates[i - 1] + 1) start = i;
    if (static_cast<int>(i - start + 1) == count)
      return std::vector<int>(candidates.begin() + static_cast<std::ptrdiff_t>(start),
                              candidates.begin() + static_cast<std::ptrdiff_t>(i + 1));
  }
  return std::nullopt;
}

std::optional<std::vector<int>> FirstNodes(const std::vector<int>& candidates, int count) {
  if (static_cast<int>(candidates.size()) < count) return std::nullopt;
  return std::vector<int>(candidates.begin(), candidates.begin() + count);
}

// The most CPUs the request could have on the node: with --gres-flags=enforce-binding and GPUs
// whose local cores gres.conf names, only those cores.
int BindableCpus(const NodeConfig& config, const NodeRequest& request) {
  if (!request.enforce_binding || request.gpus == 0) return config.cpus;
  std::vector<char> local(static_cast<size_t>(config.cores()), 0);
  for (const GpuDevice& gpu : config.gpus) {
    if (!request.gpu_type.empty() && gpu.type != request.gpu_type) continue;
    if (gpu.cores.empty()) return config.cpus;  // no binding known: any core
    for (int core : gpu.cores)
      if (core >= 0 && core < config.cores()) local[static_cast<size_t>(core)] = 1;
  }
  return static_cast<int>(std::count(local.begin(), local.end(), 1)) *
         std::max(config.threads_per_core, 1);
}

// --gpus=N over several nodes: each node was placed with N / nodes rounded up; the GPUs beyond
// N come off the last nodes again (--gpus=13 on two nodes: 7 and 6), so the job holds what it
// asked for, at least one GPU on each node.
void TrimToJobGpus(const JobSpec& job, Allocation& allocation) {
  if (job.gpus == 0 || job.gpus_per_node || job.gpus_per_task || allocation.exclusive) return;
  size_t held = 0;
  for (const NodeAllocation& part : allocation.nodes) held += part.shares ? 0 : part.gpus.size();
  for (auto part = allocation.nodes.rbegin(); part != allocation.nodes.rend(); ++part)
    while (held > job.gpus && part->shares == 0 && part->gpus.size() > 1) {
      part->gpus.pop_back();
      --held;
    }
}

// Whether the job's memory is so much per CPU (--mem-per-cpu, else DefMemPerCPU), as
// MemoryPerNode (request.cc) chose it.
bool MemoryByCpu(const ClusterConfig& cluster, const JobSpec& job, const PartitionConfig& partition,
                 const NodeRequest& need) {
  if (job.mem_per_node_mb || need.whole_memory) return false;
  if (job.mem_per_cpu_mb) return true;
  if (job.mem_per_gpu_mb) return false;
  if (need.gpus > 0 && partition.def_mem_per_gpu_mb.value_or(cluster.settings.def_mem_per_gpu_mb))
    return false;
  return partition.def_mem_per_cpu_mb.value_or(cluster.settings.def_mem_per_cpu_mb) > 0;
}

// -n N over several nodes without --ntasks-per-node: each node was placed with N / nodes
// tasks' CPUs rounded up; the cores beyond the tasks' come off the last nodes again (-n 5 -N 2:
// three tasks' CPUs and two, as Slurm's block layout holds them), at least one task's on each
// node, with memory given per CPU going with them.
void TrimToJobTasks(const ClusterConfig& cluster, const JobSpec& job, const NodeRequest& need,
                    bool memory_by_cpu, Allocation& allocation) {
  if (job.ntasks_per_node || job.overcommit || job.min_cpus_per_node || job.gpus_per_task ||
      allocation.exclusive || allocation.nodes.size() < 2)
    return;
  uint64_t per_task = std::max<uint32_t>(job.cpus_per_task, 1);
  // CPUs raised by something else than the tasks (--cpus-per-gpu, DefCpuPerGPU) stay.
  uint64_t nodes = allocation.nodes.size();
  if (static_cast<uint64_t>(need.cpus) != (job.ntasks + nodes - 1) / nodes * per_task) return;
  uint64_t needed = uint64_t{job.ntasks} * per_task, held = 0;
  for (const NodeAllocation& part : allocation.nodes)
    held += part.cores.size() *
            static_cast<uint64_t>(std::max(cluster.nodes[part.node].threads_per_core, 1));
  for (auto part = allocation.nodes.rbegin(); part != allocation.nodes.rend(); ++part) {
    uint64_t threads =
        static_cast<uint64_t>(std::max(cluster.nodes[part->node].threads_per_core, 1));
    size_t least = static_cast<size_t>((per_task + threads - 1) / threads);
    size_t before = part->cores.size();
    while (held >= needed + threads && part->cores.size() > least) {
      part->cores.pop_back();
      held -= threads;
    }
    if (memory_by_cpu && before > 0)
      part->memory_mb = part->memory_mb / before * part->cores.size();
  }
}

// How many nodes of partition `p` could hold the per-node request if they were idle, counted up
// to `enough` (the count is exact when it is below): a job that fits reads only the nodes it
// needs, not every node's GPU records.
int NodesEverFitting(const ClusterConfig& cluster, const JobSpec& job, int p,
                     const ResolvedRequest& r, const Constraint& constraint, int enough) {
  int fitting = 0;
  for (int node : cluster.partitions[p].nodes) {
    if (fitting >= enough) break;
    const NodeConfig& config = cluster.nodes[node];
    int gpus = 0;
    for (const GpuDevice& gpu : config.gpus)
      gpus += r.per_node.gpu_type.empty() || gpu.type == r.per_node.gpu_type;
    fitting += constraint.NodeMatches(config.features) && NodeShapeFits(job, config) &&
               r.per_node.cpus <= BindableCpus(config, r.per_node) && gpus >= r.per_node.gpus &&
               HasGresFor(config, r.per_node) && r.per_node.memory_mb <= config.real_memory_mb;
  }
  return fitting;
}

}  // namespace

Pass::Pass(const SchedulerInput& input)
    : in_(input),
      cluster_(*input.cluster),
      policy_(PolicyFor(cluster_.settings, input.policy)),
      pool_(StartingPool(input)),
      planner_(cluster_, input.now),
      limits_(input.associations, input.qos, input.safe_limits),
      blocked_(cluster_.partitions.size(), false),
      member_(cluster_.partitions.size(), std::vector<char>(cluster_.nodes.size(), 0)),
      own_most_(MaximaKept(input) ? std::vector<NodeMaxima>() : MaximaOfPartitions(cluster_)),
      most_(MaximaKept(input) ? *input.maxima : own_most_) {
  for (size_t p = 0; p < cluster_.partitions.size(); ++p)
    for (int node : cluster_.partitions[p].nodes) member_[p][node] = 1;
  associations_.reserve(input.associations.size());
  for (size_t a = 0; a < input.associations.size(); ++a)
    if (!input.associations[a].user.empty())
      associations_.emplace(std::pair<std::string_view, std::string_view>(
                                input.associations[a].account, input.associations[a].user),
                            static_cast<int>(a));
  for (size_t r = 0; r < input.reservations.size(); ++r)
    reservations_.emplace(input.reservations[r].name, static_cast<int>(r));
  for (const LicenseCount& license : cluster_.settings.licenses)
    licenses_free_[license.name] = license.count;
}

bool Pass::LicensesFree(const std::vector<LicenseCount>& wanted) const {
  return std::all_of(wanted.begin(), wanted.end(), [&](const LicenseCount& license) {
    auto it = licenses_free_.find(license.name);
    return it != licenses_free_.end() && it->second >= license.count;
  });
}

// A running job may hold a license the configuration no longer has: it counts against nothing.
void Pass::TakeLicenses(const std::vector<LicenseCount>& wanted) {
  for (const LicenseCount& license : wanted)
    if (auto it = licenses_free_.find(license.name); it != licenses_free_.end())
      it->second -= license.count;
}

int Pass::PartitionQos(int partition) const {
  if (partition < 0 || static_cast<size_t>(partition) >= cluster_.partitions.size()) return -1;
  const std::string& name = cluster_.partitions[partition].qos;
  return name.empty() ? -1 : std::max(limits_.FindQos(name), -1);
}

JobUsage Pass::Billed(JobUsage usage, int partition, const std::string& gpu_type) const {
  static const std::vector<std::pair<std::string, double>> kNone;
  bool known = partition >= 0 && static_cast<size_t>(partition) < cluster_.partitions.size();
  double billing =
      BillingOf(known ? cluster_.partitions[partition].billing_weights : kNone, usage, gpu_type);
  usage.billing = static_cast<uint64_t>(std::ceil(billing));
  return usage;
}

int Pass::Association(const std::string& account, const std::string& user) const {
  auto it = associations_.find({account, user});
  return it == associations_.end() ? -1 : it->second;
}

bool Pass::MaximaKept(const SchedulerInput& input) {
  return input.maxima && input.maxima->size() == input.cluster->partitions.size();
}

bool Pass::PoolKept(const SchedulerInput& input) {
  return input.running_pool && input.running_pool->ready() &&
         &input.running_pool->pool().cluster() == input.cluster &&
         input.running_pool->pool().size() == input.cluster->nodes.size() &&
         input.running_pool->size() == input.running.size();
}

NodePool Pass::StartingPool(const SchedulerInput& input) {
  if (PoolKept(input)) return input.running_pool->pool();
  return NodePool(*input.cluster, input.node_states);
}

void Pass::TakeRunning() {
  bool kept = PoolKept(in_);
  for (size_t i = 0; i < in_.running.size(); ++i) {
    const RunningJob& job = in_.running[i];
    if (!kept) pool_.Take(job.held(), SharesCores(cluster_, job), job.end_time);
    const JobUsage* usage = kept ? in_.running_pool->UsageOf(i, job.job_id) : nullptr;
    limits_.Add(job.user, job.account, job.array_job_id, limits_.FindQos(job.qos),
                PartitionQos(job.partition), Association(job.account, job.user),
                Billed(usage ? *usage : UsageOf(cluster_, job.held()), job.partition, ""),
                job.end_time >= kUnlimitedSeconds ? kUnlimitedSeconds : job.end_time - in_.now);
    if (!job.name.empty() && !first_pending_.empty())
      running_names_.insert(job.user + "\n" + job.name);
    if (job.licenses.empty()) continue;
    if (Result<std::vector<LicenseCount>> held = ParseLicenses(job.licenses)) TakeLicenses(*held);
  }
}

void Pass::IndexSingletons() {
  for (const JobSpec* job : in_.pending) {
    bool singleton =
        std::any_of(job->dependency.terms.begin(), job->dependency.terms.end(),
                    [](const auto& t) { return t.type == DependencyType::kSingleton; });
    if (!singleton) continue;
    auto [it, inserted] = first_pending_.emplace(job->user + "\n" + job->name, job->job_id);
    if (!inserted) it->second = std::min(it->second, job->job_id);
  }
}

// Priorities are computed into result.priorities in input order, then the candidates sorted and
// the factors permuted into priority order in place: no second copy of 100,000 records.
std::vector<Pass::Candidate> Pass::Prioritise(SchedulerResult& result) {
  result.fair_share = cluster_.settings.fair_tree() ? ComputeFairTree(in_.associations)
                                                    : ComputeClassicFairShare(in_.associations);
  PriorityCalculator calculator(cluster_, in_.associations, result.fair_share, in_.qos, in_.now,
                                in_.totals);
  std::vector<Candidate> order;
  order.reserve(in_.pending.size());
  result.priorities.clear();
  first_partition_.resize(in_.pending.size());
  for (uint32_t i = 0; i < in_.pending.size(); ++i) {
    const JobSpec& job = *in_.pending[i];
    int partition = job.partitions.empty() ? cluster_.DefaultPartition()
                                           : cluster_.FindPartition(job.partitions.front());
    first_partition_[i] = partition;
    result.priorities.push_back(calculator.Compute(job, partition));
    order.push_back({TierOf(partition), result.priorities.back().priority, job.submit_time,
                     job.job_id, i, Association(job.account, job.user)});
  }
  // As Slurm: a partition of a higher PriorityTier is served first.
  std::sort(order.begin(), order.end(), [](const Candidate& a, const Candidate& b) {
    if (a.tier != b.tier) return a.tier > b.tier;
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.submit_time != b.submit_time) return a.submit_time < b.submit_time;
    return a.job_id < b.job_id;
  });
  // Position k of the output takes input record order[k].index: follow each cycle once.
  std::vector<uint32_t> source(order.size());
  for (size_t k = 0; k < order.size(); ++k) source[k] = order[k].index;
  result.priority_of_input.resize(order.size());
  for (size_t k = 0; k < order.size(); ++k)
    result.priority_of_input[source[k]] = static_cast<uint32_t>(k);
  for (size_t start = 0; start < source.size(); ++start) {
    if (source[start] == start || source[start] == UINT32_MAX) continue;
    PriorityFactors first = std::move(result.priorities[start]);
    size_t k = start;
    while (source[k] != start) {
      result.priorities[k] = std::move(result.priorities[source[k]]);
      size_t next = source[k];
      source[k] = UINT32_MAX;
      k = next;
    }
    result.priorities[k] = std::move(first);
    source[k] = UINT32_MAX;
  }
  return order;
}

uint32_t Pass::TierOf(int partition) const {
  return partition >= 0 ? cluster_.partitions[partition].priority_tier : 0;
}

void Pass::Run(SchedulerResult& result) {
  result.started.clear();
  result.pending.clear();
  result.planned.clear();
  result.preempted.clear();
  IndexSingletons();  // before TakeRunning: without singletons, running names are not needed
  TakeRunning();
  BuildPlanner();
  std::vector<Candidate> order = Prioritise(result);
  result.pending.reserve(order.size());
  for (const Candidate& candidate : order) {
    PendingReason reason = Decide(candidate, result);
    if (reason != PendingReason::kNone) result.pending.push_back({candidate.job_id, reason});
  }
}

PendingReason Pass::Eligibility(const JobSpec& job) const {
  if (job.hold == HoldKind::kUser) return PendingReason::kJobHeldUser;
  if (job.hold == HoldKind::kAdmin) return PendingReason::kJobHeldAdmin;
  if (!job.dependency.empty()) {
    std::string key = job.user + "\n" + job.name;
    auto first = first_pending_.find(key);
    bool singleton_blocked = running_names_.count(key) > 0 ||
                             (first != first_pending_.end() && first->second < job.job_id);
    switch (EvaluateDependencies(job, in_.outcomes, in_.now, singleton_blocked)) {
      case DependencyStatus::kWaiting:
        return PendingReason::kDependency;
      case DependencyStatus::kNeverSatisfied:
        return PendingReason::kDependencyNeverSatisfied;
      case DependencyStatus::kSatisfied:
        break;
    }
  }
  if (job.begin_time > in_.now) return PendingReason::kBeginTime;
  return PendingReason::kNone;
}

PendingReason Pass::Decide(const Candidate& candidate, SchedulerResult& result) {
  const JobSpec& job = *in_.pending[candidate.index];
  if (PendingReason reason = Eligibility(job); reason != PendingReason::kNone) return reason;
  auto constraint = ParseConstraint(job.constraint);
  if (!constraint) return PendingReason::kBadConstraints;
  std::optional<InReservation> reservation;
  if (PendingReason reason = ReservationOf(job, reservation); reason != PendingReason::kNone)
    return reason;
  const InReservation* in = reservation ? &*reservation : nullptr;
  // Slurm tests licenses before resources: a job short of them waits with Licenses.
  Result<std::vector<LicenseCount>> licenses = ParseLicenses(job.licenses);
  if (!licenses) return PendingReason::kBadConstraints;
  if (!LicensesFree(*licenses)) return PendingReason::kLicenses;
  if (PendingReason reason = JobFeatures(job); reason != PendingReason::kNone) return reason;
  // Most jobs name one partition: no list is built for them.
  int single[1] = {first_partition_[candidate.index]};
  std::vector<int> several;
  if (job.partitions.size() > 1) several = JobPartitions(cluster_, job);
  std::span<const int> partitions =
      several.empty() ? std::span<const int>(single, 1) : std::span<const int>(several);
  if (partitions.front() < 0) return PendingReason::kBadConstraints;
  PendingReason first = PendingReason::kNone;
  bool resources = false;
  std::vector<Attempt> blocked;  // the partitions where only resources stood in the way
  for (int partition : partitions) {
    PendingReason reason =
        TryPartition(job, partition, candidate.association, *constraint, in, result, blocked);
    if (reason == PendingReason::kNone) {
      if (!job.name.empty() && !first_pending_.empty())
        running_names_.insert(job.user + "\n" + job.name);
      TakeLicenses(*licenses);
      result.started.back().priority = candidate.priority;
      return reason;
    }
    if (first == PendingReason::kNone) first = reason;
    resources = resources || reason == PendingReason::kResources;
  }
  if (!blocked.empty() && (policy_.backfill() || preemptor_))
    PlanAhead(job, *constraint, in, blocked, result);
  return resources ? PendingReason::kResources : first;
}

// --prefer and --batch, parsed once for the job being decided (checked at submission).
PendingReason Pass::JobFeatures(const JobSpec& job) {
  prefer_.reset();
  batch_.reset();
  for (auto [text, parsed] : {std::pair{&job.prefer, &prefer_}, {&job.batch_features, &batch_}}) {
    if (text->empty()) continue;
    Result<Constraint> constraint = ParseConstraint(*text);
    if (!constraint) return PendingReason::kBadConstraints;
    *parsed = std::move(*constraint);
  }
  return PendingReason::kNone;
}

PendingReason Pass::TryPartition(const JobSpec& job, int p, int association,
                                 const Constraint& constraint, const InReservation* reservation,
                                 SchedulerResult& result, std::vector<Attempt>& blocked) {
  const PartitionConfig& partition = cluster_.partitions[p];
  if (partition.state == PartitionState::kDown) return PendingReason::kPartitionDown;
  if (partition.state == PartitionState::kInactive) return PendingReason::kPartitionInactive;
  ResolvedRequest r = ResolveRequest(cluster_, job, partition, most_[p]);
  // A QOS with PartitionMaxNodes, PartitionMinNodes or PartitionTimeLimit lifts that limit.
  int qos = limits_.FindQos(job.qos);
  uint32_t flags = qos >= 0 ? in_.qos[qos].flags : 0;
  if ((static_cast<uint64_t>(r.nodes) > partition.max_nodes &&
       !(flags & acct::kPartitionMaxNodes)) ||
      (static_cast<uint64_t>(r.nodes) < partition.min_nodes &&
       !(flags & acct::kPartitionMinNodes)) ||
      static_cast<size_t>(r.nodes) > partition.nodes.size())
    return PendingReason::kPartitionNodeLimit;
  if (!(flags & acct::kPartitionTimeLimit) && r.time_limit_seconds > partition.max_time_seconds)
    return PendingReason::kPartitionTimeLimit;
  LimitRequest limited;
  limited.total = Billed({r.total_cpus, r.total_gpus, static_cast<uint64_t>(r.nodes),
                          r.per_node.memory_mb * r.nodes, 0},
                         p, job.gpu_type);
  limited.per_node = {static_cast<uint64_t>(r.per_node.cpus),
                      static_cast<uint64_t>(r.per_node.gpus), 1, r.per_node.memory_mb, 0};
  limited.per_node.billing = limited.total.billing / std::max(r.nodes, 1);
  limited.time_limit_seconds = r.time_limit_seconds;
  if (association >= 0 && static_cast<size_t>(association) < result.fair_share.factor.size())
    limited.fair_share = result.fair_share.factor[association];
  if (PendingReason reason = limits_.Check(job, qos, PartitionQos(p), association, limited);
      reason != PendingReason::kNone)
    return reason;
  if (!policy_.backfill() && blocked_[p]) return PendingReason::kPriority;
  int64_t end = AddTime(in_.now, r.time_limit_seconds);
  const AdvanceReservation* window = reservation ? reservation->reservation : nullptr;
  if (window && !window->flex && in_.now < window->start_time) {
    blocked.push_back({p, r});  // its reservation has not begun: the plan says when it can
    return PendingReason::kReservation;
  }
  std::optional<Allocation> allocation;
  if (!window || window->flex || end <= window->end_time)
    allocation = PlaceNow(job, p, r, constraint, reservation, end);
  if (!allocation) {
    // A --spread-job job can run on as few nodes as it may have.
    ResolvedRequest least = job.spread_job ? ResolveLeast(cluster_, job, partition, most_[p]) : r;
    if (!EverFits(job, p, least, constraint)) return PendingReason::kBadConstraints;
    for (const std::string& name : job.nodelist)
      if (int node = cluster_.FindNode(name); node >= 0 && !pool_.usable(node))
        return PendingReason::kReqNodeNotAvail;
    PendingReason reason = blocked_[p] ? PendingReason::kPriority : PendingReason::kResources;
    blocked_[p] = true;
    blocked.push_back({p, r});
    return reason;
  }
  TrimToJobGpus(job, *allocation);
  TrimToJobTasks(cluster_, job, r.per_node, MemoryByCpu(cluster_, job, partition, r.per_node),
                 *allocation);
  std::vector<int> nodes;
  for (const NodeAllocation& part : allocation->nodes) nodes.push_back(part.node);
  pool_.Take(*allocation, r.per_node.share > 1, end);
  planner_.Take(nodes, r.per_node, in_.now, end);
  limits_.Add(job.user, job.account, job.array_job_id, qos, PartitionQos(p), association,
              Billed(UsageOf(cluster_, *allocation), p, job.gpu_type), r.time_limit_seconds);
  int64_t limit_end = r.time_limit_seconds >= kUnlimitedSeconds - in_.now
                          ? kUnlimitedSeconds
                          : in_.now + r.time_limit_seconds;
  int batch_node = BatchNode(*allocation);
  // A job of this partition ahead of it is still blocked: it starts out of order, by backfill.
  result.started.push_back({job.job_id, p, std::move(*allocation), r.time_limit_seconds, limit_end,
                            0, batch_node, blocked_[p] != 0});
  return PendingReason::kNone;
}

// --prefer's features first, in place of --constraint's (as Slurm 22.05), then --constraint's.
std::optional<Allocation> Pass::PlaceNow(const JobSpec& job, int p, ResolvedRequest& r,
                                         const Constraint& constraint,
                                         const InReservation* reservation, int64_t end) const {
  if (prefer_)
    if (auto allocation = PlaceSpread(job, p, r, *prefer_, reservation, end)) return allocation;
  return PlaceSpread(job, p, r, constraint, reservation, end);
}

// A --spread-job job takes as many nodes as it may; when that many are not free, as many as
// hold a share of it now, else its minimum (`r` becomes the request it starts with).
std::optional<Allocation> Pass::PlaceSpread(const JobSpec& job, int p, ResolvedRequest& r,
                                            const Constraint& constraint,
                                            const InReservation* reservation, int64_t end) const {
  if (auto allocation = Place(job, p, r, constraint, reservation, end)) return allocation;
  if (!job.spread_job) return std::nullopt;
  const PartitionConfig& partition = cluster_.partitions[p];
  int minimum = ResolveLeast(cluster_, job, partition, most_[p]).nodes;
  if (r.nodes <= minimum) return std::nullopt;
  int holding = 0;
  for (int node : partition.nodes)
    holding += pool_.MightFit(node, r.per_node) && Allowed(job, p, constraint, node);
  for (int count : {std::min(holding, r.nodes - 1), minimum}) {
    if (count < minimum) continue;
    ResolvedRequest fewer = ResolveOnNodes(cluster_, job, partition, count);
    if (auto allocation = Place(job, p, fewer, constraint, reservation, end)) {
      r = fewer;
      return allocation;
    }
  }
  return std::nullopt;
}

bool Pass::BatchMatches(int node) const {
  return !batch_ || batch_->NodeMatches(cluster_.nodes[node].features);
}

// --batch: when no chosen node has the batch features, the last one not named by the job
// gives way to the best candidate that has them. Without one the script runs on the first node
// (sbatch(1)).
void Pass::WithBatchNode(const std::vector<int>& required, const std::vector<int>& candidates,
                         std::vector<int>& chosen) const {
  if (!batch_ ||
      std::any_of(chosen.begin(), chosen.end(), [&](int node) { return BatchMatches(node); }))
    return;
  auto listed = [](const std::vector<int>& nodes, int node) {
    return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
  };
  auto with = std::find_if(candidates.begin(), candidates.end(),
                           [&](int node) { return BatchMatches(node) && !listed(chosen, node); });
  auto yielding = std::find_if(chosen.rbegin(), chosen.rend(),
                               [&](int node) { return !listed(required, node); });
  if (with != candidates.end() && yielding != chosen.rend()) *yielding = *with;
}

int Pass::BatchNode(const Allocation& allocation) const {
  if (!batch_) return -1;
  for (const NodeAllocation& part : allocation.nodes)
    if (BatchMatches(part.node)) return part.node;
  return -1;
}

bool Pass::Allowed(const JobSpec& job, int partition, const Constraint& constraint,
                   int node) const {
  if (!member_[partition][node]) return false;
  if (!constraint.NodeMatches(cluster_.nodes[node].features)) return false;
  if (!NodeShapeFits(job, cluster_.nodes[node])) return false;
  const std::string& name = cluster_.nodes[node].name;
  return std::find(job.exclude.begin(), job.exclude.end(), name) == job.exclude.end();
}

int Pass::MaxLeaves(const JobSpec& job) const {
  if (job.switches == 0) return 0;
  int64_t limit = cluster_.settings.scheduler_params.max_switch_wait_seconds;
  int64_t wait = job.switch_wait_seconds >= 0 ? std::min(job.switch_wait_seconds, limit) : limit;
  int64_t eligible = std::max(job.submit_time, job.begin_time);
  return in_.now - eligible >= wait ? 0 : static_cast<int>(job.switches);
}

std::optional<Allocation> Pass::PlaceOnNodes(const std::vector<int>& nodes,
                                             const ResolvedRequest& r) const {
  Allocation allocation;
  allocation.exclusive = r.per_node.exclusive;
  for (int node : nodes) {
    auto fit = pool_.Fit(node, r.per_node);
    if (!fit) return std::nullopt;
    allocation.nodes.push_back(std::move(*fit));
  }
  return allocation;
}

std::optional<Allocation> Pass::Place(const JobSpec& job, int p, const ResolvedRequest& r,
                                      const Constraint& constraint,
                                      const InReservation* reservation, int64_t end) const {
  if (pool_.CountWithFreeGpus(r.per_node.gpus) < r.nodes) return std::nullopt;
  int tag = reservation ? reservation->tag : 0;
  // The partition's nodes that match, inside the job's reservation if it has one, where the
  // plan has promised nothing that the job would be in the way of before its end.
  auto allowed = [&](int node) {
    if (!Allowed(job, p, constraint, node)) return false;
    if (reservation && !ReservationNode(*reservation, node)) return false;
    if (!planner_.HasTakes(node)) return true;
    if (!planner_.Fits(node, planner_.NeedOn(node, r.per_node), in_.now, end, tag)) return false;
    if (r.per_node.shares == 0 || r.per_node.exclusive) return true;
    // A sharing job keeps its GPU from being whole: from now on when it cuts a whole GPU, or
    // from when the GPU's other sharers are gone, it must not take a GPU the plan promised.
    int gpu = pool_.ChooseSharedGpu(node, r.per_node);
    if (gpu < 0) return false;
    int64_t from = std::max(pool_.shared_until(node, gpu), in_.now);
    Amount one_gpu;
    one_gpu.gpus = 1;
    return from >= end || planner_.Fits(node, one_gpu, from, end, tag);
  };
  bool counted = std::any_of(constraint.terms.begin(), constraint.terms.end(),
                             [](const Constraint::Term& t) { return t.count > 0; });
  // A partition much smaller than the cluster is searched through its own nodes.
  const std::vector<int>& members = cluster_.partitions[p].nodes;
  const bool narrow = members.size() * 4 < pool_.size();
  auto find_single = [&](auto accept) {
    return narrow ? pool_.FindSingleNodeAmong(members, r.per_node, accept)
                  : pool_.FindSingleNode(r.per_node, accept);
  };
  if (r.nodes == 1 && job.nodelist.empty() && !counted) {
    std::optional<NodeAllocation> fit;
    if (batch_) fit = find_single([&](int node) { return BatchMatches(node) && allowed(node); });
    if (!fit) fit = find_single(allowed);
    if (!fit) return std::nullopt;
    Allocation allocation;
    allocation.exclusive = r.per_node.exclusive;
    allocation.nodes.push_back(std::move(*fit));
    return allocation;
  }
  std::vector<int> required;
  for (const std::string& name : job.nodelist) {
    int node = cluster_.FindNode(name);
    if (node < 0 || !allowed(node) || !pool_.MightFit(node, r.per_node)) return std::nullopt;
    required.push_back(node);
  }
  // Only nodes with enough free GPUs are looked at: on a busy GPU cluster, a few.
  std::vector<int> candidates;
  auto consider = [&](int node) {
    if (member_[p][node] && pool_.MightFit(node, r.per_node) && allowed(node) &&
        std::find(required.begin(), required.end(), node) == required.end())
      candidates.push_back(node);
  };
  if (narrow)
    pool_.ForEachWithFreeGpusAmong(members, r.per_node.gpus, consider);
  else
    pool_.ForEachWithFreeGpus(r.per_node.gpus, consider);
  // Best fit: lowest weight, then the fewest free GPUs and cores that suffice; nodes carrying
  // counted features first so the counts can be met. Keys are computed once, then sorted.
  using Key = std::tuple<int, uint32_t, int, int, int>;
  std::vector<Key> keys;
  keys.reserve(candidates.size());
  for (int node : candidates) {
    int with = 0;
    if (counted) {
      const std::vector<std::string>& features = cluster_.nodes[node].features;
      for (const auto& term : constraint.terms)
        with += term.count > 0 &&
                std::find(features.begin(), features.end(), term.feature) != features.end();
    }
    keys.emplace_back(-with, cluster_.nodes[node].weight, pool_.free_gpus(node),
                      pool_.free_cores(node), node);
  }
  std::sort(keys.begin(), keys.end());
  for (size_t i = 0; i < keys.size(); ++i) candidates[i] = std::get<4>(keys[i]);
  std::vector<int> chosen = required;
  int more = r.nodes - static_cast<int>(required.size());
  if (more > 0) {
    if (!required.empty()) {
      if (static_cast<int>(candidates.size()) < more) return std::nullopt;
      chosen.insert(chosen.end(), candidates.begin(), candidates.begin() + more);
    } else {
      // --spread-job "disables the topology/tree plugin" (sbatch(1)): the best nodes, any leaf.
      auto placed = job.contiguous ? ContiguousRun(candidates, r.nodes)
                    : job.spread_job
                        ? FirstNodes(candidates, r.nodes)
                        : ChooseNodes(cluster_, candidates,
                                      {r.nodes, MaxLeaves(job), static_cast<int>(job.segment)});
      if (!placed) return std::nullopt;
      chosen = std::move(*placed);
    }
  }
  WithBatchNode(required, candidates, chosen);
  std::sort(chosen.begin(), chosen.end());
  if (counted) {
    std::vector<const std::vector<std::string>*> features;
    for (int node : chosen) features.push_back(&cluster_.nodes[node].features);
    if (!constraint.CountsMet(features)) return std::nullopt;
  }
  return PlaceOnNodes(chosen, r);
}

// Whether enough nodes of the partition, idle, match the job: false means it can never run
// there as the cluster is configured (BadConstraints), not that it must wait.
bool Pass::EverFits(const JobSpec& job, int p, const ResolvedRequest& r,
                    const Constraint& constraint) const {
  // Built for every job a pass decides on (see ShapeFor): compiled format strings, one buffer.
  std::string key;
  key.reserve(160);  // one allocation: each piece written resizes the string
  fmt::format_to(std::back_inserter(key), FMT_COMPILE("{}|{}|{}|{}|{}|{}|{}|"), p, r.nodes,
                 r.per_node.cpus, r.per_node.gpus, r.per_node.gpu_type, r.per_node.memory_mb,
                 job.constraint);
  AppendNodeMinimums(key, job);
  fmt::format_to(std::back_inserter(key), FMT_COMPILE("|{}:{}|{}"), r.per_node.share_gres,
                 r.per_node.shares, r.per_node.nvme);
  auto [it, inserted] = ever_fits_.emplace(std::move(key), false);
  if (inserted)
    it->second = NodesEverFitting(cluster_, job, p, r, constraint, r.nodes) >= r.nodes &&
                 CountsPossible(cluster_, p, constraint);
  return it->second;
}

namespace {

Status CheckPartition(const ClusterConfig& cluster, const JobSpec& job, int p,
                      const Constraint& constraint, const NodeMaxima& most) {
  const PartitionConfig& partition = cluster.partitions[p];
  // A --spread-job job can run on as few nodes as it may have.
  ResolvedRequest r = ResolveLeast(cluster, job, partition, most);
  if (static_cast<size_t>(r.nodes) > partition.nodes.size())
    return MakeError(
        fmt::format("Node count specification invalid (partition {} has {} nodes, "
                    "the job asks for {})",
                    partition.name, partition.nodes.size(), r.nodes));
  int fitting = NodesEverFitting(cluster, job, p, r, constraint, r.nodes);
  if (fitting >= r.nodes && CountsPossible(cluster, p, constraint)) return OkStatus();
  std::string gpus =
      r.per_node.shares > 0
          ? fmt::format(", a {}GPU with {} {}",
                        r.per_node.gpu_type.empty() ? "" : r.per_node.gpu_type + " ",
                        r.per_node.shares, r.per_node.share_gres == "mps" ? "MPS units" : "shards")
      : r.per_node.gpus == 0
          ? ""
          : fmt::format(", {} {}GPUs", r.per_node.gpus,
                        r.per_node.gpu_type.empty() ? "" : r.per_node.gpu_type + " ");
  if (r.per_node.nvme > 0) gpus += fmt::format(", {} NVMe drives", r.per_node.nvme);
  return MakeError(
      fmt::format("Requested node configuration is not available (partition {} has "
                  "{} node{} with {} CPUs{}{}{}; the job needs {})",
                  partition.name, fitting, fitting == 1 ? "" : "s", r.per_node.cpus, gpus,
                  r.per_node.memory_mb ? fmt::format(", {}M memory", r.per_node.memory_mb) : "",
                  constraint.empty() ? "" : " and features " + job.constraint, r.nodes));
}

// Slurm's words for a request naming a license the cluster lacks, or more than it has.
Status CheckLicenses(const ClusterConfig& cluster, const std::string& text) {
  Result<std::vector<LicenseCount>> wanted = ParseLicenses(text);
  if (!wanted) return MakeError(fmt::format("Invalid license specification ({})", wanted.error()));
  for (const LicenseCount& license : *wanted) {
    const auto& configured = cluster.settings.licenses;
    auto it = std::find_if(configured.begin(), configured.end(),
                           [&](const LicenseCount& l) { return l.name == license.name; });
    if (it == configured.end())
      return MakeError(fmt::format(
          "Invalid license specification (no license {}; scontrol show licenses lists them)",
          license.name));
    if (license.count > it->count)
      return MakeError(
          fmt::format("Invalid license specification ({} has {} in all, the job "
                      "asks for {})",
                      license.name, it->count, license.count));
  }
  return OkStatus();
}

}  // namespace

Status CheckSatisfiable(const ClusterConfig& cluster, const JobSpec& job) {
  return CheckSatisfiable(cluster, job, MaximaOfPartitions(cluster));
}

Status CheckSatisfiable(const ClusterConfig& cluster, const JobSpec& job,
                        const std::vector<NodeMaxima>& maxima) {
  auto constraint = ParseConstraint(job.constraint);
  if (!constraint) return MakeError(constraint.error());
  for (const std::string* features : {&job.prefer, &job.batch_features})
    if (auto parsed = ParseConstraint(*features); !parsed) return MakeError(parsed.error());
  if (Status licenses = CheckLicenses(cluster, job.licenses); !licenses) return licenses;
  for (const std::string& name : job.partitions)
    if (cluster.FindPartition(name) < 0)
      return MakeError(fmt::format("invalid partition name specified ({})", name));
  std::vector<int> partitions = JobPartitions(cluster, job);
  if (partitions.empty())
    return MakeError("No partition specified or system default partition (give one with -p)");
  if (maxima.size() != cluster.partitions.size()) return CheckSatisfiable(cluster, job);
  Status last = OkStatus();
  for (int p : partitions) {
    last = CheckPartition(cluster, job, p, *constraint, maxima[p]);
    if (last.ok()) return last;
  }
  return last;
}

SchedulerResult Schedule(const SchedulerInput& input) {
  SchedulerResult result;
  Schedule(input, result);
  return result;
}

void Schedule(const SchedulerInput& input, SchedulerResult& result) {
  Pass pass(input);
  pass.Run(result);
}

}  // namespace drover::sched
