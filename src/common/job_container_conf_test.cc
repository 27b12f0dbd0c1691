// JobContainerType and job_container.conf: BasePath for all nodes or some, AutoBasePath, Dirs,
// and the errors an administrator can act on.
#include "common/job_container_conf.h"

#include <gtest/gtest.h>

namespace drover {
namespace {

constexpr const char* kNodes =
    "ClusterName=c\nNodeName=n[1-3] RealMemory=1000\nPartitionName=p Nodes=ALL Default=YES\n";

ConfigLoad Load(const std::string& slurm, const std::optional<std::string>& job_container) {
  return LoadClusterConfigText(kNodes + slurm, std::nullopt, std::nullopt, std::nullopt,
                               job_container);
}

std::string Errors(const ConfigLoad& load) {
  return load.ErrorText();
}

TEST(JobContainerConf, OffUnlessJobContainerTypeAsks) {
  ConfigLoad load = Load("", "BasePath=/var/jobs\n");
  ASSERT_TRUE(load.ok()) << Errors(load);
  EXPECT_FALSE(load.config.settings.job_container.tmpfs);
  load = Load("JobContainerType=job_container/none\n", std::nullopt);
  ASSERT_TRUE(load.ok()) << Errors(load);
  EXPECT_FALSE(load.config.settings.job_container.tmpfs);
}

TEST(JobContainerConf, BasePathForAllOrSomeNodes) {
  ConfigLoad load = Load("JobContainerType=job_container/tmpfs\n",
                         "AutoBasePath=true\nBasePath=/var/jobs\nDirs=/tmp,/var/tmp,/dev/shm\n"
                         "NodeName=n[2-3] BasePath=/nvme/jobs\n");
  ASSERT_TRUE(load.ok()) << Errors(load);
  const JobContainerConf& conf = load.config.settings.job_container;
  EXPECT_TRUE(conf.tmpfs);
  EXPECT_TRUE(conf.auto_base_path);
  EXPECT_EQ(conf.BasePathFor("n1"), "/var/jobs");
  EXPECT_EQ(conf.BasePathFor("n3"), "/nvme/jobs");
  EXPECT_EQ(conf.dirs, (std::vector<std::string>{"/tmp", "/var/tmp", "/dev/shm"}));
  load = Load("JobContainerType=job_container/tmpfs\n", "BasePath=/var/jobs\n");
  EXPECT_EQ(load.config.settings.job_container.dirs,
            (std::vector<std::string>{"/tmp", "/dev/shm"}));
}

TEST(JobContainerConf, MistakesAreErrorsThatSayWhatToDo) {
  ConfigLoad load = Load("JobContainerType=job_container/tmpfs\n", std::nullopt);
  EXPECT_NE(Errors(load).find("JobContainerType=job_container/tmpfs needs a BasePath for node "
                              "n1: add BasePath=/path to job_container.conf beside slurm.conf"),
            std::string::npos)
      << Errors(load);
  load = Load("JobContainerType=job_container/tmpfs\n", "BasePath=jobs\n");
  EXPECT_NE(Errors(load).find("BasePath=jobs: give an absolute path"), std::string::npos)
      << Errors(load);
  load = Load("JobContainerType=job_container/tmpfs\n", "BasePath=/j\nDirs=/tmp,scratch\n");
  EXPECT_NE(Errors(load).find("Dirs=/tmp,scratch: each directory must be an absolute path"),
            std::string::npos)
      << Errors(load);
  load = Load("JobContainerType=job_container/tmpfs\n", "BasePath=/j\nNodeName=n9 BasePath=/k\n");
  EXPECT_NE(Errors(load).find("node 'n9' is not defined"), std::string::npos) << Errors(load);
  load = Load("JobContainerType=job_container/cncu\n", std::nullopt);
  EXPECT_NE(Errors(load).find("expected job_container/tmpfs or job_container/none"),
            std::string::npos)
      << Errors(load);
}

}  // namespace
}  // namespace drover
