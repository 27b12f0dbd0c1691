// sdiag's text and JSON: see sdiag_format.h.
#include "cli/formats/sdiag_format.h"

#include "cli/formats/formats.h"

#include <algorithm>
#include <ctime>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace drover::cli {
namespace {

// Slurm's "%a %b %d %T %Y" (slurm_ctime2_r).
std::string Stamp(int64_t seconds) {
  std::time_t time = static_cast<std::time_t>(seconds);
  std::tm local{};
  localtime_r(&time, &local);
  char text[64];
  std::strftime(text, sizeof(text), "%a %b %d %H:%M:%S %Y", &local);
  return fmt::format("{} ({})", text, seconds);
}

uint64_t Average(const v1::RpcStat& stat) {
  return stat.count() ? stat.total_micros() / stat.count() : 0;
}

// Sorted as asked: by count (sdiag's default), id (a method's place among those served, a
// user's uid), total time (-t) or average time (-T), largest first.
std::vector<v1::RpcStat> Sorted(const google::protobuf::RepeatedPtrField<v1::RpcStat>& stats,
                                SdiagSort sort, bool users) {
  std::vector<v1::RpcStat> entries(stats.begin(), stats.end());
  std::stable_sort(entries.begin(), entries.end(), [sort, users](const auto& a, const auto& b) {
    switch (sort) {
      case SdiagSort::kId:
        return users ? a.uid() < b.uid() : a.id() < b.id();
      case SdiagSort::kTotalTime:
        return a.total_micros() > b.total_micros();
      case SdiagSort::kAverageTime:
        return Average(a) > Average(b);
      case SdiagSort::kCount:
        break;
    }
    return a.count() > b.count();
  });
  return entries;
}

uint64_t MeanCycle(const v1::DiagReply& diag) {
  return diag.cycles() ? diag.cycle_total_micros() / diag.cycles() : 0;
}

uint64_t MeanDepth(const v1::DiagReply& diag) {
  return diag.cycles() ? diag.considered_total() / diag.cycles() : 0;
}

// Slurm's: none until a minute has passed since the counts began.
uint64_t CyclesPerMinute(const v1::DiagReply& diag) {
  int64_t minutes = (diag.time() - diag.since()) / 60;
  return minutes > 0 ? diag.cycles() / static_cast<uint64_t>(minutes) : 0;
}

}  // namespace

std::string FormatSdiag(const v1::DiagReply& diag, SdiagSort sort) {
  std::string out = "*******************************************************\n";
  out += fmt::format("sdiag output at {}\n", Stamp(diag.time()));
  out += fmt::format("Data since      {}\n", Stamp(diag.since()));
  out += "*******************************************************\n";
  out += fmt::format("Server thread count:  {}\n", diag.server_threads());
  out += fmt::format("Agent queue size:     {}\n", diag.agent_queue());
  out += fmt::format("Agent count:          {}\n", diag.agent_busy());
  out += fmt::format("Agent thread count:   {}\n", diag.agent_workers());
  out += "DBD Agent queue size: 0\n\n";
  out += fmt::format("Jobs submitted: {}\n", diag.jobs_submitted());
  out += fmt::format("Jobs started:   {}\n", diag.jobs_started());
  out += fmt::format("Jobs completed: {}\n", diag.jobs_completed());
  out += fmt::format("Jobs canceled:  {}\n", diag.jobs_canceled());
  out += fmt::format("Jobs failed:    {}\n\n", diag.jobs_failed());
  out += fmt::format("Job states ts:  {}\n", Stamp(diag.time()));
  out += fmt::format("Jobs pending:   {}\n", diag.jobs_pending());
  out += fmt::format("Jobs running:   {}\n\n", diag.jobs_running());
  out += "Main schedule statistics (microseconds):\n";
  out += fmt::format("\tLast cycle:   {}\n", diag.cycle_last_micros());
  out += fmt::format("\tMax cycle:    {}\n", diag.cycle_max_micros());
  out += fmt::format("\tTotal cycles: {}\n", diag.cycles());
  if (diag.cycles()) {  // as Slurm: the means once there are cycles
    out += fmt::format("\tMean cycle:   {}\n", MeanCycle(diag));
    out += fmt::format("\tMean depth cycle:  {}\n", MeanDepth(diag));
  }
  if (diag.time() - diag.since() > 60)
    out += fmt::format("\tCycles per minute: {}\n", CyclesPerMinute(diag));
  out += fmt::format("\tLast queue length: {}\n\n", diag.queue_length());
  // Drover backfills within the main cycle (every pending job, every cycle): its cycles are the
  // main ones, its depth the pending jobs a cycle considered; it keeps no backfill table.
  out += "Backfilling stats\n";
  out += fmt::format("\tTotal backfilled jobs (since last slurm start): {}\n",
                     diag.backfilled_total());
  out += fmt::format("\tTotal backfilled jobs (since last stats cycle start): {}\n",
                     diag.backfilled());
  out += "\tTotal backfilled heterogeneous job components: 0\n";
  out += fmt::format("\tTotal cycles: {}\n", diag.cycles());
  out += fmt::format("\tLast cycle when: {}\n",
                     diag.cycle_last_time() ? Stamp(diag.cycle_last_time()) : std::string("N/A"));
  out += fmt::format("\tLast cycle: {}\n", diag.cycle_last_micros());
  out += fmt::format("\tMax cycle:  {}\n", diag.cycle_max_micros());
  if (diag.cycles()) out += fmt::format("\tMean cycle: {}\n", MeanCycle(diag));
  out += fmt::format("\tLast depth cycle: {}\n", diag.queue_length());
  out += fmt::format("\tLast depth cycle (try sched): {}\n", diag.queue_length());
  if (diag.cycles()) {
    out += fmt::format("\tDepth Mean: {}\n", MeanDepth(diag));
    out += fmt::format("\tDepth Mean (try depth): {}\n", MeanDepth(diag));
  }
  out += fmt::format("\tLast queue length: {}\n", diag.queue_length());
  if (diag.cycles()) out += fmt::format("\tQueue length mean: {}\n", MeanDepth(diag));
  out += "\tLast table size: 0\n";
  if (diag.cycles()) out += "\tMean table size: 0\n";
  out += fmt::format("\nLatency for 1000 calls to gettimeofday(): {} microseconds\n\n",
                     diag.gettimeofday_latency());
  out += "Remote Procedure Call statistics by message type\n";
  for (const v1::RpcStat& stat : Sorted(diag.by_method(), sort, false))
    out += fmt::format("\t{:<40}({:5}) count:{:<6} ave_time:{:<6} total_time:{}\n", stat.name(),
                       stat.id(), stat.count(), Average(stat), stat.total_micros());
  out += "\nRemote Procedure Call statistics by user\n";
  for (const v1::RpcStat& stat : Sorted(diag.by_user(), sort, true))
    out += fmt::format("\t{:<16}({:8}) count:{:<6} ave_time:{:<6} total_time:{}\n", stat.name(),
                       stat.uid(), stat.count(), Average(stat), stat.total_micros());
  out += "\nPending RPC statistics\n\tNo pending RPCs\n";
  return out;
}

std::string SdiagJson(const v1::DiagReply& diag) {
  using Json = nlohmann::ordered_json;
  Json statistics;
  statistics["parts_packed"] = 1;
  statistics["req_time"] = diag.time();
  statistics["req_time_start"] = diag.since();
  statistics["server_thread_count"] = diag.server_threads();
  statistics["agent_queue_size"] = diag.agent_queue();
  statistics["agent_count"] = diag.agent_busy();
  statistics["agent_thread_count"] = diag.agent_workers();
  statistics["dbd_agent_queue_size"] = 0;
  statistics["jobs_submitted"] = diag.jobs_submitted();
  statistics["jobs_started"] = diag.jobs_started();
  statistics["jobs_completed"] = diag.jobs_completed();
  statistics["jobs_canceled"] = diag.jobs_canceled();
  statistics["jobs_failed"] = diag.jobs_failed();
  statistics["jobs_pending"] = diag.jobs_pending();
  statistics["jobs_running"] = diag.jobs_running();
  statistics["job_states_ts"] = diag.time();
  statistics["schedule_cycle_max"] = diag.cycle_max_micros();
  statistics["schedule_cycle_last"] = diag.cycle_last_micros();
  statistics["schedule_cycle_total"] = diag.cycles();
  statistics["schedule_cycle_mean"] = MeanCycle(diag);
  statistics["schedule_cycle_mean_depth"] = MeanDepth(diag);
  statistics["schedule_cycle_per_minute"] = CyclesPerMinute(diag);
  statistics["schedule_queue_length"] = diag.queue_length();
  statistics["gettimeofday_latency"] = diag.gettimeofday_latency();
  statistics["bf_backfilled_jobs"] = diag.backfilled_total();
  statistics["bf_last_backfilled_jobs"] = diag.backfilled();
  statistics["bf_backfilled_het_jobs"] = 0;
  statistics["bf_cycle_counter"] = diag.cycles();
  statistics["bf_cycle_last"] = diag.cycle_last_micros();
  statistics["bf_cycle_max"] = diag.cycle_max_micros();
  statistics["bf_cycle_mean"] = MeanCycle(diag);
  statistics["bf_depth_mean"] = MeanDepth(diag);
  statistics["bf_depth_mean_try"] = MeanDepth(diag);
  statistics["bf_queue_len"] = diag.queue_length();
  statistics["bf_queue_len_mean"] = MeanDepth(diag);
  statistics["bf_table_size"] = 0;
  statistics["bf_table_size_mean"] = 0;
  statistics["bf_when_last_cycle"] = diag.cycle_last_time();
  statistics["bf_active"] = false;
  // Each RPC entry: its name and id under the keys of its list, then the counts.
  auto entries = [](const google::protobuf::RepeatedPtrField<v1::RpcStat>& stats, bool users) {
    Json list = Json::array();
    for (const v1::RpcStat& stat : Sorted(stats, SdiagSort::kCount, users)) {
      Json entry;
      entry[users ? "user" : "message_type"] = stat.name();
      entry[users ? "user_id" : "type_id"] = users ? stat.uid() : stat.id();
      entry["count"] = stat.count();
      entry["average_time"] = Average(stat);
      entry["total_time"] = stat.total_micros();
      list.push_back(std::move(entry));
    }
    return list;
  };
  statistics["rpcs_by_message_type"] = entries(diag.by_method(), false);
  statistics["rpcs_by_user"] = entries(diag.by_user(), true);
  Json document;
  document["meta"] = Json::parse(kOpenapiMeta);
  document["errors"] = Json::array();
  document["statistics"] = statistics;
  return document.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace drover::cli
