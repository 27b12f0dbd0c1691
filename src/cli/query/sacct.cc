// sacct: the jobs' history, from the controller's job list (finished jobs included), as
// sacct prints it or as --json.
#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
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
#include "common/duration.h"
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
    "     -A, --accounts:\n"
    "\t           Only jobs of this comma separated list of accounts.\n"
    "     -a, --allusers:\n"
    "\t           Display jobs for all users. By default, only the\n"
    "\t           current user's jobs are displayed.  If ran by user root\n"
    "\t           this is the default.\n"
    "     -B, --batch-script:\n"
    "\t           Print the batch script of the jobs given with -j\n"
    "\t           ('NONE' unless AccountingStoreFlags has job_script).\n"
    "     -b, --brief:\n"
    "\t           Equivalent to '--format=jobstep,state,error'.\n"
    "     -c, --completion:\n"
    "\t           Use job completion data instead of job accounting.\n"
    "\t           (Needs a JobCompType other than jobcomp/none.)\n"
    "     -C, --constraints:\n"
    "\t           Only jobs that asked for all of these features.\n"
    "     --delimiter:\n"
    "\t           ASCII characters used to separate the fields when\n"
    "\t           specifying the  -p  or  -P options. The default delimiter\n"
    "\t           is a '|'. This option is ignored if -p or -P options\n"
    "\t           are not specified.\n"
    "     -D, --duplicates:\n"
    "\t           Also show earlier runs of requeued jobs.\n"
    "     -e, --helpformat:\n"
    "\t           Print a list of fields that can be specified with the\n"
    "\t           '--format' option\n"
    "     -E, --endtime:\n"
    "\t           Select jobs eligible before this time.  If states are\n"
    "\t           given with the -s option return jobs in this state before\n"
    "\t           this period.\n"
    "     --env-vars:\n"
    "\t           Print the environment of the batch jobs given with -j\n"
    "\t           ('NONE' unless AccountingStoreFlags has job_env).\n"
    "     --federation:\n"
    "\t           Report jobs from the federation (none: not federated).\n"
    "     -f, --file=file:\n"
    "\t           Read job completion data from this file (implies -c).\n"
    "     -F, --flags:\n"
    "\t           Only jobs started by these schedulers: SchedSubmit,\n"
    "\t           SchedMain, SchedBackfill.\n"
    "     -g, --gid, --group:\n"
    "\t           Use this comma separated list of gids or group names\n"
    "\t           to select jobs to display.  By default, all groups are\n"
    "\t           selected.\n"
    "     -h, --help:\n"
    "\t           Print this description of use.\n"
    "     -i, --nnodes=N:\n"
    "\t           Return jobs which ran on this many nodes (N = min[-max])\n"
    "     -I, --ncpus=N:\n"
    "\t           Return jobs which ran on this many cpus (N = min[-max])\n"
    "     -j, --jobs:\n"
    "\t           Format is <job(.step)>. Display information about this\n"
    "\t           job or comma-separated list of jobs. The default is all\n"
    "\t           jobs. Adding .step will display the specific job step of\n"
    "\t           that job. (A step id of 'batch' will display the\n"
    "\t           information about the batch step.)\n"
    "     --json:\n"
    "\t           Produce JSON output\n"
    "     -k, --timelimit-min:\n"
    "\t           Only jobs with this time limit, or with -K the least\n"
    "\t           of the range.\n"
    "     -K, --timelimit-max:\n"
    "\t           With -k, the greatest time limit of the range.\n"
    "     --local:\n"
    "\t           Report only jobs of the local cluster.\n"
    "     -l, --long:\n"
    "\t           Equivalent to a --format of the job's usage statistics\n"
    "\t           (jobid,jobidraw,jobname,partition,maxvmsize,...).\n"
    "     -L, --allclusters:\n"
    "\t           Display jobs ran on all clusters.\n"
    "     -M, --clusters:\n"
    "\t           Only jobs of these clusters (\"all\" for all).\n"
    "     --name:\n"
    "\t           Display jobs that have any of these name(s).\n"
    "     -n, --noheader:\n"
    "\t           No header will be added to the beginning of output.\n"
    "\t           The default is to print a header.\n"
    "     --noconvert:\n"
    "\t           Don't convert units from their original type\n"
    "\t           (e.g. 2048M won't be converted to 2G).\n"
    "     -N, --nodelist:\n"
    "\t           Display jobs that ran on any of these nodes,\n"
    "\t           can be one or more using a ranged string.\n"
    "     -o, --format:\n"
    "\t           Comma separated list of fields, each with an optional\n"
    "\t           %width (JobName%30). (Use \"--helpformat\" for the list.)\n"
    "     -p, --parsable: output will be '|' delimited with a '|' at the end\n"
    "     -P, --parsable2: output will be '|' delimited without a '|' at the end\n"
    "     -q, --qos:\n"
    "\t           Only jobs using these qos.  Default is all.\n"
    "     -r, --partition:\n"
    "\t           Comma separated list of partitions to select jobs and\n"
    "\t           job steps from. The default is all partitions.\n"
    "     -R, --reason:\n"
    "\t           Only jobs whose last reason is one of these.\n"
    "     -s, --state:\n"
    "\t           Select jobs based on their current state or the state\n"
    "\t           they were in during the time period given: running (r),\n"
    "\t           completed (cd), failed (f), timeout (to), resizing (rs),\n"
    "\t           deadline (dl) and node_fail (nf).\n"
    "     -S, --starttime:\n"
    "\t           Select jobs eligible after this time.  Default is\n"
    "\t           00:00:00 of the current day, unless '-s' is set then\n"
    "\t           the default is 'now'.\n"
    "     -T, --truncate:\n"
    "\t           Truncate start and end times to the --starttime and\n"
    "\t           --endtime window.\n"
    "     -u, --uid, --user:\n"
    "\t           Use this comma separated list of uids or user names\n"
    "\t           to select jobs to display.  By default, the running\n"
    "\t           user's uid is used.\n"
    "     --units=[KMGTP]:\n"
    "\t           Display values in specified unit type. Takes precedence\n"
    "\t           over --noconvert option.\n"
    "     --usage:\n"
    "\t           Display brief usage message.\n"
    "     --use-local-uid:\n"
    "\t           Print UID as this machine's passwd gives it for User.\n"
    "     -v, --verbose:\n"
    "\t           Report the state of various variables during processing.\n"
    "     -V, --version: Print version.\n"
    "     -W, --wckeys:\n"
    "\t           Only jobs of these wckeys.  Default is all.\n"
    "     --whole-hetjob=[yes|no]:\n"
    "\t           Whether all components of a heterogeneous job are\n"
    "\t           retrieved.\n"
    "     -x, --associations:\n"
    "\t           Only jobs of these association ids.  Default is all.\n"
    "     -X, --allocations:\n"
    "\t           Only show statistics relevant to the job allocation\n"
    "\t           itself, not taking steps into consideration.\n"
    "     --yaml:\n"
    "\t           Produce YAML output\n"
    "\n"
    "     Note, valid start/end time formats are...\n"
    "\t           HH:MM[:SS] [AM|PM]\n"
    "\t           MMDD[YY] or MM/DD[/YY] or MM.DD[.YY]\n"
    "\t           MM/DD[/YY]-HH:MM[:SS]\n"
    "\t           YYYY-MM-DD[THH:MM[:SS]]\n"
    "\t           today, midnight, noon, fika (3 PM), teatime (4 PM)\n"
    "\t           now[{+|-}count[seconds(default)|minutes|hours|days|weeks]]\n"
    "\n";

// Slurm 22.05's getopt table ("aA:bBcC:DeE:f:F:g:hi:I:j:k:K:lLM:nN:o:pPq:r:R:s:S:Ttu:UvVW:x:X").
constexpr OptionSpec kSacctOptions[] = {{'a', "allusers", OptionSpec::kNone},
                                        {'A', "accounts", OptionSpec::kRequired},
                                        {'X', "allocations", OptionSpec::kNone},
                                        {'x', "associations", OptionSpec::kRequired},
                                        {'B', "batch-script", OptionSpec::kNone},
                                        {'b', "brief", OptionSpec::kNone},
                                        {'c', "completion", OptionSpec::kNone},
                                        {'C', "constraints", OptionSpec::kRequired},
                                        {0, "delimiter", OptionSpec::kRequired},
                                        {'D', "duplicates", OptionSpec::kNone},
                                        {0, "env-vars", OptionSpec::kNone},
                                        {0, "federation", OptionSpec::kNone},
                                        {'e', "helpformat", OptionSpec::kNone},
                                        {0, "help-fields", OptionSpec::kNone},
                                        {'E', "endtime", OptionSpec::kRequired},
                                        {'f', "file", OptionSpec::kRequired},
                                        {'F', "flags", OptionSpec::kRequired},
                                        {'g', "gid", OptionSpec::kRequired},
                                        {0, "group", OptionSpec::kRequired},
                                        {'h', "help", OptionSpec::kNone},
                                        {0, "json", OptionSpec::kNone},
                                        {0, "local", OptionSpec::kNone},
                                        {0, "name", OptionSpec::kRequired},
                                        {'i', "nnodes", OptionSpec::kRequired},
                                        {'I', "ncpus", OptionSpec::kRequired},
                                        {'j', "jobs", OptionSpec::kRequired},
                                        {'k', "timelimit-min", OptionSpec::kRequired},
                                        {'K', "timelimit-max", OptionSpec::kRequired},
                                        {'l', "long", OptionSpec::kNone},
                                        {'L', "allclusters", OptionSpec::kNone},
                                        {0, "cluster", OptionSpec::kRequired},
                                        {'M', "clusters", OptionSpec::kRequired},
                                        {'N', "nodelist", OptionSpec::kRequired},
                                        {0, "noconvert", OptionSpec::kNone},
                                        {0, "units", OptionSpec::kRequired},
                                        {'n', "noheader", OptionSpec::kNone},
                                        {0, "fields", OptionSpec::kRequired},
                                        {'o', "format", OptionSpec::kRequired},
                                        {'p', "parsable", OptionSpec::kNone},
                                        {'P', "parsable2", OptionSpec::kNone},
                                        {'q', "qos", OptionSpec::kRequired},
                                        {'r', "partition", OptionSpec::kRequired},
                                        {'R', "reason", OptionSpec::kRequired},
                                        {'s', "state", OptionSpec::kRequired},
                                        {'S', "starttime", OptionSpec::kRequired},
                                        {'T', "truncate", OptionSpec::kNone},
                                        {0, "uid", OptionSpec::kRequired},
                                        {0, "usage", OptionSpec::kNone},
                                        {'u', "user", OptionSpec::kRequired},
                                        {0, "use-local-uid", OptionSpec::kNone},
                                        {'v', "verbose", OptionSpec::kNone},
                                        {'V', "version", OptionSpec::kNone},
                                        {'W', "wckeys", OptionSpec::kRequired},
                                        {0, "whole-hetjob", OptionSpec::kOptional},
                                        {0, "yaml", OptionSpec::kNone}};

}  // namespace

std::vector<OptionSpec> SacctOptionTable() {
  return {std::begin(kSacctOptions), std::end(kSacctOptions)};
}

namespace {

constexpr std::string_view kLongFields =
    "jobid,jobidraw,jobname,partition,maxvmsize,maxvmsizenode,maxvmsizetask,avevmsize,maxrss,"
    "maxrssnode,maxrsstask,averss,maxpages,maxpagesnode,maxpagestask,avepages,mincpu,mincpunode,"
    "mincputask,avecpu,ntasks,alloccpus,elapsed,state,exitcode,avecpufreq,reqcpufreqmin,"
    "reqcpufreqmax,reqcpufreqgov,reqmem,consumedenergy,maxdiskread,maxdiskreadnode,"
    "maxdiskreadtask,avediskread,maxdiskwrite,maxdiskwritenode,maxdiskwritetask,avediskwrite,"
    "reqtres,alloctres,tresusageinave,tresusageinmax,tresusageinmaxn,tresusageinmaxt,"
    "tresusageinmin,tresusageinminn,tresusageinmint,tresusageintot,tresusageoutmax,"
    "tresusageoutmaxn,tresusageoutmaxt,tresusageoutave,tresusageouttot";

// sacct's fatal() and error(): "sacct: fatal: ..." and exit 1.
struct Refusal {
  std::string text;
};
int Refuse(const Refusal& refusal) {
  std::fputs(refusal.text.c_str(), stderr);
  return 1;
}
Refusal Fatal(const std::string& message) {
  return {"sacct: fatal: " + message + "\n"};
}
Refusal Error(const std::string& message) {
  return {"sacct: error: " + message + "\n"};
}

// What the command line asks beyond the selection.
struct Request {
  SacctSelection selection;
  SacctOptions options;
  std::vector<std::string> fields;  // -o lists, then -b's and -l's
  bool brief = false, long_list = false, all_users = false, completion = false;
  bool start_given = false, end_given = false;
  bool script = false, environment = false;  // -B, --env-vars
  std::optional<std::string> file, clusters;
  int verbose = 0;
};

// "N" or "min-max" of -i/-I.
std::optional<std::pair<uint32_t, uint32_t>> Range(const std::string& text) {
  size_t dash = text.find('-');
  auto min = ParseUint64(text.substr(0, dash));
  auto max = dash == std::string::npos ? min : ParseUint64(text.substr(dash + 1));
  if (!min || !max || *max > UINT32_MAX || *min > *max) return std::nullopt;
  return std::pair<uint32_t, uint32_t>(static_cast<uint32_t>(*min), static_cast<uint32_t>(*max));
}

std::optional<uint32_t> UserId(const std::string& text) {
  if (auto id = ParseUint64(text); id && *id <= UINT32_MAX) return static_cast<uint32_t>(*id);
  if (passwd* entry = getpwnam(text.c_str())) return entry->pw_uid;
  return std::nullopt;
}

std::optional<uint32_t> GroupId(const std::string& text) {
  if (auto id = ParseUint64(text); id && *id <= UINT32_MAX) return static_cast<uint32_t>(*id);
  if (group* entry = getgrnam(text.c_str())) return entry->gr_gid;
  return std::nullopt;
}

std::optional<Refusal> AddTime(const std::string& text, int64_t now, int64_t& out) {
  auto when = ParseSacctTime(text, now);
  if (!when) return Refusal{"Invalid time specification (pos=0): " + text + "\n"};
  out = *when;
  return std::nullopt;
}

std::optional<Refusal> AddIds(const std::string& value, bool group, std::vector<uint32_t>& out) {
  for (const std::string& name : CommaList(value)) {
    auto id = group ? GroupId(name) : UserId(name);
    if (!id) return Fatal(fmt::format("Invalid {} id: {}", group ? "group" : "user", name));
    out.push_back(*id);
  }
  return std::nullopt;
}

std::optional<Refusal> AddTimelimit(const std::string& value, int64_t& out) {
  auto seconds = ParseDuration(value);
  if (!seconds || *seconds <= 0) return Fatal("Invalid time limit specification");
  out = columns::IsUnlimited(*seconds) ? INT64_MAX : std::max<int64_t>(*seconds / 60, 1);
  return std::nullopt;
}

std::optional<Refusal> AddJobs(const std::string& value, SacctSelection& selection) {
  for (const std::string& item : CommaList(value)) {
    auto steps = ParseSacctJobSteps(item);
    if (!steps) return Fatal(steps.error());
    for (SacctJobStep& step : *steps) selection.jobs.push_back(std::move(step));
  }
  return std::nullopt;
}

std::optional<Refusal> AddStates(const std::string& value, SacctSelection& selection) {
  for (const std::string& item : CommaList(value)) {
    auto state = SacctStateName(item);
    if (!state) return Fatal("unrecognized job state value " + item);
    selection.states.push_back(*state);
  }
  return std::nullopt;
}

std::optional<Refusal> AddNodes(const std::string& value, SacctSelection& selection) {
  auto names = ExpandHostlist(value);
  if (!names) return Error("Invalid node list: " + value);
  selection.nodes = std::move(names).value();
  return std::nullopt;
}

// -F: the passes that started the jobs wanted, as Slurm names them (any case).
std::optional<Refusal> AddFlags(const std::string& value, SacctSelection& selection) {
  static constexpr std::string_view kFlags[] = {"SchedSubmit", "SchedMain", "SchedBackfill"};
  for (const std::string& item : CommaList(value)) {
    auto known = std::find_if(std::begin(kFlags), std::end(kFlags),
                              [&](std::string_view flag) { return EqualsIgnoreCase(flag, item); });
    if (known == std::end(kFlags))
      return Fatal(
          fmt::format("Invalid job flag {} (expected SchedSubmit, SchedMain or "
                      "SchedBackfill)",
                      item));
    selection.flags.emplace_back(*known);
  }
  return std::nullopt;
}

// The options that select jobs.
std::optional<Refusal> Select(const std::string& option, const std::string& value, Request& request,
                              int64_t now) {
  SacctSelection& sel = request.selection;
  auto list = [&](std::vector<std::string>& into) {
    for (std::string& item : CommaList(value)) into.push_back(std::move(item));
  };
  if (option == "jobs") return AddJobs(value, sel);
  if (option == "state") return AddStates(value, sel);
  if (option == "starttime") return request.start_given = true, AddTime(value, now, sel.start);
  if (option == "endtime") return request.end_given = true, AddTime(value, now, sel.end);
  if (option == "user" || option == "uid") {
    if (value == "-1") return request.all_users = true, std::nullopt;
    return AddIds(value, false, sel.uids);
  }
  if (option == "gid" || option == "group") return AddIds(value, true, sel.gids);
  if (option == "accounts") list(sel.accounts);
  if (option == "name") list(sel.names);
  if (option == "partition") list(sel.partitions);
  if (option == "qos") list(sel.qos);
  if (option == "reason") list(sel.reasons);
  if (option == "constraints") list(sel.constraints);
  if (option == "flags") return AddFlags(value, sel);
  if (option == "wckeys") list(sel.wckeys);
  if (option == "associations") list(sel.associations);
  if (option == "nodelist") return AddNodes(value, sel);
  if (option == "timelimit-min") return AddTimelimit(value, sel.min_timelimit);
  if (option == "timelimit-max") return AddTimelimit(value, sel.max_timelimit);
  if (option == "nnodes" || option == "ncpus") {
    auto range = Range(value);
    bool nodes = option == "nnodes";
    if (!range)
      return Error(fmt::format("invalid {} range -i '{}'", nodes ? "node" : "cpu", value));
    (nodes ? sel.min_nodes : sel.min_cpus) = range->first;
    (nodes ? sel.max_nodes : sel.max_cpus) = range->second;
  }
  if (option == "truncate") sel.truncate = true;
  return std::nullopt;
}

// The options that shape the output.
std::optional<Refusal> Shape(const std::string& option, const std::string& value,
                             Request& request) {
  SacctOptions& out = request.options;
  if (option == "format" || option == "fields") request.fields.push_back(value);
  if (option == "brief") request.brief = true;
  if (option == "long") request.long_list = true;
  if (option == "parsable") out.parsable = true, out.parsable2 = false;
  if (option == "parsable2") out.parsable2 = true, out.parsable = false;
  if (option == "delimiter") out.delimiter = value;
  if (option == "noheader") out.no_header = true;
  if (option == "allocations") out.allocations = true;
  if (option == "duplicates") out.duplicates = true;
  if (option == "noconvert") out.no_convert = true;
  if (option == "use-local-uid") out.use_local_uid = true;
  if (option == "allusers") request.all_users = true;
  if (option == "completion") request.completion = true;
  if (option == "file") request.file = value, request.completion = true;
  if (option == "clusters" || option == "cluster") request.clusters = value;
  if (option == "verbose") ++request.verbose;
  if (option == "units") {
    char unit = value.empty() ? 0 : static_cast<char>(std::toupper(value[0]));
    if (value.size() != 1 || std::string_view("KMGTP").find(unit) == std::string_view::npos)
      return Fatal("Invalid unit type");
    out.units = unit;
  }
  if (option == "batch-script") request.script = true;
  if (option == "env-vars") request.environment = true;
  if (option == "whole-hetjob" && !value.empty() && !EqualsIgnoreCase(value, "yes") &&
      !EqualsIgnoreCase(value, "y") && !EqualsIgnoreCase(value, "no") &&
      !EqualsIgnoreCase(value, "n"))
    return Error("Invalid --whole-hetjob value \"" + value + "\". Valid values: [yes|no].");
  return std::nullopt;
}

// -o's lists, -b's and -l's, in Slurm's order; else SACCT_FORMAT or the default.
std::string FieldList(const Request& request) {
  std::vector<std::string> lists = request.fields;
  if (request.brief) lists.push_back("jobid,state,exitcode");
  if (request.long_list) lists.emplace_back(kLongFields);
  // With -c, the completion plugin's own default.
  if (lists.empty() && request.completion)
    lists.emplace_back("jobid,uid,jobname,partition,nnodes,nodelist,state,end");
  if (lists.empty())
    if (const char* env = std::getenv("SACCT_FORMAT"); env && *env) lists.emplace_back(env);
  return Join(lists, ",");
}

std::optional<Refusal> ParseRequest(const ParsedOptions& parsed, int64_t now, Request& request) {
  for (const auto& [option, value] : parsed.options) {
    if (auto refused = Select(option, value, request, now)) return refused;
    if (auto refused = Shape(option, value, request)) return refused;
  }
  if (!parsed.operands.empty()) return Error("Unknown arguments: " + Join(parsed.operands, " "));
  // Slurm's checks, in its order: slurmdbd answers these only for jobs named with -j.
  if ((request.script || request.environment) && request.selection.jobs.empty())
    return Fatal(
        fmt::format("When requesting {} you must also request specific jobs with the '-j' option.",
                    request.environment ? "job environment" : "job scripts"));
  if (request.script && request.environment)
    return Fatal("Options --batch-script and --env-vars are mutually exclusive");
  SacctWindow(request.selection, request.start_given, request.end_given, now);
  if (request.selection.end && request.selection.start > request.selection.end)
    return Error(fmt::format("Start time ({}) requested is after end time ({}).",
                             columns::IsoTime(request.selection.start),
                             columns::IsoTime(request.selection.end)));
  request.options.fields = FieldList(request);
  const char* format = std::getenv("SLURM_TIME_FORMAT");
  columns::SetTimeFormat(format ? format : "", now);  // every time sacct prints, as squeue's
  return std::nullopt;
}

// -v: the window in use, as slurm_ctime2 prints it.
void PrintWindow(const Request& request) {
  auto ctime = [](int64_t when) {
    time_t clock = static_cast<time_t>(when);
    std::tm local{};
    localtime_r(&clock, &local);
    char text[64];
    return std::string(text, std::strftime(text, sizeof text, "%a %b %d %T %Y", &local));
  };
  std::string end = request.end_given ? ctime(request.selection.end) : "Now";
  std::fprintf(stderr, "sacct: Jobs eligible from %s - %s\n",
               ctime(request.selection.start).c_str(), end.c_str());
}

// The controller reads its history by job ID (-j), else by owner (-u, or the caller's own),
// else by the window; the other filters are sacct's own, on the records.
v1::HistoryQuery QueryOf(const Request& request) {
  v1::HistoryQuery query;
  query.set_start_time(request.selection.start);
  query.set_end_time(request.selection.end);
  const SacctSelection& sel = request.selection;
  std::set<uint64_t> ids;
  for (const SacctJobStep& job : sel.jobs) ids.insert(job.job_id);
  for (uint64_t id : ids) query.mutable_filter()->add_job_ids(id);
  if (!request.all_users)
    for (uint32_t uid : std::set<uint32_t>(sel.uids.begin(), sel.uids.end())) query.add_uids(uid);
  return query;
}

// Slurm's slurmdb_get_job_id_str: an array task as ARRAY_TASK.
std::string ScriptJobId(const v1::Job& job) {
  const v1::JobSpec& spec = job.spec();
  if (spec.array_job_id() && spec.array_task_id() != UINT32_MAX)  // UINT32_MAX: not a task
    return fmt::format("{}_{}", spec.array_job_id(), spec.array_task_id());
  return std::to_string(spec.job_id());
}

// -B and --env-vars, as Slurm's sacct prints them: each job's script or environment under a
// header, "NONE" where none is kept. A job the controller will not show (another user's) is
// left out, as slurmdbd leaves it out.
Result<std::string> ScriptsText(Connection& connection, const std::vector<v1::Job>& jobs,
                                bool environment) {
  static const std::string kRule(80, '-');
  std::string text;
  for (const v1::Job& job : jobs) {
    v1::JobScriptRequest request;
    request.set_job_id(job.spec().job_id());
    request.set_environment(environment);
    v1::JobScriptReply reply;
    grpc::Status status = Unary(connection, "/drover.v1.Controller/JobScript",
                                &v1::Controller::Stub::JobScript, request, &reply);
    if (status.error_code() == grpc::StatusCode::PERMISSION_DENIED ||
        status.error_code() == grpc::StatusCode::NOT_FOUND)
      continue;
    if (!status.ok()) return MakeError(Unreachable(status));
    std::string body = reply.script();
    if (environment)
      for (const std::string& entry : reply.environment()) body += entry + "\n";
    if (!reply.found() || body.empty()) body = "NONE\n";
    text += fmt::format("{} {}{}\n{}\n{}\n",
                        environment ? "Environment used for" : "Batch Script for", ScriptJobId(job),
                        environment ? " (must be batch to display)" : "", kRule, body);
  }
  return text;
}

}  // namespace

int RunSacct(Arguments args) {
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSacctOptions);
  if (!parsed) return OptionError("sacct", parsed.error());
  if (auto code = HelpUsageVersion(*parsed, kSacctHelp, kSacctUsage)) return *code;
  if (parsed->Has("helpformat") || parsed->Has("help-fields")) {
    std::fputs(SacctFieldHelp().c_str(), stdout);
    return 0;
  }
  int64_t now = std::time(nullptr);
  Request request;
  if (auto refused = ParseRequest(*parsed, now, request)) return Refuse(*refused);
  if (request.verbose) PrintWindow(request);
  if (auto fields = FormatSacct({}, request.options); !fields) return Refuse(Error(fields.error()));
  // Its calls are the history's pages (and -B's scripts): no gRPC channel (client.h).
  auto connection = Connect(ConnectMode::kLean);
  if (!connection) return Fail("sacct", connection.error());
  const ClusterConfig& cluster = connection->cluster;
  if (auto clusters = ClustersRequested(request.clusters, Environment()))
    if (auto error = ClustersError(*clusters, cluster.settings.cluster_name))
      return Fail("sacct", *error);
  // Drover has no job completion plugin: sacct -c (and -f) behaves as with
  // JobCompType=jobcomp/none.
  if (request.completion) {
    struct stat info {};
    if (!request.file || stat(request.file->c_str(), &info) != 0)
      return Refuse({"Slurm job completion is disabled\n"});
  }
  SacctSelection& selection = request.selection;
  // Slurm's sacct shows the caller's own jobs unless told otherwise (root sees everyone's; -j
  // and -N look at every user's).
  if (selection.uids.empty() && !request.all_users && selection.jobs.empty() &&
      selection.nodes.empty() && getuid() != 0)
    selection.uids.push_back(getuid());
  auto list = ReadHistory(*connection, QueryOf(request));
  if (!list) return Fail("sacct", list.error());
  SacctOptions& options = request.options;
  options.now = list->time() ? list->time() : now;
  options.cluster_name = cluster.settings.cluster_name;
  options.cluster = &cluster;
  options.selection = &selection;
  std::vector<v1::Job> jobs;
  if (!request.completion)
    for (v1::Job& job : ParseJobs(*list))
      if (SacctSelects(selection, job, options.now)) jobs.push_back(std::move(job));
  // The controller lists its history in the order of the index it read, then the live queue.
  std::stable_sort(jobs.begin(), jobs.end(), [](const v1::Job& a, const v1::Job& b) {
    return a.spec().job_id() < b.spec().job_id();
  });
  if (parsed->Has("json") || parsed->Has("yaml")) {
    std::string json = FormatSacctJson(jobs, options);
    std::fputs((parsed->Has("yaml") ? columns::JsonToYaml(json) : json).c_str(), stdout);
    return 0;
  }
  if (request.script || request.environment) {
    auto text = ScriptsText(*connection, jobs, request.environment);
    if (!text) return Fail("sacct", text.error());
    std::fputs(text->c_str(), stdout);
    return 0;
  }
  auto text = FormatSacct(jobs, options);
  if (!text) return Refuse(Error(text.error()));
  std::fputs(text->c_str(), stdout);
  return 0;
}

}  // namespace drover::cli
