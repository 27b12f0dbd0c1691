// Fills a controller's store with finished jobs, for bench/history.sh: sacct and the controller's
// memory with a long history. Writes through the store and the history index the controller
// uses, so what it reads is what it would have written itself.
//
//   history_fill STATE_DIR COUNT USERS UID NODES
//
// COUNT jobs, IDs 1..COUNT, submitted evenly over the last 30 days, each ended 10 minutes after
// its submission, owned in turn by USERS users of whom the first is UID (the others are UID+1...)
// and run on one of NODES nodes named node[1-NODES]. The store's next job ID is set past them.
// The controller must not be running on STATE_DIR.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "ctld/records.h"
#include "ctld/store/store.h"
#include "proto/drover.pb.h"

int main(int argc, char** argv) {
  using namespace drover;
  if (argc != 6) {
    std::fprintf(stderr, "usage: history_fill STATE_DIR COUNT USERS UID NODES\n");
    return 2;
  }
  const std::string state = argv[1];
  const uint64_t count = std::strtoull(argv[2], nullptr, 10);
  const uint32_t users = static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10));
  const uint32_t first_uid = static_cast<uint32_t>(std::strtoul(argv[4], nullptr, 10));
  const uint32_t nodes = static_cast<uint32_t>(std::strtoul(argv[5], nullptr, 10));
  if (count == 0 || users == 0 || nodes == 0) {
    std::fprintf(stderr, "history_fill: COUNT, USERS and NODES must be positive\n");
    return 2;
  }
  auto store = ctld::OpenSqliteStore(state);
  if (!store) {
    std::fprintf(stderr, "history_fill: %s\n", store.error().c_str());
    return 1;
  }
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const int64_t span = 30 * 86400;
  ctld::WriteBatch batch;
  v1::Job job;
  for (uint64_t id = 1; id <= count; ++id) {
    uint32_t user = static_cast<uint32_t>(id % users);
    int64_t submit =
        now - span + static_cast<int64_t>(id * static_cast<uint64_t>(span) / count) - 600;
    job.Clear();
    v1::JobSpec& spec = *job.mutable_spec();
    spec.set_job_id(id);
    spec.set_array_task_id(UINT32_MAX);
    spec.set_name(fmt::format("train-{}", id % 97));
    spec.set_user(user == 0 ? "bench" : fmt::format("user{}", user));
    spec.set_uid(first_uid + user);
    spec.set_gid(first_uid + user);
    spec.set_account(fmt::format("team{}", user % 10));
    spec.add_partitions("gpu");
    spec.set_min_nodes(1);
    spec.set_ntasks(1);
    spec.set_cpus_per_task(4);
    spec.set_gpus_per_node(1);
    spec.set_submit_time(submit);
    spec.set_time_limit_seconds(3600);
    job.set_state("COMPLETED");
    job.set_partition_name("gpu");
    job.set_node_list(fmt::format("node{}", 1 + id % nodes));
    job.set_start_time(submit + 5);
    job.set_end_time(submit + 600);
    job.set_time_limit_seconds(3600);
    job.set_cpu_seconds(2000);
    job.set_max_rss_mib(4096);
    std::string key = ctld::JobKey(id);
    batch.puts.push_back({"job_history", key, job.SerializeAsString()});
    for (std::string& index : ctld::HistoryIndexKeys(id, 0, spec.uid(), job.end_time()))
      batch.puts.push_back({"history_index", std::move(index), ""});
    if (batch.puts.size() >= 40'000 || id == count) {
      if (id == count) {
        batch.puts.push_back({"meta", "next_job_id", std::to_string(count + 1)});
        batch.puts.push_back({"meta", "history_indexed", "1"});
      }
      if (Status committed = (*store)->Commit(batch); !committed) {
        std::fprintf(stderr, "history_fill: %s\n", committed.error().c_str());
        return 1;
      }
      batch = ctld::WriteBatch();
    }
  }
  std::printf("%llu jobs in the history of %s\n", static_cast<unsigned long long>(count),
              state.c_str());
  return 0;
}
