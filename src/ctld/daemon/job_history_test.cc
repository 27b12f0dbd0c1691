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

  // `count` ended jobs in the store, with their index: every other one bob's (uid 2, else
  // alice's, uid 1), job i submitted at 100 * i and ended 50 later.
  std::unique_ptr<Store> StoreOf(int count) {
    auto store = std::make_unique<MemoryStore>();
    WriteBatch batch;
    for (int i = 1; i <= count; ++i) {
      v1::Job job;
      job.mutable_spec()->set_job_id(i);
      job.mutable_spec()->set_user(i % 2 ? "alice" : "bob");
      job.mutable_spec()->set_uid(i % 2 ? 1 : 2);
      job.mutable_spec()->set_submit_time(100 * i);
      job.set_end_time(100 * i + 50);
      job.set_state("COMPLETED");
      Add(batch, job);
    }
    EXPECT_TRUE(store->Commit(batch).ok());
    return store;
  }

  static void Add(WriteBatch& batch, const v1::Job& job) {
    batch.puts.push_back({"job_history", JobKey(job.spec().job_id()), job.SerializeAsString()});
    for (std::string& key : HistoryIndexKeys(job.spec().job_id(), job.spec().array_job_id(),
                                             job.spec().uid(), job.end_time()))
      batch.puts.push_back({"history_index", std::move(key), ""});
  }

  // Every job of every page of `query`, by ID, and how many pages it took.
  std::pair<std::vector<uint64_t>, int> All(JobHistory& history, const views::HistoryQuery& query,
                                            size_t limit, const Caller& caller) {
    std::vector<uint64_t> ids;
    int pages = 0;
    std::string after;
    do {
      auto page = history.Find(*snapshot_, caller, query, after, limit);
      EXPECT_TRUE(page.ok()) << page.error();
      if (!page.ok()) break;
      ++pages;
      for (const auto& encoded : page->listing.jobs) {
        v1::Job job;
        job.ParseFromString(*encoded);
        ids.push_back(job.spec().job_id());
      }
      if (!page->next.empty()) {
        EXPECT_NE(page->next, after);  // each page moves on
      }
      after = page->next;
    } while (!after.empty());
    return {ids, pages};
  }

  ManualClock clock_;
  std::shared_ptr<const Snapshot> snapshot_;
};

const Caller kOperator{0, 0, true};  // sees every job

TEST_F(JobHistoryTest, AnOwnersJobsAreReadFromTheIndexInPages) {
  JobHistory history(StoreOf(25));
  views::HistoryQuery alice;
  alice.uids = {1};
  auto [ids, pages] = All(history, alice, 5, kOperator);
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25}));
  EXPECT_EQ(pages, 3);  // 13 keys of her own, 5 a call: bob's are never read
  // From the window's start on: jobs that ended before it are not read.
  alice.start_time = 2000;  // job 20 ended at 2050
  EXPECT_EQ(All(history, alice, 5, kOperator).first, (std::vector<uint64_t>{21, 23, 25}));
  views::HistoryQuery both;
  both.uids = {2, 1};
  both.start_time = 2300;
  EXPECT_EQ(All(history, both, 2, kOperator).first, (std::vector<uint64_t>{23, 25, 24}));
}

TEST_F(JobHistoryTest, PrivateDataKeepsACallerToItsOwnJobs) {
  ConfigLoad load = LoadClusterConfigText(
      "ClusterName=t\nPrivateData=jobs\nNodeName=n1 CPUs=2\nPartitionName=p Nodes=n1 "
      "Default=YES\n");
  ASSERT_TRUE(load.ok()) << load.ErrorText();
  Engine engine(std::make_shared<const ClusterConfig>(std::move(load.config)), clock_);
  snapshot_ = engine.Publish();
  JobHistory history(StoreOf(6));
  const Caller bob{2, 2, false, "bob"};
  EXPECT_EQ(All(history, {}, 100, bob).first, (std::vector<uint64_t>{2, 4, 6}));
  views::HistoryQuery alices;
  alices.uids = {1};
  EXPECT_EQ(All(history, alices, 100, bob).first, std::vector<uint64_t>{});
  views::HistoryQuery by_id;
  by_id.filter.job_ids = {3, 4};
  EXPECT_EQ(All(history, by_id, 100, bob).first, std::vector<uint64_t>{4});
}

TEST_F(JobHistoryTest, JobIdsFindJobsArraysAndTasksByTheirOwnIds) {
  auto store = StoreOf(10);
  WriteBatch batch;
  for (uint64_t task = 0; task < 3; ++task) {  // array 50: tasks with IDs 50, 51, 52
    v1::Job job;
    job.mutable_spec()->set_job_id(50 + task);
    job.mutable_spec()->set_array_job_id(50);
    job.mutable_spec()->set_array_task_id(static_cast<uint32_t>(task));
    job.set_end_time(9000);
    job.set_state("COMPLETED");
    Add(batch, job);
  }
  ASSERT_TRUE(store->Commit(batch).ok());
  JobHistory history(std::move(store));
  views::HistoryQuery query;
  query.filter.job_ids = {50, 7, 3};
  EXPECT_EQ(All(history, query, 2, kOperator).first, (std::vector<uint64_t>{3, 7, 50, 51, 52}));
  query.filter.job_ids = {52, 999};  // a task by its own ID; an unknown ID is none
  EXPECT_EQ(All(history, query, 2, kOperator).first, std::vector<uint64_t>{52});
}

TEST_F(JobHistoryTest, NoCallReadsMoreThanTheLargestPage) {
  JobHistory history(StoreOf(JobHistory::kMaxPage + 1));
  auto first = history.Find(*snapshot_, kOperator, {}, "", 1'000'000);
  ASSERT_TRUE(first.ok()) << first.error();
  EXPECT_EQ(first->listing.jobs.size(), JobHistory::kMaxPage);
  EXPECT_EQ(HistoryIndexJobId(first->next), JobHistory::kMaxPage);
  auto last = history.Find(*snapshot_, kOperator, {}, first->next, 0);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->listing.jobs.size(), 1u);
  EXPECT_EQ(last->next, "");
}

TEST_F(JobHistoryTest, AStoreWithoutTheIndexIsIndexedOnce) {
  auto store = std::make_unique<MemoryStore>();
  WriteBatch batch;
  for (int i = 1; i <= 12'345; ++i) {
    v1::Job job;
    job.mutable_spec()->set_job_id(i);
    job.mutable_spec()->set_uid(i % 3);
    job.set_end_time(i);
    batch.puts.push_back({"job_history", JobKey(i), job.SerializeAsString()});
  }
  ASSERT_TRUE(store->Commit(batch).ok());
  ASSERT_TRUE(IndexHistory(*store).ok());
  EXPECT_EQ(store->Load("history_index")->size(), 3u * 12'345);
  EXPECT_EQ(**store->Get("meta", "history_indexed"), "1");
  size_t commits = store->committed().size();
  ASSERT_TRUE(IndexHistory(*store).ok());  // done already: nothing is read or written
  EXPECT_EQ(store->committed().size(), commits);
  JobHistory history(std::move(store));
  views::HistoryQuery query;
  query.uids = {2};
  query.start_time = 12'000;
  EXPECT_EQ(All(history, query, 0, kOperator).first.size(), 115u);  // 12002, 12005, ... 12344
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
    Add(batch, job);
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
  EXPECT_EQ(raw->Load("history_index")->size(), 3u * 5000);  // the purged jobs' keys are gone
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
