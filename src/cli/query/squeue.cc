// squeue: the queue, from the controller's job list, in squeue's formats (formats.h).
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

constexpr const char* kSqueueUsage =
    "Usage: squeue [-j jobs] [-n name] [-o format] [-p partitions] [--sort fields]\n"
    "              [--start] [-t states] [-u user_name] [--me] [--usage] [-ahlrvV]\n";

constexpr const char* kSqueueHelp =
    "Usage: squeue [OPTIONS]\n"
    "  -a, --all                       display jobs in hidden partitions\n"
    "  -h, --noheader                  no headers on output\n"
    "  -j, --jobs=job(s)               comma separated list of jobs IDs\n"
    "                                  to view, default is all\n"
    "  -l, --long                      long report\n"
    "      --me                        equivalent to --user=<my username>\n"
    "  -n, --name=job_name(s)          comma separated list of job names to view\n"
    "  -o, --format=format             format specification\n"
    "  -p, --partition=partition(s)    comma separated list of partitions\n"
    "                                  to view, default is all partitions\n"
    "  -r, --array                     display one job array element per line\n"
    "  -S, --sort=fields               comma separated list of fields to sort on\n"
    "      --start                     print expected start times of pending jobs\n"
    "  -t, --states=states             comma separated list of states to view,\n"
    "                                  default is pending and running,\n"
    "                                  '--states=all' reports all states\n"
    "  -u, --user=user_name(s)         comma separated list of users to view\n"
    "  -v, --verbose                   verbosity level\n"
    "  -V, --version                   output version information and exit\n"
    "\n"
    "Help options:\n"
    "  --help                          show this help message\n"
    "  --usage                         display a brief summary of squeue options\n";

}  // namespace

namespace {

constexpr OptionSpec kSpecs[] = {{'h', "noheader", OptionSpec::kNone},
                                 {'l', "long", OptionSpec::kNone},
                                 {'o', "format", OptionSpec::kRequired},
                                 {'j', "jobs", OptionSpec::kRequired},
                                 {'u', "user", OptionSpec::kRequired},
                                 {'t', "states", OptionSpec::kRequired},
                                 {'p', "partition", OptionSpec::kRequired},
                                 {'n', "name", OptionSpec::kRequired},
                                 {'r', "array", OptionSpec::kNone},
                                 {'S', "sort", OptionSpec::kRequired},
                                 {0, "start", OptionSpec::kNone},
                                 {0, "me", OptionSpec::kNone},
                                 {'a', "all", OptionSpec::kNone},
                                 {'v', "verbose", OptionSpec::kNone},
                                 {'V', "version", OptionSpec::kNone},
                                 {0, "json", OptionSpec::kNone},
                                 {0, "help", OptionSpec::kNone},
                                 {0, "usage", OptionSpec::kNone}};

// -u, -p and -n, as the sets squeue filters the listing by.
struct SqueueFilter {
  std::string user, partition, name;
};

// The options into `options`, `query` and `filter`; an exit code when one is wrong.
std::optional<int> ReadOptions(const ParsedOptions& parsed, SqueueOptions& options,
                               v1::JobQuery& query, SqueueFilter& filter) {
  for (const auto& [option, value] : parsed.options) {
    if (option == "noheader") options.no_header = true;
    if (option == "long") options.long_format = true;
    if (option == "format") options.format = value;
    if (option == "array") options.array_unfold = true;
    if (option == "sort") options.sort = value;
    if (option == "start") options.start = true;
    if (option == "states") options.states = CommaList(ToLower(value));
    if (option == "user") filter.user = value;
    if (option == "me") filter.user = Me().user;
    if (option == "partition") filter.partition = value;
    if (option == "name") filter.name = value;
    if (option == "jobs")
      for (const std::string& id : CommaList(value))
        if (!AddJobId(id, query.mutable_filter())) return Fail("squeue", "Invalid job id: " + id);
  }
  for (const std::string& id : parsed.operands)
    if (!AddJobId(id, query.mutable_filter())) return Fail("squeue", "Invalid job id: " + id);
  if (!options.format.empty())
    if (auto errors = SqueueFormatErrors(options.format); !errors.empty())
      return Fail("squeue", errors.front());
  return std::nullopt;
}

// Keeps the jobs -j, -u, -p and -n ask for. Filtered in place: a queue of 20,000 jobs is not
// copied or moved twice.
void Filter(std::vector<v1::Job>& jobs, const v1::JobFilter& requested,
            const SqueueFilter& filter) {
  std::set<std::string> users, partitions, names;
  for (const std::string& item : CommaList(filter.user)) users.insert(item);
  for (const std::string& item : CommaList(filter.partition)) partitions.insert(item);
  for (const std::string& item : CommaList(filter.name)) names.insert(item);
  std::erase_if(jobs, [&](const v1::Job& job) {
    if (!Requested(requested, job)) return true;
    if (!users.empty() && !users.count(job.spec().user())) return true;
    if (!names.empty() && !names.count(job.spec().name())) return true;
    const std::string& job_partition = job.partition_name().empty() && job.spec().partitions_size()
                                           ? job.spec().partitions(0)
                                           : job.partition_name();
    return !partitions.empty() && !partitions.count(job_partition);
  });
}

void PrintJson(const std::vector<v1::Job>& jobs, const SqueueOptions& options,
               const Connection& connection, int64_t time) {
  scontrol::ShowContext ctx;
  ctx.cluster = &connection.cluster;
  ctx.now = time ? time : std::time(nullptr);
  ctx.user_name = UserName;
  ctx.group_name = UserName;
  ctx.priorities = options.priorities;
  ctx.planned = options.planned;
  std::fputs(scontrol::JobsJson(jobs, ctx).c_str(), stdout);
}

}  // namespace

std::vector<OptionSpec> SqueueOptionTable() {
  return {std::begin(kSpecs), std::end(kSpecs)};
}

int RunSqueue(Arguments args) {
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSpecs);
  if (!parsed) return OptionError("squeue", parsed.error());
  if (auto code = HelpUsageVersion(*parsed, kSqueueHelp, kSqueueUsage)) return *code;
  SqueueOptions options;
  v1::JobQuery query;
  SqueueFilter filter;
  if (auto code = ReadOptions(*parsed, options, query, filter)) return *code;
  auto connection = Connect();
  if (!connection) return Fail("squeue", connection.error());
  query.set_all_states(true);  // -t picks among them below
  // The plan only where something prints or sorts by it: it is not free at 20,000 jobs.
  const std::string& shown = options.format.empty() ? options.sort : options.format;
  query.set_with_plan(options.start || shown.find_first_of("SY") != std::string::npos ||
                      options.sort.find('S') != std::string::npos || parsed->Has("json"));
  v1::JobList list;
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status = connection->stub->ListJobs(&context, query, &list);
  if (!status.ok()) return Fail("squeue", Unreachable(status));
  std::vector<v1::Job> jobs = ParseJobs(list);
  for (const v1::PlannedStart& plan : list.planned()) options.planned[plan.job_id()] = plan;
  Filter(jobs, query.filter(), filter);
  v1::PriorityList priorities;
  grpc::ClientContext priority_context;
  SetDeadline(priority_context);
  if (connection->stub->Priorities(&priority_context, v1::PriorityQuery(), &priorities).ok())
    for (const v1::JobPriority& priority : priorities.jobs())
      options.priorities[priority.job_id()] = priority.priority();
  if (parsed->Has("json")) {
    PrintJson(jobs, options, *connection, list.time());
    return 0;
  }
  options.partitions = Partitions(*connection->stub);
  std::fputs(FormatSqueue(jobs, options, list.time() ? list.time() : std::time(nullptr)).c_str(),
             stdout);
  return 0;
}

}  // namespace drover::cli
