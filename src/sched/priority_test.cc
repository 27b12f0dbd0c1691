// priority/multifactor factors as sprio shows them, on a 4-node cluster (8 CPUs, 1000 MB and
// 2 GPUs each): age, fair share, job size, partition, QOS, TRES, nice and the weighted sum;
// priority/basic gives every job 0.
#include "sched/priority.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/cluster_config.h"

namespace drover::sched {
namespace {

constexpr int64_t kNow = 1'000'000;
constexpr int64_t kDay = 86400;

constexpr const char* kSlurmConf = R"(ClusterName=t
PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityWeightFairshare=10000
PriorityWeightJobSize=1000
PriorityWeightPartition=1000
PriorityWeightQOS=1000
PriorityWeightTRES=CPU=1000,Mem=1000,Node=1000,GRES/gpu=1000,GRES/gpu:h100=1000
PriorityMaxAge=1-0
GresTypes=gpu
NodeName=n[1-4] CPUs=8 RealMemory=1000 Gres=gpu:2
PartitionName=batch Nodes=n[1-4] Default=YES PriorityJobFactor=1
PartitionName=high Nodes=n[1-4] PriorityJobFactor=4
)";

ClusterConfig LoadCluster(const std::string& text) {
  ConfigLoad load = LoadClusterConfigText(text);
  EXPECT_TRUE(load.ok());
  for (const Diagnostic& error : load.diagnostics.errors()) ADD_FAILURE() << error.ToString();
  return load.config;
}

JobSpec Job() {
  JobSpec job;
  job.job_id = 7;
  job.user = "alice";
  job.account = "a";
  job.submit_time = kNow;
  return job;
}

Association MakeAssociation(const std::string& account, const std::string& user, int parent,
                            double usage) {
  Association association;
  association.account = account;
  association.user = user;
  association.parent = parent;
  association.usage = usage;
  return association;
}

Qos MakeQos(const std::string& name, uint32_t priority) {
  Qos qos;
  qos.name = name;
  qos.priority = priority;
  return qos;
}

class PriorityTest : public testing::Test {
 protected:
  PriorityFactors Compute(const JobSpec& job, int partition = 0) const {
    return PriorityCalculator(cluster_, associations_, fair_share_, qos_, kNow)
        .Compute(job, partition);
  }

  ClusterConfig cluster_ = LoadCluster(kSlurmConf);
  std::vector<Association> associations_ = {
      MakeAssociation("root", "", -1, 0),
      MakeAssociation("a", "", 0, 0),
      MakeAssociation("a", "alice", 1, 10),
      MakeAssociation("a", "bob", 1, 30),
  };
  FairShare fair_share_ = ComputeFairTree(associations_);
  std::vector<Qos> qos_ = {MakeQos("normal", 10), MakeQos("top", 100)};
};

TEST_F(PriorityTest, AgeGrowsToOneAtPriorityMaxAge) {
  struct Case {
    int64_t submitted_ago, begins_in;
    double expected;
  };
  const Case cases[] = {
      {0, 0, 0.0},
      {kDay / 4, 0, 0.25},
      {kDay, 0, 1.0},
      {3 * kDay, 0, 1.0},      // capped at PriorityMaxAge
      {kDay, -kDay / 2, 0.5},  // counted from --begin when that is later than submission
      {0, kDay, 0.0},          // not yet eligible
  };
  for (const Case& c : cases) {
    JobSpec job = Job();
    job.submit_time = kNow - c.submitted_ago;
    if (c.begins_in != 0) job.begin_time = kNow + c.begins_in;
    EXPECT_DOUBLE_EQ(Compute(job).age, c.expected)
        << "submitted " << c.submitted_ago << "s ago, begins in " << c.begins_in << "s";
  }
}

TEST_F(PriorityTest, AgeIsZeroWithoutPriorityMaxAge) {
  cluster_.settings.priority_max_age_seconds = 0;
  JobSpec job = Job();
  job.submit_time = kNow - kDay;
  EXPECT_EQ(Compute(job).age, 0.0);
}

TEST_F(PriorityTest, FairShareIsTheUsersAssociationFactor) {
  JobSpec job = Job();
  EXPECT_DOUBLE_EQ(Compute(job).fairshare, 1.0);  // alice used less than bob
  job.user = "bob";
  EXPECT_DOUBLE_EQ(Compute(job).fairshare, 0.5);
  job.user = "carol";
  EXPECT_EQ(Compute(job).fairshare, 0.0);
  job.user = "alice";
  job.account = "b";
  EXPECT_EQ(Compute(job).fairshare, 0.0);
}

TEST_F(PriorityTest, JobSizeIsTheMeanOfNodeAndCpuFractions) {
  struct Case {
    uint32_t nodes, ntasks, cpus_per_task;
    bool favor_small;
    double expected;
  };
  const Case cases[] = {
      {1, 1, 1, false, (1.0 / 4 + 1.0 / 32) / 2},
      {2, 4, 4, false, (2.0 / 4 + 16.0 / 32) / 2},
      {4, 32, 1, false, 1.0},
      {1, 1, 1, true, 1 - (1.0 / 4 + 1.0 / 32) / 2},
      {4, 32, 1, true, 0.0},
      {8, 64, 1, false, 1.0},  // more than the cluster has: clamped
  };
  for (const Case& c : cases) {
    cluster_.settings.favor_small = c.favor_small;
    JobSpec job = Job();
    job.min_nodes = job.max_nodes = c.nodes;
    job.ntasks = c.ntasks;
    job.cpus_per_task = c.cpus_per_task;
    EXPECT_DOUBLE_EQ(Compute(job).job_size, c.expected)
        << c.nodes << " nodes, " << c.ntasks << "x" << c.cpus_per_task << " CPUs, favor small "
        << c.favor_small;
  }
}

TEST_F(PriorityTest, PartitionFactorIsRelativeToTheLargest) {
  EXPECT_DOUBLE_EQ(Compute(Job(), cluster_.FindPartition("batch")).partition, 0.25);
  EXPECT_DOUBLE_EQ(Compute(Job(), cluster_.FindPartition("high")).partition, 1.0);
  EXPECT_EQ(Compute(Job(), -1).partition, 0.0);
}

TEST_F(PriorityTest, QosFactorIsRelativeToTheHighestQosPriority) {
  struct Case {
    std::string qos;
    double expected;
  };
  const Case cases[] = {{"normal", 0.1}, {"top", 1.0}, {"unknown", 0.0}, {"", 0.0}};
  for (const Case& c : cases) {
    JobSpec job = Job();
    job.qos = c.qos;
    EXPECT_DOUBLE_EQ(Compute(job).qos, c.expected) << "QOS '" << c.qos << "'";
  }
}

TEST_F(PriorityTest, TresFactorsAreShareOfTheCluster) {
  JobSpec job = Job();
  job.min_nodes = job.max_nodes = 2;
  job.ntasks = 4;
  job.cpus_per_task = 2;
  job.mem_per_cpu_mb = 100;
  job.gpus_per_node = 2;
  PriorityFactors factors = Compute(job);
  std::vector<std::pair<std::string, double>> expected = {
      {"cpu", 8.0 / 32},     {"mem", 800.0 / 4000},  {"node", 2.0 / 4},
      {"gres/gpu", 4.0 / 8}, {"gres/gpu:h100", 0.0},  // the cluster has no h100s
  };
  EXPECT_EQ(factors.tres, expected);
}

TEST_F(PriorityTest, TypedGpuTresCountsOnlyThatType) {
  std::string conf = kSlurmConf;
  conf.replace(conf.find("Gres=gpu:2"), 10, "Gres=gpu:h100:2");
  cluster_ = LoadCluster(conf);
  JobSpec job = Job();
  job.gpus = 2;
  job.gpu_type = "h100";
  EXPECT_DOUBLE_EQ(Compute(job).tres.back().second, 2.0 / 8);
  job.gpu_type = "a100";
  EXPECT_EQ(Compute(job).tres.back().second, 0.0);
}

TEST_F(PriorityTest, PriorityIsTheWeightedSumLessNice) {
  JobSpec job = Job();
  job.submit_time = kNow - kDay / 2;  // age 0.5
  job.qos = "normal";                 // QOS 0.1
  // alice's fair share 1.0; 1 node of 4 and 1 CPU of 32; the batch partition 0.25; TRES: 1/32
  // of CPUs, no memory, 1/4 of nodes, no GPUs.
  double expected = 1000 * 0.5 + 10000 * 1.0 + 1000 * (1.0 / 4 + 1.0 / 32) / 2 + 1000 * 0.25 +
                    1000 * 0.1 + 1000 * (1.0 / 32 + 1.0 / 4);
  EXPECT_EQ(Compute(job).priority, std::llround(expected));
  job.nice = 100;
  EXPECT_EQ(Compute(job).priority, std::llround(expected) - 100);
  EXPECT_EQ(Compute(job).nice, 100);
  job.nice = -100;
  EXPECT_EQ(Compute(job).priority, std::llround(expected) + 100);
  job.nice = 1'000'000;
  EXPECT_EQ(Compute(job).priority, 1);  // never below 1 under multifactor
}

TEST_F(PriorityTest, BasicGivesEveryJobZero) {
  cluster_.settings.priority = PriorityType::kBasic;
  JobSpec job = Job();
  job.submit_time = kNow - kDay;
  job.qos = "top";
  job.nice = -100;
  PriorityFactors factors = Compute(job);
  EXPECT_EQ(factors.job_id, 7u);
  EXPECT_EQ(factors.priority, 0);
  EXPECT_EQ(factors.age + factors.fairshare + factors.job_size + factors.partition + factors.qos,
            0.0);
  EXPECT_TRUE(factors.tres.empty());
}

}  // namespace
}  // namespace drover::sched
