#include "ctld/engine/job_table.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace drover::ctld {
namespace {

JobPtr MakeJob(uint64_t id, std::string name = "") {
  auto job = std::make_shared<Job>();
  job->spec.job_id = id;
  job->spec.name = std::move(name);
  return job;
}

std::vector<uint64_t> Ids(const JobTable::View& view) {
  std::vector<uint64_t> ids;
  for (const JobPtr& job : view) ids.push_back(job->spec.job_id);
  return ids;
}

TEST(JobTable, IteratesInIdOrderAcrossChunksAndSkipsHoles) {
  JobTable table;
  for (uint64_t id : {5000u, 3u, 1024u, 1023u, 1u}) table.Set(id, MakeJob(id));
  std::vector<uint64_t> ids;
  for (const auto& [id, job] : table) {
    EXPECT_EQ(job->spec.job_id, id);
    ids.push_back(id);
  }
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 3, 1023, 1024, 5000}));
  EXPECT_EQ(table.size(), 5u);
  EXPECT_EQ(table.count(1024), 1u);
  EXPECT_EQ(table.count(1025), 0u);
  EXPECT_EQ(table.find(2), table.end());
  EXPECT_EQ(table.find(5000)->second->spec.job_id, 5000u);
  EXPECT_THROW(table.at(2), std::out_of_range);
}

TEST(JobTable, ASnapshotKeepsWhatItSawWhileTheTableChanges) {
  JobTable table;
  for (uint64_t id = 1; id <= 3000; ++id) table.Set(id, MakeJob(id, "old"));
  JobTable::View before = table.Share();
  table.Set(2, MakeJob(2, "new"));
  table.erase(1500);
  table.Set(5001, MakeJob(5001));
  for (uint64_t id = 2048; id < 3072; ++id) table.erase(id);  // the third chunk goes

  EXPECT_EQ(before.size(), 3000u);
  EXPECT_EQ((*before.Find(2))->spec.name, "old");
  ASSERT_NE(before.Find(1500), nullptr);
  EXPECT_EQ(before.Find(5001), nullptr);
  EXPECT_EQ(Ids(before).size(), 3000u);

  JobTable::View after = table.Share();
  EXPECT_EQ(after.size(), 3000u - 1 - (3000 - 2048 + 1) + 1);
  EXPECT_EQ((*after.Find(2))->spec.name, "new");
  EXPECT_EQ(after.Find(1500), nullptr);
  EXPECT_EQ(after.Find(2500), nullptr);
  EXPECT_EQ(Ids(after).back(), 5001u);
  EXPECT_EQ(Ids(after).size(), after.size());
}

TEST(JobTable, MatchesAMapUnderRandomChanges) {
  std::mt19937_64 random(7);
  JobTable table;
  std::map<uint64_t, std::string> model;
  std::vector<JobTable::View> views;
  for (int step = 0; step < 20000; ++step) {
    uint64_t id = random() % 5000;
    if (random() % 3 == 0) {
      table.erase(id);
      model.erase(id);
    } else {
      std::string name = std::to_string(step);
      table.Set(id, MakeJob(id, name));
      model[id] = name;
    }
    if (step % 997 == 0) views.push_back(table.Share());
  }
  ASSERT_EQ(table.size(), model.size());
  auto expected = model.begin();
  for (const auto& [id, job] : table) {
    ASSERT_NE(expected, model.end());
    EXPECT_EQ(id, expected->first);
    EXPECT_EQ(job->spec.name, expected->second);
    ++expected;
  }
  EXPECT_EQ(expected, model.end());
  for (const JobTable::View& view : views) EXPECT_EQ(Ids(view).size(), view.size());
  // From(id) starts where the map's lower_bound does, in and between chunks and past the end.
  JobTable::View view = table.Share();
  for (uint64_t id = 0; id < 5200; id += 7) {
    auto want = model.lower_bound(id);
    auto got = view.From(id);
    if (want == model.end()) {
      EXPECT_EQ(got, view.end()) << id;
    } else {
      ASSERT_NE(got, view.end()) << id;
      EXPECT_EQ((*got)->spec.job_id, want->first) << id;
    }
  }
}

TEST(JobTable, FromSkipsMissingChunks) {
  JobTable table;
  for (uint64_t id : {10u, 5000u, 9000u}) table.Set(id, MakeJob(id));
  JobTable::View view = table.Share();
  EXPECT_EQ((*view.From(0))->spec.job_id, 10u);
  EXPECT_EQ((*view.From(11))->spec.job_id, 5000u);  // chunk 0's rest, chunks 1-3 absent
  EXPECT_EQ((*view.From(5000))->spec.job_id, 5000u);
  EXPECT_EQ((*view.From(5001))->spec.job_id, 9000u);
  EXPECT_EQ(view.From(9001), view.end());
  EXPECT_EQ(view.From(1u << 30), view.end());
  JobTable::View empty;
  EXPECT_EQ(empty.From(3), empty.end());
}

}  // namespace
}  // namespace drover::ctld
