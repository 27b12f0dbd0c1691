// sreport: reports of what the cluster's jobs used, from the controller's job history and its
// accounting tree (sreport_format.h): cluster Utilization, cluster AccountUtilizationByUser,
// user TopUsage and job SizesByAccount, with Slurm 22.05's options (-t, -T, -n, -p, -P) and
// report words (start=, end=, users=, accounts=, tree, topcount=, group, grouping=,
// printjobcount, flatview, acctasparent). With no command it reads commands from its input.
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/clusters.h"
#include "cli/commands.h"
#include "cli/formats/formats.h"
#include "cli/formats/sreport_format.h"
#include "cli/query/query_common.h"
#include "cli/scontrol/scontrol_keywords.h"
#include "common/accounting_settings.h"
#include "common/getopt.h"
#include "common/text.h"

namespace drover::cli {
namespace {

constexpr const char* kSreportUsage =
    "Usage: sreport [-anpPQtTvV] [-M cluster] [command [report [options]]]\n";

constexpr const char* kSreportHelp =
    "sreport [<OPTION>] [<COMMAND>]\n"
    "    Valid <OPTION> values are:\n"
    "     -a or --all_clusters: Use all clusters instead of current\n"
    "     -M or --cluster: cluster to issue commands to.\n"
    "     -n or --noheader: equivalent to \"noheader\" command\n"
    "     -p or --parsable: output will be '|' delimited with a '|' at the end\n"
    "     -P or --parsable2: output will be '|' delimited without a '|' at the end\n"
    "     -Q or --quiet: equivalent to \"quiet\" command\n"
    "     -t <time_format>: Second, Minute, Hour, Percent, SecPer, MinPer, HourPer\n"
    "     -T or --tres: comma separated list of TRES: cpu, mem, node, gres/gpu, energy\n"
    "     -v or --verbose: equivalent to \"verbose\" command\n"
    "     -V or --version: equivalent to \"version\" command\n"
    "\n"
    "    Valid <COMMAND> values are:\n"
    "     cluster AccountUtilizationByUser | Utilization  [start= end= users= accounts= tree]\n"
    "     job SizesByAccount  [start= end= accounts= grouping= printjobcount flatview\n"
    "                          acctasparent]\n"
    "     user TopUsage  [start= end= users= accounts= topcount= group]\n"
    "     time <time_format>, exit, help, version\n"
    "  Drover reports from the controller's job history: no slurmdbd is needed.\n";

constexpr OptionSpec kSreportOptions[] = {
    {'a', "all_clusters", OptionSpec::kNone}, {'M', "cluster", OptionSpec::kRequired},
    {0, "federation", OptionSpec::kNone},     {'h', "help", OptionSpec::kNone},
    {0, "local", OptionSpec::kNone},          {'n', "noheader", OptionSpec::kNone},
    {'p', "parsable", OptionSpec::kNone},     {'P', "parsable2", OptionSpec::kNone},
    {'Q', "quiet", OptionSpec::kNone},        {'t', "time", OptionSpec::kRequired},
    {'T', "tres", OptionSpec::kRequired},     {'v', "verbose", OptionSpec::kNone},
    {'V', "version", OptionSpec::kNone},      {0, "usage", OptionSpec::kNone}};

bool Keyword(std::string_view word, std::string_view keyword, size_t shortest) {
  return scontrol::MatchesKeyword(word, keyword, shortest);
}

// Proper Name: the GECOS field to its first comma (the whole field when that leaves nothing).
std::string ProperName(const std::string& user) {
  passwd* entry = getpwnam(user.c_str());
  if (!entry || !entry->pw_gecos) return "";
  std::string gecos = entry->pw_gecos;
  std::string first = gecos.substr(0, gecos.find(','));
  return first.empty() ? gecos : first;
}

// -T: the TRES it names that Drover counts; an error when none.
Result<std::vector<std::string>> ParseTresOption(const std::string& text) {
  std::vector<std::string> tres;
  for (const std::string& item : Split(text, ',')) {
    std::string name = ToLower(Trim(item));
    if (name == "all") return std::vector<std::string>{"cpu", "mem", "energy", "node", "gres/gpu"};
    if (name == "gpu") name = "gres/gpu";
    if (name == "cpu" || name == "mem" || name == "node" || name == "energy" ||
        name.starts_with("gres/gpu"))
      tres.push_back(name);
  }
  if (tres.empty()) return MakeError("No valid TRES given");
  return tres;
}

struct Session {
  SreportOptions options;
  bool quiet = false;
  std::optional<Connection> connection;
};

// The report's words into `options`; an unknown one is Slurm's message (the report still
// runs, and sreport exits 1).
bool ReadReportWords(const std::vector<std::string>& words, SreportOptions& options,
                     std::optional<int64_t>& start, std::optional<int64_t>& end, int64_t now,
                     bool user_report) {
  bool ok = true;
  for (const std::string& text : words) {
    size_t equals = text.find('=');
    std::string key = equals == std::string::npos ? text : text.substr(0, equals);
    std::string value = equals == std::string::npos ? "" : text.substr(equals + 1);
    if (equals == std::string::npos) {
      if (Keyword(key, "tree", 4)) {
        options.tree = true;
      } else if (Keyword(key, "group", 1) && user_report) {
        options.group = true;
      } else if (Keyword(key, "printjobcount", 2)) {
        options.print_job_count = true;
      } else if (Keyword(key, "flatview", 2)) {
        options.flat_view = true;
      } else if (Keyword(key, "acctasparent", 2)) {
        options.acct_as_parent = true;
      } else if (Keyword(key, "all_clusters", 1)) {
        // one cluster: the controller's
      } else {
        for (const std::string& user : CommaList(key)) options.users.push_back(user);
      }
      continue;
    }
    if (Keyword(key, "start", 1) || Keyword(key, "end", 1)) {
      std::optional<int64_t> when = ParseSacctTime(value, now);
      if (!when) {
        std::fprintf(stderr, " Invalid time specification: %s\n", value.c_str());
        ok = false;
        continue;
      }
      (Keyword(key, "start", 1) ? start : end) = *when;
    } else if (Keyword(key, "users", 1)) {
      for (const std::string& user : CommaList(value)) options.users.push_back(user);
    } else if (Keyword(key, "accounts", 2) || Keyword(key, "acct", 4)) {
      for (const std::string& account : CommaList(value))
        options.accounts.push_back(acct::NameOf(account));
    } else if (Keyword(key, "topcount", 1)) {
      std::optional<int64_t> top = ParseInt64(value);
      options.top = !top || *top < 0 ? UINT32_MAX : static_cast<uint32_t>(*top);
    } else if (Keyword(key, "grouping", 1)) {
      options.grouping.clear();
      for (const std::string& item : CommaList(value)) {
        std::optional<int64_t> size = ParseInt64(item);
        if (size && *size > 0) options.grouping.push_back(static_cast<uint64_t>(*size));
      }
      if (options.grouping.empty()) {
        std::fprintf(stderr, " Invalid grouping: %s (sizes such as grouping=50,250,500,1000)\n",
                     value.c_str());
        options.grouping = {50, 250, 500, 1000};
        ok = false;
      }
    } else if (Keyword(key, "clusters", 1)) {
      // one cluster: the controller's
    } else {
      std::fprintf(stderr, " Unknown condition: %s\nUse keyword set to modify value\n",
                   text.c_str());
      ok = false;
    }
  }
  return ok;
}

int Report(Session& session, const std::vector<std::string>& words) {
  std::string_view kind = words.front();
  bool cluster = Keyword(kind, "cluster", 2), job = Keyword(kind, "job", 1),
       user = Keyword(kind, "user", 1);
  if (words.size() < 2) {
    if (!session.quiet)
      std::fprintf(stderr, "too few arguments for keyword:%s\n", words[0].c_str());
    return 1;
  }
  std::string_view name = words[1];
  enum class Which { kUtilization, kAccounts, kTop, kSizes } which = Which::kUtilization;
  if (cluster && Keyword(name, "Utilization", 2)) {
    which = Which::kUtilization;
  } else if (cluster && Keyword(name, "AccountUtilizationByUser", 1)) {
    which = Which::kAccounts;
  } else if (user && Keyword(name, "TopUsage", 1)) {
    which = Which::kTop;
  } else if (job && Keyword(name, "SizesByAccount", std::max<size_t>(name.size(), 1)) &&
             name.size() <= 14) {
    which = Which::kSizes;
  } else {
    std::fprintf(stderr, "Not valid report %s\n", words[1].c_str());
    if (cluster)
      std::fputs(
          "Valid cluster reports are, \"AccountUtilizationByUser\" and \"Utilization\" "
          "(Drover's sreport has no UserUtilizationByAccount or WCKey reports yet)\n",
          stderr);
    if (job) std::fputs("Valid job reports are, \"SizesByAccount\"\n", stderr);
    if (user) std::fputs("Valid user reports are, \"Top\"\n", stderr);
    return 1;
  }
  if (!session.connection) {
    auto connection = Connect();
    if (!connection) return Fail("sreport", connection.error());
    session.connection = std::move(*connection);
  }
  Connection& connection = *session.connection;
  SreportOptions options = session.options;
  options.cluster = connection.cluster.settings.cluster_name;
  options.proper_name = ProperName;
  int64_t now = std::time(nullptr);
  std::optional<int64_t> start, end;
  bool ok = ReadReportWords({words.begin() + 2, words.end()}, options, start, end, now,
                            which == Which::kTop);
  SreportWindow(options, start, end, now);
  if (which == Which::kUtilization &&
      std::find(options.tres.begin(), options.tres.end(), "node") != options.tres.end()) {
    std::fputs(
        "sreport: fatal: TRES node usage is no longer reported in the Cluster "
        "Utilization report.  Please use TRES CPU instead.\n",
        stderr);
    return 1;
  }
  v1::HistoryQuery query;
  query.set_start_time(options.start);
  query.set_end_time(options.end);
  auto list = ReadHistory(connection, query);
  if (!list) return Fail("sreport", list.error());
  std::vector<v1::Job> jobs = ParseJobs(*list);
  std::string text;
  if (which == Which::kUtilization) {
    text = FormatClusterUtilization(connection.cluster, jobs, options);
  } else if (which == Which::kTop) {
    text = FormatTopUsage(connection.cluster, jobs, options);
  } else {
    auto accounting = FetchAccounting(connection.channel);
    if (!accounting) return Fail("sreport", accounting.error());
    if (which == Which::kAccounts) {
      text = FormatAccountUtilizationByUser(connection.cluster, *accounting, jobs, options);
    } else {
      auto sizes = FormatJobSizesByAccount(connection.cluster, *accounting, jobs, options);
      if (!sizes) {
        std::fprintf(stderr, "%s\n", sizes.error().c_str());
        return 1;
      }
      text = *sizes;
    }
  }
  std::fputs(text.c_str(), stdout);
  return ok ? 0 : 1;
}

int RunWords(Session& session, const std::vector<std::string>& words) {
  if (words.empty()) return 0;
  std::string_view command = words.front();
  if (Keyword(command, "cluster", 2) || Keyword(command, "job", 1) || Keyword(command, "user", 1))
    return Report(session, words);
  if (Keyword(command, "help", 2)) return std::fputs(kSreportHelp, stdout), 0;
  if (Keyword(command, "version", 4)) return PrintSlurmVersion();
  if (Keyword(command, "quiet", 4)) return session.quiet = true, 0;
  if (Keyword(command, "verbose", 4)) return 0;
  if (Keyword(command, "parsable2", 9)) return session.options.parsable2 = true, 0;
  if (Keyword(command, "parsable", 8)) return session.options.parsable = true, 0;
  if (Keyword(command, "nonparsable", 4))
    return session.options.parsable = session.options.parsable2 = false, 0;
  if (Keyword(command, "time", 4)) {
    if (words.size() < 2) {
      std::fprintf(stderr, "too few arguments for keyword:%s\n", words[0].c_str());
      return 1;
    }
    if (auto time = ParseSreportTime(words[1]))
      session.options.time = *time;
    else
      std::fprintf(stderr, "unknown time format %s", words[1].c_str());
    return 0;
  }
  if (Keyword(command, "reservation", 4) || Keyword(command, "resv", 4)) {
    std::fputs("sreport: error: reservation reports are not supported by Drover's sreport yet\n",
               stderr);
    return 1;
  }
  std::fprintf(stderr, "invalid keyword: %.*s\n", static_cast<int>(command.size()), command.data());
  return 1;
}

}  // namespace

std::vector<OptionSpec> SreportOptionTable() {
  return {std::begin(kSreportOptions), std::end(kSreportOptions)};
}

int RunSreport(Arguments args) {
  std::vector<std::string> words(args.begin(), args.end());
  size_t first = 0;
  // Options come before the command; -t, -T and -M take the next word.
  while (first < words.size() && words[first].size() > 1 && words[first][0] == '-') {
    const std::string& word = words[first];
    bool takes = (word == "-t" || word == "-T" || word == "-M" || word == "--tres" ||
                  word == "--cluster" || word == "--time");
    first += takes ? 2 : 1;
  }
  first = std::min(first, words.size());
  std::vector<std::string> option_words(words.begin(), words.begin() + first);
  auto parsed = ParseOptions(option_words, kSreportOptions);
  if (!parsed) {
    std::fprintf(stderr, "sreport: %s\nTry \"sreport --help\" for more information\n",
                 parsed.error().c_str());
    return 1;
  }
  if (auto code = HelpUsageVersion(*parsed, kSreportHelp, kSreportUsage)) return *code;
  Session session;
  for (const auto& [option, value] : parsed->options) {
    if (option == "noheader") session.options.no_header = true;
    if (option == "parsable") session.options.parsable = true;
    if (option == "parsable2") session.options.parsable2 = true;
    if (option == "quiet") session.quiet = true;
    if (option == "time") {
      if (auto time = ParseSreportTime(value))
        session.options.time = *time;
      else
        std::fprintf(stderr, "unknown time format %s", value.c_str());
    }
    if (option == "tres") {
      auto tres = ParseTresOption(value);
      if (!tres) {
        std::fprintf(stderr, "sreport: fatal: %s\n", tres.error().c_str());
        return 1;
      }
      session.options.tres = *tres;
    }
  }
  // -M (or SLURM_CLUSTERS): the controller's own cluster, or "all".
  if (auto clusters = ClustersRequested(parsed->Last("cluster"), Environment())) {
    auto connection = Connect();
    if (!connection) return Fail("sreport", connection.error());
    if (auto error = ClustersError(*clusters, connection->cluster.settings.cluster_name))
      return Fail("sreport", *error);
    session.connection = std::move(*connection);
  }
  const char* tres = std::getenv("SREPORT_TRES");
  if (session.options.tres.empty() && tres && *tres) {
    auto parsed_tres = ParseTresOption(tres);
    if (parsed_tres) session.options.tres = *parsed_tres;
  }
  std::vector<std::string> command(words.begin() + first, words.end());
  if (!command.empty()) return RunWords(session, command);
  int code = 0;
  std::string line;
  bool tty = ::isatty(STDIN_FILENO);
  for (;;) {
    if (tty) std::printf("sreport: "), std::fflush(stdout);
    if (!std::getline(std::cin, line)) break;
    auto split = scontrol::SplitCommandLine(line);
    if (!split || split->empty()) continue;
    if (Keyword(split->front(), "exit", 4) || Keyword(split->front(), "quit", 4)) break;
    if (int result = RunWords(session, *split); result != 0) code = result;
  }
  return code;
}

}  // namespace drover::cli
