// Workload traces for the simulator: what each job asked for and how long it really ran, read
// from the Standard Workload Format (Parallel Workloads Archive; .swf or .swf.gz), Alibaba's GPU
// cluster trace (cluster-trace-gpu-v2023 pod lists), or Drover's own history (sacct --json).
// Lines a reader cannot use are skipped and counted by why, or with `strict` are an error that
// names the file and line. Reading never looks at a cluster: fitting jobs to one is Simulate's.
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <string>
#include <vector>

#include "common/result.h"

namespace drover::sim {

struct TraceJob {
  uint64_t id = 0;            // the trace's own number (reports and --jobs use it)
  int64_t submit_time = 0;    // seconds from the trace's start
  int64_t run_seconds = 0;    // how long it really ran
  int64_t limit_seconds = 0;  // its time limit (the user's estimate backfill plans with)
  uint32_t cpus = 1;          // processors (cores)
  uint32_t nodes = 0;         // whole nodes asked for; 0: as many as the CPUs need
  uint32_t gpus = 0;          // GPUs in all, spread evenly over its nodes
  uint32_t gpu_milli = 0;  // the fraction of each GPU it used (1000: whole); whole GPUs are given
  uint64_t memory_mb = 0;  // 0: the cluster's default
  std::string gpu_type;    // a GPU model it must run on; empty: any
  std::string user, account, partition;
};

struct Trace {
  std::string name;                         // the file it came from
  std::vector<TraceJob> jobs;               // by submit time, then trace order
  std::map<std::string, uint64_t> skipped;  // why -> how many
};

struct ReadOptions {
  bool strict = false;  // a line that cannot be used is an error, not a skip
};

// By the file's name: *.swf or *.swf.gz (SWF), *.csv (Alibaba pods), *.json (sacct --json).
Result<Trace> ReadTrace(const std::string& path, const ReadOptions& options = {});

// The readers themselves, on text already in memory or a stream. `name` is for messages.
Result<Trace> ReadSwf(std::istream& in, const std::string& name, const ReadOptions& options);
Result<Trace> ReadAlibabaPods(std::istream& in, const std::string& name,
                              const ReadOptions& options);
Result<Trace> ReadSacctJson(std::istream& in, const std::string& name, const ReadOptions& options);

// The whole of a file, gunzipped when it ends in .gz.
Result<std::string> ReadFileText(const std::string& path);

}  // namespace drover::sim
