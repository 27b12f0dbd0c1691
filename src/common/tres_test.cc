// Table tests for TRES strings and billing weights: name canonicalisation, Slurm's print order,
// memory counts, suggestions for unknown names, and every malformed entry's exact message.
#include "common/tres.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace drover {
namespace {

struct ParseCase {
  std::string_view input;
  std::string_view formatted;  // FormatTres of the result when error is empty
  std::string_view error;      // exact message, empty for success
};

TEST(TresTest, ParseAndFormat) {
  const ParseCase cases[] = {
      {"", "", ""},
      {"  ", "", ""},
      {"cpu=8", "cpu=8", ""},
      {"CPU=8,Mem=4000", "cpu=8,mem=4000M", ""},
      {"mem=16G,cpu=64", "cpu=64,mem=16G", ""},
      {"cpu=8, mem=1T", "cpu=8,mem=1T", ""},
      {"mem=1024K", "mem=1M", ""},
      {"mem=16GB", "mem=16G", ""},
      {"cpu=18446744073709551615", "cpu=18446744073709551615", ""},
      {"cpu=64,mem=512G,node=1,billing=64,gres/gpu=8,gres/gpu:h100=8",
       "cpu=64,mem=512G,node=1,billing=64,gres/gpu=8,gres/gpu:h100=8", ""},
      {"gres/gpu:h100=8,gres/gpu=8,license/Matlab=2,GRES/gpu:a100=1,node=1,energy=5,pages=1,"
       "vmem=2,FS/Disk=3,billing=4,mem=0,cpu=0",
       "cpu=0,mem=0,energy=5,node=1,billing=4,fs/disk=3,vmem=2,pages=1,gres/gpu=8,"
       "gres/gpu:a100=1,gres/gpu:h100=8,license/Matlab=2",
       ""},
      {"gres/gpu_x=1,gres/gpu:h100=2,gres/gpu=3", "gres/gpu=3,gres/gpu:h100=2,gres/gpu_x=1", ""},
      {"gres/gpu-x=1,gres/gpu:h100=2,gres/gpu=3", "gres/gpu=3,gres/gpu:h100=2,gres/gpu-x=1", ""},
      {"License/Foo=1,bb/datawarp=1,IC/ofed=2,fs/lustre=3,gres/gpu=1",
       "bb/datawarp=1,fs/lustre=3,gres/gpu=1,ic/ofed=2,license/Foo=1", ""},
      {"gpu=8", "", "unknown TRES 'gpu' in 'gpu=8' (did you mean 'gres/gpu'?)"},
      {"GPU=8", "", "unknown TRES 'GPU' in 'GPU=8' (did you mean 'gres/gpu'?)"},
      {"gpus=8", "", "unknown TRES 'gpus' in 'gpus=8' (did you mean 'gres/gpu'?)"},
      {"cpu=1,shard=4", "", "unknown TRES 'shard' in 'shard=4' (did you mean 'gres/shard'?)"},
      {"fpga=1", "", "unknown TRES 'fpga' in 'fpga=1' (did you mean 'gres/fpga'?)"},
      {"cpus=8", "", "unknown TRES 'cpus' in 'cpus=8' (did you mean 'cpu'?)"},
      {"nodes=1", "", "unknown TRES 'nodes' in 'nodes=1' (did you mean 'node'?)"},
      {"memory=4G", "", "unknown TRES 'memory' in 'memory=4G' (did you mean 'mem'?)"},
      {"gers/gpu=1", "", "unknown TRES 'gers/gpu' in 'gers/gpu=1' (did you mean 'gres/gpu'?)"},
      {"gres/=1", "", "unknown TRES 'gres/' in 'gres/=1'"},
      {"gres=1", "", "unknown TRES 'gres' in 'gres=1'"},
      {"gres/g pu=1", "", "unknown TRES 'gres/g pu' in 'gres/g pu=1'"},
      {"gers/g pu=1", "", "unknown TRES 'gers/g pu' in 'gers/g pu=1'"},
      {"npu=1", "", "unknown TRES 'npu' in 'npu=1' (did you mean 'gres/gpu'?)"},
      {"cpi=1", "", "unknown TRES 'cpi' in 'cpi=1' (did you mean 'cpu'?)"},
      {"xyzzy/a=1", "", "unknown TRES 'xyzzy/a' in 'xyzzy/a=1'"},
      {"c pu=1", "", "unknown TRES 'c pu' in 'c pu=1'"},
      {"cpu", "", "invalid TRES 'cpu' (expected name=count, e.g. cpu=8)"},
      {"=4", "", "invalid TRES '=4' (expected name=count, e.g. cpu=8)"},
      {"cpu=1,,mem=2", "", "empty TRES entry in 'cpu=1,,mem=2' (expected name=count, e.g. cpu=8)"},
      {"cpu=1,", "", "empty TRES entry in 'cpu=1,' (expected name=count, e.g. cpu=8)"},
      {",cpu=1", "", "empty TRES entry in ',cpu=1' (expected name=count, e.g. cpu=8)"},
      {"cpu=x", "", "invalid count 'x' for TRES 'cpu'"},
      {"cpu=", "", "invalid count '' for TRES 'cpu'"},
      {"cpu=-1", "", "invalid count '-1' for TRES 'cpu'"},
      {"cpu=1.5", "", "invalid count '1.5' for TRES 'cpu'"},
      {"node=4K", "", "invalid count '4K' for TRES 'node'"},
      {"gres/gpu=2x", "", "invalid count '2x' for TRES 'gres/gpu'"},
      {"cpu=99999999999999999999", "", "invalid count '99999999999999999999' for TRES 'cpu'"},
      {"mem=16X", "", "invalid count '16X' for TRES 'mem' (expected a memory size, e.g. 16G)"},
      {"mem=1.5G", "", "invalid count '1.5G' for TRES 'mem' (expected a memory size, e.g. 16G)"},
      {"mem=99999999999999999999G", "",
       "invalid count '99999999999999999999G' for TRES 'mem' (expected a memory size, e.g. 16G)"},
      {"cpu=1,CPU=2", "", "duplicate TRES 'cpu' in 'cpu=1,CPU=2'"},
      {"gres/gpu=1,GRES/gpu=2", "", "duplicate TRES 'gres/gpu' in 'gres/gpu=1,GRES/gpu=2'"},
  };
  for (const ParseCase& c : cases) {
    SCOPED_TRACE(c.input);
    Result<TresList> got = ParseTres(c.input);
    if (c.error.empty()) {
      ASSERT_TRUE(got.ok()) << got.error();
      EXPECT_EQ(FormatTres(*got), c.formatted);
      // Printing is Slurm's canonical form, so it must read back to itself.
      Result<TresList> again = ParseTres(FormatTres(*got));
      ASSERT_TRUE(again.ok()) << again.error();
      EXPECT_EQ(FormatTres(*again), c.formatted);
    } else {
      ASSERT_FALSE(got.ok()) << FormatTres(*got);
      EXPECT_EQ(got.error(), c.error);
    }
  }
}

TEST(TresTest, ParsedValues) {
  Result<TresList> tres = ParseTres("CPU=4,Mem=2G,GRES/gpu:h100=8,license/Matlab=1");
  ASSERT_TRUE(tres.ok()) << tres.error();
  EXPECT_EQ(tres->Get("cpu"), 4u);
  EXPECT_EQ(tres->Get("mem"), 2048u);
  EXPECT_EQ(tres->Get("gres/gpu:h100"), 8u);
  EXPECT_EQ(tres->Get("license/Matlab"), 1u);
  EXPECT_FALSE(tres->Has("CPU"));
  EXPECT_FALSE(tres->Has("gres/gpu"));
  EXPECT_EQ(tres->Get("gres/gpu"), 0u);
}

TEST(TresTest, ListOperations) {
  TresList tres;
  EXPECT_TRUE(tres.empty());
  tres.Set("gres/gpu", 2);
  tres.Set("billing", 8);
  tres.Set("mem", 4000);
  tres.Set("cpu", 8);
  // What `scontrol show node` prints as CfgTRES, whatever order the entries were set in.
  EXPECT_EQ(FormatTres(tres), "cpu=8,mem=4000M,billing=8,gres/gpu=2");
  tres.Set("cpu", 16);
  tres.Add("cpu", 4);
  tres.Add("node", 1);
  EXPECT_EQ(tres.Get("cpu"), 20u);
  EXPECT_TRUE(tres.Has("node"));
  EXPECT_EQ(tres.items().size(), 5u);
  tres.Add("cpu", std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(tres.Get("cpu"), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(FormatTres(TresList()), "");
}

struct WeightCase {
  std::string_view input;
  std::vector<std::pair<std::string, double>> weights;  // when error is empty
  std::string_view error;                               // exact message, empty for success
};

TEST(TresTest, ParseWeights) {
  const WeightCase cases[] = {
      {"", {}, ""},
      {"CPU=1.0,Mem=0.25G,GRES/gpu=2.0",
       {{"cpu", 1.0}, {"mem", 0.25 / 1024}, {"gres/gpu", 2.0}},
       ""},
      {"mem=2", {{"mem", 2.0}}, ""},
      {"mem=2M", {{"mem", 2.0}}, ""},
      {"mem=1K", {{"mem", 1024.0}}, ""},
      {"mem=.5g", {{"mem", 0.5 / 1024}}, ""},
      {"mem=1024T", {{"mem", 1024.0 / 1048576}}, ""},
      {"cpu=0,node=3.", {{"cpu", 0.0}, {"node", 3.0}}, ""},
      {"gres/gpu:h100=4.5, billing=1", {{"gres/gpu:h100", 4.5}, {"billing", 1.0}}, ""},
      {"cpu=-1",
       {},
       "invalid weight '-1' for TRES 'cpu' (expected a non-negative number, e.g. 1.0)"},
      {"cpu=+1",
       {},
       "invalid weight '+1' for TRES 'cpu' (expected a non-negative number, e.g. 1.0)"},
      {"cpu=1e3",
       {},
       "invalid weight '1e3' for TRES 'cpu' (expected a non-negative number, e.g. 1.0)"},
      {"cpu=inf",
       {},
       "invalid weight 'inf' for TRES 'cpu' (expected a non-negative number, e.g. 1.0)"},
      {"cpu=nan",
       {},
       "invalid weight 'nan' for TRES 'cpu' (expected a non-negative number, e.g. 1.0)"},
      {"cpu=", {}, "invalid weight '' for TRES 'cpu' (expected a non-negative number, e.g. 1.0)"},
      {"cpu=1.0.0",
       {},
       "invalid weight '1.0.0' for TRES 'cpu' (expected a non-negative number, e.g. 1.0)"},
      {"cpu=1G",
       {},
       "invalid weight '1G' for TRES 'cpu' (expected a non-negative number, e.g. 1.0)"},
      {"mem=1X",
       {},
       "invalid weight '1X' for TRES 'mem' (expected a non-negative number with an optional K, "
       "M, G or T, e.g. 0.25G)"},
      {"mem=G",
       {},
       "invalid weight 'G' for TRES 'mem' (expected a non-negative number with an optional K, M, "
       "G or T, e.g. 0.25G)"},
      {"mem=0.25GB",
       {},
       "invalid weight '0.25GB' for TRES 'mem' (expected a non-negative number with an optional "
       "K, M, G or T, e.g. 0.25G)"},
      {"gpu=2.0", {}, "unknown TRES 'gpu' in 'gpu=2.0' (did you mean 'gres/gpu'?)"},
      {"cpu=1,Cpu=2", {}, "duplicate TRES 'cpu' in 'cpu=1,Cpu=2'"},
      {"cpu", {}, "invalid TRES 'cpu' (expected name=weight, e.g. cpu=1.0)"},
      {"cpu=1,,mem=1",
       {},
       "empty TRES entry in 'cpu=1,,mem=1' (expected name=weight, e.g. cpu=1.0)"},
  };
  for (const WeightCase& c : cases) {
    SCOPED_TRACE(c.input);
    auto got = ParseTresWeights(c.input);
    if (!c.error.empty()) {
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(got.error(), c.error);
      continue;
    }
    ASSERT_TRUE(got.ok()) << got.error();
    ASSERT_EQ(got->size(), c.weights.size());
    for (size_t i = 0; i < got->size(); ++i) {
      EXPECT_EQ((*got)[i].first, c.weights[i].first);
      EXPECT_DOUBLE_EQ((*got)[i].second, c.weights[i].second);
    }
  }
}

}  // namespace
}  // namespace drover
