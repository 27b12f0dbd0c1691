// droverd's options: GNU getopt's forms, droverd's words for each mistake, --help's precedence.
#include "agent/daemon/daemon_options.h"

#include <gtest/gtest.h>

namespace drover::agent {
namespace {

// What ParseDaemonOptions printed on stderr, up to the usage text; "" when it succeeded.
std::string MistakeOf(const std::vector<std::string>& args) {
  DaemonOptions options;
  testing::internal::CaptureStderr();
  bool ok = ParseDaemonOptions(args, options);
  std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(ok, said.empty()) << said;
  return said.substr(0, said.find('\n'));
}

TEST(DaemonOptions, ReadsEveryOption) {
  DaemonOptions options;
  ASSERT_TRUE(
      ParseDaemonOptions({"-N", "n1", "--conf", "c", "--spool", "s", "--listen", "l", "--port-file",
                          "p", "--controller", "h:1", "--emulate", "--stepd", "d"},
                         options));
  EXPECT_EQ(options.node, "n1");
  EXPECT_EQ(options.conf, "c");
  EXPECT_EQ(options.spool, "s");
  EXPECT_EQ(options.listen, "l");
  EXPECT_EQ(options.port_file, "p");
  EXPECT_EQ(options.controller, "h:1");
  EXPECT_EQ(options.stepd, "d");
  EXPECT_TRUE(options.emulate);
  ASSERT_TRUE(ParseDaemonOptions({"--node=n2", "--conf=--emulate"}, options));
  EXPECT_EQ(options.node, "n2");
  EXPECT_EQ(options.conf, "--emulate");
}

TEST(DaemonOptions, MistakesAreNamedAsTyped) {
  EXPECT_EQ(MistakeOf({"-N", "n", "--bogus"}), "droverd: unknown option --bogus");
  EXPECT_EQ(MistakeOf({"-N", "n", "--bogus=1"}), "droverd: unknown option --bogus=1");
  EXPECT_EQ(MistakeOf({"-x", "-N", "n"}), "droverd: unknown option -x");
  EXPECT_EQ(MistakeOf({"-N", "n", "extra"}), "droverd: unknown option extra");
  EXPECT_EQ(MistakeOf({"-N", "n", "--emulate=yes"}), "droverd: unknown option --emulate=yes");
  EXPECT_EQ(MistakeOf({"-N", "n", "--conf"}), "droverd: --conf needs a value");
  EXPECT_EQ(MistakeOf({"-N"}), "droverd: -N needs a value");
  EXPECT_EQ(MistakeOf({"--emulate"}), "droverd: which node is this? give -N NODE");
  EXPECT_EQ(MistakeOf({"-N", "n", "--conf", "--bogus"}), "");  // a value, whatever it looks like
}

TEST(DaemonOptions, HelpBeforeAMistakeWinsAndExitsZero) {
  DaemonOptions options;
  EXPECT_EXIT(ParseDaemonOptions({"--help"}, options), testing::ExitedWithCode(0), "");
  EXPECT_EXIT(ParseDaemonOptions({"-h", "--bogus"}, options), testing::ExitedWithCode(0), "");
  EXPECT_FALSE(ParseDaemonOptions({"--bogus", "--help"}, options));
}

}  // namespace
}  // namespace drover::agent
