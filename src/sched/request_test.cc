// Per-node requirements with Slurm's defaults, and the billing that fair share charges.
#include "sched/request.h"

#include <gtest/gtest.h>

#include <functional>

#include "common/tres.h"
#include "sched/billing.h"

namespace drover::sched {
namespace {

ClusterConfig Cluster(const std::string& extra) {
  ConfigLoad load = LoadClusterConfigText(
      "ClusterName=t\nGresTypes=gpu\n" + extra +
      "NodeName=n[1-2] Sockets=2 CoresPerSocket=8 RealMemory=64000 Gres=gpu:8\n"
      "PartitionName=p Nodes=ALL Default=YES MaxTime=2:00:00 DefaultTime=30 DefMemPerGPU=8000 "
      "DefCpuPerGPU=4\n"
      "PartitionName=q Nodes=ALL\n");
  EXPECT_TRUE(load.ok());
  return load.config;
}

TEST(Request, DefaultsAsSlurmAppliesThem) {
  struct Case {
    std::string name;
    std::function<void(JobSpec&)> shape;
    int partition;
    int nodes, cpus, gpus;
    uint64_t memory;
    bool whole;
    int64_t time;
  } cases[] = {
      {"partition DefMemPerGPU, DefCpuPerGPU, DefaultTime", [](JobSpec& j) { j.gpus_per_node = 2; },
       0, 1, 8, 2, 16000, false, 1800},
      {"explicit --mem-per-cpu wins",
       [](JobSpec& j) { j.gpus_per_node = 2, j.mem_per_cpu_mb = 10; }, 0, 1, 8, 2, 80, false, 1800},
      {"cluster DefMemPerCPU without GPUs", [](JobSpec& j) { j.ntasks = 3; }, 1, 1, 3, 0, 3000,
       false, 0},
      {"--gpus spread over nodes", [](JobSpec& j) { j.gpus = 16, j.gpus_per_node = 8; }, 0, 2, 32,
       8, 64000, false, 1800},
      {"--gpus-per-task x tasks per node",
       [](JobSpec& j) {
         j.ntasks = 4, j.ntasks_per_node = 2, j.min_nodes = j.max_nodes = 2, j.gpus_per_task = 1;
       },
       0, 2, 8, 2, 16000, false, 1800},
      {"tasks beyond one node spread up to max_nodes",
       [](JobSpec& j) { j.ntasks = 24, j.max_nodes = 4; }, 1, 2, 12, 0, 12000, false, 0},
      {"--gpus beyond one node spread without -N", [](JobSpec& j) { j.gpus = 16; }, 0, 2, 32, 8,
       64000, false, 1800},
      {"-n with --gpus-per-task beyond one node spread",
       [](JobSpec& j) { j.ntasks = 8, j.gpus_per_task = 2; }, 0, 2, 32, 8, 64000, false, 1800},
      {"-n1 keeps its one task's node (and cannot run)",
       [](JobSpec& j) { j.gpus = 16, j.ntasks = 1, j.ntasks_given = true; }, 0, 1, 64, 16, 128000,
       false, 1800},
      {"-N1 keeps its one node (and cannot run)",
       [](JobSpec& j) { j.gpus = 16, j.min_nodes = j.max_nodes = 1; }, 0, 1, 64, 16, 128000, false,
       1800},
  };
  ClusterConfig cluster = Cluster("DefMemPerCPU=1000\n");
  for (const Case& c : cases) {
    JobSpec job;
    c.shape(job);
    const PartitionConfig& partition = cluster.partitions[c.partition];
    ResolvedRequest r = ResolveRequest(cluster, job, partition, MaximaOf(cluster, partition));
    EXPECT_EQ(r.nodes, c.nodes) << c.name;
    EXPECT_EQ(r.per_node.cpus, c.cpus) << c.name;
    EXPECT_EQ(r.per_node.gpus, c.gpus) << c.name;
    EXPECT_EQ(r.per_node.memory_mb, c.memory) << c.name;
    EXPECT_EQ(r.per_node.whole_memory, c.whole) << c.name;
    if (c.time) {
      EXPECT_EQ(r.time_limit_seconds, c.time) << c.name;
    }
  }
  ClusterConfig no_default = Cluster("");
  JobSpec plain;
  ResolvedRequest r = ResolveRequest(no_default, plain, no_default.partitions[1],
                                     MaximaOf(no_default, no_default.partitions[1]));
  EXPECT_TRUE(r.per_node.whole_memory) << "no --mem and no default: the whole node, as Slurm";
  EXPECT_EQ(r.time_limit_seconds, kUnlimitedSeconds) << "no DefaultTime: MaxTime";
}

TEST(Billing, WeightedSumOrCpus) {
  JobUsage usage{16, 4, 2, 32768};
  EXPECT_DOUBLE_EQ(BillingOf({}, usage), 16);
  auto weights = ParseTresWeights("CPU=0.5,Mem=0.25G,GRES/gpu=2.0");
  ASSERT_TRUE(weights.ok());
  EXPECT_DOUBLE_EQ(BillingOf(*weights, usage), 8 + 8 + 8);
  auto typed = ParseTresWeights("GRES/gpu:h100=10");
  EXPECT_DOUBLE_EQ(BillingOf(*typed, usage, "h100"), 40);
  EXPECT_DOUBLE_EQ(BillingOf(*typed, usage, "a100"), 0);
}

}  // namespace
}  // namespace drover::sched
