// Slurm's license lists: slurm.conf's Licenses= and a job's -L.
#include "common/licenses.h"

#include <gtest/gtest.h>

#include "common/cluster_config.h"

namespace drover {
namespace {

TEST(Licenses, NamesCountsAndRepeats) {
  auto licenses = ParseLicenses(" fluent:4, ansys,fluent*2 ");
  ASSERT_TRUE(licenses) << licenses.error();
  EXPECT_EQ(*licenses, (std::vector<LicenseCount>{{"fluent", 6}, {"ansys", 1}}));
  EXPECT_EQ(FormatLicenses(*licenses), "fluent:6,ansys:1");
  EXPECT_TRUE(ParseLicenses("")->empty());
  EXPECT_EQ(NormalisedLicenses("ansys,fluent:2"), "ansys:1,fluent:2");
  EXPECT_EQ(NormalisedLicenses("bad:"), "bad:");  // as given when it does not parse
}

TEST(Licenses, ErrorsSayWhichPart) {
  EXPECT_EQ(ParseLicenses("fluent:0").error(),
            "'fluent:0': the count must be a whole number from 1");
  EXPECT_EQ(ParseLicenses("a,,b").error(), "'' has no license name (expected name[:count])");
  EXPECT_EQ(ParseLicenses("nastran@slurmdb:2").error(),
            "'nastran@slurmdb' names a remote license; Drover has only local ones");
  EXPECT_FALSE(ParseLicenses("a|b:x"));
}

TEST(Licenses, SlurmConfKey) {
  ConfigLoad load = LoadClusterConfigText(
      "ClusterName=c\nLicenses=fluent:4,ansys\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=ALL\n",
      std::nullopt, std::nullopt);
  ASSERT_TRUE(load.ok()) << load.ErrorText();
  EXPECT_EQ(load.config.settings.licenses,
            (std::vector<LicenseCount>{{"fluent", 4}, {"ansys", 1}}));
  ConfigLoad bad = LoadClusterConfigText(
      "ClusterName=c\nLicenses=fluent:many\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=ALL\n",
      std::nullopt, std::nullopt);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.ErrorText().find("Licenses"), std::string::npos) << bad.ErrorText();
}

}  // namespace
}  // namespace drover
