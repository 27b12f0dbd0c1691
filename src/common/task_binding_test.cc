#include "common/task_binding.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace drover {
namespace {

using Ids = std::vector<uint32_t>;

CpuBind Cpu(std::string_view text) {
  auto parsed = ParseCpuBind(text);
  EXPECT_TRUE(parsed) << text << ": " << (parsed ? "" : parsed.error());
  return parsed ? *parsed : CpuBind{};
}

std::string Value(const Variables& variables, std::string_view name) {
  for (const auto& [key, value] : variables)
    if (key == name) return value;
  return "<unset>";
}

TEST(ParseCpuBindTest, ReadsTypesListsAndVerbosity) {
  CpuBind map = Cpu("verbose,map_cpu:0,3*2,0x4");
  EXPECT_EQ(map.type, CpuBindType::kMap);
  EXPECT_TRUE(map.verbose);
  EXPECT_EQ(map.list, (IdSets{{0}, {3}, {3}, {4}}));
  EXPECT_EQ(map.list_text, "0,3*2,0x4");
  EXPECT_EQ(Cpu("mask_cpu:0x3,c").list, (IdSets{{0, 1}, {2, 3}}));
  EXPECT_EQ(Cpu("q,cores").type, CpuBindType::kCores);
  EXPECT_EQ(Cpu("none").type, CpuBindType::kNone);
  EXPECT_EQ(Cpu("v").type, CpuBindType::kDefault);
  EXPECT_EQ(Cpu("map_ldom:1").list, (IdSets{{1}}));
  EXPECT_EQ(Cpu("").type, CpuBindType::kDefault);  // not given
}

TEST(ParseCpuBindTest, RefusesWhatSlurmRefuses) {
  EXPECT_EQ(ParseCpuBind("bogus").error(), "unrecognized --cpu-bind argument \"bogus\"");
  EXPECT_FALSE(ParseCpuBind("map_cpu:"));
  EXPECT_FALSE(ParseCpuBind("map_cpu:x1"));
  EXPECT_FALSE(ParseCpuBind("mask_cpu:0xg"));
  EXPECT_FALSE(ParseCpuBind("cores:1"));
}

TEST(CpuBindVariablesTest, AsSrunSetsThem) {
  Variables map = CpuBindVariables(Cpu("map_cpu:1,0"));
  EXPECT_EQ(Value(map, "SLURM_CPU_BIND"), "quiet,map_cpu:1,0");
  EXPECT_EQ(Value(map, "SLURM_CPU_BIND_TYPE"), "map_cpu:");
  EXPECT_EQ(Value(map, "SLURM_CPU_BIND_LIST"), "1,0");
  EXPECT_EQ(Value(map, "SLURM_CPU_BIND_VERBOSE"), "quiet");
  EXPECT_EQ(Value(CpuBindVariables(Cpu("v,cores")), "SLURM_CPU_BIND"), "verbose,cores");
}

// A node of 2 sockets, 2 cores each, 2 threads per core: CPUs 0-7, core c holds 2c and 2c+1.
constexpr NodeShape kNode{2, 2, 2};
const Ids kWholeNode{0, 1, 2, 3, 4, 5, 6, 7};

std::optional<Ids> Bound(std::string_view text, const Ids& step, uint32_t local,
                         uint32_t cpus_per_task = 1, std::string_view dist = "") {
  return TaskCpus(Cpu(text), kNode, step, TaskSlot{local, 4, cpus_per_task}, dist);
}

TEST(TaskCpusTest, ExplicitBindingsOnAWholeNode) {
  EXPECT_EQ(Bound("map_cpu:5,2", kWholeNode, 0), (Ids{5}));
  EXPECT_EQ(Bound("map_cpu:5,2", kWholeNode, 3), (Ids{2}));  // the list again from its start
  EXPECT_EQ(Bound("mask_cpu:0x30", kWholeNode, 1), (Ids{4, 5}));
  EXPECT_EQ(Bound("rank", kWholeNode, 2), (Ids{2}));
  EXPECT_EQ(Bound("rank_ldom", kWholeNode, 1), (Ids{4, 5, 6, 7}));  // no NUMA: a socket
  EXPECT_EQ(Bound("map_ldom:0", kWholeNode, 1), (Ids{0, 1, 2, 3}));
  EXPECT_EQ(Bound("none", kWholeNode, 0), std::nullopt);
  // An id the node lacks binds to what the step has, as Slurm's "doesn't match".
  EXPECT_EQ(Bound("map_cpu:99", kWholeNode, 0), kWholeNode);
}

TEST(TaskCpusTest, ExplicitBindingsNeedTheWholeNode) {
  Ids part{0, 1, 2, 3};
  EXPECT_EQ(Bound("map_cpu:1", part, 0), part);
  EXPECT_EQ(Bound("rank", part, 1), part);
}

TEST(TaskCpusTest, AutoBindingsTakeUnitsByTheSocketDistribution) {
  // cyclic (the default): a task's share from one socket, the next task from the next.
  EXPECT_EQ(Bound("cores", kWholeNode, 0), (Ids{0, 1}));
  EXPECT_EQ(Bound("cores", kWholeNode, 1), (Ids{4, 5}));
  EXPECT_EQ(Bound("cores", kWholeNode, 2), (Ids{2, 3}));
  EXPECT_EQ(Bound("cores", kWholeNode, 1, 1, "block"), (Ids{2, 3}));
  EXPECT_EQ(Bound("threads", kWholeNode, 1, 1, "block"), (Ids{1}));
  EXPECT_EQ(Bound("threads", kWholeNode, 1, 2, "block"), (Ids{2, 3}));
  // fcyclic: each CPU of a task from the next socket.
  EXPECT_EQ(Bound("threads", kWholeNode, 0, 2, "fcyclic"), (Ids{0, 4}));
  EXPECT_EQ(Bound("sockets", kWholeNode, 1), (Ids{4, 5, 6, 7}));
  EXPECT_EQ(Bound("cores", Ids{2, 3, 6, 7}, 1, 1, "block"), (Ids{6, 7}));
}

TEST(CpuBindLabelTest, AsSlurmsVerboseLines) {
  EXPECT_EQ(CpuBindLabel(Cpu("map_cpu:0")), "cpu-bind=MAP ");
  EXPECT_EQ(CpuBindLabel(Cpu("cores")), "cpu-bind-cores=MASK");
  EXPECT_EQ(CpuBindLabel(Cpu("none")), "cpu-bind=NONE");
  EXPECT_EQ(MaskText(Ids{}), "0");
  EXPECT_EQ(MaskText(Ids{0}), "1");
  EXPECT_EQ(MaskText(Ids{1, 4}), "12");
  EXPECT_EQ(MaskText(Ids{8}), "100");
}

TEST(MemBindTest, ParsesSetsVariablesAndPicksNodes) {
  auto map = ParseMemBind("v,map_mem:0,1");
  ASSERT_TRUE(map);
  EXPECT_EQ(map->type, MemBindType::kMap);
  Variables variables = MemBindVariables(*map);
  EXPECT_EQ(Value(variables, "SLURM_MEM_BIND"), "verbose,map_mem:0,1");
  EXPECT_EQ(Value(variables, "SLURM_MEM_BIND_TYPE"), "map_mem:");
  EXPECT_EQ(Value(variables, "SLURM_MEM_BIND_PREFER"), "<unset>");
  EXPECT_EQ(**TaskMemoryNodes(*map, TaskSlot{0, 2, 1}, Ids{0}, 2), (Ids{0}));
  EXPECT_EQ(TaskMemoryNodes(*map, TaskSlot{1, 2, 1}, Ids{0}, 1).error(),
            "NUMA node 1 does not exist; cannot bind local task 1 to it (--mem-bind=map_mem:)");
  auto local = ParseMemBind("local,prefer");
  ASSERT_TRUE(local);
  EXPECT_EQ(**TaskMemoryNodes(*local, TaskSlot{3, 4, 1}, Ids{0}, 1), (Ids{0}));
  EXPECT_EQ(MemBindLabel(*local), "mem-bind PREFER LOC");
  EXPECT_EQ(Value(MemBindVariables(*local), "SLURM_MEM_BIND_PREFER"), "prefer");
  EXPECT_FALSE(*TaskMemoryNodes(*ParseMemBind("none"), TaskSlot{}, Ids{0}, 1));
  EXPECT_FALSE(ParseMemBind("far"));
}

TEST(GpuBindTest, EachTaskSeesItsShare) {
  Ids gpus{0, 1, 2, 3};
  auto gpu = [&](std::string_view text, uint32_t local) {
    auto bind = ParseGpuBind(text);
    EXPECT_TRUE(bind) << text;
    return TaskGpus(bind ? *bind : GpuBind{}, gpus, TaskSlot{local, 4, 1});
  };
  EXPECT_EQ(gpu("none", 2), gpus);
  EXPECT_EQ(gpu("closest", 2), gpus);
  EXPECT_EQ(gpu("map_gpu:3,2", 1), (Ids{2}));
  EXPECT_EQ(gpu("mask_gpu:0x3,0xc", 1), (Ids{2, 3}));
  EXPECT_EQ(gpu("single:2", 3), (Ids{1}));
  EXPECT_EQ(gpu("per_task:2", 1), (Ids{2, 3}));
  EXPECT_EQ(gpu("verbose,map_gpu:7", 0), (Ids{0}));  // none of the step's: the first
  EXPECT_FALSE(ParseGpuBind("nearest"));
  EXPECT_FALSE(ParseGpuBind("single:0"));
}

}  // namespace
}  // namespace drover
