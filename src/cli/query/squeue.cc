// squeue: the queue, from the controller's job list, in squeue's formats (formats.h).
#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
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
#include "common/licenses.h"
#include "common/text.h"

namespace drover::cli {
namespace {

constexpr const char* kSqueueUsage =
    "Usage: squeue [-A account] [--clusters names] [-i seconds] [--job jobid]\n"
    "              [-n name] [-o format] [-p partitions] [--qos qos]\n"
    "              [--reservation reservation] [--sort fields] [--start]\n"
    "              [--step step_id] [-t states] [-u user_name] [--usage]\n"
    "              [-L licenses] [-w nodes] [--federation] [--local] [--sibling]\n"
    "\t      [-ahjlrsv]\n";

constexpr const char* kSqueueHelp =
    "Usage: squeue [OPTIONS]\n"
    "  -A, --account=account(s)        comma separated list of accounts\n"
    "\t\t\t\t  to view, default is all accounts\n"
    "  -a, --all                       display jobs in hidden partitions\n"
    "      --array-unique              display one unique pending job array\n"
    "                                  element per line\n"
    "      --federation                Report federated information if a member\n"
    "                                  of one\n"
    "  -h, --noheader                  no headers on output\n"
    "      --hide                      do not display jobs in hidden partitions\n"
    "  -i, --iterate=seconds           specify an interation period\n"
    "  -j, --job=job(s)                comma separated list of jobs IDs\n"
    "                                  to view, default is all\n"
    "      --json                      Produce JSON output\n"
    "      --local                     Report information only about jobs on the\n"
    "                                  local cluster. Overrides --federation.\n"
    "  -l, --long                      long report\n"
    "  -L, --licenses=(license names)  comma separated list of license names to view\n"
    "  -M, --clusters=cluster_name     cluster to issue commands to.  Default is\n"
    "                                  current cluster.  cluster with no name will\n"
    "                                  reset to default. Implies --local.\n"
    "      --me                        equivalent to --user=<my username>\n"
    "  -n, --name=job_name(s)          comma separated list of job names to view\n"
    "      --noconvert                 don't convert units from their original type\n"
    "                                  (e.g. 2048M won't be converted to 2G).\n"
    "  -o, --format=format             format specification\n"
    "  -O, --Format=format             format specification\n"
    "  -p, --partition=partition(s)    comma separated list of partitions\n"
    "\t\t\t\t  to view, default is all partitions\n"
    "  -q, --qos=qos(s)                comma separated list of qos's\n"
    "\t\t\t\t  to view, default is all qos's\n"
    "  -R, --reservation=name          reservation to view, default is all\n"
    "  -r, --array                     display one job array element per line\n"
    "      --sibling                   Report information about all sibling jobs\n"
    "                                  on a federated cluster. Implies --federation.\n"
    "  -s, --step=step(s)              comma separated list of job steps\n"
    "\t\t\t\t  to view, default is all\n"
    "  -S, --sort=fields               comma separated list of fields to sort on\n"
    "      --start                     print expected start times of pending jobs\n"
    "  -t, --states=states             comma separated list of states to view,\n"
    "\t\t\t\t  default is pending and running,\n"
    "\t\t\t\t  '--states=all' reports all states\n"
    "  -u, --user=user_name(s)         comma separated list of users to view\n"
    "      --name=job_name(s)          comma separated list of job names to view\n"
    "  -v, --verbose                   verbosity level\n"
    "  -V, --version                   output version information and exit\n"
    "  -w, --nodelist=hostlist         list of nodes to view, default is \n"
    "\t\t\t\t  all nodes\n"
    "      --yaml                      Produce YAML output\n"
    "\n"
    "Help options:\n"
    "  --help                          show this help message\n"
    "  --usage                         display a brief summary of squeue options\n";

// clang-format off
constexpr OptionSpec kSpecs[] = {
    {'A', "account", OptionSpec::kRequired},   {'a', "all", OptionSpec::kNone},
    {'r', "array", OptionSpec::kNone},         {0, "array-unique", OptionSpec::kNone},
    {'M', "clusters", OptionSpec::kRequired},  {0, "federation", OptionSpec::kNone},
    {'O', "Format", OptionSpec::kRequired},    {'o', "format", OptionSpec::kRequired},
    {0, "help", OptionSpec::kNone},            {0, "hide", OptionSpec::kNone},
    {'i', "iterate", OptionSpec::kRequired},   {'j', "jobs", OptionSpec::kRequired},
    {0, "json", OptionSpec::kNone},            {'L', "licenses", OptionSpec::kRequired},
    {0, "local", OptionSpec::kNone},           {'l', "long", OptionSpec::kNone},
    {0, "me", OptionSpec::kNone},              {'n', "name", OptionSpec::kRequired},
    {0, "noconvert", OptionSpec::kNone},       {'w', "nodelist", OptionSpec::kRequired},
    {'h', "noheader", OptionSpec::kNone},      {'p', "partition", OptionSpec::kRequired},
    {'P', "priority", OptionSpec::kNone},      {'q', "qos", OptionSpec::kRequired},
    {'R', "reservation", OptionSpec::kRequired}, {0, "sibling", OptionSpec::kNone},
    {'S', "sort", OptionSpec::kRequired},      {0, "start", OptionSpec::kNone},
    {'t', "states", OptionSpec::kRequired},    {'s', "steps", OptionSpec::kOptional},
    {0, "usage", OptionSpec::kNone},           {'u', "user", OptionSpec::kRequired},
    {'v', "verbose", OptionSpec::kNone},       {'V', "version", OptionSpec::kNone},
    {0, "yaml", OptionSpec::kNone}};
// clang-format on

// Slurm's job state names (job_state_num): long, compact, any case.
constexpr std::string_view kJobStates[] = {
    "PENDING",    "RUNNING",     "SUSPENDED", "COMPLETED", "CANCELLED",   "FAILED",
    "TIMEOUT",    "NODE_FAIL",   "PREEMPTED", "BOOT_FAIL", "DEADLINE",    "OUT_OF_MEMORY",
    "COMPLETING", "CONFIGURING", "RESIZING",  "REVOKED",   "SPECIAL_EXIT"};
constexpr std::string_view kJobStateCodes[] = {"PD", "R",  "S",  "CD", "CA", "F",
                                               "TO", "NF", "PR", "BF", "DL", "OOM",
                                               "CG", "CF", "RS", "RV", "SE"};

bool KnownJobState(std::string_view state) {
  for (size_t i = 0; i < std::size(kJobStates); ++i)
    if (EqualsIgnoreCase(state, kJobStates[i]) || EqualsIgnoreCase(state, kJobStateCodes[i]))
      return true;
  return false;
}

// What squeue's options and SQUEUE_* variables ask of the listing, beyond the formatter's.
struct SqueueRequest {
  std::set<std::string> accounts, names, partitions, qos, licenses;
  std::set<uint32_t> uids;
  bool users_given = false;
  std::string reservation;
  std::optional<std::set<std::string>> nodes;  // -w, mapped to node names
  std::string nodelist;                        // -w as given
  bool all = false;                            // -a: hidden partitions too
  bool json = false, yaml = false;
  int iterate = 0;
  int verbose = 0;
  std::optional<std::string> clusters;  // -M or SLURM_CLUSTERS
  // --federation, --local, --sibling: one cluster lists the same jobs whichever is given; -v
  // prints them as Slurm resolves them (--sibling implies --federation, --local and -M override
  // it).
  bool federation = false, local = false, sibling = false;
  std::string states_text, users_text, jobs_text, sort_text;
};

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::set<std::string> Items(const std::string& text) {
  std::vector<std::string> items = CommaList(text);
  return {items.begin(), items.end()};
}

// -u's names (or uids) as uids; Slurm reports each unknown one and keeps going.
void AddUsers(const std::string& text, SqueueRequest& request) {
  request.users_given = true;
  request.users_text = text;
  for (const std::string& user : CommaList(text)) {
    if (passwd* entry = getpwnam(user.c_str())) {
      request.uids.insert(entry->pw_uid);
    } else if (auto uid = ParseUint64(user); uid && getpwuid(static_cast<uid_t>(*uid))) {
      request.uids.insert(static_cast<uint32_t>(*uid));
    } else {
      std::fprintf(stderr, "squeue: error: Invalid user: %s\n\n", user.c_str());
    }
  }
}

std::optional<int> ReadStates(const std::string& text, SqueueOptions& options,
                              SqueueRequest& request) {
  request.states_text = text;
  options.states = CommaList(ToLower(text));
  if (EqualsIgnoreCase(Trim(text), "all")) return std::nullopt;
  for (const std::string& state : options.states) {
    if (KnownJobState(state)) continue;
    std::fprintf(stderr, "squeue: error: Invalid job state specified: %s\n", state.c_str());
    std::string names;
    for (std::string_view name : kJobStates)
      names += (names.empty() ? "" : ",") + std::string(name);
    std::fprintf(stderr, "squeue: error: Valid job states include: %s\n\n", names.c_str());
    return 1;
  }
  return std::nullopt;
}

std::optional<int> ReadJobIds(const std::string& text, v1::JobQuery& query) {
  for (const std::string& id : CommaList(text))
    if (!AddJobId(id, query.mutable_filter())) return Fail("squeue", "Invalid job id: " + id);
  return std::nullopt;
}

// -s LIST: "JOB.STEP" items; Slurm refuses one without its step.
std::optional<int> ReadSteps(const std::string& text, SqueueOptions& options) {
  for (const std::string& id : CommaList(text)) {
    size_t dot = id.find('.');
    if (dot == std::string::npos) return Fail("squeue", "Invalid job_step id: " + id + ".??");
    options.step_ids.push_back(id);
  }
  return std::nullopt;
}

// One option into `options` and `request`; an exit code when its value is wrong.
std::optional<int> ReadOption(const std::string& option, const std::string& value,
                              SqueueOptions& options, SqueueRequest& request, v1::JobQuery& query) {
  if (option == "noheader") options.no_header = true;
  if (option == "long") options.long_format = true;
  if (option == "format") options.format = value;
  if (option == "Format") options.long_fields = value;
  if (option == "array" || option == "array-unique") options.array_unfold = true;
  if (option == "sort") options.sort = request.sort_text = value;
  if (option == "start") options.start = true;
  if (option == "noconvert") options.noconvert = true;
  if (option == "priority") options.per_partition = true;
  if (option == "all") request.all = true;
  if (option == "hide") request.all = false;
  if (option == "account") request.accounts = Items(ToLower(value));
  if (option == "name") request.names = Items(value);
  if (option == "qos") request.qos = Items(ToLower(value));
  if (option == "licenses") request.licenses = Items(value);
  if (option == "reservation") request.reservation = value;
  if (option == "nodelist") request.nodelist = value;
  if (option == "json") request.json = true;
  if (option == "yaml") request.yaml = true;
  if (option == "verbose") ++request.verbose;
  if (option == "clusters") request.clusters = value;
  if (option == "federation") request.federation = true;
  if (option == "local") request.local = true;
  if (option == "sibling") request.sibling = true;
  if (option == "partition") {
    request.partitions = Items(value);
    request.all = true;  // as Slurm: naming partitions shows hidden ones
  }
  if (option == "user") AddUsers(value, request);
  if (option == "me") {
    request.users_given = true;
    request.uids = {static_cast<uint32_t>(geteuid())};
  }
  if (option == "iterate") {
    auto seconds = ParseUint64(value);
    if (!seconds || *seconds == 0 || *seconds > INT32_MAX)
      return std::fprintf(stderr, "squeue: error: --iterate=%s\n\n", value.c_str()), 1;
    request.iterate = static_cast<int>(*seconds);
  }
  if (option == "states") return ReadStates(value, options, request);
  if (option == "jobs") {
    request.jobs_text = value;
    return ReadJobIds(value, query);
  }
  if (option == "steps") {
    options.steps = true;
    return ReadSteps(value, options);
  }
  return std::nullopt;
}

// SQUEUE_* variables: each stands in for its option when the option is not given.
std::optional<int> ReadEnvironment(const ParsedOptions& parsed, SqueueOptions& options,
                                   SqueueRequest& request) {
  if (std::getenv("SQUEUE_ALL")) request.all = true;
  if (std::getenv("SQUEUE_ARRAY") || std::getenv("SQUEUE_ARRAY_UNIQUE"))
    options.array_unfold = true;
  if (std::getenv("SQUEUE_PRIORITY")) options.per_partition = true;
  if (std::getenv("SQUEUE_SORT")) options.sort = request.sort_text = Env("SQUEUE_SORT");
  bool format_chosen = parsed.Has("long") || parsed.Has("format") || parsed.Has("Format") ||
                       parsed.Has("steps") || parsed.Has("start");
  if (!format_chosen && std::getenv("SQUEUE_FORMAT"))
    options.format = Env("SQUEUE_FORMAT");
  else if (!format_chosen && std::getenv("SQUEUE_FORMAT2"))
    options.long_fields = Env("SQUEUE_FORMAT2");
  if (!parsed.Has("account") && std::getenv("SQUEUE_ACCOUNT"))
    request.accounts = Items(ToLower(Env("SQUEUE_ACCOUNT")));
  if (!parsed.Has("name") && std::getenv("SQUEUE_NAMES"))
    request.names = Items(Env("SQUEUE_NAMES"));
  if (!parsed.Has("licenses") && std::getenv("SQUEUE_LICENSES"))
    request.licenses = Items(Env("SQUEUE_LICENSES"));
  if (!parsed.Has("partition") && std::getenv("SQUEUE_PARTITION")) {
    request.partitions = Items(Env("SQUEUE_PARTITION"));
    request.all = true;
  }
  if (!parsed.Has("qos") && std::getenv("SQUEUE_QOS"))
    request.qos = Items(ToLower(Env("SQUEUE_QOS")));
  if (!parsed.Has("user") && !parsed.Has("me") && std::getenv("SQUEUE_USERS"))
    AddUsers(Env("SQUEUE_USERS"), request);
  if (!parsed.Has("states") && std::getenv("SQUEUE_STATES"))
    return ReadStates(Env("SQUEUE_STATES"), options, request);
  return std::nullopt;
}

// Checks the formats and the options that exclude each other, as Slurm does.
std::optional<int> CheckFormats(const ParsedOptions& parsed, const SqueueOptions& options) {
  if (parsed.Has("format") && parsed.Has("Format")) {
    bool o_last = false;
    for (const auto& [option, value] : parsed.options)
      if (option == "format" || option == "Format") o_last = option == "format";
    return Fail("squeue", o_last ? "-o (--format) is incompatible with -O (--Format)"
                                 : "-O (--Format) is incompatible with -o (--format)");
  }
  if (options.long_format && parsed.Has("format")) {
    std::fputs(
        "squeue: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please "
        "remove one and retry.\n",
        stderr);
    return 1;
  }
  std::vector<std::string> errors;
  if (!options.format.empty()) errors = SqueueFormatErrors(options.format, options.steps);
  if (options.format.empty() && !options.long_fields.empty())
    errors = SqueueLongFormatErrors(options.long_fields, options.steps);
  for (const std::string& error : errors)
    std::fprintf(stderr, "squeue: error: %s\n", error.c_str());
  return std::nullopt;  // as squeue: an unknown field is reported and printed as given
}

std::optional<int> ReadOptions(const ParsedOptions& parsed, SqueueOptions& options,
                               v1::JobQuery& query, SqueueRequest& request) {
  for (const auto& [option, value] : parsed.options)
    if (auto code = ReadOption(option, value, options, request, query)) return code;
  for (const std::string& operand : parsed.operands) {
    // Slurm takes one operand as -j's or -s's list when the option came without its own.
    auto code = options.steps ? ReadSteps(operand, options) : ReadJobIds(operand, query);
    if (code) return code;
  }
  if (auto code = ReadEnvironment(parsed, options, request)) return code;
  request.clusters = ClustersRequested(parsed.Last("clusters"), Environment());
  return CheckFormats(parsed, options);
}

// -v: squeue's summary of its options, on stdout before the listing.
void PrintSettings(const SqueueOptions& options, const SqueueRequest& request) {
  auto flag = [](bool on) { return on ? "true" : "false"; };
  auto text = [](const std::string& s) { return s.empty() ? std::string("(null)") : s; };
  std::string out = "-----------------------------\n";
  out += fmt::format("all         = {}\n", flag(request.all));
  out += fmt::format("array       = {}\n", flag(options.array_unfold));
  const bool local = request.local || request.clusters.has_value();
  const bool federation = (request.federation || request.sibling) && !local;
  out += fmt::format("federation  = {}\n", flag(federation));
  out += fmt::format("format      = {}\n", text(options.format));
  out += fmt::format("iterate     = {}\n", request.iterate);
  out += fmt::format("job_flag    = {}\n", request.jobs_text.empty() ? 0 : 1);
  out += fmt::format("jobs        = {}\n", text(request.jobs_text));
  out += fmt::format("licenses    = {}\n",
                     text(Join({request.licenses.begin(), request.licenses.end()}, ",")));
  out += fmt::format("local       = {}\n", flag(local));
  out += fmt::format("names       = {}\n",
                     text(Join({request.names.begin(), request.names.end()}, ",")));
  out += fmt::format("nodes       = {}\n", request.nodelist);
  out += fmt::format("partitions  = {}\n",
                     text(Join({request.partitions.begin(), request.partitions.end()}, ",")));
  out += fmt::format("priority    = {}\n", flag(options.per_partition));
  out += fmt::format("reservation = {}\n", text(request.reservation));
  out += fmt::format("sibling      = {}\n", flag(request.sibling));
  out += fmt::format("sort        = {}\n", text(request.sort_text));
  out += fmt::format("start_flag  = {}\n", options.start ? 1 : 0);
  out += fmt::format("states      = {}\n", text(request.states_text));
  out += fmt::format("step_flag   = {}\n", options.steps ? 1 : 0);
  out += fmt::format("steps       = {}\n", text(Join(options.step_ids, ",")));
  out += fmt::format("users       = {}\n", text(request.users_text));
  out += fmt::format("verbose     = {}\n", request.verbose);
  out += "-----------------------------\n\n\n";
  std::fputs(out.c_str(), stdout);
}

// -w: node names (or their hosts, or "localhost") as the controller knows them.
std::optional<int> ResolveNodes(Connection& connection, SqueueRequest& request) {
  if (request.nodelist.empty()) return std::nullopt;
  auto names = ExpandHostlist(request.nodelist);
  if (!names)
    return Fail("squeue", fmt::format("'{}' invalid entry for --nodelist", request.nodelist));
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string local = std::string(host).substr(0, std::string(host).find('.'));
  std::vector<std::string> asked;
  v1::NodeQuery query;  // only the nodes named: the controller says which exist
  for (const std::string& wanted : names.value()) {
    asked.push_back(EqualsIgnoreCase(wanted, "localhost") ? local : wanted);
    query.add_names(asked.back());
  }
  v1::NodeList nodes;
  grpc::Status status = Unary(connection, "/drover.v1.Controller/ListNodes",
                              &v1::Controller::Stub::ListNodes, query, &nodes);
  if (!status.ok()) return Fail("squeue", Unreachable(status));
  std::set<std::string> known;
  for (const v1::NodeStatus& node : nodes.nodes()) known.insert(node.name());
  request.nodes.emplace();
  for (size_t i = 0; i < asked.size(); ++i) {
    if (!known.count(asked[i])) return Fail("squeue", "Invalid node name " + names.value()[i]);
    request.nodes->insert(asked[i]);
  }
  return std::nullopt;
}

bool HiddenPartition(const std::vector<v1::Partition>& partitions, const v1::Job& job) {
  const std::string& name = job.partition_name().empty() && job.spec().partitions_size()
                                ? job.spec().partitions(0)
                                : job.partition_name();
  for (const v1::Partition& partition : partitions)
    if (partition.name() == name) return partition.hidden();
  return false;
}

bool OnNodes(const v1::Job& job, const std::set<std::string>& nodes) {
  auto names = ExpandHostlist(job.node_list());
  if (!names) return false;
  for (const std::string& name : names.value())
    if (nodes.count(name)) return true;
  return false;
}

// squeue -L: jobs that ask for any of the named licenses.
bool RequestsLicense(const v1::JobSpec& spec, const std::set<std::string>& names) {
  Result<std::vector<LicenseCount>> licenses = ParseLicenses(spec.licenses());
  return licenses && std::any_of(licenses->begin(), licenses->end(),
                                 [&](const LicenseCount& l) { return names.count(l.name) > 0; });
}

// Whether the filters ask for `job`.
bool Wanted(const v1::Job& job, const v1::JobFilter& requested, const SqueueRequest& request,
            const std::vector<v1::Partition>& partitions) {
  bool by_id = requested.job_ids_size() || requested.array_tasks_size();
  const v1::JobSpec& spec = job.spec();
  if (!Requested(requested, job)) return false;
  if (!request.all && !by_id && HiddenPartition(partitions, job)) return false;
  if (request.users_given && !request.uids.count(spec.uid())) return false;
  if (!request.names.empty() && !request.names.count(spec.name())) return false;
  if (!request.accounts.empty() && !request.accounts.count(ToLower(spec.account()))) return false;
  if (!request.qos.empty() &&
      !request.qos.count(spec.qos().empty() ? "normal" : ToLower(spec.qos())))
    return false;
  if (!request.licenses.empty() && !RequestsLicense(spec, request.licenses)) return false;
  if (!request.reservation.empty() && spec.reservation() != request.reservation) return false;
  if (request.nodes && !OnNodes(job, *request.nodes)) return false;
  if (request.partitions.empty()) return true;
  if (request.partitions.count(job.partition_name())) return true;
  for (const std::string& partition : spec.partitions())
    if (job.partition_name().empty() && request.partitions.count(partition)) return true;
  return false;
}

std::string Document(const std::vector<v1::Job>& jobs, const SqueueOptions& options,
                     const Connection& connection, int64_t time, bool yaml) {
  scontrol::ShowContext ctx;
  ctx.cluster = &connection.cluster;
  ctx.now = time ? time : std::time(nullptr);
  ctx.user_name = UserName;
  ctx.group_name = GroupName;
  ctx.priorities = options.priorities;
  ctx.planned = options.planned;
  std::string json = scontrol::JobsJson(jobs, ctx);
  return yaml ? columns::JsonToYaml(json) : json;
}

// The priorities squeue needs: those of the jobs named (squeue -j), or of the jobs that print
// when they are few against the queue (each pending array's tasks fold into one line), or all.
v1::PriorityQuery PrioritiesFor(const v1::JobFilter& filter,
                                const std::vector<const v1::Job*>& shown, int listed) {
  constexpr size_t kMostNamed = 10'000;
  v1::PriorityQuery query;
  if (filter.job_ids_size() + filter.array_tasks_size() > 0) {
    *query.mutable_filter()->mutable_job_ids() = filter.job_ids();
    *query.mutable_filter()->mutable_array_tasks() = filter.array_tasks();
  } else if (!shown.empty() && shown.size() <= kMostNamed &&
             shown.size() * 4 < static_cast<size_t>(listed)) {
    for (const v1::Job* job : shown) {
      const v1::JobSpec& spec = job->spec();
      if (spec.array_job_id() != 0 && spec.array_task_id() != UINT32_MAX) {  // an array task
        v1::JobFilter::ArrayTask* task = query.mutable_filter()->add_array_tasks();
        task->set_array_job_id(spec.array_job_id());
        task->set_task_id(spec.array_task_id());
      } else {
        query.mutable_filter()->add_job_ids(spec.job_id());  // an array's ID would name its tasks
      }
    }
  }
  return query;
}

// One listing: the controller's jobs, filtered, in the format asked for. Exit code 1 when a
// single job asked for by id is unknown, as squeue's slurm_load_job fails.
int ListOnce(Connection& connection, const v1::JobQuery& query, SqueueOptions options,
             const SqueueRequest& request) {
  v1::JobList list;
  grpc::Status status = ListAllJobs(connection, query, &list);
  if (!status.ok()) return Fail("squeue", Unreachable(status));
  for (const v1::PlannedStart& plan : list.planned()) options.planned[plan.job_id()] = plan;
  options.partitions = Partitions(connection, /*configuration_only=*/true);
  const v1::JobFilter& filter = query.filter();
  int64_t now = list.time() ? list.time() : std::time(nullptr);
  const bool lines = !(request.json || request.yaml || options.steps);
  // Lines: each job parsed in turn into one message, kept only when it has a line of its own
  // (pending array tasks fold as they come), so 100,000 array tasks cost ~100 records. The
  // documents and -s read every job.
  std::vector<v1::Job> jobs;
  std::deque<v1::Job> kept;
  SqueueLines folded(options, now);
  v1::Job job;
  for (const std::string& bytes : list.jobs()) {
    job.ParseFromString(bytes);
    if (!Wanted(job, filter, request, options.partitions)) continue;
    if (!lines)
      jobs.push_back(std::move(job));
    else if (folded.NeedsLine(job))
      folded.Add(kept.emplace_back(std::move(job)));
  }
  if (filter.job_ids_size() + filter.array_tasks_size() == 1 && list.jobs_size() == 0) {
    std::fputs("slurm_load_jobs error: Invalid job id specified\n", stderr);
    return 1;
  }
  std::vector<const v1::Job*> shown;
  if (lines) {
    shown = folded.Jobs();
  } else {
    for (const v1::Job& listed : jobs) shown.push_back(&listed);
  }
  v1::PriorityList priorities;
  if (!options.steps &&  // -s prints no priority
      Unary(connection, "/drover.v1.Controller/Priorities", &v1::Controller::Stub::Priorities,
            PrioritiesFor(filter, shown, list.jobs_size()), &priorities)
          .ok())
    for (const v1::JobPriority& priority : priorities.jobs())
      options.priorities[priority.job_id()] = priority.priority();
  std::string out;
  if (lines)
    out = folded.Format();
  else if (request.json || request.yaml)
    out = Document(jobs, options, connection, list.time(), request.yaml);
  else
    out = FormatSqueue(jobs, options, now);  // -s
  std::fputs(out.c_str(), stdout);
  std::fflush(stdout);
  if (request.iterate == 0) ExitNow(0);  // the last listing: its jobs are not freed one by one
  return 0;
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
  SqueueRequest request;
  if (auto code = ReadOptions(*parsed, options, query, request)) return *code;
  // Each listing is a few calls: no gRPC channel (client.h).
  auto connection = Connect(ConnectMode::kLean);
  if (!connection) return Fail("squeue", connection.error());
  std::string cluster = connection->cluster.settings.cluster_name;
  if (request.clusters)
    if (auto error = ClustersError(*request.clusters, cluster)) return Fail("squeue", *error);
  if (auto code = ResolveNodes(*connection, request)) return *code;
  options.cluster_name = cluster;
  options.group_name = GroupName;
  options.dated = request.iterate > 0 || request.verbose > 0;
  columns::SetTimeFormat(Env("SLURM_TIME_FORMAT"), std::time(nullptr));
  if (request.verbose) PrintSettings(options, request);
  query.set_all_states(true);  // -t picks among them below
  // The plan only where something prints or sorts by it: it is not free at 20,000 jobs.
  const std::string& shown = options.format.empty() ? options.sort : options.format;
  query.set_with_plan(options.start || shown.find_first_of("SY") != std::string::npos ||
                      options.sort.find('S') != std::string::npos || request.json || request.yaml ||
                      !options.long_fields.empty());
  // With -M, Slurm names the cluster before its listing (after the date line of -i and -l).
  if (request.clusters) options.cluster_line = "CLUSTER: " + cluster;
  for (;;) {
    int code = ListOnce(*connection, query, options, request);
    if (code || request.iterate == 0) return code;
    std::printf("\n");
    std::fflush(stdout);
    sleep(static_cast<unsigned>(request.iterate));
  }
}

}  // namespace drover::cli
