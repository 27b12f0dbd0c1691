// The agent's address file: written and read back, replaced, and a missing one explained.
#include "common/agent_address.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace drover {
namespace {

namespace fs = std::filesystem;

TEST(AgentAddress, SpoolDirNamesTheNode) {
  ClusterSettings settings;
  settings.slurmd_spool_dir = "/var/spool/%n/x%n";
  EXPECT_EQ(AgentSpoolDir(settings, "n1"), fs::path("/var/spool/n1/xn1"));
  settings.slurmd_spool_dir = "/var/spool/slurmd";
  EXPECT_EQ(AgentSpoolDir(settings, "n1"), fs::path("/var/spool/slurmd"));
}

TEST(AgentAddress, WrittenThenRead) {
  fs::path spool = fs::temp_directory_path() / ("agent_address_test_" + std::to_string(getpid()));
  fs::create_directories(spool);
  auto missing = ReadAgentAddress(spool);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("is droverd running on this node?"), std::string::npos);
  ASSERT_TRUE(WriteAgentAddress(spool, "127.0.0.1:4000").ok());
  ASSERT_TRUE(WriteAgentAddress(spool, "127.0.0.1:4001").ok());
  auto address = ReadAgentAddress(spool);
  fs::remove_all(spool);
  ASSERT_TRUE(address.ok()) << address.error();
  EXPECT_EQ(*address, "127.0.0.1:4001");
}

}  // namespace
}  // namespace drover
