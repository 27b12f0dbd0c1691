// The kept pool of running jobs against one built afresh: after any sequence of jobs starting,
// ending and changing, and nodes changing state, RunningPool holds exactly what NodePool and
// Take build from the same jobs, and the planner's releases of each node; and it recomputes
// only the nodes that changed.
#include "sched/running_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>

namespace drover::sched {
namespace {

// GPUs cut into shards (a pool's shares), a partition whose cores are shared four ways (its
// per-core use counts), nodes of two weights, and whole-node jobs.
constexpr const char* kCluster =
    "ClusterName=t\nGresTypes=gpu,shard\nDefMemPerCPU=100\n"
    "NodeName=a[1-4] CPUs=8 RealMemory=8000 Gres=gpu:2,shard:8\n"
    "NodeName=b[1-4] CPUs=4 RealMemory=4000 Weight=5\n"
    "PartitionName=shared Nodes=a[1-4] OverSubscribe=FORCE:4 Default=YES\n"
    "PartitionName=whole Nodes=ALL\n";

std::shared_ptr<const ClusterConfig> Load(const char* text) {
  ConfigLoad load = LoadClusterConfigText(text);
  EXPECT_TRUE(load.ok()) << load.ErrorText();
  return std::make_shared<const ClusterConfig>(std::move(load.config));
}

class Jobs {
 public:
  Jobs(std::shared_ptr<const ClusterConfig> cluster, unsigned seed)
      : cluster_(std::move(cluster)), random_(seed) {}

  // A job on one or two random nodes: some cores, memory, GPUs or shards of one, or the whole
  // nodes.
  RunningJob Make(uint64_t id) {
    RunningJob job;
    job.job_id = id;
    job.revision = ++revision_;
    job.partition = Pick(2);
    job.oversubscribe = Pick(2) == 1;
    job.end_time = 100 + Pick(500);
    job.allocation.exclusive = Pick(8) == 0;
    int first = job.partition == 0 ? Pick(4) : Pick(8);
    std::vector<int> nodes{first};
    if (Pick(3) == 0) {
      int second = job.partition == 0 ? Pick(4) : Pick(8);
      if (second != first) nodes.push_back(second);
    }
    std::sort(nodes.begin(), nodes.end());
    for (int n : nodes) {
      const NodeConfig& config = cluster_->nodes[n];
      NodeAllocation part;
      part.node = n;
      for (int core = 0; core < config.cores(); ++core)
        if (Pick(3) == 0) part.cores.push_back(core);
      part.memory_mb = 100 * static_cast<uint64_t>(1 + Pick(10));
      if (!config.gpus.empty() && Pick(2) == 0) {
        part.gpus.push_back(config.gpus[Pick(2)].index);
        if (Pick(2) == 0) part.shares = 1 + static_cast<uint32_t>(Pick(3));
      }
      job.allocation.nodes.push_back(std::move(part));
    }
    return job;
  }

  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(random_); }

 private:
  std::shared_ptr<const ClusterConfig> cluster_;
  std::mt19937 random_;
  uint64_t revision_ = 0;
};

// What a pass would build from `running` afresh, against what `kept` holds.
void ExpectSameAsFresh(const ClusterConfig& cluster, const std::vector<NodeState>& states,
                       const std::map<uint64_t, RunningJob>& running, const RunningPool& kept) {
  NodePool fresh(cluster, states);
  std::vector<std::vector<Release>> releases(cluster.nodes.size());
  for (const auto& [id, job] : running) {
    fresh.Take(job.held(), SharesCores(cluster, job), job.end_time);
    for (const NodeAllocation& part : job.held().nodes)
      releases[part.node].push_back(
          {job.end_time, id, Held(cluster.nodes[part.node], part, job.held().exclusive)});
  }
  EXPECT_TRUE(fresh.SameState(kept.pool()));
  for (size_t node = 0; node < cluster.nodes.size(); ++node) {
    std::span<const Release> got = kept.ReleasesOn(static_cast<int>(node));
    ASSERT_EQ(got.size(), releases[node].size()) << "node " << node;
    for (size_t k = 0; k < got.size(); ++k) {
      EXPECT_EQ(got[k].job_id, releases[node][k].job_id);
      EXPECT_EQ(got[k].end, releases[node][k].end);
      EXPECT_TRUE(got[k].held == releases[node][k].held);
    }
  }
  ASSERT_EQ(kept.size(), running.size());
  size_t i = 0;
  for (const auto& [id, job] : running) {
    const JobUsage* usage = kept.UsageOf(i++, id);
    ASSERT_NE(usage, nullptr);
    JobUsage expected = UsageOf(cluster, job.held());
    EXPECT_EQ(usage->cpus, expected.cpus);
    EXPECT_EQ(usage->gpus, expected.gpus);
    EXPECT_EQ(usage->memory_mb, expected.memory_mb);
  }
}

void Feed(RunningPool& kept, std::shared_ptr<const ClusterConfig> cluster,
          const std::vector<NodeState>& states, const std::map<uint64_t, RunningJob>& running) {
  kept.Begin(std::move(cluster), states);
  for (const auto& [id, job] : running) kept.Add(job);
  kept.End();
}

TEST(RunningPool, MatchesAFreshPoolThroughStartsEndsChangesAndNodeStates) {
  std::shared_ptr<const ClusterConfig> cluster = Load(kCluster);
  for (unsigned seed = 1; seed <= 20; ++seed) {
    Jobs jobs(cluster, seed);
    RunningPool kept;
    std::map<uint64_t, RunningJob> running;
    std::vector<NodeState> states(cluster->nodes.size(), NodeState::kUp);
    uint64_t next = 1;
    for (int round = 0; round < 60; ++round) {
      for (int k = jobs.Pick(4); k > 0; --k, ++next) running.emplace(next, jobs.Make(next));
      for (int k = jobs.Pick(3); k > 0 && !running.empty(); --k) {
        auto it = std::next(running.begin(), jobs.Pick(static_cast<int>(running.size())));
        if (jobs.Pick(2) == 0)
          running.erase(it);  // ended
        else
          it->second = jobs.Make(it->first);  // changed: a new record, a new revision
      }
      if (jobs.Pick(5) == 0)
        states[jobs.Pick(static_cast<int>(states.size()))] = static_cast<NodeState>(jobs.Pick(3));
      Feed(kept, cluster, states, running);
      ExpectSameAsFresh(*cluster, states, running, kept);
      if (HasFailure()) return;
    }
  }
}

TEST(RunningPool, RecomputesOnlyTheNodesThatChanged) {
  std::shared_ptr<const ClusterConfig> cluster = Load(kCluster);
  Jobs jobs(cluster, 7);
  std::map<uint64_t, RunningJob> running;
  for (uint64_t id = 1; id <= 12; ++id) running.emplace(id, jobs.Make(id));
  std::vector<NodeState> states;  // empty: every node up
  RunningPool kept;
  Feed(kept, cluster, states, running);
  EXPECT_EQ(kept.recomputed(), cluster->nodes.size());  // the first pass builds it all

  Feed(kept, cluster, states, running);
  EXPECT_EQ(kept.recomputed(), 0u);  // nothing changed

  RunningJob one = running.at(5);
  running.erase(5);
  Feed(kept, cluster, states, running);
  EXPECT_EQ(kept.recomputed(), one.allocation.nodes.size());
  ExpectSameAsFresh(*cluster, std::vector<NodeState>(cluster->nodes.size(), NodeState::kUp),
                    running, kept);

  // A node drained: that node alone.
  std::vector<NodeState> drained(cluster->nodes.size(), NodeState::kUp);
  drained[6] = NodeState::kDrain;
  Feed(kept, cluster, drained, running);
  EXPECT_EQ(kept.recomputed(), 1u);
  EXPECT_FALSE(kept.pool().usable(6));
  ExpectSameAsFresh(*cluster, drained, running, kept);
}

TEST(RunningPool, ReadsAJobAgainWhenItsRevisionChangesOrIsUnknown) {
  std::shared_ptr<const ClusterConfig> cluster = Load(kCluster);
  std::vector<NodeState> states;
  RunningJob job;
  job.job_id = 1;
  job.revision = 1;
  job.partition = 1;
  job.end_time = 50;
  job.allocation.nodes.push_back({4, {0, 1}, 500, {}, 0, {}});  // b1: two cores
  std::map<uint64_t, RunningJob> running{{1, job}};
  RunningPool kept;
  Feed(kept, cluster, states, running);
  EXPECT_EQ(kept.pool().free_cores(4), 2);

  // The same revision: the pool trusts its copy (the caller's promise).
  running[1].allocation.nodes[0].cores = {0};
  Feed(kept, cluster, states, running);
  EXPECT_EQ(kept.pool().free_cores(4), 2);

  running[1].revision = 2;  // changed: read again
  Feed(kept, cluster, states, running);
  EXPECT_EQ(kept.pool().free_cores(4), 3);

  running[1].revision = 0;  // unknown: read every pass
  running[1].allocation.nodes[0].cores = {0, 1, 2, 3};
  Feed(kept, cluster, states, running);
  EXPECT_EQ(kept.pool().free_cores(4), 0);
  ExpectSameAsFresh(*cluster, std::vector<NodeState>(cluster->nodes.size(), NodeState::kUp),
                    running, kept);
}

TEST(RunningPool, ANewConfigurationRebuildsThePool) {
  std::shared_ptr<const ClusterConfig> first = Load(kCluster);
  // Bigger nodes, and the other partition's cores shared: each job's sharing is read again.
  std::shared_ptr<const ClusterConfig> second = Load(
      "ClusterName=t\nGresTypes=gpu,shard\nDefMemPerCPU=100\n"
      "NodeName=a[1-4] CPUs=16 RealMemory=8000 Gres=gpu:2,shard:8\n"
      "NodeName=b[1-4] CPUs=4 RealMemory=4000 Weight=5\n"
      "PartitionName=shared Nodes=a[1-4] Default=YES\n"
      "PartitionName=whole Nodes=ALL OverSubscribe=FORCE:4\n");
  Jobs jobs(first, 3);
  std::map<uint64_t, RunningJob> running;
  for (uint64_t id = 1; id <= 12; ++id) running.emplace(id, jobs.Make(id));
  std::vector<NodeState> states;
  RunningPool kept;
  Feed(kept, first, states, running);
  Feed(kept, second, states, running);
  EXPECT_EQ(kept.recomputed(), second->nodes.size());
  EXPECT_EQ(&kept.pool().cluster(), second.get());
  ExpectSameAsFresh(*second, std::vector<NodeState>(second->nodes.size(), NodeState::kUp), running,
                    kept);
}

}  // namespace
}  // namespace drover::sched
