// What a step's tasks used, as the nodes measured it: the figures behind sacct's TotalCPU,
// UserCPU, SystemCPU, AveCPU, MinCPU, MaxRSS, AveRSS and TRESUsageIn*. Each node measures its
// tasks one by one (wait4's rusage of each task, the batch script's for the batch step), and
// whoever collects them merges the measurements: per measure the total, the largest and the
// smallest task's value and where that task ran, as Slurm's jobacct_gather aggregates them.
#pragma once

#include <cstdint>
#include <string>

namespace drover {

struct UsageStat {
  double total = 0;
  double max = 0;
  std::string max_node;
  uint32_t max_task = 0;
  double min = 0;
  std::string min_node;
  uint32_t min_task = 0;
};

struct TaskUsage {
  uint32_t tasks = 0;  // 0: nothing was measured
  double user_cpu_seconds = 0, system_cpu_seconds = 0;
  UsageStat cpu;  // a task's CPU time (user + system), seconds
  UsageStat rss;  // a task's peak resident memory, KiB
  bool measured() const { return tasks != 0; }
  double AverageCpu() const { return tasks ? cpu.total / tasks : 0; }
  double AverageRss() const { return tasks ? rss.total / tasks : 0; }
};

// One task's measurement on `node`.
TaskUsage OneTask(const std::string& node, uint32_t task, double user_cpu_seconds,
                  double system_cpu_seconds, uint64_t rss_kib);

// Adds `other` (one task or several) into `into`. A tie keeps the task that was there first.
void Merge(TaskUsage& into, const TaskUsage& other);

}  // namespace drover
