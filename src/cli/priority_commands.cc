// sprio and sshare: their options, the controller's priority factors and fair-share tree, and
// the output formats of priority_formats.h.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/commands.h"
#include "common/getopt.h"
#include "cli/priority_formats.h"
#include "common/text.h"

namespace drover::cli {
namespace {

constexpr const char* kSprioUsage =
    "Usage: sprio [-j jid[s]] [-u user_name[s]] [-o format] [-p partitions]\n"
    "     [--federation] [--local] [--sibling] [--usage] [-hlnvw]\n";

constexpr const char* kSprioHelp =
    "Usage: sprio [OPTIONS]\n"
    "  -h, --noheader                  no headers on output\n"
    "  -j, --jobs                      comma separated list of jobs\n"
    "                                  to view, default is all\n"
    "      --json                      print the factors as JSON\n"
    "  -l, --long                      long report\n"
    "  -n, --norm                      display normalized values\n"
    "  -o, --format=format             format specification\n"
    "  -p, --partition=partition_name  comma separated list of partitions\n"
    "  -u, --user=user_name            comma separated list of users to view\n"
    "  -v, --verbose                   verbosity level\n"
    "  -V, --version                   output version information and exit\n"
    "  -w, --weights                   show the weights for each priority factor\n"
    "\n"
    "Help options:\n"
    "      --help                      show this help message\n"
    "      --usage                     display a brief summary of sprio options\n";

constexpr const char* kSshareUsage =
    "Usage: sshare [-a] [-A accounts] [-u users] [-l] [-n] [-o fields] [-p|-P] [-U] [-v] [-V]\n"
    "              [--json]\n";

constexpr const char* kSshareHelp =
    "Usage:  sshare [OPTION]\n"
    "  Valid OPTIONs are:\n"
    "    -a or --all            list all users\n"
    "    -A or --accounts=      display specific accounts (comma separated list)\n"
    "    -e or --helpformat     Print a list of fields that can be specified\n"
    "                           with the '--format' option\n"
    "          --json           print the shares as JSON\n"
    "    -l or --long           include normalized usage in output\n"
    "    -n or --noheader       omit header from output\n"
    "    -o or --format=        Comma separated list of fields (use\n"
    "                           \"--helpformat\" for a list of available fields).\n"
    "    -p or --parsable       '|' delimited output with a trailing '|'\n"
    "    -P or --parsable2      '|' delimited output without a trailing '|'\n"
    "    -u or --users=         display specific users (comma separated list)\n"
    "    -U or --Users          display only user information\n"
    "    -v or --verbose        display more information\n"
    "    -V or --version        display tool version number\n"
    "          --help           display this usage description\n"
    "          --usage          display this usage description\n";

constexpr const char* kSshareFields =
    "Account           Cluster           EffectvUsage      FairShare        \n"
    "LevelFS           ID                NormShares        NormUsage        \n"
    "Partition         RawShares         RawUsage          User             \n"
    "GrpTRESMins       TRESRunMins      \n";

std::vector<std::string> CommaList(const std::string& text) {
  std::vector<std::string> items;
  for (const std::string& part : Split(text, ','))
    if (!Trim(part).empty()) items.emplace_back(Trim(part));
  return items;
}

int Fail(const char* command, const std::string& message) {
  std::fprintf(stderr, "%s: error: %s\n", command, message.c_str());
  return 1;
}

bool FairTree(const ClusterConfig& cluster) {
  const auto& flags = cluster.settings.priority_flags;
  return std::find(flags.begin(), flags.end(), "NO_FAIR_TREE") == flags.end();
}

// %n: the QOS of each job, from the queue (only asked for when the format shows it).
std::map<uint64_t, std::string> JobQos(v1::Controller::Stub& stub) {
  std::map<uint64_t, std::string> qos;
  v1::JobList list;
  grpc::ClientContext context;
  SetDeadline(context);
  if (!stub.ListJobs(&context, v1::JobQuery(), &list).ok()) return qos;
  for (const std::string& encoded : list.jobs()) {
    v1::Job job;
    if (job.ParseFromString(encoded) && !job.spec().qos().empty())
      qos[job.spec().job_id()] = job.spec().qos();
  }
  return qos;
}

}  // namespace

int RunSprio(Arguments args) {
  static constexpr OptionSpec kSpecs[] = {
      {'h', "noheader", OptionSpec::kNone},   {'j', "jobs", OptionSpec::kOptional},
      {'l', "long", OptionSpec::kNone},       {'n', "norm", OptionSpec::kNone},
      {'o', "format", OptionSpec::kRequired}, {'p', "partition", OptionSpec::kRequired},
      {'u', "user", OptionSpec::kRequired},   {0, "users", OptionSpec::kRequired},
      {'v', "verbose", OptionSpec::kNone},    {'V', "version", OptionSpec::kNone},
      {'w', "weights", OptionSpec::kNone},    {0, "json", OptionSpec::kNone},
      {0, "help", OptionSpec::kNone},         {0, "usage", OptionSpec::kNone}};
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSpecs);
  if (!parsed) return OptionError("sprio", parsed.error());
  if (auto code = HelpUsageVersion(*parsed, kSprioHelp, kSprioUsage)) return *code;
  SprioOptions options;
  std::vector<std::string> job_ids, users, partitions;
  bool json = false;
  for (const auto& [option, value] : parsed->options) {
    if (option == "noheader") options.no_header = true;
    if (option == "long") options.long_format = true;
    if (option == "norm") options.normalized = true;
    if (option == "weights") options.weights = true;
    if (option == "format") options.format = value;
    if (option == "json") json = true;
    if (option == "partition") partitions = CommaList(value);
    if (option == "user" || option == "users") {
      users = CommaList(value);
      options.show_user = true;
    }
    if (option == "jobs") {
      options.jobs_given = true;
      for (const std::string& id : CommaList(value)) job_ids.push_back(id);
    }
  }
  // As sprio's: after -j, the first operand is the job list; anything else is an error.
  std::vector<std::string> operands = parsed->operands;
  if (options.jobs_given && !operands.empty()) {
    for (const std::string& id : CommaList(operands.front())) job_ids.push_back(id);
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
  v1::PriorityQuery query;
  for (const std::string& id : job_ids) {
    // "12" or "12_3" (the array's own ID): sprio takes the job part.
    auto number = ParseUint64(id.substr(0, id.find_first_of("_.+")));
    if (!number) return Fail("sprio", "Invalid job id: " + id);
    query.mutable_filter()->add_job_ids(*number);
  }
  if (users.size() == 1) query.mutable_filter()->set_user(users.front());
  auto connection = Connect();
  if (!connection) return Fail("sprio", connection.error());
  v1::PriorityList list;
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status = connection->stub->Priorities(&context, query, &list);
  if (!status.ok())
    return Fail("sprio", "Couldn't get priority factors from controller: " + Unreachable(status));
  std::set<std::string> user_set(users.begin(), users.end());
  std::set<std::string> partition_set(partitions.begin(), partitions.end());
  std::vector<v1::JobPriority> jobs;
  for (v1::JobPriority& job : *list.mutable_jobs()) {
    if (!user_set.empty() && !user_set.count(job.user())) continue;
    if (!partition_set.empty() && !partition_set.count(job.partition())) continue;
    jobs.push_back(std::move(job));
  }
  options.factor_weights.insert(list.weights().begin(), list.weights().end());
  options.tres_weights = connection->cluster.settings.weight_tres;
  options.cluster_name = connection->cluster.settings.cluster_name;
  if (options.format.find('n') != std::string::npos) options.job_qos = JobQos(*connection->stub);
  std::string text = json ? SprioJson(jobs, options) : FormatSprio(jobs, options);
  std::fputs(text.c_str(), stdout);
  return 0;
}

int RunSshare(Arguments args) {
  static constexpr OptionSpec kSpecs[] = {
      {'a', "all", OptionSpec::kNone},        {'A', "accounts", OptionSpec::kRequired},
      {'e', "helpformat", OptionSpec::kNone}, {'h', "", OptionSpec::kNone},  // -h: no header, as -n
      {'l', "long", OptionSpec::kNone},       {'n', "noheader", OptionSpec::kNone},
      {'o', "format", OptionSpec::kRequired}, {'p', "parsable", OptionSpec::kNone},
      {'P', "parsable2", OptionSpec::kNone},  {'u', "users", OptionSpec::kRequired},
      {'U', "Users", OptionSpec::kNone},      {'v', "verbose", OptionSpec::kNone},
      {'V', "version", OptionSpec::kNone},    {0, "json", OptionSpec::kNone},
      {0, "help", OptionSpec::kNone},         {0, "usage", OptionSpec::kNone}};
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSpecs);
  if (!parsed) return OptionError("sshare", parsed.error());
  if (auto code = HelpUsageVersion(*parsed, kSshareHelp, kSshareUsage)) return *code;
  SshareOptions options;
  bool all_users = false, json = false;
  for (const auto& [option, value] : parsed->options) {
    if (option == "helpformat") return std::fputs(kSshareFields, stdout), 0;
    if (option == "all") all_users = true;
    if (option == "accounts")
      for (const std::string& account : CommaList(value)) options.accounts.push_back(account);
    if (option == "noheader" || option.empty()) options.no_header = true;
    if (option == "long") options.long_format = true;
    if (option == "format") options.fields += (options.fields.empty() ? "" : ",") + value;
    if (option == "parsable") options.parsable = true;
    if (option == "parsable2") options.parsable2 = true;
    if (option == "Users") options.users_only = true;
    if (option == "json") json = true;
    if (option == "users") {
      if (value == "-1") {
        all_users = true;
        continue;
      }
      all_users = false;
      for (const std::string& user : CommaList(value)) options.users.push_back(user);
    }
  }
  if (!parsed->operands.empty()) {
    std::fprintf(stderr, "sshare: error: Unrecognized option: %s\n%s",
                 parsed->operands.front().c_str(), kSshareUsage);
    return 1;
  }
  // As Slurm's sshare: without -a or -u, the caller's own user lines (and every account line).
  if (all_users)
    options.users.clear();
  else if (options.users.empty())
    options.users.push_back(Me().user);
  auto connection = Connect();
  if (!connection) return Fail("sshare", connection.error());
  v1::ShareList list;
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status = connection->stub->Shares(&context, v1::ShareQuery(), &list);
  if (!status.ok())
    return Fail("sshare", "Couldn't get shares from controller: " + Unreachable(status));
  options.fair_tree = FairTree(connection->cluster);
  options.cluster_name = connection->cluster.settings.cluster_name;
  std::vector<v1::Share> shares(list.shares().begin(), list.shares().end());
  if (json) {
    std::fputs(SshareJson(shares, options).c_str(), stdout);
    return 0;
  }
  auto text = FormatSshare(shares, options);
  if (!text) return Fail("sshare", text.error());
  std::fputs(text->c_str(), stdout);
  return 0;
}

}  // namespace drover::cli
