// sched_bench: scheduling passes over a generated GPU cluster: a 3-level tree (32 nodes a leaf,
// 16 leaves a spine, one core switch), nodes of 2 x 32 cores and 8 GPUs, half of the GPUs busy
// with running jobs of mixed sizes (a fifth of them in a low-tier "scavenger" partition that the
// "gpu" partition preempts), and JOBS pending jobs: 70% single-node (1-8 GPUs), the rest 2-64
// whole nodes (up to 512 GPUs), from 100 users in 10 accounts, with time limits from 10 minutes
// to 3 days; a maintenance reservation on 64 nodes starts in 6 hours.
//   MainPass/NODES/JOBS   the main pass alone, as under FIFO (part 1's figure)
//   FullCycle/NODES/JOBS  the whole cycle: priorities, main pass, EASY backfill over every
//                         pending job with its reservations and expected starts, preemption
//   FullCycleAccounting/NODES/JOBS  the same with accounting as a site runs it: 1,001
//                         associations (10 departments, 90 groups, 900 users) with GrpTRES,
//                         GrpTRESMins budgets (safe), MaxJobs and priorities, and 5 QOS with
//                         per-user, per-job, group and wall limits; jobs spread over the 900
//                         users and the QOS
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <sys/resource.h>

#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <tuple>

#include "common/cluster_config.h"
#include "common/tres.h"
#include "sched/scheduler.h"

namespace drover::sched {
namespace {

constexpr int kNodesPerLeaf = 32;
constexpr int kLeavesPerSpine = 16;

std::string Range(int first, int last) {
  return fmt::format("n[{:05d}-{:05d}]", first + 1, last + 1);
}

std::unique_ptr<ClusterConfig> MakeCluster(int nodes) {
  std::string slurm = fmt::format(
      "ClusterName=bench\nGresTypes=gpu\nTopologyPlugin=topology/tree\n"
      "PriorityType=priority/multifactor\nPriorityWeightFairshare=10000\nPriorityWeightAge=1000\n"
      "PriorityWeightJobSize=100\nPriorityWeightPartition=1000\nDefMemPerCPU=4000\n"
      "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\n"
      "NodeName={} Sockets=2 CoresPerSocket=32 RealMemory=1000000 Gres=gpu:h100:8\n"
      "PartitionName=gpu Nodes=ALL Default=YES MaxTime=7-00:00:00 PriorityTier=10\n"
      "PartitionName=scavenger Nodes=ALL MaxTime=7-00:00:00 PriorityTier=1 GraceTime=120\n",
      Range(0, nodes - 1));
  std::string topology;
  int leaves = (nodes + kNodesPerLeaf - 1) / kNodesPerLeaf;
  for (int l = 0; l < leaves; ++l)
    topology += fmt::format("SwitchName=leaf{} Nodes={}\n", l,
                            Range(l * kNodesPerLeaf, std::min(nodes, (l + 1) * kNodesPerLeaf) - 1));
  int spines = (leaves + kLeavesPerSpine - 1) / kLeavesPerSpine;
  for (int s = 0; s < spines; ++s)
    topology += fmt::format("SwitchName=spine{} Switches=leaf[{}-{}]\n", s, s * kLeavesPerSpine,
                            std::min(leaves, (s + 1) * kLeavesPerSpine) - 1);
  topology += fmt::format("SwitchName=core Switches=spine[0-{}]\n", spines - 1);
  ConfigLoad load = LoadClusterConfigText(slurm, std::nullopt, topology);
  if (!load.ok()) {
    for (const auto& e : load.diagnostics.errors()) fmt::print(stderr, "{}\n", e.ToString());
    std::abort();
  }
  return std::make_unique<ClusterConfig>(std::move(load.config));
}

struct Workload {
  std::unique_ptr<ClusterConfig> cluster;
  std::deque<JobSpec> jobs;
  SchedulerInput input;
};

// Running jobs until half of the GPUs are busy: whole-node jobs of 1-16 nodes on consecutive
// nodes, and single-node jobs of 1-4 GPUs packed onto partly used nodes.
void AddRunning(Workload& w, std::mt19937& random) {
  int nodes = static_cast<int>(w.cluster->nodes.size());
  int busy_gpus = 0, next = 0;
  uint64_t id = 1'000'000;
  while (busy_gpus < nodes * 4 && next < nodes) {
    RunningJob job;
    job.job_id = id++;
    job.user = fmt::format("u{}", random() % 100);
    job.account = fmt::format("a{}", random() % 10);
    job.start_time = w.input.now - static_cast<int64_t>(random() % 3600);
    job.end_time = w.input.now + 600 + static_cast<int64_t>(random() % 86400);
    job.partition = random() % 5 == 0 ? 1 : 0;
    if (random() % 2) {
      int span = std::min(1 + static_cast<int>(random() % 16), nodes - next);
      for (int n = 0; n < span; ++n, ++next)
        job.allocation.nodes.push_back({next, {}, 0, {0, 1, 2, 3, 4, 5, 6, 7}, 0, {}});
      job.allocation.exclusive = true;
      busy_gpus += span * 8;
    } else {
      int gpus = 1 + static_cast<int>(random() % 4);
      NodeAllocation part{next++, {}, 16000, {}, 0, {}};
      for (int g = 0; g < gpus; ++g) part.gpus.push_back(g), part.cores.push_back(g);
      job.allocation.nodes.push_back(part);
      busy_gpus += gpus;
    }
    w.input.running.push_back(std::move(job));
  }
}

void AddPending(Workload& w, int count, std::mt19937& random) {
  static constexpr uint32_t kSingleGpus[] = {1, 2, 4, 8};
  static constexpr uint32_t kNodes[] = {2, 4, 8, 16, 32, 64};
  for (int i = 0; i < count; ++i) {
    JobSpec& job = w.jobs.emplace_back();
    job.job_id = static_cast<uint64_t>(i + 1);
    int user = static_cast<int>(random() % 100);
    job.user = fmt::format("u{}", user);
    job.account = fmt::format("a{}", user % 10);
    job.submit_time = static_cast<int64_t>(random() % 86400);
    job.time_limit_seconds = 600 + static_cast<int64_t>(random() % (3 * 86400));
    if (random() % 10 < 7) {
      job.gpus_per_node = kSingleGpus[random() % 4];
      job.cpus_per_task = job.gpus_per_node * 4;
    } else {
      job.min_nodes = job.max_nodes = kNodes[random() % 6];
      job.ntasks = job.min_nodes;
      job.gpus_per_node = 8;
      job.cpus_per_task = 32;
    }
    w.input.pending.push_back(&job);
  }
}

void AddAssociations(Workload& w, std::mt19937& random) {
  auto& tree = w.input.associations;
  tree.push_back({"root", "", -1, 1, 0, {}, 0});
  for (int a = 0; a < 10; ++a)
    tree.push_back({fmt::format("a{}", a), "", 0, 1 + static_cast<uint32_t>(a % 3), 0, {}, 0});
  for (int u = 0; u < 100; ++u)
    tree.push_back({fmt::format("a{}", u % 10),
                    fmt::format("u{}", u),
                    1 + u % 10,
                    1,
                    static_cast<double>(random() % 1'000'000),
                    {},
                    0});
}

// 10 departments, 9 groups each, 10 users a group; the pending jobs move to those users.
void AddAccounting(Workload& w, std::mt19937& random) {
  auto& tree = w.input.associations;
  tree.clear();
  auto add = [&tree](std::string account, std::string user, int parent, uint32_t shares) {
    Association association;
    association.account = std::move(account);
    association.user = std::move(user);
    association.parent = parent;
    association.shares = shares;
    tree.push_back(std::move(association));
    return static_cast<int>(tree.size() - 1);
  };
  add("root", "", -1, 1);
  for (int d = 0; d < 10; ++d) {
    int dept = add(fmt::format("d{}", d), "", 0, 1 + static_cast<uint32_t>(d % 3));
    tree[dept].limits.grp_tres = *ParseTres("gres/gpu=16000");
    tree[dept].priority = d * 10;
    for (int g = 0; g < 9; ++g) {
      int group = add(fmt::format("g{}", d * 9 + g), "", dept, 1 + static_cast<uint32_t>(g % 4));
      tree[group].limits.grp_tres_mins = *ParseTres("gres/gpu=1000000000");
      tree[group].limits.grp_jobs = 400;
      tree[group].used.gpu = static_cast<double>(random() % 1'000'000'000);
      for (int u = 0; u < 10; ++u) {
        int user =
            add(fmt::format("g{}", d * 9 + g), fmt::format("u{}", (d * 9 + g) * 10 + u), group, 1);
        tree[user].usage = static_cast<double>(random() % 1'000'000);
        tree[user].limits.max_jobs = 64;
        tree[user].limits.max_wall_seconds = 7 * 86400;
      }
    }
  }
  auto qos = [&w](std::string name, uint32_t priority) -> Qos& {
    Qos& entry = w.input.qos.emplace_back();
    entry.name = std::move(name);
    entry.priority = priority;
    return entry;
  };
  qos("normal", 100).max_tres_per_user = *ParseTres("gres/gpu=64");
  Qos& high = qos("high", 1000);
  high.max_tres_per_user = *ParseTres("gres/gpu=128");
  high.limits.grp_tres = *ParseTres("gres/gpu=20000");
  Qos& low = qos("low", 10);
  low.limits.max_wall_seconds = 3 * 86400;
  low.max_jobs_per_account = 200;
  qos("scavenger", 0).limits.grp_tres_run_mins = *ParseTres("gres/gpu=1000000000");
  Qos& debug = qos("debug", 500);
  debug.limits.max_tres_per_job = *ParseTres("gres/gpu=8");
  debug.limits.max_jobs = 2;
  static const char* kQos[] = {"normal", "normal", "high", "low", "scavenger", "debug"};
  for (JobSpec& job : w.jobs) {
    int user = static_cast<int>(random() % 900);
    job.user = fmt::format("u{}", user);
    job.account = fmt::format("g{}", user / 10);
    job.qos = kQos[random() % 6];
  }
  for (RunningJob& job : w.input.running) {
    int user = static_cast<int>(random() % 900);
    job.user = fmt::format("u{}", user);
    job.account = fmt::format("g{}", user / 10);
    job.qos = kQos[random() % 6];
  }
  w.input.safe_limits = true;
}

Workload& GetWorkload(int nodes, int jobs, bool accounting = false) {
  static std::map<std::tuple<int, int, bool>, std::unique_ptr<Workload>> cache;
  auto& slot = cache[{nodes, jobs, accounting}];
  if (!slot) {
    slot = std::make_unique<Workload>();
    std::mt19937 random(42);
    slot->cluster = MakeCluster(nodes);
    slot->input.cluster = slot->cluster.get();
    slot->input.now = 100'000;
    AddRunning(*slot, random);
    AddPending(*slot, jobs, random);
    AddAssociations(*slot, random);
    if (accounting) AddAccounting(*slot, random);
    AdvanceReservation maintenance;
    maintenance.name = "maint";
    maintenance.start_time = slot->input.now + 6 * 3600;
    maintenance.end_time = maintenance.start_time + 4 * 3600;
    maintenance.maint = true;
    for (int n = nodes - 64; n < nodes; ++n) maintenance.nodes.push_back(n);
    slot->input.reservations.push_back(std::move(maintenance));
  }
  return *slot;
}

void Pass(benchmark::State& state, std::optional<PolicyKind> policy, bool accounting = false) {
  Workload& w =
      GetWorkload(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), accounting);
  w.input.policy = policy;
  size_t started = 0, planned = 0, reserved = 0, preempted = 0;
  SchedulerResult result;  // kept between passes, as the controller keeps it
  for (auto _ : state) {
    Schedule(w.input, result);
    started = result.started.size();
    planned = result.planned.size();
    preempted = result.preempted.size();
    benchmark::DoNotOptimize(result);
  }
  for (const PlannedStart& plan : result.planned) reserved += plan.reserved;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["started"] = static_cast<double>(started);
  state.counters["planned"] = static_cast<double>(planned);
  state.counters["reserved"] = static_cast<double>(reserved);
  state.counters["preempted"] = static_cast<double>(preempted);
  state.counters["running"] = static_cast<double>(w.input.running.size());
  state.counters["peak_rss_MiB"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
}

void MainPass(benchmark::State& state) {
  Pass(state, PolicyKind::kFifo);
}
void FullCycle(benchmark::State& state) {
  Pass(state, std::nullopt);
}
void FullCycleAccounting(benchmark::State& state) {
  Pass(state, std::nullopt, true);
}

BENCHMARK(MainPass)->Args({1000, 10000})->Args({10000, 100000})->Unit(benchmark::kMillisecond);
BENCHMARK(FullCycle)->Args({1000, 10000})->Args({10000, 100000})->Unit(benchmark::kMillisecond);
BENCHMARK(FullCycleAccounting)
    ->Args({1000, 10000})
    ->Args({10000, 100000})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace drover::sched

BENCHMARK_MAIN();
