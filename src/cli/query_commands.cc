// squeue, sinfo, sacct and scancel: their options, the controller's records, and the output
// formats of formats.h.
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
#include "cli/formats.h"
#include "common/getopt.h"
#include "cli/scontrol_format.h"
#include "common/hostlist.h"
#include "common/text.h"

namespace drover::cli {
namespace {

std::vector<std::string> CommaList(const std::string& text) {
  std::vector<std::string> items;
  for (const std::string& part : Split(text, ','))
    if (!Trim(part).empty()) items.emplace_back(Trim(part));
  return items;
}

// "12", "12_3": a job or one task of an array.
bool AddJobId(const std::string& text, v1::JobFilter* filter) {
  size_t underscore = text.find('_');
  auto id = ParseUint64(text.substr(0, underscore));
  if (!id) return false;
  if (underscore == std::string::npos) {
    filter->add_job_ids(*id);
    return true;
  }
  auto task = ParseUint64(text.substr(underscore + 1));
  if (!task) return false;
  v1::JobFilter::ArrayTask* array = filter->add_array_tasks();
  array->set_array_job_id(*id);
  array->set_task_id(static_cast<uint32_t>(*task));
  return true;
}

// -j's jobs and array tasks ("12", "12_3"): the controller's list may hold more than asked for
// (it matches whole arrays), so squeue picks the tasks itself.
bool Requested(const v1::JobFilter& filter, const v1::Job& job) {
  if (filter.job_ids_size() == 0 && filter.array_tasks_size() == 0) return true;
  const v1::JobSpec& spec = job.spec();
  for (uint64_t id : filter.job_ids())
    if (spec.job_id() == id || spec.array_job_id() == id) return true;
  for (const v1::JobFilter::ArrayTask& task : filter.array_tasks())
    if (spec.array_job_id() == task.array_job_id() && spec.array_task_id() == task.task_id())
      return true;
  return false;
}

// The commands here never print a job's environment: it is left out of the parse.
// The controller's records hold no environment (it lives in the store with the script), so a
// plain parse of each entry is all a listing needs.
std::vector<v1::Job> Parse(const v1::JobList& list) {
  std::vector<v1::Job> jobs(list.jobs_size());
  for (int i = 0; i < list.jobs_size(); ++i) jobs[i].ParseFromString(list.jobs(i));
  return jobs;
}

std::vector<v1::Partition> Partitions(v1::Controller::Stub& stub) {
  grpc::ClientContext context;
  SetDeadline(context);
  v1::PartitionList list;
  std::vector<v1::Partition> partitions;
  if (stub.ListPartitions(&context, v1::PartitionQuery(), &list).ok())
    partitions.assign(list.partitions().begin(), list.partitions().end());
  return partitions;
}

int Fail(std::string_view command, const std::string& message) {
  std::fprintf(stderr, "%.*s: error: %s\n", static_cast<int>(command.size()), command.data(),
               message.c_str());
  return 1;
}

std::string UserName(uint32_t uid) {
  if (passwd* entry = getpwuid(uid); entry && entry->pw_name) return entry->pw_name;
  return std::to_string(uid);
}

// ---------- --help, --usage ----------

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

constexpr const char* kScancelUsage =
    "Usage: scancel [-b] [-f] [-i] [--me] [-n job_name] [-p partition] [-Q]\n"
    "               [-s signal | integer] [-t PENDING | RUNNING | SUSPENDED]\n"
    "               [--usage] [-u user_name] [-V] [-v] [job_id[_array_id]]\n";

constexpr const char* kScancelHelp =
    "Usage: scancel [OPTIONS] [job_id[_array_id]]\n"
    "  -b, --batch                     signal batch shell for specified job\n"
    "  -f, --full                      signal batch shell and all steps for specified job\n"
    "  -i, --interactive               require response from user for each job\n"
    "      --me                        cancel jobs of the current user\n"
    "  -n, --name=job_name             act only on jobs with this name\n"
    "  -p, --partition=partition       act only on jobs in this partition\n"
    "  -Q, --quiet                     disable warnings\n"
    "  -s, --signal=name | integer     signal to send to job, default is SIGKILL\n"
    "  -t, --state=states              act only on jobs in this state.  Valid job\n"
    "                                  states are PENDING, RUNNING and SUSPENDED\n"
    "  -u, --user=user_name            act only on jobs of this user\n"
    "  -V, --version                   output version information and exit\n"
    "  -v, --verbose                   verbosity level\n"
    "\n"
    "Help options:\n"
    "  --help                          show this help message\n"
    "  --usage                         display brief usage message\n";

}  // namespace

std::optional<int> HelpUsageVersion(const ParsedOptions& parsed, std::string_view help,
                                    std::string_view usage) {
  for (const auto& [option, value] : parsed.options) {
    if (option == "help") return std::fwrite(help.data(), 1, help.size(), stdout), 0;
    if (option == "usage") return std::fwrite(usage.data(), 1, usage.size(), stdout), 0;
    if (option == "version") return PrintSlurmVersion();
  }
  return std::nullopt;
}

int RunSqueue(Arguments args) {
  static constexpr OptionSpec kSpecs[] = {{'h', "noheader", OptionSpec::kNone},
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
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSpecs);
  if (!parsed) return OptionError("squeue", parsed.error());
  if (auto code = HelpUsageVersion(*parsed, kSqueueHelp, kSqueueUsage)) return *code;
  SqueueOptions options;
  v1::JobQuery query;
  std::string user, partition, name;
  for (const auto& [option, value] : parsed->options) {
    if (option == "noheader") options.no_header = true;
    if (option == "long") options.long_format = true;
    if (option == "format") options.format = value;
    if (option == "array") options.array_unfold = true;
    if (option == "sort") options.sort = value;
    if (option == "start") options.start = true;
    if (option == "states") options.states = CommaList(ToLower(value));
    if (option == "user") user = value;
    if (option == "me") user = Me().user;
    if (option == "partition") partition = value;
    if (option == "name") name = value;
    if (option == "jobs")
      for (const std::string& id : CommaList(value))
        if (!AddJobId(id, query.mutable_filter())) return Fail("squeue", "Invalid job id: " + id);
  }
  for (const std::string& id : parsed->operands)
    if (!AddJobId(id, query.mutable_filter())) return Fail("squeue", "Invalid job id: " + id);
  if (!options.format.empty())
    if (auto errors = SqueueFormatErrors(options.format); !errors.empty())
      return Fail("squeue", errors.front());
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
  std::set<std::string> users, partitions, names;
  for (const std::string& item : CommaList(user)) users.insert(item);
  for (const std::string& item : CommaList(partition)) partitions.insert(item);
  for (const std::string& item : CommaList(name)) names.insert(item);
  // Filtered in place: a queue of 20,000 jobs is not copied or moved twice.
  std::vector<v1::Job> jobs = Parse(list);
  for (const v1::PlannedStart& plan : list.planned()) options.planned[plan.job_id()] = plan;
  std::erase_if(jobs, [&](const v1::Job& job) {
    if (!Requested(query.filter(), job)) return true;
    if (!users.empty() && !users.count(job.spec().user())) return true;
    if (!names.empty() && !names.count(job.spec().name())) return true;
    const std::string& job_partition = job.partition_name().empty() && job.spec().partitions_size()
                                           ? job.spec().partitions(0)
                                           : job.partition_name();
    return !partitions.empty() && !partitions.count(job_partition);
  });
  v1::PriorityList priorities;
  grpc::ClientContext priority_context;
  SetDeadline(priority_context);
  if (connection->stub->Priorities(&priority_context, v1::PriorityQuery(), &priorities).ok())
    for (const v1::JobPriority& priority : priorities.jobs())
      options.priorities[priority.job_id()] = priority.priority();
  if (parsed->Has("json")) {
    scontrol::ShowContext ctx;
    ctx.cluster = &connection->cluster;
    ctx.now = list.time() ? list.time() : std::time(nullptr);
    ctx.user_name = UserName;
    ctx.group_name = UserName;
    ctx.priorities = options.priorities;
    ctx.planned = options.planned;
    std::fputs(scontrol::JobsJson(jobs, ctx).c_str(), stdout);
    return 0;
  }
  options.partitions = Partitions(*connection->stub);
  std::fputs(FormatSqueue(jobs, options, list.time() ? list.time() : std::time(nullptr)).c_str(),
             stdout);
  return 0;
}

int RunSinfo(Arguments args) {
  static constexpr OptionSpec kSpecs[] = {{'h', "noheader", OptionSpec::kNone},
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
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSpecs);
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
  std::vector<v1::Job> jobs = Parse(list);
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

int RunSacct(Arguments args) {
  static constexpr OptionSpec kSpecs[] = {{'j', "jobs", OptionSpec::kRequired},
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
                                          {0, "help", OptionSpec::kNone},
                                          {0, "usage", OptionSpec::kNone}};
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSpecs);
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
  v1::JobList list;
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status = connection->stub->History(&context, query, &list);
  if (!status.ok()) return Fail("sacct", Unreachable(status));
  options.now = list.time() ? list.time() : std::time(nullptr);
  options.cluster_name = connection->cluster.settings.cluster_name;
  options.cluster = &connection->cluster;
  if (parsed->Has("json")) {
    std::fputs(FormatSacctJson(Parse(list), options).c_str(), stdout);
    return 0;
  }
  auto text = FormatSacct(Parse(list), options);
  if (!text) return Fail("sacct", text.error());
  std::fputs(text->c_str(), stdout);
  return 0;
}

int RunScancel(Arguments args) {
  static constexpr OptionSpec kSpecs[] = {{'u', "user", OptionSpec::kRequired},
                                          {'n', "name", OptionSpec::kRequired},
                                          {'p', "partition", OptionSpec::kRequired},
                                          {'t', "state", OptionSpec::kRequired},
                                          {'s', "signal", OptionSpec::kRequired},
                                          {'b', "batch", OptionSpec::kNone},
                                          {'f', "full", OptionSpec::kNone},
                                          {'Q', "quiet", OptionSpec::kNone},
                                          {'v', "verbose", OptionSpec::kNone},
                                          {'i', "interactive", OptionSpec::kNone},
                                          {0, "me", OptionSpec::kNone},
                                          {'V', "version", OptionSpec::kNone},
                                          {0, "help", OptionSpec::kNone},
                                          {0, "usage", OptionSpec::kNone}};
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSpecs);
  if (!parsed) return OptionError("scancel", parsed.error());
  if (auto code = HelpUsageVersion(*parsed, kScancelHelp, kScancelUsage)) return *code;
  v1::CancelRequest request;
  SetCaller(request.mutable_caller());
  bool quiet = false;
  for (const auto& [option, value] : parsed->options) {
    if (option == "user") request.mutable_filter()->set_user(value);
    if (option == "me") request.mutable_filter()->set_user(Me().user);
    if (option == "name") request.mutable_filter()->set_name(value);
    if (option == "partition") request.mutable_filter()->set_partition(value);
    if (option == "state") {
      std::string state = value;
      for (char& c : state) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      static const std::map<std::string, std::string> kCodes = {
          {"PD", "PENDING"}, {"R", "RUNNING"}, {"S", "SUSPENDED"}};
      if (auto it = kCodes.find(state); it != kCodes.end()) state = it->second;
      request.mutable_filter()->set_state(state);
    }
    if (option == "signal") {
      std::string name = value;
      for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (name.starts_with("SIG")) name = name.substr(3);
      int number = 0;
      if (auto numeric = ParseUint64(name)) {
        number = static_cast<int>(*numeric);
      } else {
        for (int s = 1; s < NSIG; ++s)
          if (const char* abbrev = sigabbrev_np(s); abbrev && name == abbrev) number = s;
      }
      if (number <= 0 || number >= NSIG) return Fail("scancel", "Invalid job signal: " + value);
      request.set_signal(number);
    }
    if (option == "batch") request.set_batch_only(true);
    if (option == "quiet") quiet = true;
  }
  for (const std::string& id : parsed->operands)
    if (!AddJobId(id, request.mutable_filter())) return Fail("scancel", "Invalid job id " + id);
  const v1::JobFilter& filter = request.filter();
  if (filter.job_ids_size() == 0 && filter.array_tasks_size() == 0 && filter.user().empty() &&
      filter.name().empty() && filter.partition().empty() && filter.state().empty())
    return Fail("scancel", "No job identification provided");
  auto connection = Connect();
  if (!connection) return Fail("scancel", connection.error());
  grpc::ClientContext context;
  SetDeadline(context);
  v1::ActionReply reply;
  grpc::Status status = connection->stub->Cancel(&context, request, &reply);
  if (!status.ok()) {
    if (quiet) return 1;
    std::string ids;
    for (const std::string& id : parsed->operands) ids += (ids.empty() ? "" : ",") + id;
    return Fail("scancel", ids.empty() ? Unreachable(status)
                                       : fmt::format("Kill job error on job id {}: {}", ids,
                                                     Unreachable(status)));
  }
  return 0;
}

}  // namespace drover::cli
