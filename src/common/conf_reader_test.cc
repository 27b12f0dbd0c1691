// Slurm configuration syntax: comments, continuation, quoting, spacing and Include.
#include "common/conf_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace drover {
namespace {

std::string Render(const std::vector<ConfLine>& lines) {
  std::string out;
  for (const ConfLine& line : lines) {
    out += std::to_string(line.where.line) + ":";
    for (const ConfPair& pair : line.pairs) out += " [" + pair.key + "]=[" + pair.value + "]";
    out += "\n";
  }
  return out;
}

TEST(ConfReader, Syntax) {
  struct Case {
    std::string text, expected, error;
  } cases[] = {
      {"ClusterName=a\n", "1: [ClusterName]=[a]\n", ""},
      {"# only a comment\n\n   \nKillWait=30 # trailing\n", "4: [KillWait]=[30]\n", ""},
      {"NodeName=n1 \\\n  CPUs=4 \\\n  RealMemory=100\nX=1\n",
       "1: [NodeName]=[n1] [CPUs]=[4] [RealMemory]=[100]\n4: [X]=[1]\n", ""},
      {"NodeName=n1 Reason=\"under repair now\" State=DRAIN\n",
       "1: [NodeName]=[n1] [Reason]=[under repair now] [State]=[DRAIN]\n", ""},
      {"KillWait = 30\n", "1: [KillWait]=[30]\n", ""},
      {"SchedulerParameters=bf_window=100,bf_continue\n",
       "1: [SchedulerParameters]=[bf_window=100,bf_continue]\n", ""},
      {"Reason=a\\#b\n", "1: [Reason]=[a#b]\n", ""},
      {"ClusterName=a\r\n", "1: [ClusterName]=[a]\n", ""},
      {"ClusterName\n", "", "x.conf:1: expected Key=Value, found 'ClusterName'"},
      {"A=1 junk B=2\n", "", "x.conf:1: expected Key=Value, found 'junk'"},
      {"Reason=\"open\n", "", "x.conf:1: unterminated quote in the value of 'Reason'"},
      {"=5\n", "", "x.conf:1: expected Key=Value, found '=5'"},
  };
  for (const Case& c : cases) {
    Diagnostics diagnostics;
    auto lines = ReadConfText(c.text, "x.conf", diagnostics);
    EXPECT_EQ(Render(lines), c.expected) << c.text;
    std::string errors;
    for (const auto& e : diagnostics.errors()) errors += e.ToString();
    EXPECT_EQ(errors, c.error) << c.text;
  }
}

class ConfReaderFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("drover_conf_reader_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / "sub");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  std::string Path(const std::string& name) { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

TEST_F(ConfReaderFiles, IncludeIsRelativeToTheIncludingFile) {
  Write("slurm.conf", "ClusterName=c\nInclude sub/nodes.conf\nKillWait=5\n");
  Write("sub/nodes.conf", "NodeName=n1 CPUs=2\ninclude more.conf\n");
  Write("sub/more.conf", "NodeName=n2 CPUs=2\n");
  Diagnostics diagnostics;
  auto lines = ReadConfFile(Path("slurm.conf"), diagnostics);
  EXPECT_FALSE(diagnostics.has_errors());
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1].pairs[0].value, "n1");
  EXPECT_EQ(lines[1].where.file, Path("sub/nodes.conf"));
  EXPECT_EQ(lines[2].where.file, Path("sub/more.conf"));
  EXPECT_EQ(lines[3].pairs[0].key, "KillWait");
}

TEST_F(ConfReaderFiles, IncludeLoopAndMissingFileAreErrors) {
  Write("a.conf", "Include b.conf\n");
  Write("b.conf", "Include a.conf\n");
  Diagnostics loop;
  ReadConfFile(Path("a.conf"), loop);
  ASSERT_EQ(loop.errors().size(), 1u);
  EXPECT_EQ(loop.errors()[0].ToString(),
            Path("b.conf") + ":1: '" + Path("a.conf") + "' includes itself (Include loop)");

  Write("c.conf", "Include nowhere.conf\n");
  Diagnostics missing;
  ReadConfFile(Path("c.conf"), missing);
  ASSERT_EQ(missing.errors().size(), 1u);
  EXPECT_EQ(
      missing.errors()[0].ToString(),
      Path("c.conf") + ":1: cannot read '" + Path("nowhere.conf") + "': No such file or directory");
}

}  // namespace
}  // namespace drover
