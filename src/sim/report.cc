// Reports of a replay; see report.h.
#include "sim/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace drover::sim {
namespace {

double Round(double value, int digits) {
  double scale = std::pow(10.0, digits);
  return std::round(value * scale) / scale;
}

// Nearest-rank percentile of sorted values; 0 for none.
double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

struct Figures {
  uint64_t jobs = 0, never_started = 0, preemptions = 0;
  std::map<std::string, uint64_t> by_state;
  int64_t makespan = 0;
  double core_seconds = 0, gpu_seconds = 0;
  std::vector<double> waits;  // sorted
  double mean_wait = 0, mean_slowdown = 0;
  struct Account {
    uint64_t jobs = 0;
    double wait = 0;
    uint64_t started = 0;
    double core_seconds = 0, gpu_seconds = 0;
  };
  std::map<std::string, Account> accounts;
};

Figures Measure(const SimResult& result) {
  Figures f;
  int64_t last_end = result.first_submit;
  double slowdown_sum = 0;
  uint64_t ended = 0;
  for (const JobRecord& job : result.jobs) {
    ++f.jobs;
    Figures::Account& account = f.accounts[job.account];
    ++account.jobs;
    account.core_seconds += job.core_seconds;
    account.gpu_seconds += job.gpu_seconds;
    f.core_seconds += job.core_seconds;
    f.gpu_seconds += job.gpu_seconds;
    f.preemptions += job.preemptions;
    if (job.start < 0) {
      ++f.never_started;
      ++f.by_state["PENDING"];
      continue;
    }
    double wait = static_cast<double>(job.start - job.submit);
    f.waits.push_back(wait);
    account.wait += wait;
    ++account.started;
    if (job.end < 0) {
      ++f.by_state[std::string(ctld::JobStateName(job.state))];
      continue;
    }
    ++f.by_state[std::string(ctld::JobStateName(job.state))];
    last_end = std::max(last_end, job.end);
    double run = static_cast<double>(job.run_seconds);
    slowdown_sum += std::max(1.0, (wait + run) / std::max(run, kSlowdownBound));
    ++ended;
  }
  f.makespan = std::max<int64_t>(last_end - result.first_submit, 0);
  std::sort(f.waits.begin(), f.waits.end());
  double wait_sum = 0;
  for (double wait : f.waits) wait_sum += wait;
  f.mean_wait = f.waits.empty() ? 0 : wait_sum / static_cast<double>(f.waits.size());
  f.mean_slowdown = ended ? slowdown_sum / static_cast<double>(ended) : 0;
  return f;
}

double Fraction(double part, double whole) {
  return whole > 0 ? part / whole : 0;
}

nlohmann::ordered_json OrNull(bool known, double value) {
  return known ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
}

}  // namespace

nlohmann::ordered_json ReportJson(const SimResult& result) {
  Figures f = Measure(result);
  using json = nlohmann::ordered_json;
  double capacity_cores = static_cast<double>(result.total_cores) * static_cast<double>(f.makespan);
  double capacity_gpus = static_cast<double>(result.total_gpus) * static_cast<double>(f.makespan);
  json report;
  report["trace"] = result.trace;
  report["policy"] = result.policy;
  report["priority"] = result.priority;
  report["cluster"] = {{"cores", result.total_cores}, {"gpus", result.total_gpus}};
  report["jobs"] = f.jobs;
  report["jobs_by_state"] = json(f.by_state);
  report["never_started"] = f.never_started;
  uint64_t skipped = 0;
  for (const auto& [why, count] : result.skipped) skipped += count;
  report["skipped"] = skipped;
  report["skipped_by_reason"] = json(result.skipped);
  report["fractional_gpu_jobs"] = result.fractional_gpu_jobs;
  report["gpu_sharing"] = result.gpu_sharing;
  report["makespan_s"] = f.makespan;
  report["utilization"] = {
      {"cores", Round(Fraction(f.core_seconds, capacity_cores), 4)},
      {"gpus", OrNull(result.total_gpus > 0, Round(Fraction(f.gpu_seconds, capacity_gpus), 4))}};
  report["mean_wait_s"] = Round(f.mean_wait, 1);
  report["median_wait_s"] = Percentile(f.waits, 50);
  report["p95_wait_s"] = Percentile(f.waits, 95);
  report["p99_wait_s"] = Percentile(f.waits, 99);
  report["mean_bounded_slowdown"] = Round(f.mean_slowdown, 3);
  json accounts = json::object();
  for (const auto& [name, account] : f.accounts)
    accounts[name.empty() ? "(none)" : name] = {
        {"jobs", account.jobs},
        {"mean_wait_s",
         Round(account.started ? account.wait / static_cast<double>(account.started) : 0, 1)},
        {"core_usage_share", Round(Fraction(account.core_seconds, f.core_seconds), 4)},
        {"gpu_usage_share",
         OrNull(result.total_gpus > 0, Round(Fraction(account.gpu_seconds, f.gpu_seconds), 4))}};
  report["accounts"] = accounts;
  report["fragmentation"] = {
      {"cores", Round(Fraction(result.fragmented_core_seconds, capacity_cores), 4)},
      {"gpus", OrNull(result.total_gpus > 0,
                      Round(Fraction(result.fragmented_gpu_seconds, capacity_gpus), 4))}};
  report["preemptions"] = f.preemptions;
  report["cycles"] = result.cycles;
  bool timed = result.timed;
  report["mean_cycle_ms"] = OrNull(
      timed,
      Round(result.cycles ? result.cycle_ms_total / static_cast<double>(result.cycles) : 0, 3));
  report["max_cycle_ms"] = OrNull(timed, Round(result.cycle_ms_max, 3));
  report["wall_s"] = OrNull(timed, Round(result.wall_seconds, 3));
  report["sim_seconds_per_wall_second"] =
      OrNull(timed, Round(Fraction(static_cast<double>(f.makespan), result.wall_seconds), 0));
  return report;
}

std::string ReportText(const SimResult& result) {
  nlohmann::ordered_json r = ReportJson(result);
  auto number = [](const nlohmann::ordered_json& value, std::string_view unit = "") {
    if (value.is_null()) return std::string("n/a");
    if (value.is_number_float()) {
      double x = value.get<double>();
      return (std::abs(x) >= 1000 || x == std::floor(x) ? fmt::format("{:.0f}", x)
                                                        : fmt::format("{:g}", x)) +
             std::string(unit);
    }
    return value.dump() + std::string(unit);
  };
  auto percent = [](const nlohmann::ordered_json& value) {
    return value.is_null() ? std::string("n/a") : fmt::format("{:.1f}%", value.get<double>() * 100);
  };
  std::string out;
  out += fmt::format("trace               {}\n", r["trace"].get<std::string>());
  out += fmt::format("policy              {} (priority/{})\n", r["policy"].get<std::string>(),
                     r["priority"].get<std::string>());
  out += fmt::format("cluster             {} cores, {} GPUs\n", number(r["cluster"]["cores"]),
                     number(r["cluster"]["gpus"]));
  std::string states;
  for (const auto& [state, count] : r["jobs_by_state"].items())
    states += fmt::format("{}{} {}", states.empty() ? "" : ", ", count.get<uint64_t>(), state);
  out += fmt::format("jobs                {} ({})\n", number(r["jobs"]), states);
  if (r["skipped"].get<uint64_t>() > 0) {
    std::string why;
    for (const auto& [reason, count] : r["skipped_by_reason"].items())
      why += fmt::format("{}{} {}", why.empty() ? "" : ", ", count.get<uint64_t>(), reason);
    out += fmt::format("skipped             {} ({})\n", number(r["skipped"]), why);
  }
  if (r["fractional_gpu_jobs"].get<uint64_t>() > 0) {
    std::string sharing = r["gpu_sharing"].get<std::string>();
    std::string got = sharing == "whole" ? "a whole one"
                      : sharing.starts_with("shard")
                          ? "shards of one (--gpu-sharing " + sharing + ")"
                          : "a MIG slice where a seventh sufficed (--gpu-sharing " + sharing + ")";
    out += fmt::format("fractional GPUs     {} jobs asked for part of a GPU and got {}\n",
                       number(r["fractional_gpu_jobs"]), got);
  }
  out += fmt::format("makespan            {} s\n", number(r["makespan_s"]));
  out += fmt::format("utilization         cores {}, GPUs {}\n", percent(r["utilization"]["cores"]),
                     percent(r["utilization"]["gpus"]));
  out += fmt::format("wait                mean {} s, median {} s, p95 {} s, p99 {} s\n",
                     number(r["mean_wait_s"]), number(r["median_wait_s"]), number(r["p95_wait_s"]),
                     number(r["p99_wait_s"]));
  out += fmt::format("bounded slowdown    {} (mean, tau = {:g} s)\n",
                     number(r["mean_bounded_slowdown"]), kSlowdownBound);
  out += fmt::format("fragmentation       cores {}, GPUs {} (free while the queue's head waits)\n",
                     percent(r["fragmentation"]["cores"]), percent(r["fragmentation"]["gpus"]));
  out += fmt::format("preemptions         {}\n", number(r["preemptions"]));
  out += fmt::format(
      "scheduler           {} cycles, mean {} ms, max {} ms; {} simulated s per "
      "wall s ({} s wall)\n",
      number(r["cycles"]), number(r["mean_cycle_ms"]), number(r["max_cycle_ms"]),
      number(r["sim_seconds_per_wall_second"]), number(r["wall_s"]));
  out += "accounts            jobs   mean wait (s)   core usage   GPU usage\n";
  for (const auto& [name, account] : r["accounts"].items())
    out += fmt::format("  {:<16} {:>6} {:>15} {:>12} {:>11}\n", name, number(account["jobs"]),
                       number(account["mean_wait_s"]), percent(account["core_usage_share"]),
                       percent(account["gpu_usage_share"]));
  return out;
}

std::string JobsCsv(const SimResult& result) {
  std::string out =
      "job,user,account,submit,start,end,wait,run,state,cpus,gpus,nodes,node_list,restarts,"
      "preemptions\n";
  for (const JobRecord& job : result.jobs) {
    auto time = [](int64_t t) { return t < 0 ? std::string() : std::to_string(t); };
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},\"{}\",{},{}\n", job.trace_id, job.user,
                       job.account, job.submit, time(job.start), time(job.end),
                       job.start < 0 ? std::string() : std::to_string(job.start - job.submit),
                       job.end < 0 ? std::string() : std::to_string(job.run_seconds),
                       job.start < 0 ? "PENDING" : ctld::JobStateName(job.state), job.cpus,
                       job.gpus, job.nodes, job.node_list, job.restarts, job.preemptions);
  }
  return out;
}

std::string CompareText(const SimResult& a, const std::string& a_name, const SimResult& b,
                        const std::string& b_name) {
  nlohmann::ordered_json x = ReportJson(a), y = ReportJson(b);
  struct Row {
    std::string label;
    nlohmann::ordered_json left, right;
  };
  std::vector<Row> rows = {
      {"jobs", x["jobs"], y["jobs"]},
      {"makespan_s", x["makespan_s"], y["makespan_s"]},
      {"utilization.cores", x["utilization"]["cores"], y["utilization"]["cores"]},
      {"utilization.gpus", x["utilization"]["gpus"], y["utilization"]["gpus"]},
      {"mean_wait_s", x["mean_wait_s"], y["mean_wait_s"]},
      {"median_wait_s", x["median_wait_s"], y["median_wait_s"]},
      {"p95_wait_s", x["p95_wait_s"], y["p95_wait_s"]},
      {"p99_wait_s", x["p99_wait_s"], y["p99_wait_s"]},
      {"mean_bounded_slowdown", x["mean_bounded_slowdown"], y["mean_bounded_slowdown"]},
      {"fragmentation.cores", x["fragmentation"]["cores"], y["fragmentation"]["cores"]},
      {"fragmentation.gpus", x["fragmentation"]["gpus"], y["fragmentation"]["gpus"]},
      {"preemptions", x["preemptions"], y["preemptions"]},
      {"never_started", x["never_started"], y["never_started"]},
      {"cycles", x["cycles"], y["cycles"]},
      {"mean_cycle_ms", x["mean_cycle_ms"], y["mean_cycle_ms"]},
  };
  auto text = [](const nlohmann::ordered_json& value) {
    if (value.is_null()) return std::string("n/a");
    if (value.is_number_float()) return fmt::format("{:g}", value.get<double>());
    return value.dump();
  };
  size_t width = std::max<size_t>({a_name.size(), b_name.size(), 12});
  std::string out =
      fmt::format("{:<24} {:>{}} {:>{}} {:>12}\n", "", a_name, width, b_name, width, "difference");
  for (const Row& row : rows) {
    std::string difference;
    if (row.left.is_number() && row.right.is_number()) {
      double l = row.left.get<double>(), r = row.right.get<double>();
      difference = l == 0 ? (r == 0 ? "0" : "n/a") : fmt::format("{:+.1f}%", (r - l) / l * 100);
    }
    out += fmt::format("{:<24} {:>{}} {:>{}} {:>12}\n", row.label, text(row.left), width,
                       text(row.right), width, difference.empty() ? "n/a" : difference);
  }
  return out;
}

}  // namespace drover::sim
