// Tests for the batch environment: the four environments captured from Slurm 22.05 reproduced
// exactly (every SLURM_* name, no more, no fewer, less the PID and controller-address ones),
// override order, GPU numbering, memory, tasks per node, and every error.
#include "agent/host/job_env.h"

#include "common/dependency.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace drover::agent {
namespace {

using Env = std::map<std::string, std::string>;

// `env | grep ^SLURM` inside batch jobs of Slurm 22.05.8 (4 emulated nodes n1-n4, 8 CPUs and 2
// GPUs each, DefMemPerCPU=100, TaskPlugin=task/none). Left out: SLURM_TASK_PID (the supervisor
// sets it) and SLURM_WORKING_CLUSTER (the controller's address and protocol version).
constexpr std::string_view kPlain = R"(SLURMD_NODENAME=n1
SLURM_CLUSTER_NAME=anchor
SLURM_CONF=/etc/slurm/slurm.conf
SLURM_CPUS_ON_NODE=1
SLURM_GTIDS=0
SLURM_JOBID=26511
SLURM_JOB_ACCOUNT=root
SLURM_JOB_CPUS_PER_NODE=1
SLURM_JOB_GID=0
SLURM_JOB_ID=26511
SLURM_JOB_NAME=wrap
SLURM_JOB_NODELIST=n1
SLURM_JOB_NUM_NODES=1
SLURM_JOB_PARTITION=debug
SLURM_JOB_QOS=normal
SLURM_JOB_UID=0
SLURM_JOB_USER=root
SLURM_LOCALID=0
SLURM_MEM_PER_CPU=100
SLURM_NNODES=1
SLURM_NODEID=0
SLURM_NODELIST=n1
SLURM_NODE_ALIASES=(null)
SLURM_PRIO_PROCESS=0
SLURM_PROCID=0
SLURM_SUBMIT_DIR=/home/alice/proj
SLURM_SUBMIT_HOST=vm
SLURM_TASKS_PER_NODE=1
SLURM_TOPOLOGY_ADDR=spine.leaf1.n1
SLURM_TOPOLOGY_ADDR_PATTERN=switch.switch.node
)";

// sbatch -n2 with one GPU.
constexpr std::string_view kTwoTasksOneGpu = R"(SLURMD_NODENAME=n1
SLURM_CLUSTER_NAME=anchor
SLURM_CONF=/etc/slurm/slurm.conf
SLURM_CPUS_ON_NODE=2
SLURM_GPUS_ON_NODE=1
SLURM_GTIDS=0
SLURM_JOBID=26510
SLURM_JOB_ACCOUNT=root
SLURM_JOB_CPUS_PER_NODE=2
SLURM_JOB_GID=0
SLURM_JOB_GPUS=0
SLURM_JOB_ID=26510
SLURM_JOB_NAME=envdump
SLURM_JOB_NODELIST=n1
SLURM_JOB_NUM_NODES=1
SLURM_JOB_PARTITION=debug
SLURM_JOB_QOS=normal
SLURM_JOB_UID=0
SLURM_JOB_USER=root
SLURM_LOCALID=0
SLURM_MEM_PER_CPU=100
SLURM_NNODES=1
SLURM_NODEID=0
SLURM_NODELIST=n1
SLURM_NODE_ALIASES=(null)
SLURM_NPROCS=2
SLURM_NTASKS=2
SLURM_PRIO_PROCESS=0
SLURM_PROCID=0
SLURM_SUBMIT_DIR=/home/alice/proj
SLURM_SUBMIT_HOST=vm
SLURM_TASKS_PER_NODE=2
SLURM_TOPOLOGY_ADDR=spine.leaf1.n1
SLURM_TOPOLOGY_ADDR_PATTERN=switch.switch.node
)";

// The same job's other variables of interest.
constexpr std::string_view kTwoTasksOneGpuOther = R"(CUDA_VISIBLE_DEVICES=0
ENVIRONMENT=BATCH
GPU_DEVICE_ORDINAL=0
HOSTNAME=n1
ROCR_VISIBLE_DEVICES=0
ZE_AFFINITY_MASK=0
)";

// sbatch -N3 --ntasks-per-node=2 with two GPUs per node.
constexpr std::string_view kThreeNodesTwoGpus = R"(SLURMD_NODENAME=n2
SLURM_CLUSTER_NAME=anchor
SLURM_CONF=/etc/slurm/slurm.conf
SLURM_CPUS_ON_NODE=2
SLURM_GPUS_ON_NODE=2
SLURM_GTIDS=0
SLURM_JOBID=26513
SLURM_JOB_ACCOUNT=root
SLURM_JOB_CPUS_PER_NODE=2(x3)
SLURM_JOB_GID=0
SLURM_JOB_GPUS=0,1
SLURM_JOB_ID=26513
SLURM_JOB_NAME=wrap
SLURM_JOB_NODELIST=n[2-4]
SLURM_JOB_NUM_NODES=3
SLURM_JOB_PARTITION=debug
SLURM_JOB_QOS=normal
SLURM_JOB_UID=0
SLURM_JOB_USER=root
SLURM_LOCALID=0
SLURM_MEM_PER_CPU=100
SLURM_NNODES=3
SLURM_NODEID=0
SLURM_NODELIST=n[2-4]
SLURM_NODE_ALIASES=(null)
SLURM_NPROCS=6
SLURM_NTASKS=6
SLURM_NTASKS_PER_NODE=2
SLURM_PRIO_PROCESS=0
SLURM_PROCID=0
SLURM_SUBMIT_DIR=/home/alice/proj
SLURM_SUBMIT_HOST=vm
SLURM_TASKS_PER_NODE=2(x3)
SLURM_TOPOLOGY_ADDR=spine.leaf1.n2
SLURM_TOPOLOGY_ADDR_PATTERN=switch.switch.node
)";

// Task 2 of sbatch --array=1-3.
constexpr std::string_view kArrayTask2 = R"(SLURMD_NODENAME=n1
SLURM_ARRAY_JOB_ID=26512
SLURM_ARRAY_TASK_COUNT=3
SLURM_ARRAY_TASK_ID=2
SLURM_ARRAY_TASK_MAX=3
SLURM_ARRAY_TASK_MIN=1
SLURM_ARRAY_TASK_STEP=1
SLURM_CLUSTER_NAME=anchor
SLURM_CONF=/etc/slurm/slurm.conf
SLURM_CPUS_ON_NODE=1
SLURM_GTIDS=0
SLURM_JOBID=26516
SLURM_JOB_ACCOUNT=root
SLURM_JOB_CPUS_PER_NODE=1
SLURM_JOB_GID=0
SLURM_JOB_ID=26516
SLURM_JOB_NAME=wrap
SLURM_JOB_NODELIST=n1
SLURM_JOB_NUM_NODES=1
SLURM_JOB_PARTITION=debug
SLURM_JOB_QOS=normal
SLURM_JOB_UID=0
SLURM_JOB_USER=root
SLURM_LOCALID=0
SLURM_MEM_PER_CPU=100
SLURM_NNODES=1
SLURM_NODEID=0
SLURM_NODELIST=n1
SLURM_NODE_ALIASES=(null)
SLURM_PRIO_PROCESS=0
SLURM_PROCID=0
SLURM_SUBMIT_DIR=/home/alice/proj
SLURM_SUBMIT_HOST=vm
SLURM_TASKS_PER_NODE=1
SLURM_TOPOLOGY_ADDR=spine.leaf1.n1
SLURM_TOPOLOGY_ADDR_PATTERN=switch.switch.node
)";

Env ParseLines(std::string_view text) {
  Env env;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    size_t equals = line.find('=');
    env[line.substr(0, equals)] = line.substr(equals + 1);
  }
  return env;
}

// Every entry of a built environment, failing the test on duplicates or malformed entries.
Env ToMap(const std::vector<std::string>& entries) {
  Env env;
  for (const std::string& entry : entries) {
    size_t equals = entry.find('=');
    EXPECT_NE(equals, std::string::npos) << entry;
    bool inserted = env.emplace(entry.substr(0, equals), entry.substr(equals + 1)).second;
    EXPECT_TRUE(inserted) << "duplicate name in " << entry;
  }
  return env;
}

Env SlurmOnly(const Env& env) {
  Env out;
  for (const auto& [name, value] : env) {
    if (name.starts_with("SLURM_") || name.starts_with("SLURMD_")) out[name] = value;
  }
  return out;
}

Env Build(const JobSpec& spec, const LaunchContext& ctx) {
  Result<std::vector<std::string>> env = BuildBatchEnvironment(spec, ctx);
  EXPECT_TRUE(env.ok()) << env.error();
  return env.ok() ? ToMap(env.value()) : Env{};
}

std::string BuildError(const JobSpec& spec, const LaunchContext& ctx) {
  Result<std::vector<std::string>> env = BuildBatchEnvironment(spec, ctx);
  return env.ok() ? "no error" : env.error();
}

// The reference cluster's job as sbatch --wrap submitted it, by root from /home/alice/proj.
JobSpec ReferenceSpec(uint64_t job_id, std::string name) {
  JobSpec spec;
  spec.job_id = job_id;
  spec.name = std::move(name);
  spec.user = "root";
  spec.account = "root";
  spec.qos = "normal";
  spec.partitions = {"debug"};
  spec.work_dir = "/home/alice/proj";
  spec.environment = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8"};
  return spec;
}

LaunchContext ReferenceContext(std::string node, std::string node_list,
                               std::vector<uint32_t> cpus) {
  LaunchContext ctx;
  ctx.node_name = node;
  ctx.node_list = std::move(node_list);
  ctx.cpus_per_node = std::move(cpus);
  ctx.partition = "debug";
  ctx.cluster_name = "anchor";
  ctx.submit_host = "vm";
  ctx.slurm_conf = "/etc/slurm/slurm.conf";
  ctx.user = {"root", "/root", "/bin/bash"};
  ctx.topology_address = (node == "n1" || node == "n2") ? "spine.leaf1." + node : "";
  ctx.topology_pattern = "switch.switch.node";
  ctx.default_mem_per_cpu_mb = 100;
  return ctx;
}

TEST(BuildBatchEnvironmentTest, PlainJobMatchesSlurm) {
  JobSpec spec = ReferenceSpec(26511, "wrap");
  Env env = Build(spec, ReferenceContext("n1", "n1", {1}));
  EXPECT_EQ(SlurmOnly(env), ParseLines(kPlain));
  EXPECT_EQ(env["ENVIRONMENT"], "BATCH");
  EXPECT_EQ(env["HOSTNAME"], "n1");
  EXPECT_EQ(env.count("CUDA_VISIBLE_DEVICES"), 0u);
}

TEST(BuildBatchEnvironmentTest, TwoTasksWithOneGpuMatchesSlurm) {
  JobSpec spec = ReferenceSpec(26510, "envdump");
  spec.ntasks = 2;
  spec.gpus_per_node = 1;
  LaunchContext ctx = ReferenceContext("n1", "n1", {2});
  ctx.gpu_indexes = {0};
  Env env = Build(spec, ctx);
  EXPECT_EQ(SlurmOnly(env), ParseLines(kTwoTasksOneGpu));
  for (const auto& [name, value] : ParseLines(kTwoTasksOneGpuOther)) {
    EXPECT_EQ(env[name], value) << name;
  }
}

TEST(BuildBatchEnvironmentTest, ThreeNodesTwoTasksEachMatchesSlurm) {
  JobSpec spec = ReferenceSpec(26513, "wrap");
  spec.min_nodes = spec.max_nodes = 3;
  spec.ntasks = 6;
  spec.ntasks_per_node = 2;
  spec.gpus_per_node = 2;
  LaunchContext ctx = ReferenceContext("n2", "n2,n3,n4", {2, 2, 2});  // compressed on output
  ctx.gpu_indexes = {0, 1};
  EXPECT_EQ(SlurmOnly(Build(spec, ctx)), ParseLines(kThreeNodesTwoGpus));
}

TEST(BuildBatchEnvironmentTest, ArrayTaskMatchesSlurm) {
  JobSpec spec = ReferenceSpec(26516, "wrap");
  spec.array_job_id = 26512;
  spec.array_task_id = 2;
  LaunchContext ctx = ReferenceContext("n1", "n1", {1});
  ctx.array = ArrayShape{3, 1, 3, 1};
  EXPECT_EQ(SlurmOnly(Build(spec, ctx)), ParseLines(kArrayTask2));
}

TEST(BuildBatchEnvironmentTest, ArrayShapeOnlyWhenKnownAndStepOnlyWhenSet) {
  JobSpec spec = ReferenceSpec(26516, "wrap");
  spec.array_job_id = 26512;
  spec.array_task_id = 2;
  LaunchContext ctx = ReferenceContext("n1", "n1", {1});
  Env env = Build(spec, ctx);
  EXPECT_EQ(env["SLURM_ARRAY_JOB_ID"], "26512");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_ID"], "2");
  EXPECT_EQ(env.count("SLURM_ARRAY_TASK_COUNT"), 0u);
  ctx.array = ArrayShape{4, 1, 9, 0};  // --array=1,2,5,9
  env = Build(spec, ctx);
  EXPECT_EQ(env["SLURM_ARRAY_TASK_COUNT"], "4");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_MAX"], "9");
  EXPECT_EQ(env.count("SLURM_ARRAY_TASK_STEP"), 0u);
}

TEST(BuildBatchEnvironmentTest, SlurmValuesOverrideSubmittedOnes) {
  JobSpec spec = ReferenceSpec(26511, "wrap");
  spec.environment = {"SLURM_JOB_ID=999",
                      "FOO=first",
                      "CUDA_VISIBLE_DEVICES=7",
                      "FOO=second",
                      "EMPTY=",
                      "EQUALS=a=b",
                      "SLURM_MY_SETTING=kept",
                      "HOME=/custom/home",
                      "SLURM_PRIO_PROCESS=5"};
  LaunchContext ctx = ReferenceContext("n1", "n1", {2});
  ctx.gpu_indexes = {1};
  Result<std::vector<std::string>> built = BuildBatchEnvironment(spec, ctx);
  ASSERT_TRUE(built.ok()) << built.error();
  Env env = ToMap(built.value());
  EXPECT_EQ(env["SLURM_JOB_ID"], "26511");
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "1");
  EXPECT_EQ(env["FOO"], "second");
  EXPECT_EQ(env["EMPTY"], "");
  EXPECT_EQ(env["EQUALS"], "a=b");
  EXPECT_EQ(env["SLURM_MY_SETTING"], "kept");
  EXPECT_EQ(env["HOME"], "/custom/home");     // the submission wins over the passwd entry
  EXPECT_EQ(env["SLURM_PRIO_PROCESS"], "5");  // what sbatch exported, as in Slurm
  // Submitted names keep their place, first among the entries.
  EXPECT_EQ(built->front(), "SLURM_JOB_ID=26511");
  EXPECT_EQ((*built)[1], "FOO=second");
}

TEST(BuildBatchEnvironmentTest, PasswdDefaultsFillOnlyWhatIsMissing) {
  JobSpec spec = ReferenceSpec(26511, "wrap");
  spec.user = "alice";
  spec.environment = {"SHELL=/bin/zsh"};
  LaunchContext ctx = ReferenceContext("n1", "n1", {1});
  ctx.user = {"alice", "/home/alice", "/bin/bash"};
  Env env = Build(spec, ctx);
  EXPECT_EQ(env["HOME"], "/home/alice");
  EXPECT_EQ(env["USER"], "alice");
  EXPECT_EQ(env["LOGNAME"], "alice");
  EXPECT_EQ(env["SHELL"], "/bin/zsh");
  EXPECT_EQ(env["PATH"], "/usr/local/bin:/usr/bin:/bin");
  EXPECT_EQ(env["SLURM_JOB_USER"], "alice");

  spec.environment = {"PATH=/opt/bin", "USER=bob"};
  env = Build(spec, ctx);
  EXPECT_EQ(env["PATH"], "/opt/bin");
  EXPECT_EQ(env["USER"], "bob");
  EXPECT_EQ(env["LOGNAME"], "alice");
}

TEST(BuildBatchEnvironmentTest, GpuVariablesUseDeviceIndexesUnlessConstrained) {
  JobSpec spec = ReferenceSpec(7, "gpu");
  LaunchContext ctx = ReferenceContext("n1", "n1", {4});
  ctx.gpu_indexes = {3, 1};
  Env env = Build(spec, ctx);
  EXPECT_EQ(env["SLURM_GPUS_ON_NODE"], "2");
  EXPECT_EQ(env["SLURM_JOB_GPUS"], "1,3");
  for (const char* name :
       {"CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK"}) {
    EXPECT_EQ(env[name], "1,3") << name;
  }
  ctx.devices_constrained = true;  // the cgroup hides GPUs 0 and 2: CUDA sees 1,3 as 0,1
  env = Build(spec, ctx);
  EXPECT_EQ(env["SLURM_JOB_GPUS"], "1,3");
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "0,1");
  EXPECT_EQ(env["ZE_AFFINITY_MASK"], "0,1");
}

TEST(BuildBatchEnvironmentTest, MemoryRequestedOrDefault) {
  JobSpec spec = ReferenceSpec(7, "mem");
  LaunchContext ctx = ReferenceContext("n1", "n1", {1});
  spec.mem_per_node_mb = 4096;
  Env env = Build(spec, ctx);
  EXPECT_EQ(env["SLURM_MEM_PER_NODE"], "4096");
  EXPECT_EQ(env.count("SLURM_MEM_PER_CPU"), 0u);  // the default does not apply
  spec.mem_per_node_mb = 0;
  spec.mem_per_gpu_mb = 8000;
  env = Build(spec, ctx);
  EXPECT_EQ(env["SLURM_MEM_PER_GPU"], "8000");
  EXPECT_EQ(env.count("SLURM_MEM_PER_CPU"), 0u);
  spec.mem_per_gpu_mb = 0;
  ctx.default_mem_per_cpu_mb = 0;
  ctx.default_mem_per_node_mb = 2000;
  env = Build(spec, ctx);
  EXPECT_EQ(env["SLURM_MEM_PER_NODE"], "2000");
  ctx.default_mem_per_node_mb = 0;
  env = Build(spec, ctx);
  EXPECT_EQ(env.count("SLURM_MEM_PER_NODE") + env.count("SLURM_MEM_PER_CPU") +
                env.count("SLURM_MEM_PER_GPU"),
            0u);
}

TEST(BuildBatchEnvironmentTest, TaskVariables) {
  struct Case {
    std::string label;
    uint32_t ntasks, ntasks_per_node, cpus_per_task;
    std::string node_list;
    std::vector<uint32_t> cpus;
    std::string ntasks_env, per_node_env, cpus_per_task_env, tasks_per_node, cpus_per_node;
  };
  const Case cases[] = {
      // -N2 alone: no task count, one task per CPU (as Slurm, which counts CPUs).
      {"-N2", 1, 0, 1, "n[1-2]", {4, 4}, "", "", "", "4(x2)", "4(x2)"},
      {"-c4", 1, 0, 4, "n1", {4}, "", "", "4", "1", "4"},
      {"-n4 -c2 on 8+2 CPUs", 4, 0, 2, "n[1-2]", {6, 2}, "4", "", "2", "3,1", "6,2"},
      {"-n5 on 4,4,2", 5, 0, 1, "n[1-3]", {4, 4, 2}, "5", "", "", "3,1(x2)", "4(x2),2"},
      {"-n5 overcommitted on 1,1", 5, 0, 1, "n[1-2]", {1, 1}, "5", "", "", "3,2", "1(x2)"},
      {"--ntasks-per-node=2 -N2 without ntasks",
       1,
       2,
       1,
       "n[1-2]",
       {2, 2},
       "4",
       "2",
       "",
       "2(x2)",
       "2(x2)"},
  };
  for (const Case& c : cases) {
    JobSpec spec = ReferenceSpec(7, "tasks");
    spec.ntasks = c.ntasks;
    spec.ntasks_per_node = c.ntasks_per_node;
    spec.cpus_per_task = c.cpus_per_task;
    LaunchContext ctx = ReferenceContext("n1", c.node_list, c.cpus);
    Env env = Build(spec, ctx);
    auto value = [&](const std::string& name) {
      return env.count(name) ? env[name] : std::string();
    };
    EXPECT_EQ(value("SLURM_NTASKS"), c.ntasks_env) << c.label;
    EXPECT_EQ(value("SLURM_NPROCS"), c.ntasks_env) << c.label;
    EXPECT_EQ(value("SLURM_NTASKS_PER_NODE"), c.per_node_env) << c.label;
    EXPECT_EQ(value("SLURM_CPUS_PER_TASK"), c.cpus_per_task_env) << c.label;
    EXPECT_EQ(value("SLURM_TASKS_PER_NODE"), c.tasks_per_node) << c.label;
    EXPECT_EQ(value("SLURM_JOB_CPUS_PER_NODE"), c.cpus_per_node) << c.label;
  }
}

// Slurm sets SLURM_CPUS_PER_TASK whenever -c was given and SLURM_NTASKS whenever -n was, at 1
// too (sbatch -c 1, sbatch -n 1); without them, neither.
TEST(BuildBatchEnvironmentTest, CpusPerTaskAndNtasksWheneverGiven) {
  JobSpec spec = ReferenceSpec(7, "given");
  LaunchContext ctx = ReferenceContext("n1", "n1", {4});
  Env env = Build(spec, ctx);
  EXPECT_EQ(env.count("SLURM_CPUS_PER_TASK") + env.count("SLURM_NTASKS"), 0u);
  spec.cpus_per_task_given = spec.ntasks_given = true;
  env = Build(spec, ctx);
  EXPECT_EQ(env["SLURM_CPUS_PER_TASK"], "1");
  EXPECT_EQ(env["SLURM_NTASKS"], "1");
  EXPECT_EQ(env["SLURM_NPROCS"], "1");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "1");
}

// The options sbatch exports when given: --gpus, --gpus-per-task, --cpus-per-gpu, -d,
// --reservation.
TEST(BuildBatchEnvironmentTest, RequestedOptionsWhenGiven) {
  JobSpec spec = ReferenceSpec(7, "asked");
  LaunchContext ctx = ReferenceContext("n1", "n1", {4});
  Env env = Build(spec, ctx);
  for (const char* name : {"SLURM_GPUS", "SLURM_GPUS_PER_TASK", "SLURM_CPUS_PER_GPU",
                           "SLURM_JOB_DEPENDENCY", "SLURM_JOB_RESERVATION"})
    EXPECT_EQ(env.count(name), 0u) << name;
  spec.gpus = 2;
  spec.gpu_type = "a100";
  spec.cpus_per_gpu = 3;
  spec.reservation = "maint";
  spec.dependency = *ParseDependency("afterok:5");
  env = Build(spec, ctx);
  EXPECT_EQ(env["SLURM_GPUS"], "a100:2");
  EXPECT_EQ(env["SLURM_CPUS_PER_GPU"], "3");
  EXPECT_EQ(env["SLURM_JOB_RESERVATION"], "maint");
  EXPECT_EQ(env["SLURM_JOB_DEPENDENCY"], "afterok:5");
  spec.gpus = 0;
  spec.gpus_per_task = 1;
  spec.gpu_type.clear();
  EXPECT_EQ(Build(spec, ctx)["SLURM_GPUS_PER_TASK"], "1");
}

TEST(BuildBatchEnvironmentTest, NodeIndexAndRestartCount) {
  JobSpec spec = ReferenceSpec(7, "later");
  LaunchContext ctx = ReferenceContext("n3", "n[1-4]", {8, 8, 4, 8});
  ctx.node_index = 2;
  ctx.restart_count = 2;
  ctx.topology_address = "";
  ctx.submit_dir = "/home/alice";
  Env env = Build(spec, ctx);
  EXPECT_EQ(env["SLURM_NODEID"], "2");
  EXPECT_EQ(env["SLURM_CPUS_ON_NODE"], "4");
  EXPECT_EQ(env["SLURMD_NODENAME"], "n3");
  EXPECT_EQ(env["SLURM_RESTART_COUNT"], "2");
  EXPECT_EQ(env["SLURM_SUBMIT_DIR"], "/home/alice");
  EXPECT_EQ(env["SLURM_JOB_CPUS_PER_NODE"], "8(x2),4,8");
  EXPECT_EQ(env.count("SLURM_TOPOLOGY_ADDR"), 0u);
  ctx.restart_count = 0;
  EXPECT_EQ(Build(spec, ctx).count("SLURM_RESTART_COUNT"), 0u);
}

TEST(BuildBatchEnvironmentTest, Errors) {
  JobSpec spec = ReferenceSpec(42, "bad");
  LaunchContext ctx = ReferenceContext("n1", "n[1-3", {1});
  EXPECT_EQ(BuildError(spec, ctx), "job 42: node list: unbalanced '[' in 'n[1-3'");
  ctx.node_list = "";
  EXPECT_EQ(BuildError(spec, ctx), "job 42: node list: empty hostlist");
  ctx.node_list = "n[1-2]";
  EXPECT_EQ(BuildError(spec, ctx), "job 42: 1 CPU counts for 2 nodes in 'n[1-2]'");
  ctx.cpus_per_node = {1, 1};
  ctx.node_index = 2;
  EXPECT_EQ(BuildError(spec, ctx), "job 42: node index 2 is outside 'n[1-2]' (2 nodes)");
  ctx.node_index = 1;
  EXPECT_EQ(BuildError(spec, ctx), "job 42: node 1 of 'n[1-2]' is n2, not this node n1");
  ctx.node_index = 0;
  spec.environment = {"GOOD=1", "JUSTANAME"};
  EXPECT_EQ(BuildError(spec, ctx),
            "job 42: submitted environment entry 'JUSTANAME' is not NAME=value");
  spec.environment = {"=value"};
  EXPECT_EQ(BuildError(spec, ctx),
            "job 42: submitted environment entry '=value' is not NAME=value");
}

TEST(SetVariableTest, ReplacesInPlaceOrAppends) {
  std::vector<std::string> env = {"PATH=/bin", "PATHX=1", "SLURM_JOB_ID=5"};
  SetVariable(env, "SLURM_TASK_PID", "4242");
  SetVariable(env, "PATH", "/usr/bin");
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/usr/bin", "PATHX=1", "SLURM_JOB_ID=5",
                                           "SLURM_TASK_PID=4242"}));
  EXPECT_EQ(FindVariable(env, "PATHX"), "1");
  EXPECT_EQ(FindVariable(env, "SLURM_TASK_PID"), "4242");
  EXPECT_EQ(FindVariable(env, "PAT"), std::nullopt);
  EXPECT_EQ(FindVariable(env, "SLURM_JOB"), std::nullopt);
}

TEST(TasksPerNodeTest, BlockLayout) {
  using Counts = std::vector<uint32_t>;
  EXPECT_EQ(TasksPerNode(Counts{2, 2, 2}, 6, 1), (Counts{2, 2, 2}));
  EXPECT_EQ(TasksPerNode(Counts{8, 8}, 3, 1), (Counts{2, 1}));  // one each, then fill in order
  EXPECT_EQ(TasksPerNode(Counts{8, 8}, 10, 1), (Counts{8, 2}));
  EXPECT_EQ(TasksPerNode(Counts{8, 8}, 4, 4), (Counts{2, 2}));
  EXPECT_EQ(TasksPerNode(Counts{2, 2}, 5, 1), (Counts{3, 2}));  // overcommit round-robin
  EXPECT_EQ(TasksPerNode(Counts{1, 1}, 3, 2), (Counts{2, 1}));  // fewer CPUs than a task needs
  EXPECT_EQ(TasksPerNode(Counts{}, 3, 1), (Counts{}));
}

// A task prolog's stdout, as slurmstepd reads it: export, unset and print; other lines ignored;
// an export without '=' stops the reading.
TEST(ApplyTaskPrologOutputTest, ExportUnsetPrint) {
  std::vector<std::string> env{"A=1", "AB=2", "KEEP=3"};
  std::string printed = ApplyTaskPrologOutput(
      "export B=x=y\nunset A\nprint hello world\nnoise\nexport A=new\nexport BAD\nexport C=no\n",
      env);
  EXPECT_EQ(printed, "hello world\n");
  EXPECT_EQ(env, (std::vector<std::string>{"AB=2", "KEEP=3", "B=x=y", "A=new"}));
}

}  // namespace
}  // namespace drover::agent
