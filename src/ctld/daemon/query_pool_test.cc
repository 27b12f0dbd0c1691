// The query threads' queue is bounded: a full queue refuses at once, and what was queued still
// runs, in order.
#include "ctld/daemon/query_pool.h"

#include <gtest/gtest.h>

#include <future>
#include <vector>

namespace drover::ctld {
namespace {

TEST(QueryPool, RefusesWhenFullAndRunsWhatItTook) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> started;
  std::vector<int> ran;
  {
    QueryPool pool(1, 2);
    ASSERT_TRUE(pool.Run([&] {
      started.set_value();
      released.wait();  // holds the one thread until the queue has been filled
    }));
    started.get_future().wait();
    EXPECT_TRUE(pool.Run([&] { ran.push_back(1); }));
    EXPECT_TRUE(pool.Run([&] { ran.push_back(2); }));
    EXPECT_EQ(pool.queued(), 2u);
    EXPECT_FALSE(pool.Run([&] { ran.push_back(3); }));
    release.set_value();
  }  // the destructor finishes the queued work
  EXPECT_EQ(ran, (std::vector<int>{1, 2}));
}

}  // namespace
}  // namespace drover::ctld
