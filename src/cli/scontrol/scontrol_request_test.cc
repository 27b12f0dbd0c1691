// scontrol's Key=Value arguments: what each becomes in the controller's request, and the line
// printed for what Drover does not take.
#include "cli/scontrol/scontrol_request.h"

#include <gtest/gtest.h>

#include <vector>

namespace drover::cli::scontrol {
namespace {

using Words = std::vector<std::string>;

TEST(ScontrolRequest, JobUpdateFields) {
  auto request = ParseJobUpdate(
      Words{"JobId=12", "TimeLimit=1:30:00", "nice=-5", "Partition=gpu", "JobName=x", "QOS=high"},
      0);
  ASSERT_TRUE(request) << request.error();
  EXPECT_EQ(request->filter().job_ids(0), 12u);
  EXPECT_EQ(request->time_limit_seconds(), 5400);
  EXPECT_EQ(request->nice(), -5);
  EXPECT_EQ(request->partition(), "gpu");
  EXPECT_EQ(request->name(), "x");
  EXPECT_EQ(request->qos(), "high");
}

TEST(ScontrolRequest, JobUpdateTargets) {
  struct Case {
    Words words;
    uint64_t job;
    int64_t task;  // -1: not an array task
  };
  for (const Case& c :
       {Case{{"job", "7", "TimeLimit=10"}, 7, -1}, Case{{"job", "JobId=7", "TimeLimit=10"}, 7, -1},
        Case{{"jobid=7_3", "TimeLimit=10"}, 7, 3}, Case{{"JOBID=8", "Name=n"}, 8, -1}}) {
    auto request = ParseJobUpdate(c.words, 0);
    ASSERT_TRUE(request) << c.words[0] << ": " << request.error();
    if (c.task < 0) {
      EXPECT_EQ(request->filter().job_ids(0), c.job);
    } else {
      EXPECT_EQ(request->filter().array_tasks(0).array_job_id(), c.job);
      EXPECT_EQ(request->filter().array_tasks(0).task_id(), c.task);
    }
  }
}

TEST(ScontrolRequest, JobUpdateRefusals) {
  struct Case {
    Words words;
    std::string error;
  };
  for (const Case& c : {
           Case{{"JobId=12", "Bogus=a100"},
                "Update of this parameter is not supported: Bogus=a100"},
           Case{{"JobId=12", "NumNodes=0"}, "Invalid NumNodes value: 0"},
           Case{{"JobId=12", "NumNodes=3-2"}, "Invalid NumNodes value: 2"},
           Case{{"JobId=12", "Licenses=matlab:0"}, "Invalid license specification"},
           Case{{"JobId=12", "Dependency=after"}, "Job dependency problem"},
           Case{{"JobId=12", "Requeue=maybe"}, "Invalid Requeue value: maybe"},
           Case{{"JobId=12", "MinMemoryNode=lots"}, "Invalid MinMemoryNode value: lots"},
           Case{{"JobId=12_[3-1]", "Comment=x"}, "Invalid job id specified: 12_[3-1]"},
           Case{{"Comment=x"}, "No job identification provided"},
           Case{{"JobId=12", "TimeLimit=soon"}, "Invalid TimeLimit value: soon"},
           Case{{"JobId=12", "Nice=x"}, "Invalid nice value: x"},
           Case{{"JobId=abc", "Nice=1"}, "Invalid job id specified: abc"},
           Case{{"JobId=12"}, "No changes specified"},
           Case{{"job"}, "No job identification provided"},
       }) {
    auto request = ParseJobUpdate(c.words, 0);
    ASSERT_FALSE(request) << c.words.back();
    EXPECT_EQ(request.error(), c.error);
  }
}

TEST(ScontrolRequest, JobUpdateSettingsAndArrayRanges) {
  auto request = ParseJobUpdate(Words{"JobId=12_[1-3],14", "Features=a100", "NumNodes=2-3",
                                      "Dependency=afterok:5", "minmemorynode=4G"},
                                0);
  ASSERT_TRUE(request) << request.error();
  ASSERT_EQ(request->filter().array_tasks_size(), 3);
  EXPECT_EQ(request->filter().array_tasks(2).task_id(), 3u);
  EXPECT_EQ(request->filter().job_ids(0), 14u);
  EXPECT_EQ(request->settings_size(), 4);
  EXPECT_EQ(request->settings(3), "minmemorynode=4G");
}

TEST(ScontrolRequest, JobUpdateByName) {
  auto request = ParseJobUpdate(Words{"JobName=train", "TimeLimit=10"}, 0);
  ASSERT_TRUE(request) << request.error();
  EXPECT_EQ(request->filter().name(), "train");
  EXPECT_FALSE(request->filter().user().empty());
  EXPECT_FALSE(request->has_name());  // names the jobs, does not rename them
  EXPECT_EQ(request->time_limit_seconds(), 600);
}

TEST(ScontrolRequest, NodeUpdate) {
  auto request = ParseNodeUpdate(Words{"NodeName=n[1-2]", "State=DRAIN", "Reason=bad fan"});
  ASSERT_TRUE(request) << request.error();
  EXPECT_EQ(request->nodes(), "n[1-2]");
  EXPECT_EQ(request->state(), "drain");
  EXPECT_EQ(request->reason(), "bad fan");
  EXPECT_TRUE(ParseNodeUpdate(Words{"node", "n1", "state=resume"}));
  EXPECT_EQ(ParseNodeUpdate(Words{"NodeName=n1", "State=NoResp"})->state(), "noresp");
  EXPECT_EQ(ParseNodeUpdate(Words{"NodeName=n1", "State=fail", "Reason=x"})->state(), "fail");
  auto future = ParseNodeUpdate(Words{"NodeName=n1", "State=FUTURE"});
  ASSERT_FALSE(future);
  EXPECT_NE(future.error().find("Invalid input: State=FUTURE"), std::string::npos);
  EXPECT_FALSE(ParseNodeUpdate(Words{"NodeName=n1", "State=POWER_UP"}));
  EXPECT_FALSE(ParseNodeUpdate(Words{"NodeName=n1", "State=sideways"}));
  EXPECT_FALSE(ParseNodeUpdate(Words{"NodeName=n1"}));
  EXPECT_FALSE(ParseNodeUpdate(Words{"NodeName=n1", "Weight=0"}));
  EXPECT_FALSE(ParseNodeUpdate(Words{"NodeName=n1", "Gres=gpu:2"}));
  EXPECT_EQ(ParseNodeUpdate(Words{"NodeName=n1", "State=Cancel_Reboot"})->state(), "cancel_reboot");
}

TEST(ScontrolRequest, Reboot) {
  auto request = ParseReboot(Words{"asap", "nextstate=down", "reason=new firmware", "n[1-2]"});
  ASSERT_TRUE(request) << request.error();
  EXPECT_TRUE(request->asap());
  EXPECT_EQ(request->next_state(), "DOWN");
  EXPECT_EQ(request->reason(), "new firmware");
  EXPECT_EQ(request->nodes(), "n[1-2]");
  EXPECT_FALSE(request->cancel());
  EXPECT_EQ(ParseReboot(Words{"all"})->nodes(), "ALL");
  EXPECT_FALSE(ParseReboot(Words{"asap"}));  // no nodes
  EXPECT_FALSE(ParseReboot(Words{"nextstate=idle", "n1"}));
  EXPECT_FALSE(ParseReboot(Words{"n1", "n2"}));
  EXPECT_FALSE(ParseReboot(Words{"speed=fast", "n1"}));
}

TEST(ScontrolRequest, NodeUpdateKeys) {
  auto request = ParseNodeUpdate(Words{"NodeName=n1", "Weight=30", "AvailableFeatures=a,b",
                                       "ActiveFeatures=a", "Comment=new fan", "Extra="});
  ASSERT_TRUE(request) << request.error();
  EXPECT_TRUE(request->state().empty());
  EXPECT_EQ(request->weight(), 30u);
  EXPECT_EQ(request->features(), "a,b");
  EXPECT_EQ(request->active_features(), "a");
  EXPECT_EQ(request->comment(), "new fan");
  EXPECT_TRUE(request->has_extra());
  EXPECT_EQ(ParseNodeUpdate(Words{"NodeName=n1", "Features=x"})->features(), "x");
}

TEST(ScontrolRequest, PartitionUpdate) {
  auto request =
      ParsePartitionUpdate(Words{"PartitionName=debug", "Nodes=n[1-2]", "MaxTime=30"}, true);
  ASSERT_TRUE(request) << request.error();
  EXPECT_TRUE(request->create());
  EXPECT_EQ(request->name(), "debug");
  EXPECT_EQ(request->settings_size(), 2);
  EXPECT_EQ(request->settings(1), "MaxTime=30");
  // Keys as slurm.conf's partition line takes them, in any case.
  EXPECT_TRUE(
      ParsePartitionUpdate(Words{"partitionname=p", "state=DRAIN", "priorityTIER=3"}, false));
  auto bogus = ParsePartitionUpdate(Words{"PartitionName=p", "Bogus=1"}, false);
  ASSERT_FALSE(bogus);
  EXPECT_EQ(bogus.error(), "Update of this parameter is not supported: Bogus=1");
  EXPECT_EQ(ParsePartitionUpdate(Words{"MaxTime=5"}, false).error(),
            "PartitionName must be given.");
  EXPECT_EQ(ParsePartitionUpdate(Words{"PartitionName=p"}, false).error(), "No changes specified");
  EXPECT_TRUE(ParsePartitionUpdate(Words{"PartitionName=p"}, true));
}

TEST(ScontrolRequest, Reservation) {
  const int64_t now = 1'800'000'000;
  auto request = ParseReservation(
      Words{"reservation", "ReservationName=maint", "StartTime=now", "Duration=2-00:00:00",
            "Nodes=n[1-2]", "Users=root", "Flags=MAINT,IGNORE_JOBS", "PartitionName=debug"},
      now);
  ASSERT_TRUE(request) << request.error();
  EXPECT_EQ(request->name(), "maint");
  EXPECT_EQ(request->start_time(), now);
  EXPECT_EQ(request->duration_seconds(), 2 * 86400);
  EXPECT_EQ(request->node_list(), "n[1-2]");
  EXPECT_EQ(request->users(), "root");
  EXPECT_EQ(request->flags(), "MAINT,IGNORE_JOBS");
  EXPECT_EQ(request->partition(), "debug");
  EXPECT_FALSE(request->has_end_time());
  EXPECT_FALSE(request->has_node_count());

  struct Case {
    std::string word;
    int64_t duration;
  };
  for (const Case& c :
       {Case{"Duration=90", 5400}, Case{"Duration=01:30:00", 5400},
        Case{"Duration=1-00:00:00", 86400}, Case{"Duration=UNLIMITED", INT64_MAX}}) {
    auto parsed = ParseReservation(Words{c.word}, now);
    ASSERT_TRUE(parsed) << c.word;
    EXPECT_EQ(parsed->duration_seconds(), c.duration) << c.word;
  }
  auto later = ParseReservation(Words{"StartTime=now+1hour", "NodeCnt=2", "TRES=gres/gpu=4",
                                      "Accounts=ml", "EndTime=now+2hours"},
                                now);
  ASSERT_TRUE(later) << later.error();
  EXPECT_EQ(later->start_time(), now + 3600);
  EXPECT_EQ(later->end_time(), now + 7200);
  EXPECT_EQ(later->node_count(), 2u);
  EXPECT_EQ(later->tres(), "gres/gpu=4");
  EXPECT_EQ(later->accounts(), "ml");

  EXPECT_FALSE(ParseReservation(Words{"StartTime=whenever"}, now));
  EXPECT_FALSE(ParseReservation(Words{"NodeCnt=0"}, now));
  EXPECT_FALSE(ParseReservation(Words{"Licenses=x"}, now));
}

TEST(ScontrolRequest, JobLists) {
  auto filter = ParseJobList(Words{"12,13_2", "14"});
  ASSERT_TRUE(filter);
  EXPECT_EQ(filter->job_ids_size(), 2);
  EXPECT_EQ(filter->array_tasks_size(), 1);
  EXPECT_FALSE(ParseJobList(Words{}));
  EXPECT_FALSE(ParseJobList(Words{"12x"}));
}

TEST(ScontrolRequest, TopListKeepsItsOrder) {
  auto top = ParseTopList(Words{"14,12_3", "13"});
  ASSERT_TRUE(top);
  ASSERT_EQ(top->jobs_size(), 3);
  EXPECT_EQ(top->jobs(0).array_job_id(), 14u);
  EXPECT_EQ(top->jobs(0).task_id(), UINT32_MAX);
  EXPECT_EQ(top->jobs(1).array_job_id(), 12u);
  EXPECT_EQ(top->jobs(1).task_id(), 3u);
  EXPECT_EQ(top->jobs(2).array_job_id(), 13u);
  EXPECT_EQ(ParseTopList(Words{}).error(), "Invalid job id specified");
  EXPECT_EQ(ParseTopList(Words{"1,x"}).error(), "Invalid job id specified: x");
}

}  // namespace
}  // namespace drover::cli::scontrol
