// sdiag: the controller's statistics in Slurm 22.05's layout (formats/sdiag_format.h): its
// threads and agent queue, job counts, scheduling cycles, and the RPCs by method and by user.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/clusters.h"
#include "cli/commands.h"
#include "cli/formats/formats.h"
#include "cli/formats/sdiag_format.h"
#include "cli/query/query_common.h"
#include "common/getopt.h"

namespace drover::cli {
namespace {

constexpr const char* kSdiagUsage = "Usage: sdiag [-M cluster] [-aritT]\n";

constexpr const char* kSdiagHelp =
    "Usage: sdiag [OPTIONS]\n"
    "  -a, --all                  all statistics\n"
    "  -r, --reset                reset statistics\n"
    "  -M, --cluster              direct the request to a specific cluster\n"
    "  -i, --sort-by-id           sort RPCs by id\n"
    "  -t, --sort-by-time         sort RPCs by total run time\n"
    "  -T, --sort-by-time2        sort RPCs by average run time\n"
    "  -V, --version              display current version number\n"
    "      --json                 print the statistics as JSON\n"
    "      --yaml                 print the statistics as YAML\n"
    "\nHelp options:\n"
    "  --help                     show this help message\n"
    "  --usage                    display brief usage message\n";

const OptionSpec kSpecs[] = {
    {'a', "all", OptionSpec::kNone},          {'r', "reset", OptionSpec::kNone},
    {'M', "cluster", OptionSpec::kRequired},  {'i', "sort-by-id", OptionSpec::kNone},
    {'t', "sort-by-time", OptionSpec::kNone}, {'T', "sort-by-time2", OptionSpec::kNone},
    {'V', "version", OptionSpec::kNone},      {0, "json", OptionSpec::kNone},
    {0, "yaml", OptionSpec::kNone},           {'h', "help", OptionSpec::kNone},
    {0, "usage", OptionSpec::kNone},
};

}  // namespace

std::vector<OptionSpec> SdiagOptionTable() {
  return {std::begin(kSpecs), std::end(kSpecs)};
}

int RunSdiag(Arguments args) {
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSpecs);
  if (!parsed) return OptionError("sdiag", parsed.error());
  if (auto code = HelpUsageVersion(*parsed, kSdiagHelp, kSdiagUsage)) return *code;
  if (!parsed->operands.empty())
    return OptionError("sdiag", "Unknown argument " + parsed->operands[0]);
  auto connection = Connect(ConnectMode::kLean);
  if (!connection) return Fail("sdiag", connection.error());
  if (auto clusters = ClustersRequested(parsed->Last("cluster"), Environment()))
    if (auto error = ClustersError(*clusters, connection->cluster.settings.cluster_name))
      return Fail("sdiag", *error);
  v1::DiagRequest request;
  request.set_reset(parsed->Has("reset"));
  v1::DiagReply reply;
  grpc::Status status = Unary(*connection, "/drover.v1.Controller/Diag",
                              &v1::Controller::Stub::Diag, request, &reply);
  if (request.reset()) {
    if (!status.ok()) return Fail("sdiag", "slurm_reset_statistics: " + Unreachable(status));
    std::puts("Reset scheduling statistics");
    return 0;
  }
  if (!status.ok()) return Fail("sdiag", "slurm_get_statistics: " + Unreachable(status));
  if (parsed->Has("json") || parsed->Has("yaml")) {
    std::string json = SdiagJson(reply);
    std::fputs((parsed->Has("yaml") ? columns::JsonToYaml(json) : json).c_str(), stdout);
    return 0;
  }
  SdiagSort sort = parsed->Has("sort-by-id")      ? SdiagSort::kId
                   : parsed->Has("sort-by-time")  ? SdiagSort::kTotalTime
                   : parsed->Has("sort-by-time2") ? SdiagSort::kAverageTime
                                                  : SdiagSort::kCount;
  std::fputs(FormatSdiag(reply, sort).c_str(), stdout);
  return 0;
}

}  // namespace drover::cli
