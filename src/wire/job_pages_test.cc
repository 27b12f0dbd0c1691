#include "wire/job_pages.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace drover::wire {
namespace {

// A controller of jobs 1..n that answers pages of `size`, as ListJobs does.
struct PagedQueue {
  uint64_t n = 0;
  uint64_t size = 0;
  std::vector<uint64_t> asked_after;
  grpc::Status operator()(const v1::JobQuery& query, v1::JobList* page) {
    asked_after.push_back(query.after());
    page->set_time(static_cast<int64_t>(100 + asked_after.size()));
    uint64_t id = query.after() + 1;
    for (; id <= n && id <= query.after() + size; ++id) {
      page->add_jobs("job " + std::to_string(id));
      page->add_planned()->set_job_id(id);
    }
    if (id <= n) page->set_more_after(id - 1);
    return grpc::Status::OK;
  }
};

TEST(JobPages, GathersEveryPageInOrderWithTheFirstPagesTime) {
  PagedQueue queue{25, 10, {}};
  v1::JobList list;
  list.add_jobs("left over from before");
  ASSERT_TRUE(ListJobPages(std::ref(queue), v1::JobQuery(), &list).ok());
  EXPECT_EQ(queue.asked_after, (std::vector<uint64_t>{0, 10, 20}));
  ASSERT_EQ(list.jobs_size(), 25);
  EXPECT_EQ(list.jobs(0), "job 1");
  EXPECT_EQ(list.jobs(24), "job 25");
  EXPECT_EQ(list.planned_size(), 25);
  EXPECT_EQ(list.planned(24).job_id(), 25u);
  EXPECT_EQ(list.time(), 101);
  EXPECT_EQ(list.more_after(), 0u);
}

TEST(JobPages, AnErrorStopsTheListing) {
  int calls = 0;
  v1::JobList list;
  grpc::Status status = ListJobPages(
      [&calls](const v1::JobQuery&, v1::JobList* page) {
        if (++calls == 2) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "gone");
        page->add_jobs("job 5");
        page->set_more_after(5);
        return grpc::Status::OK;
      },
      v1::JobQuery(), &list);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(list.jobs_size(), 0);  // the first page alone is not the listing
}

TEST(JobPages, APageThatDoesNotMoveOnIsRefused) {
  int calls = 0;
  v1::JobList list;
  grpc::Status status = ListJobPages(
      [&calls](const v1::JobQuery&, v1::JobList* page) {
        ++calls;
        page->set_more_after(7);  // the same cursor every time
        return grpc::Status::OK;
      },
      v1::JobQuery(), &list);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_NE(status.error_message().find("went back to job 7 after job 7"), std::string::npos);
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace drover::wire
