// See task_usage.h.
#include "common/task_usage.h"

#include <algorithm>

namespace drover {
namespace {

UsageStat OneValue(const std::string& node, uint32_t task, double value) {
  return UsageStat{value, value, node, task, value, node, task};
}

void MergeStat(UsageStat& into, const UsageStat& other) {
  into.total += other.total;
  if (other.max > into.max) {
    into.max = other.max;
    into.max_node = other.max_node;
    into.max_task = other.max_task;
  }
  if (other.min < into.min) {
    into.min = other.min;
    into.min_node = other.min_node;
    into.min_task = other.min_task;
  }
}

}  // namespace

TaskUsage OneTask(const std::string& node, uint32_t task, double user_cpu_seconds,
                  double system_cpu_seconds, uint64_t rss_kib) {
  user_cpu_seconds = std::max(user_cpu_seconds, 0.0);
  system_cpu_seconds = std::max(system_cpu_seconds, 0.0);
  TaskUsage usage;
  usage.tasks = 1;
  usage.user_cpu_seconds = user_cpu_seconds;
  usage.system_cpu_seconds = system_cpu_seconds;
  usage.cpu = OneValue(node, task, user_cpu_seconds + system_cpu_seconds);
  usage.rss = OneValue(node, task, static_cast<double>(rss_kib));
  return usage;
}

void Merge(TaskUsage& into, const TaskUsage& other) {
  if (!other.measured()) return;
  if (!into.measured()) {
    into = other;
    return;
  }
  into.tasks += other.tasks;
  into.user_cpu_seconds += other.user_cpu_seconds;
  into.system_cpu_seconds += other.system_cpu_seconds;
  MergeStat(into.cpu, other.cpu);
  MergeStat(into.rss, other.rss);
}

}  // namespace drover
