// sacct's history in pages: no call reads more than a page of stored records, the cursor walks
// the whole table once, and the live queue comes with the last page only.
#include "ctld/daemon/job_history.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "common/slurm_conf.h"
#include "ctld/records.h"
#include "proto/drover.pb.h"

namespace drover::ctld {
namespace {

class JobHistoryTest : public ::testing::Test {
 protected:
  JobHistoryTest() {
    ConfigLoad load = LoadClusterConfigText(
        "ClusterName=t\nNodeName=n1 CPUs=2\nPartitionName=p Nodes=n1 Default=YES\n");
    EXPECT_TRUE(load.ok()) << load.ErrorText();
    Engine engine(std::make_shared<const ClusterConfig>(std::move(load.config)), clock_);
    snapshot_ = engine.Publish();
  }

  // `count` ended jobs in the store, every other one bob's.
  std::unique_ptr<Store> StoreOf(int count) {
    auto store = std::make_unique<MemoryStore>();
    WriteBatch batch;
    for (int i = 1; i <= count; ++i) {
      v1::Job job;
      job.mutable_spec()->set_job_id(i);
      job.mutable_spec()->set_user(i % 2 ? "alice" : "bob");
      job.set_state("COMPLETED");
      char key[16];
      std::snprintf(key, sizeof(key), "%010d", i);
      batch.puts.push_back({"job_history", key, job.SerializeAsString()});
    }
    EXPECT_TRUE(store->Commit(batch).ok());
    return store;
  }

  ManualClock clock_;
  std::shared_ptr<const Snapshot> snapshot_;
};

const Caller kOperator{0, 0, true};  // sees every job

TEST_F(JobHistoryTest, PagesWalkTheStoreOnce) {
  JobHistory history(StoreOf(25));
  views::HistoryQuery alice;
  alice.filter.user = "alice";
  std::vector<size_t> sizes;
  std::string after;
  do {
    auto page = history.Find(*snapshot_, kOperator, alice, after, 10);
    ASSERT_TRUE(page.ok()) << page.error();
    sizes.push_back(page->listing.jobs.size());
    EXPECT_NE(page->next, after);
    after = page->next;
  } while (!after.empty());
  EXPECT_EQ(sizes, (std::vector<size_t>{5, 5, 3}));  // alice's 13 of 25, 10 records a call
}

TEST_F(JobHistoryTest, NoCallReadsMoreThanTheLargestPage) {
  JobHistory history(StoreOf(JobHistory::kMaxPage + 1));
  auto first = history.Find(*snapshot_, kOperator, {}, "", 1'000'000);
  ASSERT_TRUE(first.ok()) << first.error();
  EXPECT_EQ(first->listing.jobs.size(), JobHistory::kMaxPage);
  EXPECT_EQ(first->next, "0000010000");
  auto last = history.Find(*snapshot_, kOperator, {}, first->next, 0);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->listing.jobs.size(), 1u);
  EXPECT_EQ(last->next, "");
}

TEST_F(JobHistoryTest, PurgeDeletesFinishedJobsSubmittedBeforeTheCutoffWithTheirScripts) {
  auto store = std::make_unique<MemoryStore>();
  MemoryStore* raw = store.get();
  WriteBatch batch;
  // Jobs 1-25000 (more than a page) submitted at 1000 + id; job 7 has not ended (it cannot be
  // in the history, but a record that says so is kept); 20001 is the first task of an array
  // whose other task 20002 keeps its script under 20001.
  for (int i = 1; i <= 25000; ++i) {
    v1::Job job;
    job.mutable_spec()->set_job_id(i);
    job.mutable_spec()->set_submit_time(1000 + i);
    if (i == 20001 || i == 20002) job.mutable_spec()->set_array_job_id(20001);
    job.set_state(i == 7 ? "RUNNING" : "COMPLETED");
    job.set_end_time(i == 7 ? 0 : 5000 + i);
    std::string key = JobKey(i);
    batch.puts.push_back({"job_history", key, job.SerializeAsString()});
    if (i % 1000 == 1) batch.puts.push_back({"scripts", key, "#!/bin/sh\n"});
  }
  ASSERT_TRUE(raw->Commit(batch).ok());
  JobHistory history(std::move(store));
  auto purged = history.Purge(1000 + 20001);  // up to job 20001
  ASSERT_TRUE(purged.ok()) << purged.error();
  EXPECT_EQ(*purged, 20000u);  // 1..20001 less job 7
  auto rows = raw->Load("job_history");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 5000u);
  EXPECT_EQ(rows->front().first, JobKey(7));
  EXPECT_EQ((*rows)[1].first, JobKey(20002));
  auto scripts = raw->Load("scripts");
  ASSERT_TRUE(scripts.ok());
  std::vector<std::string> kept;
  for (const auto& [key, value] : *scripts) kept.push_back(key);
  EXPECT_EQ(kept, (std::vector<std::string>{JobKey(20001), JobKey(21001), JobKey(22001),
                                            JobKey(23001), JobKey(24001)}));
  // Nothing more to do at the same cutoff; a failing store says so.
  EXPECT_EQ(*history.Purge(1000 + 20001), 0u);
  raw->FailNextCommits(1);
  EXPECT_FALSE(history.Purge(1000 + 25000).ok());
  // An array's script stays while a task of it is still in the live queue.
  EXPECT_EQ(*history.Purge(1000 + 25000, {20001}), 4999u);
  EXPECT_EQ(raw->Load("scripts")->size(), 1u);
  // That task ends and leaves the live queue for the history; once purged, the script goes.
  v1::Job last;
  last.mutable_spec()->set_job_id(25001);
  last.mutable_spec()->set_array_job_id(20001);
  last.mutable_spec()->set_submit_time(1000 + 20001);
  last.set_state("COMPLETED");
  last.set_end_time(40000);
  WriteBatch ended;
  ended.puts.push_back({"job_history", JobKey(25001), last.SerializeAsString()});
  ASSERT_TRUE(raw->Commit(ended).ok());
  EXPECT_EQ(*history.Purge(1000 + 25000), 1u);
  EXPECT_EQ(raw->Load("scripts")->size(), 0u);
}

}  // namespace
}  // namespace drover::ctld
