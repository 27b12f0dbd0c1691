// sacct's history in pages: no call reads more than a page of stored records, the cursor walks
// the whole table once, and the live queue comes with the last page only.
#include "ctld/daemon/job_history.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "common/slurm_conf.h"
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

}  // namespace
}  // namespace drover::ctld
