// sacct: the jobs' history, from the controller's job list (finished jobs included), as
// sacct prints it or as --json.
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

constexpr const char* kSacctUsage =
    "Usage: sacct [options]\n"
    "\tUse --help for help\n";

constexpr const char* kSacctHelp =
    "sacct [<OPTION>]\n"
    "    Valid <OPTION> values are:\n"
    "     -a, --allusers:\n"
    "\t           Display jobs for all users. By default, only the\n"
    "\t           current user's jobs are displayed.  If ran by user root\n"
    "\t           this is the default.\n"
    "     -b, --brief:\n"
    "\t           Equivalent to '--format=jobstep,state,error'.\n"
    "     -D, --duplicates:\n"
    "\t           Also show earlier runs of requeued jobs.\n"
    "     --delimiter:\n"
    "\t           ASCII characters used to separate the fields when\n"
    "\t           specifying the  -p  or  -P options. The default delimiter\n"
    "\t           is a '|'. This option is ignored if -p or -P options\n"
    "\t           are not specified.\n"
    "     -E, --endtime:\n"
    "\t           Select jobs eligible before this time.\n"
    "     -j, --jobs:\n"
    "\t           Format is <job(.step)>. Display information about this\n"
    "\t           job or comma-separated list of jobs. The default is all\n"
    "\t           jobs.\n"
    "     -n, --noheader:\n"
    "\t           No header will be added to the beginning of output.\n"
    "\t           The default is to print a header.\n"
    "     -o, --format:\n"
    "\t           Comma separated list of fields, each with an optional\n"
    "\t           %width (JobName%30).\n"
    "     -p, --parsable: output will be '|' delimited with a '|' at the end\n"
    "     -P, --parsable2: output will be '|' delimited without a '|' at the end\n"
    "     -s, --state:\n"
    "\t           Select jobs based on their state: running (r),\n"
    "\t           completed (cd), failed (f), timeout (to), ...\n"
    "     -S, --starttime:\n"
    "\t           Select jobs eligible after this time.\n"
    "     -u, --user:\n"
    "\t           Use this comma separated list of user names to select\n"
    "\t           jobs to display.  By default, the running user's\n"
    "\t           jobs are displayed.\n"
    "     --usage:\n"
    "\t           Display brief usage message.\n"
    "     -v, --verbose:\n"
    "\t           Report the state of various variables during processing.\n"
    "     -V, --version: Print version.\n"
    "     -X, --allocations:\n"
    "\t           Only show statistics relevant to the job allocation\n"
    "\t           itself, not taking steps into consideration.\n"
    "\n";

constexpr OptionSpec kSacctOptions[] = {{'j', "jobs", OptionSpec::kRequired},
                                        {'u', "user", OptionSpec::kRequired},
                                        {'o', "format", OptionSpec::kRequired},
                                        {'b', "brief", OptionSpec::kNone},
                                        {'p', "parsable", OptionSpec::kNone},
                                        {'P', "parsable2", OptionSpec::kNone},
                                        {0, "delimiter", OptionSpec::kRequired},
                                        {'n', "noheader", OptionSpec::kNone},
                                        {'X', "allocations", OptionSpec::kNone},
                                        {'D', "duplicates", OptionSpec::kNone},
                                        {'S', "starttime", OptionSpec::kRequired},
                                        {'E', "endtime", OptionSpec::kRequired},
                                        {'a', "allusers", OptionSpec::kNone},
                                        {'s', "state", OptionSpec::kRequired},
                                        {'v', "verbose", OptionSpec::kNone},
                                        {'V', "version", OptionSpec::kNone},
                                        {0, "json", OptionSpec::kNone},
                                        {'h', "help", OptionSpec::kNone},
                                        {0, "usage", OptionSpec::kNone}};

// Every page of the history: the controller answers at most a page of stored records per call
// and the cursor of the next.
Result<v1::JobList> ReadHistory(v1::Controller::Stub& stub, v1::HistoryQuery query) {
  v1::JobList list;
  do {
    v1::JobList page;
    grpc::ClientContext context;
    SetDeadline(context);
    grpc::Status status = stub.History(&context, query, &page);
    if (!status.ok()) return MakeError(Unreachable(status));
    if (list.time() == 0) list.set_time(page.time());
    for (std::string& job : *page.mutable_jobs()) list.add_jobs(std::move(job));
    query.set_after(page.next());
  } while (!query.after().empty());
  return list;
}

}  // namespace

std::vector<OptionSpec> SacctOptionTable() {
  return {std::begin(kSacctOptions), std::end(kSacctOptions)};
}

int RunSacct(Arguments args) {
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSacctOptions);
  if (!parsed) return OptionError("sacct", parsed.error());
  if (auto code = HelpUsageVersion(*parsed, kSacctHelp, kSacctUsage)) return *code;
  SacctOptions options;
  v1::HistoryQuery query;
  bool all_users = false;
  std::string user;
  for (const auto& [option, value] : parsed->options) {
    if (option == "jobs")
      for (const std::string& id : CommaList(value))
        if (!AddJobId(id, query.mutable_filter())) return Fail("sacct", "Invalid job id: " + id);
    if (option == "user") user = value;
    if (option == "allusers") all_users = true;
    if (option == "format") options.fields = value;
    if (option == "brief") options.brief = true;
    if (option == "parsable") options.parsable = true;
    if (option == "parsable2") options.parsable2 = true;
    if (option == "delimiter") options.delimiter = value;
    if (option == "noheader") options.no_header = true;
    if (option == "allocations") options.allocations = true;
    if (option == "duplicates") options.duplicates = true;
  }
  // Slurm's sacct shows the caller's own jobs unless told otherwise (root sees everyone's).
  if (user.empty() && !all_users && query.filter().job_ids_size() == 0 && getuid() != 0)
    user = Me().user;
  query.mutable_filter()->set_user(user);
  auto connection = Connect();
  if (!connection) return Fail("sacct", connection.error());
  auto list = ReadHistory(*connection->stub, query);
  if (!list) return Fail("sacct", list.error());
  options.now = list->time() ? list->time() : std::time(nullptr);
  options.cluster_name = connection->cluster.settings.cluster_name;
  options.cluster = &connection->cluster;
  if (parsed->Has("json")) {
    std::fputs(FormatSacctJson(ParseJobs(*list), options).c_str(), stdout);
    return 0;
  }
  auto text = FormatSacct(ParseJobs(*list), options);
  if (!text) return Fail("sacct", text.error());
  std::fputs(text->c_str(), stdout);
  return 0;
}

}  // namespace drover::cli
