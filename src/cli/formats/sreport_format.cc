// sreport's reports; see sreport_format.h. Layout from Slurm 22.05's sreport (cluster_reports.c,
// user_reports.c, job_reports.c and print_fields): an 80-dash title block, right-justified
// columns each followed by a space, usage columns as wide as the largest value in seconds has
// digits (at least 8; 9 more with a "/Percentage" format), text cut with '+', numbers cut bare.
#include "cli/formats/sreport_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <map>
#include <set>
#include <utility>

#include "cli/formats/formats.h"
#include "common/accounting_settings.h"
#include "common/text.h"

namespace drover::cli {
namespace {

const std::string kDashes(80, '-');

bool WithPercent(SreportTime time) {
  return time == SreportTime::kSecPer || time == SreportTime::kMinPer ||
         time == SreportTime::kHourPer;
}

std::string TimeFormatName(SreportTime time) {
  switch (time) {
    case SreportTime::kSeconds:
      return "Seconds";
    case SreportTime::kMinutes:
      return "Minutes";
    case SreportTime::kHours:
      return "Hours";
    case SreportTime::kPercent:
      return "Percentage of Total";
    case SreportTime::kSecPer:
      return "Seconds/Percentage of Total";
    case SreportTime::kMinPer:
      return "Minutes/Percentage of Total";
    case SreportTime::kHourPer:
      return "Hours/Percentage of Total";
  }
  return "Minutes";
}

// slurmdb_report_print_time's text for `seconds` of a `total`.
std::string TimeText(double seconds, double total, SreportTime time) {
  if (total <= 0) total = 1;
  double percent = 100.0 * seconds / total;
  auto whole = [](double value) { return fmt::format("{}", static_cast<uint64_t>(value)); };
  switch (time) {
    case SreportTime::kSeconds:
      return whole(seconds);
    case SreportTime::kMinutes:
      return fmt::format("{:.0f}", seconds / 60);
    case SreportTime::kHours:
      return fmt::format("{:.0f}", seconds / 3600);
    case SreportTime::kPercent:
      return fmt::format("{:.2f}%", percent);
    case SreportTime::kSecPer:
      return fmt::format("{}({:.2f}%)", whole(seconds), percent);
    case SreportTime::kMinPer:
      return fmt::format("{:.0f}({:.2f}%)", seconds / 60, percent);
    case SreportTime::kHourPer:
      return fmt::format("{:.0f}({:.2f}%)", seconds / 3600, percent);
  }
  return whole(seconds);
}

// sreport_set_usage_col_width: the digits of the largest value in seconds, at least 8.
int UsageWidth(double seconds, SreportTime time) {
  int width = 8;
  double order = 100000000.0;
  while (seconds >= order && width < 26) {
    ++width;
    order *= 10;
  }
  return width + (WithPercent(time) ? 9 : 0);
}

struct Column {
  std::string name;
  int width;          // negative: left-justified
  bool text = false;  // cut with '+' (print_fields_str), else cut bare
};

// print_fields: the header and dash lines (or the parsable header), then the rows.
std::string Render(const std::vector<Column>& columns,
                   const std::vector<std::vector<std::string>>& rows,
                   const SreportOptions& options) {
  std::string out;
  bool parsable = options.parsable || options.parsable2;
  auto line = [&](const std::vector<std::string>& cells, bool header) {
    for (size_t i = 0; i < columns.size(); ++i) {
      const std::string& cell = i < cells.size() ? cells[i] : std::string();
      if (parsable) {
        out += cell;
        if (options.parsable || i + 1 < columns.size()) out += '|';
        continue;
      }
      int width = columns[i].width;
      size_t size = static_cast<size_t>(std::abs(width));
      std::string text = cell;
      if (text.size() > size) {
        text.resize(size);
        if (!header && columns[i].text && size > 0) text[size - 1] = '+';
      }
      std::string padding(size - text.size(), ' ');
      out += width < 0 ? text + padding : padding + text;
      out += ' ';
    }
    out += '\n';
  };
  if (!options.no_header) {
    std::vector<std::string> names;
    for (const Column& column : columns) names.push_back(column.name);
    line(names, true);
    if (!parsable) {
      for (const Column& column : columns)
        out += std::string(static_cast<size_t>(std::abs(column.width)), '-') + ' ';
      out += '\n';
    }
  }
  for (const auto& row : rows) line(row, false);
  return out;
}

std::string Window(const SreportOptions& options) {
  return columns::IsoTime(options.start) + " - " + columns::IsoTime(options.end - 1);
}

std::string TitleBlock(const SreportOptions& options, const std::string& title,
                       const std::string& second) {
  if (options.no_header) return "";
  return kDashes + "\n" + title + "\n" + second + "\n" + kDashes + "\n";
}

std::string UsageLine(const SreportOptions& options) {
  if (options.time == SreportTime::kPercent)
    return "Usage reported in " + TimeFormatName(options.time);
  return fmt::format("Usage reported in {} {}", options.tres.empty() ? "CPU" : "TRES",
                     TimeFormatName(options.time));
}

std::vector<std::string> TresList(const SreportOptions& options) {
  return options.tres.empty() ? std::vector<std::string>{"cpu"} : options.tres;
}

// What the job's allocation holds of `tres`.
double Amount(const v1::Job& job, const ClusterConfig& cluster, std::string_view tres) {
  double amount = 0;
  for (const v1::NodeAllocation& node : job.allocation()) {
    if (tres == "cpu") amount += columns::AllocatedCpus(node, &cluster);
    if (tres == "mem") amount += static_cast<double>(node.memory_mb());
    if (tres == "node") amount += 1;
    if (tres.starts_with("gres/gpu")) amount += node.shares() ? 0 : node.gpus_size();
  }
  return amount;
}

// What the cluster has of `tres`.
double Total(const ClusterConfig& cluster, std::string_view tres) {
  double total = 0;
  for (const NodeConfig& node : cluster.nodes) {
    if (tres == "cpu") total += node.cpus;
    if (tres == "mem") total += static_cast<double>(node.real_memory_mb);
    if (tres == "node") total += 1;
    if (tres.starts_with("gres/gpu")) total += static_cast<double>(node.gpus.size());
  }
  return total;
}

// The seconds the job's runs held their allocation within the window.
double Elapsed(const v1::Job& job, const SreportOptions& options, int64_t now) {
  auto overlap = [&](int64_t from, int64_t to) {
    return static_cast<double>(
        std::max<int64_t>(0, std::min(to, options.end) - std::max(from, options.start)));
  };
  double seconds = 0;
  for (const v1::JobRun& run : job.history())
    if (run.start_time() > 0) seconds += overlap(run.start_time(), run.end_time());
  if (job.start_time() > 0 && job.state() != "PENDING") {
    bool active =
        job.state() == "RUNNING" || job.state() == "SUSPENDED" || job.state() == "COMPLETING";
    seconds += overlap(job.start_time(), active ? now : job.end_time());
  }
  return seconds;
}

// The accounts and users as sreport walks them: a parent's users (by name), then its
// sub-accounts (by name), each followed by its own.
struct Tree {
  std::map<std::string, std::string> parent;  // account -> parent account ("" for root)
  std::map<std::string, std::set<std::string>> users, accounts;  // children by account

  void AddAccount(const std::string& account, const std::string& up) {
    if (account == "root" || parent.count(account)) return;
    parent[account] = up;
    accounts[up].insert(account);
  }
  // Whether `account` is `ancestor` or below it.
  bool Under(std::string account, const std::string& ancestor) const {
    for (int depth = 0; depth < 64; ++depth) {
      if (account == ancestor) return true;
      auto it = parent.find(account);
      if (it == parent.end()) return false;
      account = it->second;
    }
    return false;
  }
};

Tree TreeOf(const acct::Database& accounting, const std::string& cluster,
            const std::vector<v1::Job>& jobs) {
  Tree tree;
  for (const auto& [record, depth] : accounting.Hierarchy(acct::NameOf(cluster))) {
    if (depth == 0) continue;
    if (record->is_user())
      tree.users[record->account].insert(record->user);
    else
      tree.AddAccount(record->account, record->parent);
  }
  // Jobs of accounts and users accounting does not know (nothing enforced): under root.
  for (const v1::Job& job : jobs) {
    const std::string& account = job.spec().account().empty() ? "root" : job.spec().account();
    tree.AddAccount(account, "root");
    tree.users[account].insert(job.spec().user());
  }
  return tree;
}

std::string AccountOf(const v1::Job& job) {
  return job.spec().account().empty() ? "root" : job.spec().account();
}

bool Listed(const std::vector<std::string>& list, const std::string& name) {
  return list.empty() || std::find(list.begin(), list.end(), name) != list.end();
}

}  // namespace

std::optional<SreportTime> ParseSreportTime(std::string_view text) {
  auto matches = [&](std::string_view name, size_t least) {
    return text.size() >= least && text.size() <= name.size() &&
           EqualsIgnoreCase(name.substr(0, text.size()), text);
  };
  if (matches("SecPer", 6)) return SreportTime::kSecPer;
  if (matches("MinPer", 6)) return SreportTime::kMinPer;
  if (matches("HourPer", 6)) return SreportTime::kHourPer;
  if (matches("Seconds", 1)) return SreportTime::kSeconds;
  if (matches("Minutes", 1)) return SreportTime::kMinutes;
  if (matches("Hours", 1)) return SreportTime::kHours;
  if (matches("Percent", 1)) return SreportTime::kPercent;
  return std::nullopt;
}

void SreportWindow(SreportOptions& options, std::optional<int64_t> start,
                   std::optional<int64_t> end, int64_t now) {
  auto midnight = [](int64_t when, int days_back) {
    time_t clock = static_cast<time_t>(when);
    struct tm local {};
    localtime_r(&clock, &local);
    local.tm_sec = local.tm_min = local.tm_hour = 0;
    local.tm_mday -= days_back;
    local.tm_isdst = -1;
    return static_cast<int64_t>(mktime(&local));
  };
  auto nearest_hour = [](int64_t when) {
    time_t clock = static_cast<time_t>(when);
    struct tm local {};
    localtime_r(&clock, &local);
    if (local.tm_sec >= 30) ++local.tm_min;
    if (local.tm_min >= 30) ++local.tm_hour;
    local.tm_min = local.tm_sec = 0;
    local.tm_isdst = -1;
    return static_cast<int64_t>(mktime(&local));
  };
  if (end && *end > now) end = now;
  options.end = end ? nearest_hour(*end) : midnight(now, 0);
  options.start = start ? nearest_hour(*start) : midnight(now, 1);
  if (options.end - options.start < 3600) options.end = options.start + 3600;
}

std::string FormatClusterUtilization(const ClusterConfig& cluster, const std::vector<v1::Job>& jobs,
                                     const SreportOptions& options) {
  double period = static_cast<double>(options.end - options.start);
  int64_t now = options.end;
  struct Row {
    std::string tres;
    double allocated = 0, reported = 0;
  };
  std::vector<Row> rows;
  for (const std::string& tres : TresList(options)) {
    Row row{tres};
    for (const v1::Job& job : jobs)
      row.allocated += Amount(job, cluster, tres) * Elapsed(job, options, now);
    row.reported = Total(cluster, tres) * period;
    rows.push_back(row);
  }
  double allocated = 0, idle = 0, reported = 0;
  for (const Row& row : rows) {
    allocated = std::max(allocated, row.allocated);
    idle = std::max(idle, std::max(0.0, row.reported - row.allocated));
    reported = std::max(reported, row.reported);
  }
  std::vector<Column> columns = {{"Cluster", 9, true}};
  if (!options.tres.empty()) columns.push_back({"TRES Name", 14, true});
  int zero = UsageWidth(0, options.time);
  columns.insert(columns.end(), {{"Allocated", UsageWidth(allocated, options.time)},
                                 {"Down", zero},
                                 {"PLND Down", zero},
                                 {"Idle", UsageWidth(idle, options.time)},
                                 {"Planned", zero},
                                 {"Reported", UsageWidth(reported, options.time)}});
  std::vector<std::vector<std::string>> cells;
  for (const Row& row : rows) {
    std::vector<std::string> line = {options.cluster};
    if (!options.tres.empty()) line.push_back(row.tres);
    double free = std::max(0.0, row.reported - row.allocated);
    for (double value : {row.allocated, 0.0, 0.0, free, 0.0})
      line.push_back(TimeText(value, row.reported, options.time));
    line.push_back(TimeText(row.reported, row.reported, options.time));
    cells.push_back(std::move(line));
  }
  return TitleBlock(options, "Cluster Utilization " + Window(options), UsageLine(options)) +
         Render(columns, cells, options);
}

std::string FormatAccountUtilizationByUser(const ClusterConfig& cluster,
                                           const acct::Database& accounting,
                                           const std::vector<v1::Job>& jobs,
                                           const SreportOptions& options) {
  Tree tree = TreeOf(accounting, options.cluster, jobs);
  std::vector<std::string> tres_list = TresList(options);
  int64_t now = options.end;
  // Used by (account, user) and TRES; accounts' rows sum their subtrees.
  std::map<std::pair<std::string, std::string>, std::vector<double>> used;
  for (const v1::Job& job : jobs) {
    double seconds = Elapsed(job, options, now);
    if (seconds <= 0) continue;
    std::vector<double>& own = used[{AccountOf(job), job.spec().user()}];
    own.resize(tres_list.size());
    for (size_t t = 0; t < tres_list.size(); ++t)
      own[t] += Amount(job, cluster, tres_list[t]) * seconds;
  }
  auto subtree = [&](const std::string& account) {
    std::vector<double> sum(tres_list.size());
    for (const auto& [key, values] : used)
      if (tree.Under(key.first, account))
        for (size_t t = 0; t < values.size(); ++t) sum[t] += values[t];
    return sum;
  };
  double period = static_cast<double>(options.end - options.start);
  struct Line {
    std::string account, user;
    int depth = 0;
    std::vector<double> values;
  };
  std::vector<Line> lines;
  std::function<void(const std::string&, int)> walk = [&](const std::string& account, int depth) {
    bool wanted = options.accounts.empty();
    for (const std::string& listed : options.accounts)
      wanted = wanted || tree.Under(account, listed);
    if (wanted && options.users.empty()) lines.push_back({account, "", depth, subtree(account)});
    for (const std::string& user : tree.users[account]) {
      auto it = used.find({account, user});
      if (wanted && it != used.end() && Listed(options.users, user))
        lines.push_back({account, user, depth + 1, it->second});
    }
    for (const std::string& child : tree.accounts[account]) walk(child, depth + 1);
  };
  walk("root", 0);
  double largest = 0;
  for (const Line& line : lines)
    for (double value : line.values) largest = std::max(largest, value);
  std::vector<Column> columns = {{"Cluster", 9, true},
                                 {"Account", options.tree ? -20 : 15, true},
                                 {"Login", 9, true},
                                 {"Proper Name", 15, true}};
  if (!options.tres.empty()) columns.push_back({"TRES Name", 14, true});
  columns.push_back({"Used", UsageWidth(largest, options.time)});
  if (options.tres.empty()) columns.push_back({"Energy", UsageWidth(0, options.time)});
  std::vector<std::vector<std::string>> cells;
  for (const Line& line : lines) {
    for (size_t t = 0; t < tres_list.size(); ++t) {
      double value = t < line.values.size() ? line.values[t] : 0;
      if (value <= 0) continue;  // as Slurm: associations without usage are left out
      std::string name = options.tree
                             ? std::string(static_cast<size_t>(line.depth), ' ') + line.account
                             : line.account;
      std::vector<std::string> row = {options.cluster, name, line.user,
                                      line.user.empty() || !options.proper_name
                                          ? std::string()
                                          : options.proper_name(line.user)};
      if (!options.tres.empty()) row.push_back(tres_list[t]);
      double total = Total(cluster, tres_list[t]) * period;
      row.push_back(TimeText(value, total, options.time));
      if (options.tres.empty()) row.push_back(TimeText(0, total, options.time));
      cells.push_back(std::move(row));
    }
  }
  return TitleBlock(options,
                    fmt::format("Cluster/Account/User Utilization {} ({} secs)", Window(options),
                                options.end - options.start),
                    UsageLine(options)) +
         Render(columns, cells, options);
}

std::string FormatTopUsage(const ClusterConfig& cluster, const std::vector<v1::Job>& jobs,
                           const SreportOptions& options) {
  std::vector<std::string> tres_list = TresList(options);
  int64_t now = options.end;
  struct Entry {
    std::string user;
    std::vector<std::string> accounts;
    std::vector<double> values;
  };
  std::map<std::pair<std::string, std::string>, Entry> entries;  // (user, account or "")
  for (const v1::Job& job : jobs) {
    if (!Listed(options.users, job.spec().user()) || !Listed(options.accounts, AccountOf(job)))
      continue;
    double seconds = Elapsed(job, options, now);
    if (seconds <= 0) continue;
    Entry& entry = entries[{job.spec().user(), options.group ? "" : AccountOf(job)}];
    entry.user = job.spec().user();
    if (std::find(entry.accounts.begin(), entry.accounts.end(), AccountOf(job)) ==
        entry.accounts.end())
      entry.accounts.push_back(AccountOf(job));
    entry.values.resize(tres_list.size());
    for (size_t t = 0; t < tres_list.size(); ++t)
      entry.values[t] += Amount(job, cluster, tres_list[t]) * seconds;
  }
  std::vector<Entry> sorted;
  for (auto& [key, entry] : entries) sorted.push_back(std::move(entry));
  std::sort(sorted.begin(), sorted.end(), [](const Entry& a, const Entry& b) {
    if (a.values.front() != b.values.front()) return a.values.front() > b.values.front();
    return a.user < b.user;
  });
  if (sorted.size() > options.top) sorted.resize(options.top);
  double largest = sorted.empty() ? 0 : sorted.front().values.front();
  for (const Entry& entry : sorted)
    for (double value : entry.values) largest = std::max(largest, value);
  std::vector<Column> columns = {
      {"Cluster", 9, true}, {"Login", 9, true}, {"Proper Name", 15, true}, {"Account", 15, true}};
  if (!options.tres.empty()) columns.push_back({"TRES Name", 14, true});
  columns.push_back({"Used", UsageWidth(largest, options.time)});
  if (options.tres.empty()) columns.push_back({"Energy", UsageWidth(0, options.time)});
  double period = static_cast<double>(options.end - options.start);
  std::vector<std::vector<std::string>> cells;
  for (const Entry& entry : sorted) {
    for (size_t t = 0; t < tres_list.size(); ++t) {
      std::vector<std::string> row = {options.cluster, entry.user,
                                      options.proper_name ? options.proper_name(entry.user) : "",
                                      Join(entry.accounts, ", ")};
      if (!options.tres.empty()) row.push_back(tres_list[t]);
      double total = Total(cluster, tres_list[t]) * period;
      row.push_back(TimeText(entry.values[t], total, options.time));
      if (options.tres.empty()) row.push_back(TimeText(0, total, options.time));
      cells.push_back(std::move(row));
    }
  }
  return TitleBlock(options,
                    fmt::format("Top {} Users {} ({} secs)", options.top, Window(options),
                                options.end - options.start),
                    UsageLine(options)) +
         Render(columns, cells, options);
}

Result<std::string> FormatJobSizesByAccount(const ClusterConfig& cluster,
                                            const acct::Database& accounting,
                                            const std::vector<v1::Job>& jobs,
                                            const SreportOptions& options) {
  if (options.tres.size() > 1)
    return MakeError(
        " Job report only supports a single --tres type.\n Generate a separate report for each "
        "TRES type.");
  std::string tres = options.tres.empty() ? "cpu" : options.tres.front();
  std::string unit = tres == "cpu" ? "CPUs" : "TRES";
  Tree tree = TreeOf(accounting, options.cluster, jobs);
  // The rows: root (or the accounts asked for), their children (AcctAsParent), or every
  // account jobs ran under (FlatView).
  std::vector<std::string> rows;
  std::vector<std::string> parents =
      options.accounts.empty() ? std::vector<std::string>{"root"} : options.accounts;
  if (options.flat_view) {
    std::set<std::string> seen;
    for (const v1::Job& job : jobs) seen.insert(AccountOf(job));
    rows.assign(seen.begin(), seen.end());
  } else if (options.acct_as_parent) {
    for (const std::string& parent : parents)
      for (const std::string& child : tree.accounts[parent]) rows.push_back(child);
    std::sort(rows.begin(), rows.end());
  } else {
    rows = parents;
  }
  std::vector<uint64_t> bounds = options.grouping;
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  size_t buckets = bounds.size() + 1;
  auto bucket_of = [&](double count) {
    size_t b = 0;
    while (b < bounds.size() && count >= static_cast<double>(bounds[b])) ++b;
    return b;
  };
  int64_t now = options.end;
  std::vector<std::vector<double>> values(rows.size(), std::vector<double>(buckets));
  double cluster_total = 0;
  for (const v1::Job& job : jobs) {
    double seconds = Elapsed(job, options, now);
    if (seconds <= 0) continue;
    double count = Amount(job, cluster, tres);
    double value = options.print_job_count ? 1 : count * seconds;
    cluster_total += value;
    for (size_t r = 0; r < rows.size(); ++r) {
      bool in = options.flat_view ? AccountOf(job) == rows[r] : tree.Under(AccountOf(job), rows[r]);
      if (in) values[r][bucket_of(count)] += value;
    }
  }
  std::vector<Column> columns = {{"Cluster", 9, true}, {"Account", 9, true}};
  uint64_t last = 0;
  for (uint64_t bound : bounds) {
    columns.push_back(
        {fmt::format("{}-{} {}", last, bound - 1, unit), WithPercent(options.time) ? 20 : 13});
    last = bound;
  }
  columns.push_back({fmt::format(">= {} {}", last, unit), WithPercent(options.time) ? 20 : 13});
  columns.push_back({"% of cluster", 12});
  std::vector<std::vector<std::string>> cells;
  for (size_t r = 0; r < rows.size(); ++r) {
    double row_total = 0;
    for (double value : values[r]) row_total += value;
    if (row_total <= 0) continue;  // rows without jobs are left out, as Slurm's
    std::vector<std::string> line = {options.cluster, rows[r]};
    for (double value : values[r])
      line.push_back(options.print_job_count ? fmt::format("{}", static_cast<uint64_t>(value))
                                             : TimeText(value, row_total, options.time));
    line.push_back(TimeText(row_total, cluster_total, SreportTime::kPercent));
    cells.push_back(std::move(line));
  }
  std::string second = options.print_job_count ? "Units are in number of jobs ran"
                                               : "Time reported in " + TimeFormatName(options.time);
  if (!options.tres.empty()) second = "TRES type is " + tres + "\n" + second;
  return TitleBlock(
             options,
             fmt::format("Job Sizes {} ({} secs)", Window(options), options.end - options.start),
             second) +
         Render(columns, cells, options);
}

}  // namespace drover::cli
