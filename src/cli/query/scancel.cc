// scancel: cancels or signals jobs chosen by id or by filters (name, partition, state, user).
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

constexpr OptionSpec kScancelOptions[] = {{'u', "user", OptionSpec::kRequired},
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

}  // namespace

std::vector<OptionSpec> ScancelOptionTable() {
  return {std::begin(kScancelOptions), std::end(kScancelOptions)};
}

int RunScancel(Arguments args) {
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kScancelOptions);
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
