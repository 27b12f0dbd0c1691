// sinfo: partitions and nodes, from the controller's lists, in sinfo's formats (formats.h).
#include <fmt/format.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/clusters.h"
#include "cli/commands.h"
#include "cli/formats/formats.h"
#include "cli/query/query_common.h"
#include "cli/scontrol/scontrol_format.h"
#include "common/getopt.h"
#include "common/hostlist.h"
#include "common/text.h"

namespace drover::cli {
namespace {

constexpr const char* kSinfoUsage =
    "Usage: sinfo [-abdelNRrsTv] [-i seconds] [-t states] [-p partition] [-n nodes]\n"
    "             [-S fields] [-o format] [-O Format] [--federation] [--local]\n"
    "             [--sibling]\n";

constexpr const char* kSinfoHelp =
    "Usage: sinfo [OPTIONS]\n"
    "  -a, --all                  show all partitions (including hidden and those\n"
    "                             not accessible)\n"
    "  -d, --dead                 show only non-responding nodes\n"
    "  -e, --exact                group nodes only on exact match of configuration\n"
    "      --federation           Report federated information if a member of one\n"
    "  -h, --noheader             no headers on output\n"
    "  --hide                     do not show hidden or non-accessible partitions\n"
    "  -i, --iterate=seconds      specify an iteration period\n"
    "      --json                 Produce JSON output\n"
    "      --local                show only local cluster in a federation.\n"
    "                             Overrides --federation.\n"
    "  -l, --long                 long output - displays more information\n"
    "  -M, --clusters=names       clusters to issue commands to. Implies --local.\n"
    "                             NOTE: SlurmDBD must be up.\n"
    "  -n, --nodes=NODES          report on specific node(s)\n"
    "  --noconvert                don't convert units from their original type\n"
    "                             (e.g. 2048M won't be converted to 2G).\n"
    "  -N, --Node                 Node-centric format\n"
    "  -o, --format=format        format specification\n"
    "  -O, --Format=format        long format specification\n"
    "  -p, --partition=PARTITION  report on specific partition\n"
    "  -r, --responding           report only responding nodes\n"
    "  -R, --list-reasons         list reason nodes are down or drained\n"
    "  -s, --summarize            report state summary only\n"
    "  -S, --sort=fields          comma separated list of fields to sort on\n"
    "  -t, --states=node_state    specify the what states of nodes to view\n"
    "  -T, --reservation          show only reservation information\n"
    "  -v, --verbose              verbosity level\n"
    "  -V, --version              output version information and exit\n"
    "      --yaml                 Produce YAML output\n"
    "\n"
    "Help options:\n"
    "  --help                     show this help message\n"
    "  --usage                    display brief usage message\n";

// clang-format off
constexpr OptionSpec kSinfoOptions[] = {
    {'O', "Format", OptionSpec::kRequired},   {'N', "Node", OptionSpec::kNone},
    {'a', "all", OptionSpec::kNone},          {'M', "clusters", OptionSpec::kRequired},
    {'d', "dead", OptionSpec::kNone},         {'e', "exact", OptionSpec::kNone},
    {0, "federation", OptionSpec::kNone},     {'o', "format", OptionSpec::kRequired},
    {0, "help", OptionSpec::kNone},           {0, "hide", OptionSpec::kNone},
    {'i', "iterate", OptionSpec::kRequired},  {0, "json", OptionSpec::kNone},
    {'R', "list-reasons", OptionSpec::kNone}, {0, "local", OptionSpec::kNone},
    {'l', "long", OptionSpec::kNone},         {0, "noconvert", OptionSpec::kNone},
    {'n', "nodes", OptionSpec::kRequired},    {'h', "noheader", OptionSpec::kNone},
    {'p', "partition", OptionSpec::kRequired}, {'T', "reservation", OptionSpec::kNone},
    {'r', "responding", OptionSpec::kNone},   {'S', "sort", OptionSpec::kRequired},
    {'t', "states", OptionSpec::kRequired},   {'s', "summarize", OptionSpec::kNone},
    {0, "usage", OptionSpec::kNone},          {'v', "verbose", OptionSpec::kNone},
    {'V', "version", OptionSpec::kNone},      {0, "yaml", OptionSpec::kNone}};
// clang-format on

// What the options ask beyond the formatter's settings.
struct SinfoRequest {
  std::set<std::string> partitions;
  std::optional<std::set<std::string>> nodes;  // -n
  bool json = false, yaml = false, reservations = false;
  int iterate = 0, verbose = 0;
  std::optional<std::string> clusters;
};

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::optional<int> ReadOption(const std::string& option, const std::string& value,
                              SinfoOptions& options, SinfoRequest& request) {
  if (option == "noheader") options.no_header = true;
  if (option == "long") options.long_format = true;
  if (option == "Node") options.node_oriented = true;
  if (option == "list-reasons") options.list_reasons = true;
  if (option == "summarize") options.summarize = true;
  if (option == "all") options.all = true;
  if (option == "hide") options.all = false;
  if (option == "exact") options.exact = true;
  if (option == "dead") options.dead = true;
  if (option == "responding") options.responding = true;
  if (option == "noconvert") options.noconvert = true;
  if (option == "format") options.format = value;
  if (option == "Format") options.long_fields = value;
  if (option == "sort") options.sort = value;
  if (option == "reservation") request.reservations = true;
  if (option == "json") request.json = true;
  if (option == "yaml") request.yaml = true;
  if (option == "verbose") ++request.verbose;
  if (option == "partition") {
    request.partitions.clear();
    for (const std::string& p : CommaList(value)) request.partitions.insert(p);
  }
  if (option == "states") {
    options.states = CommaList(ToLower(value));
    if (auto error = SinfoStatesError(options.states)) {
      std::fprintf(stderr, "sinfo: error: %s\n", error->c_str());
      std::fputs(
          "sinfo: error: valid states: ALLOC,ALLOCATED,CLOUD,COMP,COMPLETING,DOWN,DRAIN,DRAINED,"
          "DRAINING,FAIL,FUTURE,FUTR,IDLE,MAINT,MIX,MIXED,NO_RESPOND,NPC,PERFCTRS,PLANNED,"
          "POWER_DOWN,POWERING_DOWN,POWERED_DOWN,POWERING_UP,REBOOT_ISSUED,REBOOT_REQUESTED,"
          "RESV,RESERVED,UNK,UNKNOWN\n",
          stderr);
      return 1;
    }
  }
  if (option == "nodes") {
    auto names = ExpandHostlist(value);
    if (!names) return Fail("sinfo", "invalid node list: " + names.error());
    request.nodes.emplace(names->begin(), names->end());
  }
  if (option == "iterate") {
    auto seconds = ParseUint64(value);
    if (!seconds || *seconds == 0 || *seconds > INT32_MAX)
      return Fail("sinfo", "--iterate=" + value);
    request.iterate = static_cast<int>(*seconds);
  }
  return std::nullopt;
}

std::optional<int> ReadOptions(const ParsedOptions& parsed, SinfoOptions& options,
                               SinfoRequest& request) {
  // SINFO_* stand in for their options; the options, read after them, win.
  if (std::getenv("SINFO_FORMAT")) options.format = Env("SINFO_FORMAT");
  if (std::getenv("SINFO_SORT")) options.sort = Env("SINFO_SORT");
  if (std::getenv("SINFO_PARTITION"))
    for (const std::string& p : CommaList(Env("SINFO_PARTITION"))) request.partitions.insert(p);
  if (parsed.Has("Format")) options.format.clear();
  for (const auto& [option, value] : parsed.options)
    if (auto code = ReadOption(option, value, options, request)) return code;
  if (!parsed.operands.empty())
    return OptionError("sinfo", "unrecognized argument '" + parsed.operands.front() + "'");
  request.clusters = ClustersRequested(parsed.Last("clusters"), Environment());
  std::vector<std::string> errors;
  if (!options.format.empty()) errors = SinfoFormatErrors(options.format);
  if (options.format.empty() && !options.long_fields.empty())
    errors = SinfoLongFormatErrors(options.long_fields);
  for (const std::string& error : errors) std::fprintf(stderr, "sinfo: error: %s\n", error.c_str());
  return std::nullopt;
}

// -v: sinfo's summary of its settings, before the listing.
void PrintSettings(const SinfoOptions& options, const SinfoRequest& request) {
  auto flag = [](bool on) { return on ? "true" : "false"; };
  auto text = [](const std::string& s) { return s.empty() ? std::string("(null)") : s; };
  std::string out = "-----------------------------\n";
  out += fmt::format("dead        = {}\n", flag(options.dead));
  out += fmt::format("exact       = {}\n", options.exact ? 1 : 0);
  out += fmt::format("filtering   = {}\n", flag(!options.states.empty() || request.nodes));
  out += fmt::format("format      = {}\n", text(options.format));
  out += fmt::format("iterate     = {}\n", request.iterate);
  out += fmt::format("long        = {}\n", flag(options.long_format));
  out += fmt::format("no_header   = {}\n", flag(options.no_header));
  out += fmt::format("node_field  = {}\n", flag(options.node_oriented));
  out += fmt::format("node_format = {}\n", flag(options.node_oriented));
  std::vector<std::string> nodes;
  if (request.nodes) nodes.assign(request.nodes->begin(), request.nodes->end());
  out += fmt::format("nodes       = {}\n", request.nodes ? CompressHostlist(nodes) : "n/a");
  out += fmt::format("part_field  = true\n");
  out += fmt::format("partition   = {}\n",
                     text(Join({request.partitions.begin(), request.partitions.end()}, ",")));
  out += fmt::format("responding  = {}\n", flag(options.responding));
  out += fmt::format("states      = {}\n", text(Join(options.states, ",")));
  out += fmt::format("sort        = {}\n", text(options.sort));
  out += fmt::format("summarize   = {}\n", flag(options.summarize));
  out += fmt::format("verbose     = {}\n", request.verbose);
  out += "-----------------------------\n\n";
  std::fputs(out.c_str(), stdout);
}

std::vector<v1::Reservation> Reservations(Connection& connection) {
  v1::ReservationList list;
  Unary(connection, "/drover.v1.Controller/ListReservations",
        &v1::Controller::Stub::ListReservations, v1::ReservationQuery(), &list);
  return {list.reservations().begin(), list.reservations().end()};
}

// One report: the controller's nodes, partitions and jobs (or reservations), as asked.
int ReportOnce(Connection& connection, SinfoOptions options, const SinfoRequest& request) {
  v1::NodeList nodes;
  grpc::Status status = Unary(connection, "/drover.v1.Controller/ListNodes",
                              &v1::Controller::Stub::ListNodes, v1::NodeQuery(), &nodes);
  if (!status.ok()) return Fail("sinfo", Unreachable(status));
  columns::ApplyNodeSettings(nodes.nodes(), connection.cluster);
  options.now = nodes.time() ? nodes.time() : std::time(nullptr);
  if (request.reservations) {
    std::fputs(FormatSinfoReservations(Reservations(connection), options).c_str(), stdout);
    return 0;
  }
  std::vector<v1::Partition> partitions;
  for (v1::Partition& partition : Partitions(connection))
    if (request.partitions.empty() || request.partitions.count(partition.name()))
      partitions.push_back(std::move(partition));
  v1::JobQuery query;
  query.set_holding_nodes(true);  // the allocations: not the pending jobs
  v1::JobList list;
  // Without the allocations every count of allocated CPUs and GPUs would read 0: an error, not
  // a wrong table.
  if (grpc::Status listed = ListAllJobs(connection, query, &list); !listed.ok())
    return Fail("sinfo", Unreachable(listed));
  std::vector<v1::Job> jobs = ParseJobs(list);
  options.user_name = UserName;
  std::vector<v1::NodeStatus> node_list(nodes.nodes().begin(), nodes.nodes().end());
  if (request.nodes)
    std::erase_if(node_list,
                  [&](const v1::NodeStatus& n) { return !request.nodes->count(n.name()); });
  if (request.json || request.yaml) {
    scontrol::ShowContext ctx;
    ctx.cluster = &connection.cluster;
    ctx.now = options.now;
    ctx.user_name = UserName;
    ctx.group_name = UserName;
    std::string json = scontrol::SinfoJson(node_list, jobs, partitions, ctx);
    std::fputs((request.yaml ? columns::JsonToYaml(json) : json).c_str(), stdout);
    return 0;
  }
  std::fputs(FormatSinfo(partitions, node_list, &connection.cluster, options, jobs).c_str(),
             stdout);
  return 0;
}

}  // namespace

std::vector<OptionSpec> SinfoOptionTable() {
  return {std::begin(kSinfoOptions), std::end(kSinfoOptions)};
}

int RunSinfo(Arguments args) {
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSinfoOptions);
  if (!parsed) return OptionError("sinfo", parsed.error());
  if (auto code = HelpUsageVersion(*parsed, kSinfoHelp, kSinfoUsage)) return *code;
  SinfoOptions options;
  SinfoRequest request;
  if (auto code = ReadOptions(*parsed, options, request)) return *code;
  // A report is a few calls: no gRPC channel (client.h).
  auto connection = Connect(ConnectMode::kLean);
  if (!connection) return Fail("sinfo", connection.error());
  std::string cluster = connection->cluster.settings.cluster_name;
  if (request.clusters)
    if (auto error = ClustersError(*request.clusters, cluster)) return Fail("sinfo", *error);
  options.dated = request.iterate > 0 || request.verbose > 0;
  columns::SetTimeFormat(Env("SLURM_TIME_FORMAT"), std::time(nullptr));
  if (request.verbose) PrintSettings(options, request);
  // With -M, Slurm names the cluster before its report (after the date line).
  if (request.clusters) options.cluster_line = "CLUSTER: " + cluster;
  for (;;) {
    std::fflush(stdout);
    int code = ReportOnce(*connection, options, request);
    if (code || request.iterate == 0) return code;
    std::printf("\n");
    std::fflush(stdout);
    sleep(static_cast<unsigned>(request.iterate));
  }
}

}  // namespace drover::cli
