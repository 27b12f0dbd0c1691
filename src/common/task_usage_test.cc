#include "common/task_usage.h"

#include <gtest/gtest.h>

namespace drover {
namespace {

TEST(TaskUsageTest, MergesTotalsAndKeepsWhereTheLargestAndSmallestRan) {
  TaskUsage step;
  EXPECT_FALSE(step.measured());
  Merge(step, OneTask("n1", 0, 1.5, 0.5, 2048));
  Merge(step, OneTask("n1", 1, 3.0, 1.0, 1024));
  Merge(step, OneTask("n2", 2, 0.25, 0.25, 4096));
  EXPECT_EQ(step.tasks, 3u);
  EXPECT_DOUBLE_EQ(step.user_cpu_seconds, 4.75);
  EXPECT_DOUBLE_EQ(step.system_cpu_seconds, 1.75);
  EXPECT_DOUBLE_EQ(step.cpu.total, 6.5);
  EXPECT_DOUBLE_EQ(step.cpu.max, 4.0);
  EXPECT_EQ(step.cpu.max_node, "n1");
  EXPECT_EQ(step.cpu.max_task, 1u);
  EXPECT_DOUBLE_EQ(step.cpu.min, 0.5);
  EXPECT_EQ(step.cpu.min_node, "n2");
  EXPECT_EQ(step.cpu.min_task, 2u);
  EXPECT_DOUBLE_EQ(step.rss.max, 4096);
  EXPECT_EQ(step.rss.max_task, 2u);
  EXPECT_DOUBLE_EQ(step.rss.min, 1024);
  EXPECT_EQ(step.rss.min_task, 1u);
  EXPECT_DOUBLE_EQ(step.AverageRss(), 7168.0 / 3);
  EXPECT_DOUBLE_EQ(step.AverageCpu(), 6.5 / 3);
}

TEST(TaskUsageTest, MergingGroupsEqualsMergingTasksAndTiesKeepTheFirst) {
  TaskUsage node1, node2, all;
  Merge(node1, OneTask("n1", 0, 1, 0, 100));
  Merge(node1, OneTask("n1", 1, 1, 0, 100));
  Merge(node2, OneTask("n2", 2, 1, 0, 100));
  Merge(all, node1);
  Merge(all, node2);
  Merge(all, TaskUsage{});  // an unmeasured node changes nothing
  EXPECT_EQ(all.tasks, 3u);
  EXPECT_EQ(all.cpu.max_node, "n1");
  EXPECT_EQ(all.cpu.max_task, 0u);
  EXPECT_EQ(all.rss.min_task, 0u);
  EXPECT_DOUBLE_EQ(all.rss.total, 300);
}

TEST(TaskUsageTest, NegativeTimesFromAClockStepCountAsZero) {
  TaskUsage task = OneTask("n1", 0, -1, -2, 0);
  EXPECT_EQ(task.cpu.total, 0);
  EXPECT_EQ(task.user_cpu_seconds, 0);
}

}  // namespace
}  // namespace drover
