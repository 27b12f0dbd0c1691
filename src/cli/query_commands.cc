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
#include "cli/getopt.h"
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

}  // namespace

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
                                          {0, "help", OptionSpec::kNone},
                                          {0, "usage", OptionSpec::kNone}};
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSpecs);
  if (!parsed) return OptionError("squeue", parsed.error());
  SqueueOptions options;
  v1::JobQuery query;
  std::string user, partition, name;
  for (const auto& [option, value] : parsed->options) {
    if (option == "help" || option == "usage") {
      std::printf(
          "Usage: squeue [-h] [-l] [-r] [--start] [-j jobs] [-u users] [--me] [-t states]\n"
          "              [-p partitions] [-n names] [-o format] [-S fields]\n");
      return 0;
    }
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
  v1::JobList list;
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status = connection->stub->ListJobs(&context, query, &list);
  if (!status.ok()) return Fail("squeue", Unreachable(status));
  std::vector<v1::Job> jobs;
  std::set<std::string> users, partitions, names;
  for (const std::string& item : CommaList(user)) users.insert(item);
  for (const std::string& item : CommaList(partition)) partitions.insert(item);
  for (const std::string& item : CommaList(name)) names.insert(item);
  for (v1::Job& job : Parse(list)) {
    if (!users.empty() && !users.count(job.spec().user())) continue;
    if (!names.empty() && !names.count(job.spec().name())) continue;
    std::string job_partition = job.partition_name().empty() && job.spec().partitions_size()
                                    ? job.spec().partitions(0)
                                    : job.partition_name();
    if (!partitions.empty() && !partitions.count(job_partition)) continue;
    jobs.push_back(std::move(job));
  }
  v1::PriorityList priorities;
  grpc::ClientContext priority_context;
  SetDeadline(priority_context);
  if (connection->stub->Priorities(&priority_context, v1::PriorityQuery(), &priorities).ok())
    for (const v1::JobPriority& priority : priorities.jobs())
      options.priorities[priority.job_id()] = priority.priority();
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
                                          {'v', "verbose", OptionSpec::kNone},
                                          {0, "help", OptionSpec::kNone},
                                          {0, "usage", OptionSpec::kNone}};
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSpecs);
  if (!parsed) return OptionError("sinfo", parsed.error());
  SinfoOptions options;
  std::set<std::string> only;
  for (const auto& [option, value] : parsed->options) {
    if (option == "help" || option == "usage") {
      std::printf("Usage: sinfo [-h] [-l] [-N] [-R] [-s] [-a] [-e] [-p partitions] [-o format]\n");
      return 0;
    }
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
                                          {0, "help", OptionSpec::kNone},
                                          {0, "usage", OptionSpec::kNone}};
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSpecs);
  if (!parsed) return OptionError("sacct", parsed.error());
  SacctOptions options;
  v1::HistoryQuery query;
  bool all_users = false;
  std::string user;
  for (const auto& [option, value] : parsed->options) {
    if (option == "help" || option == "usage") {
      std::printf(
          "Usage: sacct [-j jobs] [-u users] [-a] [-o fields] [-b] [-p|-P] [-n] [-X] [-D]\n"
          "             [-S time] [-E time] [-s states]\n");
      return 0;
    }
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
                                          {0, "help", OptionSpec::kNone},
                                          {0, "usage", OptionSpec::kNone}};
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSpecs);
  if (!parsed) return OptionError("scancel", parsed.error());
  v1::CancelRequest request;
  SetCaller(request.mutable_caller());
  bool quiet = false;
  for (const auto& [option, value] : parsed->options) {
    if (option == "help" || option == "usage") {
      std::printf(
          "Usage: scancel [-s signal] [-b] [-u user] [--me] [-n name] [-p partition] [-t state]\n"
          "               [job_id[_array_id]...]\n");
      return 0;
    }
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
