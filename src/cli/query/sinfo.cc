// sinfo: partitions and nodes, from the controller's lists, in sinfo's formats (formats.h).
#include <fmt/format.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/formats/formats.h"
#include "cli/query/query_common.h"
#include "cli/scontrol/scontrol_format.h"
#include "common/getopt.h"
#include "common/hostlist.h"
#include "common/text.h"

namespace drover::cli {
namespace {

constexpr const char* kSinfoUsage = "Usage: sinfo [-aelNRsv] [-p partition] [-o format]\n";

constexpr const char* kSinfoHelp =
    "Usage: sinfo [OPTIONS]\n"
    "  -a, --all                  show all partitions (including hidden and those\n"
    "                             not accessible)\n"
    "  -e, --exact                group nodes only on exact match of configuration\n"
    "  -h, --noheader             no headers on output\n"
    "  -l, --long                 long output - displays more information\n"
    "  -n, --nodes=NODES          report on specific node(s)\n"
    "  -N, --Node                 Node-centric format\n"
    "  -o, --format=format        format specification\n"
    "  -p, --partition=PARTITION  report on specific partition\n"
    "  -R, --list-reasons         list reason nodes are down or drained\n"
    "  -s, --summarize            report state summary only\n"
    "  -v, --verbose              verbosity level\n"
    "  -V, --version              output version information and exit\n"
    "\n"
    "Help options:\n"
    "  --help                     show this help message\n"
    "  --usage                    display brief usage message\n";

constexpr OptionSpec kSinfoOptions[] = {{'h', "noheader", OptionSpec::kNone},
                                        {'l', "long", OptionSpec::kNone},
                                        {'N', "Node", OptionSpec::kNone},
                                        {'R', "list-reasons", OptionSpec::kNone},
                                        {'s', "summarize", OptionSpec::kNone},
                                        {'a', "all", OptionSpec::kNone},
                                        {'e', "exact", OptionSpec::kNone},
                                        {'o', "format", OptionSpec::kRequired},
                                        {'p', "partition", OptionSpec::kRequired},
                                        {'n', "nodes", OptionSpec::kRequired},
                                        {'v', "verbose", OptionSpec::kNone},
                                        {'V', "version", OptionSpec::kNone},
                                        {0, "json", OptionSpec::kNone},
                                        {0, "help", OptionSpec::kNone},
                                        {0, "usage", OptionSpec::kNone}};

}  // namespace

std::vector<OptionSpec> SinfoOptionTable() {
  return {std::begin(kSinfoOptions), std::end(kSinfoOptions)};
}

int RunSinfo(Arguments args) {
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSinfoOptions);
  if (!parsed) return OptionError("sinfo", parsed.error());
  std::optional<std::set<std::string>> only_nodes;  // -n
  if (parsed->Has("nodes")) {
    auto names = ExpandHostlist(*parsed->Last("nodes"));
    if (!names) return Fail("sinfo", "invalid node list: " + names.error());
    only_nodes.emplace(names->begin(), names->end());
  }
  if (auto code = HelpUsageVersion(*parsed, kSinfoHelp, kSinfoUsage)) return *code;
  SinfoOptions options;
  std::set<std::string> only;
  for (const auto& [option, value] : parsed->options) {
    if (option == "noheader") options.no_header = true;
    if (option == "long") options.long_format = true;
    if (option == "Node") options.node_oriented = true;
    if (option == "list-reasons") options.list_reasons = true;
    if (option == "summarize") options.summarize = true;
    if (option == "all") options.all = true;
    if (option == "exact") options.exact = true;
    if (option == "format") options.format = value;
    if (option == "partition")
      for (const std::string& p : CommaList(value)) only.insert(p);
  }
  if (!options.format.empty())
    if (auto errors = SinfoFormatErrors(options.format); !errors.empty())
      return Fail("sinfo", errors.front());
  auto connection = Connect();
  if (!connection) return Fail("sinfo", connection.error());
  grpc::ClientContext context;
  SetDeadline(context);
  v1::NodeList nodes;
  grpc::Status status = connection->stub->ListNodes(&context, v1::NodeQuery(), &nodes);
  if (!status.ok()) return Fail("sinfo", Unreachable(status));
  std::vector<v1::Partition> partitions;
  for (v1::Partition& partition : Partitions(*connection->stub))
    if (only.empty() || only.count(partition.name())) partitions.push_back(std::move(partition));
  v1::JobQuery query;
  v1::JobList list;
  grpc::ClientContext jobs_context;
  SetDeadline(jobs_context);
  connection->stub->ListJobs(&jobs_context, query, &list);
  std::vector<v1::Job> jobs = ParseJobs(list);
  options.now = nodes.time() ? nodes.time() : std::time(nullptr);
  options.user_name = UserName;
  std::vector<v1::NodeStatus> node_list(nodes.nodes().begin(), nodes.nodes().end());
  if (only_nodes)
    std::erase_if(node_list, [&](const v1::NodeStatus& n) { return !only_nodes->count(n.name()); });
  if (parsed->Has("json")) {
    scontrol::ShowContext ctx;
    ctx.cluster = &connection->cluster;
    ctx.now = options.now;
    ctx.user_name = UserName;
    ctx.group_name = UserName;
    std::fputs(scontrol::SinfoJson(node_list, jobs, partitions, ctx).c_str(), stdout);
    return 0;
  }
  std::fputs(FormatSinfo(partitions, node_list, &connection->cluster, options, jobs).c_str(),
             stdout);
  return 0;
}

}  // namespace drover::cli
