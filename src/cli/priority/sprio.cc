// sprio: pending jobs' priority factors, from the controller, in sprio's formats
// (priority_formats.h).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/clusters.h"
#include "cli/commands.h"
#include "cli/formats/priority_formats.h"
#include "cli/query/query_common.h"
#include "common/getopt.h"
#include "common/text.h"

namespace drover::cli {
namespace {

constexpr const char* kSprioUsage =
    "Usage: sprio [-j jid[s]] [-u user_name[s]] [-o format] [-p partitions]\n"
    "     [--federation] [--local] [--sibling] [--usage] [-hlnvw]\n";

constexpr const char* kSprioHelp =
    "Usage: sprio [OPTIONS]\n"
    "      --federation                Report federated information if a member\n"
    "                                  of one\n"
    "  -h, --noheader                  no headers on output\n"
    "  -j, --jobs                      comma separated list of jobs\n"
    "                                  to view, default is all\n"
    "      --json                      print the factors as JSON\n"
    "      --local                     Report information only about jobs on the\n"
    "                                  local cluster. Overrides --federation.\n"
    "  -l, --long                      long report\n"
    "  -M, --cluster=cluster_name      cluster to issue commands to.  Default is\n"
    "                                  current cluster.  cluster with no name will\n"
    "                                  reset to default.\n"
    "  -n, --norm                      display normalized values\n"
    "  -o, --format=format             format specification\n"
    "  -p, --partition=partition_name  comma separated list of partitions\n"
    "      --sibling                   Report information about all sibling jobs\n"
    "                                  on a federated cluster. Implies --federation.\n"
    "  -S, --sort=sort_list            comma seperated list of fields to sort on\n"
    "  -u, --user=user_name            comma separated list of users to view\n"
    "  -v, --verbose                   verbosity level\n"
    "  -V, --version                   output version information and exit\n"
    "  -w, --weights                   show the weights for each priority factor\n"
    "\n"
    "Help options:\n"
    "      --help                      show this help message\n"
    "      --usage                     display a brief summary of sprio options\n";

// %n: the QOS of each job, from the queue (only asked for when the format shows it).
std::map<uint64_t, std::string> JobQos(Connection& connection) {
  std::map<uint64_t, std::string> qos;
  v1::JobList list;
  if (!ListAllJobs(connection, v1::JobQuery(), &list).ok()) return qos;
  for (const std::string& encoded : list.jobs()) {
    v1::Job job;
    if (job.ParseFromString(encoded) && !job.spec().qos().empty())
      qos[job.spec().job_id()] = job.spec().qos();
  }
  return qos;
}

}  // namespace

namespace {

constexpr OptionSpec kSpecs[] = {
    {'h', "noheader", OptionSpec::kNone},     {'j', "jobs", OptionSpec::kOptional},
    {'l', "long", OptionSpec::kNone},         {'n', "norm", OptionSpec::kNone},
    {'o', "format", OptionSpec::kRequired},   {'p', "partition", OptionSpec::kRequired},
    {'u', "user", OptionSpec::kRequired},     {0, "users", OptionSpec::kRequired},
    {'v', "verbose", OptionSpec::kNone},      {'V', "version", OptionSpec::kNone},
    {'w', "weights", OptionSpec::kNone},      {0, "json", OptionSpec::kNone},
    {'M', "clusters", OptionSpec::kRequired}, {0, "federation", OptionSpec::kNone},
    {0, "local", OptionSpec::kNone},          {0, "sibling", OptionSpec::kNone},
    {'S', "sort", OptionSpec::kRequired},     {0, "help", OptionSpec::kNone},
    {0, "usage", OptionSpec::kNone}};

// What sprio's options select: the jobs, users and partitions, and whether to print JSON.
struct SprioSelection {
  std::vector<std::string> job_ids, users, partitions;
  bool json = false;
};

// The options into `options` and `selection`; an exit code when they are wrong.
std::optional<int> ReadOptions(const ParsedOptions& parsed, SprioOptions& options,
                               SprioSelection& selection) {
  for (const auto& [option, value] : parsed.options) {
    if (option == "noheader") options.no_header = true;
    if (option == "long") options.long_format = true;
    if (option == "norm") options.normalized = true;
    if (option == "weights") options.weights = true;
    if (option == "format") options.format = value;
    if (option == "json") selection.json = true;
    if (option == "sort") options.sort = value;
    if (option == "partition") selection.partitions = CommaList(value);
    if (option == "user" || option == "users") {
      selection.users = CommaList(value);
      options.show_user = true;
    }
    if (option == "jobs") {
      options.jobs_given = true;
      for (const std::string& id : CommaList(value)) selection.job_ids.push_back(id);
    }
  }
  // As sprio's: after -j, the first operand is the job list; anything else is an error.
  std::vector<std::string> operands = parsed.operands;
  if (options.jobs_given && !operands.empty()) {
    for (const std::string& id : CommaList(operands.front())) selection.job_ids.push_back(id);
    operands.erase(operands.begin());
  }
  if (!operands.empty()) {
    std::fprintf(stderr, "sprio: error: Unrecognized option: %s\n%s", operands.front().c_str(),
                 kSprioUsage);
    return 1;
  }
  if (options.long_format && !options.format.empty())
    return Fail("sprio",
                "Options -o(--format) and -l(--long) are mutually exclusive. Please remove one "
                "and retry.");
  for (const std::string& error : SprioFormatErrors(options.format))
    std::fprintf(stderr, "sprio: error: %s\n", error.c_str());
  return std::nullopt;
}

// The jobs of `list` the selection's users and partitions keep.
std::vector<v1::JobPriority> Selected(v1::PriorityList& list, const SprioSelection& selection) {
  std::set<std::string> user_set(selection.users.begin(), selection.users.end());
  std::set<std::string> partition_set(selection.partitions.begin(), selection.partitions.end());
  std::vector<v1::JobPriority> jobs;
  for (v1::JobPriority& job : *list.mutable_jobs()) {
    if (!user_set.empty() && !user_set.count(job.user())) continue;
    if (!partition_set.empty() && !partition_set.count(job.partition())) continue;
    jobs.push_back(std::move(job));
  }
  return jobs;
}

}  // namespace

std::vector<OptionSpec> SprioOptionTable() {
  return {std::begin(kSpecs), std::end(kSpecs)};
}

int RunSprio(Arguments args) {
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSpecs);
  if (!parsed) return OptionError("sprio", parsed.error());
  if (auto code = HelpUsageVersion(*parsed, kSprioHelp, kSprioUsage)) return *code;
  SprioOptions options;
  SprioSelection selection;
  if (auto code = ReadOptions(*parsed, options, selection)) return *code;
  v1::PriorityQuery query;
  for (const std::string& id : selection.job_ids) {
    // "12" or "12_3" (the array's own ID): sprio takes the job part.
    auto number = ParseUint64(id.substr(0, id.find_first_of("_.+")));
    if (!number) return Fail("sprio", "Invalid job id: " + id);
    query.mutable_filter()->add_job_ids(*number);
  }
  if (selection.users.size() == 1) query.mutable_filter()->set_user(selection.users.front());
  // One or two calls: no gRPC channel (client.h).
  auto connection = Connect(ConnectMode::kLean);
  if (!connection) return Fail("sprio", connection.error());
  // -M: sprio speaks to one cluster; Drover's is the only one, and no federation has siblings.
  if (auto clusters = ClustersRequested(parsed->Last("clusters"), Environment()))
    if (auto error = ClustersError(*clusters, connection->cluster.settings.cluster_name))
      return Fail("sprio", *error);
  v1::PriorityList list;
  grpc::Status status = Unary(*connection, "/drover.v1.Controller/Priorities",
                              &v1::Controller::Stub::Priorities, query, &list);
  if (!status.ok())
    return Fail("sprio", "Couldn't get priority factors from controller: " + Unreachable(status));
  std::vector<v1::JobPriority> jobs = Selected(list, selection);
  options.factor_weights.insert(list.weights().begin(), list.weights().end());
  options.tres_weights = connection->cluster.settings.weight_tres;
  options.cluster_name = connection->cluster.settings.cluster_name;
  if (options.format.find('n') != std::string::npos) options.job_qos = JobQos(*connection);
  std::string text = selection.json ? SprioJson(jobs, options) : FormatSprio(jobs, options);
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace drover::cli
