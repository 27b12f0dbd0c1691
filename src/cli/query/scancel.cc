// scancel: cancels or signals jobs and steps chosen by id (N, N_T, N_[1-5], N_*, N.S, N_T.S,
// comma lists) or by filters (account, name, nodes, partition, QOS, reservation, state, user,
// WCKey), as Slurm 22.05's scancel does: its options, SCANCEL_* variables, messages and exit
// codes.
#include <fmt/format.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/clusters.h"
#include "cli/commands.h"
#include "cli/query/query_common.h"
#include "common/getopt.h"
#include "common/hostlist.h"
#include "common/job_spec.h"
#include "common/job_state.h"
#include "common/text.h"

namespace drover::cli {
namespace {

constexpr const char* kScancelUsage =
    "Usage: scancel [-A account] [--batch] [--full] [--interactive] [-n job_name]\n"
    "               [-p partition] [-Q] [-q qos] [-R reservation] [-s signal | integer]\n"
    "               [-t PENDING | RUNNING | SUSPENDED] [--usage] [-u user_name]\n"
    "               [--hurry] [-V] [-v] [-w hosts...] [--wckey=wckey]\n"
    "               [job_id[_array_id][.step_id]]\n";

constexpr const char* kScancelHelp =
    "Usage: scancel [OPTIONS] [job_id[_array_id][.step_id]]\n"
    "  -A, --account=account           act only on jobs charging this account\n"
    "  -b, --batch                     signal batch shell for specified job\n"
    "  -f, --full                      signal batch shell and all steps for specified job\n"
    "  -H, --hurry                     avoid burst buffer stage out\n"
    "  -i, --interactive               require response from user for each job\n"
    "  -M, --clusters                  clusters to issue commands to.\n"
    "                                  NOTE: SlurmDBD must be up.\n"
    "  -n, --name=job_name             act only on jobs with this name\n"
    "  -p, --partition=partition       act only on jobs in this partition\n"
    "  -Q, --quiet                     disable warnings\n"
    "  -q, --qos=qos                   act only on jobs with this quality of service\n"
    "  -R, --reservation=reservation   act only on jobs with this reservation\n"
    "      --sibling=cluster_name      remove an active sibling job from a federated job\n"
    "  -s, --signal=name | integer     signal to send to job, default is SIGKILL\n"
    "  -t, --state=states              act only on jobs in this state.  Valid job\n"
    "                                  states are PENDING, RUNNING and SUSPENDED\n"
    "  -u, --user=user_name            act only on jobs of this user\n"
    "  -V, --version                   output version information and exit\n"
    "  -v, --verbose                   verbosity level\n"
    "  -w, --nodelist                  act only on jobs on these nodes\n"
    "      --wckey=wckey               act only on jobs with this workload\n"
    "                                  charactization key\n"
    "\n"
    "Help options:\n"
    "  --help                          show this help message\n"
    "  --usage                         display brief usage message\n";

constexpr OptionSpec kScancelOptions[] = {{'A', "account", OptionSpec::kRequired},
                                          {'b', "batch", OptionSpec::kNone},
                                          {0, "ctld", OptionSpec::kNone},
                                          {'f', "full", OptionSpec::kNone},
                                          {'H', "hurry", OptionSpec::kNone},
                                          {'i', "interactive", OptionSpec::kNone},
                                          {'M', "clusters", OptionSpec::kRequired},
                                          {0, "cluster", OptionSpec::kRequired},
                                          {'n', "name", OptionSpec::kRequired},
                                          {0, "jobname", OptionSpec::kRequired},
                                          {0, "me", OptionSpec::kNone},
                                          {'w', "nodelist", OptionSpec::kRequired},
                                          {'p', "partition", OptionSpec::kRequired},
                                          {'q', "qos", OptionSpec::kRequired},
                                          {'Q', "quiet", OptionSpec::kNone},
                                          {'R', "reservation", OptionSpec::kRequired},
                                          {0, "sibling", OptionSpec::kRequired},
                                          {'s', "signal", OptionSpec::kRequired},
                                          {'t', "state", OptionSpec::kRequired},
                                          {'u', "user", OptionSpec::kRequired},
                                          {'v', "verbose", OptionSpec::kNone},
                                          {'V', "version", OptionSpec::kNone},
                                          {0, "wckey", OptionSpec::kRequired},
                                          {0, "help", OptionSpec::kNone},
                                          {0, "usage", OptionSpec::kNone}};

// One job id operand, expanded: a job, an array task, or a step of either.
struct Target {
  uint64_t job_id = 0;
  uint32_t task_id = kNoArrayTask;
  std::optional<uint32_t> step_id;
  std::string text;  // as scancel names it in its messages: 12, 12_3, 12.1
};

struct ScancelOptions {
  v1::CancelRequest request;
  std::vector<Target> targets;
  std::optional<std::string> clusters, sibling;
  bool interactive = false, quiet = false;
  int verbose = 0;
};

// A signal by number or name, with or without SIG, any case.
std::optional<int> ParseSignalName(const std::string& value) {
  std::string name = ToLower(value);
  if (name.starts_with("sig")) name = name.substr(3);
  if (auto numeric = ParseUint64(name))
    return *numeric > 0 && *numeric < static_cast<uint64_t>(NSIG)
               ? std::optional<int>(static_cast<int>(*numeric))
               : std::nullopt;
  for (int s = 1; s < NSIG; ++s)
    if (const char* abbrev = sigabbrev_np(s); abbrev && name == ToLower(abbrev)) return s;
  return std::nullopt;
}

std::optional<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<uint64_t> LeadingNumber(std::string_view& text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  auto number = ParseUint64(text.substr(0, digits));
  text.remove_prefix(digits);
  return number;
}

// One comma-separated piece: N, N_T, N_*, N_[list] (no step), each but the list with .S.
bool ParseTarget(std::string_view piece, std::vector<Target>& targets) {
  std::string_view rest = piece;
  auto job = LeadingNumber(rest);
  if (!job || *job == 0) return false;
  Target target{*job, kNoArrayTask, std::nullopt, std::string(piece)};
  if (rest.starts_with("_[")) {
    if (!rest.ends_with("]")) return false;
    auto tasks = ExpandHostlist(rest.substr(1));
    if (!tasks || tasks->empty()) return false;
    for (const std::string& task : *tasks) {
      auto id = ParseUint64(task);
      if (!id || *id >= kNoArrayTask) return false;
      targets.push_back(
          {*job, static_cast<uint32_t>(*id), std::nullopt, fmt::format("{}_{}", *job, *id)});
    }
    return true;
  }
  if (rest.starts_with("_*")) {
    rest.remove_prefix(2);  // the whole array: its job ID
  } else if (rest.starts_with("_")) {
    rest.remove_prefix(1);
    auto task = LeadingNumber(rest);
    if (!task || *task >= kNoArrayTask) return false;
    target.task_id = static_cast<uint32_t>(*task);
  }
  if (rest.starts_with(".")) {
    rest.remove_prefix(1);
    auto step = LeadingNumber(rest);
    if (!step || *step >= kNoArrayTask) return false;
    target.step_id = static_cast<uint32_t>(*step);
  }
  if (!rest.empty()) return false;
  targets.push_back(std::move(target));
  return true;
}

// SCANCEL_BATCH and its kind: true/T or false/F, anything else an error that changes nothing.
std::optional<bool> EnvFlag(const std::map<std::string, std::string>& env, const char* name) {
  auto it = env.find(name);
  if (it == env.end()) return std::nullopt;
  if (EqualsIgnoreCase(it->second, "true") || EqualsIgnoreCase(it->second, "T")) return true;
  if (EqualsIgnoreCase(it->second, "false") || EqualsIgnoreCase(it->second, "F")) return false;
  std::fprintf(stderr, "scancel: error: Unrecognized %s value: %s\n", name, it->second.c_str());
  return std::nullopt;
}

// Slurm's states by name or abbreviation, as the controller reads them; nullopt: not one.
std::optional<std::string> StateName(const std::string& value) {
  std::string state = value;
  for (char& c : state) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  static const std::map<std::string, std::string> kCodes = {
      {"PD", "PENDING"}, {"R", "RUNNING"}, {"S", "SUSPENDED"}};
  if (auto it = kCodes.find(state); it != kCodes.end()) state = it->second;
  if (!ParseJobState(state)) return std::nullopt;
  return state;
}

// The variables first (SCANCEL_*, SLURM_CLUSTERS), the command line over them.
std::optional<int> ApplyEnvironment(ScancelOptions& o) {
  const auto env = Environment();
  v1::JobFilter* filter = o.request.mutable_filter();
  auto text = [&](const char* name) -> const std::string* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : &it->second;
  };
  if (auto* v = text("SCANCEL_ACCOUNT")) filter->set_account(ToLower(*v));
  if (auto flag = EnvFlag(env, "SCANCEL_BATCH")) o.request.set_batch_only(*flag);
  if (auto flag = EnvFlag(env, "SCANCEL_FULL")) o.request.set_full(*flag);
  if (auto flag = EnvFlag(env, "SCANCEL_INTERACTIVE")) o.interactive = *flag;
  if (auto flag = EnvFlag(env, "SCANCEL_VERBOSE")) o.verbose = *flag ? 1 : 0;
  if (auto* v = text("SCANCEL_NAME")) filter->set_name(*v);
  if (auto* v = text("SCANCEL_PARTITION")) filter->set_partition(*v);
  if (auto* v = text("SCANCEL_QOS")) filter->set_qos(ToLower(*v));
  if (auto* v = text("SCANCEL_USER")) filter->set_user(*v);
  if (auto* v = text("SCANCEL_WCKEY")) filter->set_wckey(*v);
  if (auto* v = text("SCANCEL_STATE")) {
    auto state = StateName(*v);
    if (!state) {
      std::fprintf(stderr,
                   "Unrecognized SCANCEL_STATE value: %s\nValid job states are PENDING, "
                   "RUNNING, and SUSPENDED\n",
                   v->c_str());
      return 1;
    }
    filter->set_state(*state);
  }
  o.clusters = ClustersRequested(std::nullopt, env);
  return std::nullopt;
}

std::optional<int> ApplyOption(const std::string& option, const std::string& value,
                               ScancelOptions& o) {
  v1::JobFilter* filter = o.request.mutable_filter();
  if (option == "account") filter->set_account(ToLower(value));
  if (option == "batch") o.request.set_batch_only(true);
  if (option == "full") o.request.set_full(true);
  if (option == "interactive") o.interactive = true;
  if (option == "clusters" || option == "cluster") o.clusters = value;
  if (option == "name" || option == "jobname") filter->set_name(value);
  if (option == "me") filter->set_user(Me().user);
  if (option == "user") filter->set_user(value);
  if (option == "partition") filter->set_partition(value);
  if (option == "qos") filter->set_qos(ToLower(value));
  if (option == "reservation") filter->set_reservation(value);
  if (option == "wckey") filter->set_wckey(value);
  if (option == "sibling") o.sibling = value;
  if (option == "quiet") o.quiet = true;
  if (option == "verbose") ++o.verbose;
  if (option == "nodelist") {
    // A name with '/' is a file of host names, as Slurm reads it.
    std::string list = value;
    if (value.find('/') != std::string::npos) {
      auto content = ReadWholeFile(value);
      if (!content) return Fail("scancel", fmt::format("Unable to open file {}", value));
      list = Join(Split(Trim(*content), '\n'), ",");
    }
    auto nodes = ExpandHostlist(list);
    if (!nodes) return Fail("scancel", fmt::format("Invalid hostlist: {}", value));
    for (const std::string& node : *nodes) filter->add_nodes(node);
  }
  if (option == "state") {
    auto state = StateName(value);
    if (!state) {
      std::fprintf(stderr,
                   "Invalid job state specified: %s\nValid job states are PENDING, RUNNING, "
                   "and SUSPENDED\n",
                   value.c_str());
      return 1;
    }
    filter->set_state(*state);
  }
  if (option == "signal") {
    auto number = ParseSignalName(value);
    if (!number) {
      std::fprintf(stderr, "Unknown job signal: %s\n", value.c_str());
      return 1;
    }
    o.request.set_signal(*number);
  }
  return std::nullopt;
}

std::optional<int> CheckOptions(const ParsedOptions& parsed, ScancelOptions& o) {
  for (const std::string& operand : parsed.operands)
    for (const std::string& piece : SplitTopLevel(operand, ','))
      if (!ParseTarget(piece, o.targets)) return Fail("scancel", "Invalid job id " + operand);
  const v1::JobFilter& filter = o.request.filter();
  if (!filter.user().empty() && !::getpwnam(filter.user().c_str()) &&
      !(ParseUint64(filter.user()) && ::getpwuid(static_cast<uid_t>(*ParseUint64(filter.user())))))
    return Fail("scancel", "Invalid user name: " + filter.user());
  if (o.targets.empty() && filter.account().empty() && filter.name().empty() &&
      filter.nodes_size() == 0 && filter.partition().empty() && filter.qos().empty() &&
      filter.reservation().empty() && filter.state().empty() && filter.user().empty() &&
      filter.wckey().empty())
    return Fail("scancel", "No job identification provided");
  return std::nullopt;
}

std::string Describe(const Target& target, int signal) {
  const char* what = target.step_id ? "step" : "job";
  return signal ? fmt::format("Signal {} to {} {}", signal, what, target.text)
                : fmt::format("Terminating {} {}", what, target.text);
}

// -i: "Cancel job_id=... name=... partition=... [y/n]? " until y or n; end of input is no.
bool Confirmed(const std::string& id, const v1::Job* job) {
  for (;;) {
    std::printf("Cancel %s=%s name=%s partition=%s [y/n]? ",
                id.find('.') != std::string::npos ? "step_id" : "job_id", id.c_str(),
                job ? job->spec().name().c_str() : "(null)",
                job ? job->partition_name().c_str() : "(null)");
    std::fflush(stdout);
    std::string line;
    if (!std::getline(std::cin, line)) return false;
    if (!line.empty() && (line[0] == 'y' || line[0] == 'Y')) return true;
    if (!line.empty() && (line[0] == 'n' || line[0] == 'N')) return false;
  }
}

// Whether the filter's fields that the controller's job list does not apply select `job`.
bool Selected(const v1::Job& job, const v1::JobFilter& filter) {
  const v1::JobSpec& spec = job.spec();
  std::string partition = !job.partition_name().empty() ? job.partition_name()
                          : spec.partitions_size() > 0  ? spec.partitions(0)
                                                        : "";
  std::string qos = spec.qos().empty() ? "normal" : spec.qos();
  auto differs = [](const std::string& wanted, const std::string& value) {
    return !wanted.empty() && wanted != value;
  };
  if (differs(filter.name(), spec.name()) || differs(filter.partition(), partition) ||
      differs(filter.account(), spec.account()) || differs(filter.qos(), qos) ||
      differs(filter.reservation(), spec.reservation()) || !filter.wckey().empty())
    return false;
  if (filter.nodes_size() == 0) return true;
  auto nodes = ExpandHostlist(job.node_list());
  if (!nodes) return false;
  for (const std::string& node : *nodes)
    if (std::find(filter.nodes().begin(), filter.nodes().end(), node) != filter.nodes().end())
      return true;
  return false;
}

// The jobs a request names, for -i and --sibling: the controller's active jobs that its filter
// selects, as the controller would.
std::vector<Target> Matching(Connection& connection, const v1::CancelRequest& request,
                             std::map<std::string, v1::Job>& jobs) {
  v1::JobQuery query;
  *query.mutable_filter() = request.filter();
  v1::JobList list;
  std::vector<Target> found;
  if (!ListAllJobs(connection, query, &list).ok()) return found;
  for (const v1::Job& job : ParseJobs(list)) {
    auto state = ParseJobState(job.state());
    if ((state && IsFinal(*state)) || !Selected(job, request.filter())) continue;
    const v1::JobSpec& spec = job.spec();
    bool task = spec.array_task_id() != kNoArrayTask;
    Target target{task ? spec.array_job_id() : spec.job_id(),
                  task ? spec.array_task_id() : kNoArrayTask, std::nullopt,
                  task ? fmt::format("{}_{}", spec.array_job_id(), spec.array_task_id())
                       : std::to_string(spec.job_id())};
    jobs[target.text] = job;
    found.push_back(std::move(target));
  }
  return found;
}

// One request for one target (its own errors, as Slurm reports each ID), or for the filter.
bool Send(Connection& connection, v1::CancelRequest request, const Target* target,
          const ScancelOptions& o) {
  if (target) {
    v1::JobFilter* filter = request.mutable_filter();
    filter->clear_job_ids();
    filter->clear_array_tasks();
    if (target->step_id) {
      v1::StepTarget* step = request.add_steps();
      step->set_job_id(target->job_id);
      step->set_task_id(target->task_id);
      step->set_step_id(*target->step_id);
    } else if (target->task_id != kNoArrayTask) {
      v1::JobFilter::ArrayTask* task = filter->add_array_tasks();
      task->set_array_job_id(target->job_id);
      task->set_task_id(target->task_id);
    } else {
      filter->add_job_ids(target->job_id);
    }
    if (o.verbose > 0)
      std::fprintf(stderr, "scancel: %s\n", Describe(*target, request.signal()).c_str());
  }
  v1::ActionReply reply;
  grpc::Status status = Unary(connection, "/drover.v1.Controller/Cancel",
                              &v1::Controller::Stub::Cancel, request, &reply);
  if (status.ok()) return true;
  std::string error = Unreachable(status);
  // A filter that matches no job is not an error: nothing was asked of any job.
  if (!target && error == "Invalid job id specified") return true;
  bool gone =
      error == "Invalid job id specified" || error == "Job/step already completing or completed";
  if (o.quiet && gone) return false;
  if (!target) {
    Fail("scancel", error);
  } else {
    Fail("scancel", fmt::format("Kill job error on job id {}: {}", target->text, error));
  }
  return false;
}

}  // namespace

std::vector<OptionSpec> ScancelOptionTable() {
  return {std::begin(kScancelOptions), std::end(kScancelOptions)};
}

int RunScancel(Arguments args) {
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kScancelOptions);
  if (!parsed) return OptionError("scancel", parsed.error());
  if (auto code = HelpUsageVersion(*parsed, kScancelHelp, kScancelUsage)) return *code;
  ScancelOptions o;
  SetCaller(o.request.mutable_caller());
  if (auto code = ApplyEnvironment(o)) return *code;
  for (const auto& [option, value] : parsed->options)
    if (auto code = ApplyOption(option, value, o)) return *code;
  if (auto code = CheckOptions(*parsed, o)) return *code;
  // One call, or one a job: no gRPC channel (client.h).
  auto connection = Connect(ConnectMode::kLean);
  if (!connection) return Fail("scancel", connection.error());
  if (o.clusters)
    if (auto refused = ClustersError(*o.clusters, connection->cluster.settings.cluster_name))
      return Fail("scancel", *refused);
  std::map<std::string, v1::Job> jobs;
  std::vector<Target> targets = o.targets;
  bool per_job = !targets.empty() || o.interactive || o.sibling;
  // -i names each job's name and partition; a filter alone names no job until looked up.
  if (o.interactive || (targets.empty() && per_job)) {
    std::vector<Target> found = Matching(*connection, o.request, jobs);
    if (targets.empty()) targets = std::move(found);
  }
  if (!per_job) return Send(*connection, o.request, nullptr, o) ? 0 : 1;
  int rc = 0;
  for (const Target& target : targets) {
    // Without federation every job is the origin cluster's own: none has a sibling to remove.
    if (o.sibling) {
      rc = Fail("scancel",
                fmt::format("Kill job error on job id {}: Not a valid federated job", target.text));
      continue;
    }
    auto job = jobs.find(target.text);
    if (o.interactive && !Confirmed(target.text, job == jobs.end() ? nullptr : &job->second))
      continue;
    if (!Send(*connection, o.request, &target, o)) rc = 1;
  }
  return rc;
}

}  // namespace drover::cli
