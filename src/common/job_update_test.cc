// scontrol update job's keys: what each sets in a JobSpec, Slurm's aliases, and which keys a
// started job refuses.
#include "common/job_update.h"

#include <gtest/gtest.h>

namespace drover {
namespace {

JobUpdate Parse(std::initializer_list<std::pair<std::string_view, std::string_view>> keys) {
  JobUpdate update;
  for (const auto& [key, value] : keys) {
    Status parsed = ParseJobUpdateKey(key, value, 1000, update);
    EXPECT_TRUE(parsed) << key << "=" << value << ": " << parsed.error();
  }
  return update;
}

TEST(JobUpdate, SetsTheSpecFields) {
  JobUpdate update = Parse({{"NumNodes", "2-4"},
                            {"numtasks", "8"},
                            {"CpusPerTask", "2"},
                            {"MinMemoryCPU", "1G"},
                            {"ReqNodeList", "n[1-2]"},
                            {"ExcNodeList", "n3"},
                            {"Features", "a100&ib"},
                            {"TresPerNode", "gres/gpu:h100:2"},
                            {"StartTime", "now+1hour"},
                            {"Switches", "1@10:00"},
                            {"OverSubscribe", "no"},
                            {"Requeue", "0"},
                            {"ArrayTaskThrottle", "3"},
                            {"StdOut", "out-%j"},
                            {"Dependency", "afterok:5"}});
  JobSpec spec;
  ASSERT_EQ(ApplyJobUpdate(update, true, false, spec), "");
  EXPECT_EQ(spec.min_nodes, 2u);
  EXPECT_EQ(spec.max_nodes, 4u);
  EXPECT_EQ(spec.ntasks, 8u);
  EXPECT_EQ(spec.cpus_per_task, 2u);
  EXPECT_EQ(spec.mem_per_cpu_mb, 1024u);
  EXPECT_EQ(spec.nodelist, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(spec.exclude, (std::vector<std::string>{"n3"}));
  EXPECT_EQ(spec.constraint, "a100&ib");
  EXPECT_EQ(spec.gpus_per_node, 2u);
  EXPECT_EQ(spec.gpu_type, "h100");
  EXPECT_EQ(spec.begin_time, 1000 + 3600);
  EXPECT_EQ(spec.switches, 1u);
  EXPECT_EQ(spec.switch_wait_seconds, 600);
  EXPECT_TRUE(spec.exclusive);
  EXPECT_FALSE(spec.requeue);
  EXPECT_EQ(spec.array_max_running, 3u);
  EXPECT_EQ(spec.stdout_path, "out-%j");
  ASSERT_EQ(spec.dependency.terms.size(), 1u);
  EXPECT_EQ(spec.dependency.terms[0].job_id, 5u);
}

TEST(JobUpdate, OnlySomeKeysChangeAStartedJob) {
  JobSpec spec;
  spec.comment = "old";
  EXPECT_EQ(ApplyJobUpdate(Parse({{"Comment", "new"}, {"Requeue", "yes"}}), false, false, spec),
            "");
  EXPECT_EQ(spec.comment, "new");
  EXPECT_EQ(ApplyJobUpdate(Parse({{"NumTasks", "4"}}), false, false, spec),
            "Job is no longer pending execution");
  EXPECT_EQ(spec.ntasks, 1u);
}

TEST(JobUpdate, RefusesBadValuesInSlurmsWords) {
  struct Case {
    std::string_view key, value, error;
  };
  for (const Case& c :
       {Case{"CpusPerTask", "0", "Invalid CpusPerTask value: 0"},
        Case{"NumNodes", "x", "Invalid NumNodes value: x"},
        Case{"Gres", "gpu:h100:x", "Invalid generic resource (gres) specification"},
        Case{"Licenses", "matlab:x", "Invalid license specification"},
        Case{"StartTime", "someday", "Invalid StartTime value: someday"},
        Case{"Contiguous", "maybe", "Invalid Contiguous value: maybe"},
        Case{"Deadline", "now", "Invalid Deadline value: now (it must be later than now)"},
        Case{"MailType", "SOMETIMES", "Invalid MailType value: SOMETIMES"},
        Case{"MailUser", "-oQ/tmp/x", "Invalid MailUser value: -oQ/tmp/x"},
        Case{"MailUser", "a|b", "Invalid MailUser value: a|b"},
        Case{"SiteFactor", "2147483646", "Invalid SiteFactor value: 2147483646"},
        Case{"Priority", "-1", "Invalid Priority value: -1"},
        Case{"DelayBoot", "soon", "Invalid DelayBoot value: soon"},
        Case{"Reboot", "maybe", "Invalid Reboot value: maybe"},
        Case{"CoreSpec", "1", "Update of this parameter is not supported: CoreSpec"}}) {
    JobUpdate update;
    Status parsed = ParseJobUpdateKey(c.key, c.value, 0, update);
    ASSERT_FALSE(parsed) << c.key;
    EXPECT_EQ(parsed.error(), c.error);
    EXPECT_TRUE(update.fields.empty());
  }
  EXPECT_TRUE(IsJobUpdateKey("minmemorynode"));
  EXPECT_FALSE(IsJobUpdateKey("timelimit"));  // scontrol's own fields
}

// The keys an operator's update may set beyond the submission options: who may, and when.
TEST(JobUpdate, OperatorKeysAndTheKeysOfMissingFeatures) {
  JobUpdate update = Parse({{"AdminComment", "checked"},
                            {"Contiguous", "yes"},
                            {"Deadline", "now+1day"},
                            {"MinTmpDiskNode", "2G"},
                            {"SiteFactor", "-300"}});
  JobSpec spec;
  EXPECT_EQ(ApplyJobUpdate(update, true, false, spec), "Access/permission denied");
  ASSERT_EQ(ApplyJobUpdate(update, true, true, spec), "");
  EXPECT_EQ(spec.admin_comment, "checked");
  EXPECT_TRUE(spec.contiguous);
  EXPECT_EQ(spec.deadline, 1000 + 86400);
  EXPECT_EQ(spec.min_tmp_disk_mb, 2048u);
  EXPECT_EQ(spec.site_factor, -300);

  update = Parse({{"MailType", "end,fail,time_limit_90"},
                  {"MailUser", "bob@example.org"},
                  {"MinCPUsNode", "4"},
                  {"ReqSockets", "2"},
                  {"ReqCores", "8"},
                  {"ReqThreads", "1"},
                  {"Prefer", "a100"},
                  {"Priority", "5"},
                  {"WCKey", "proj"},
                  {"BurstBuffer", ""},
                  {"Reboot", "yes"},
                  {"DelayBoot", "10:00"}});
  ASSERT_EQ(ApplyJobUpdate(update, true, false, spec), "");
  EXPECT_EQ(spec.mail_type, "END,FAIL,TIME_LIMIT_90");
  EXPECT_EQ(spec.mail_user, "bob@example.org");
  EXPECT_EQ(spec.min_cpus_per_node, 4u);
  EXPECT_EQ(spec.min_sockets, 2u);
  EXPECT_EQ(spec.min_cores_per_socket, 8u);
  EXPECT_EQ(spec.min_threads_per_core, 1u);
  EXPECT_EQ(spec.prefer, "a100");
  EXPECT_EQ(spec.priority, 5u);  // who may set it is the controller's check

  // A started job takes mail changes, not the others.
  EXPECT_EQ(ApplyJobUpdate(Parse({{"MailType", "NONE"}, {"MailUser", ""}}), false, false, spec),
            "");
  EXPECT_EQ(spec.mail_type, "");
  EXPECT_EQ(spec.mail_user, "");
  EXPECT_EQ(ApplyJobUpdate(Parse({{"Prefer", "h100"}}), false, false, spec),
            "Job is no longer pending execution");
  EXPECT_EQ(ApplyJobUpdate(Parse({{"Deadline", "now+2days"}}), false, true, spec),
            "Job is no longer pending execution");
  EXPECT_TRUE(IsSafeMailUser("alice.smith+jobs@example.org"));
  EXPECT_FALSE(IsSafeMailUser(std::string(257, 'a')));
  EXPECT_FALSE(IsSafeMailUser(""));
}

}  // namespace
}  // namespace drover
