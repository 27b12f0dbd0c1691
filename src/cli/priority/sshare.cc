// sshare: the fair-share tree, from the controller, in sshare's formats (priority_formats.h).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
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

constexpr const char* kSshareUsage =
    "Usage: sshare [-a] [-A accounts] [-M clusters] [-m] [-u users] [-l] [-n] [-o fields]\n"
    "              [-p|-P] [-U] [-v] [-V] [--json]\n";

constexpr const char* kSshareHelp =
    "Usage:  sshare [OPTION]\n"
    "  Valid OPTIONs are:\n"
    "    -a or --all            list all users\n"
    "    -A or --accounts=      display specific accounts (comma separated list)\n"
    "    -e or --helpformat     Print a list of fields that can be specified\n"
    "                           with the '--format' option\n"
    "          --json           print the shares as JSON\n"
    "    -l or --long           include normalized usage in output\n"
    "    -m or --partition      print the partition part of the association\n"
    "    -M or --cluster=name   cluster to issue commands to.  Default is\n"
    "                           current cluster.  cluster with no name will\n"
    "                           reset to default.\n"
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

bool FairTree(const ClusterConfig& cluster) {
  const auto& flags = cluster.settings.priority_flags;
  return std::find(flags.begin(), flags.end(), "NO_FAIR_TREE") == flags.end();
}

constexpr OptionSpec kSshareOptions[] = {
    {'a', "all", OptionSpec::kNone},          {'A', "accounts", OptionSpec::kRequired},
    {'e', "helpformat", OptionSpec::kNone},   {'h', "", OptionSpec::kNone},  // -h: no header, as -n
    {'l', "long", OptionSpec::kNone},         {'n', "noheader", OptionSpec::kNone},
    {'o', "format", OptionSpec::kRequired},   {'p', "parsable", OptionSpec::kNone},
    {'P', "parsable2", OptionSpec::kNone},    {'u', "users", OptionSpec::kRequired},
    {'U', "Users", OptionSpec::kNone},        {'v', "verbose", OptionSpec::kNone},
    {'V', "version", OptionSpec::kNone},      {0, "json", OptionSpec::kNone},
    {'M', "clusters", OptionSpec::kRequired}, {'m', "partition", OptionSpec::kNone},
    {0, "help", OptionSpec::kNone},           {0, "usage", OptionSpec::kNone}};

}  // namespace

std::vector<OptionSpec> SshareOptionTable() {
  return {std::begin(kSshareOptions), std::end(kSshareOptions)};
}

int RunSshare(Arguments args) {
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSshareOptions);
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
    if (option == "partition") options.partitions = true;
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
  // One call: no gRPC channel (client.h).
  auto connection = Connect(ConnectMode::kLean);
  if (!connection) return Fail("sshare", connection.error());
  std::string cluster = connection->cluster.settings.cluster_name;
  auto clusters = ClustersRequested(parsed->Last("clusters"), Environment());
  if (clusters)
    if (auto error = ClustersError(*clusters, cluster)) return Fail("sshare", *error);
  v1::ShareList list;
  grpc::Status status = Unary(*connection, "/drover.v1.Controller/Shares",
                              &v1::Controller::Stub::Shares, v1::ShareQuery(), &list);
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
  if (clusters) std::printf("CLUSTER: %s\n", cluster.c_str());  // as sshare -M prints it
  std::fputs(text->c_str(), stdout);
  return 0;
}

}  // namespace drover::cli
