// Shared by the query commands; see query_common.h.
#include "cli/query/query_common.h"

#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cli/client.h"
#include "common/hostlist.h"
#include "common/text.h"
#include "proto/accounting.grpc.pb.h"
#include "wire/accounting_codec.h"

namespace drover::cli {

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
Result<v1::JobList> ReadHistory(Connection& connection, v1::HistoryQuery query) {
  v1::JobList list;
  do {
    v1::JobList page;
    grpc::Status status = Unary(connection, "/drover.v1.Controller/History",
                                &v1::Controller::Stub::History, query, &page);
    if (!status.ok()) return MakeError(Unreachable(status));
    if (list.time() == 0) list.set_time(page.time());
    for (std::string& job : *page.mutable_jobs()) list.add_jobs(std::move(job));
    query.set_after(page.next());
  } while (!query.after().empty());
  return list;
}

Result<acct::Database> FetchAccounting(const std::shared_ptr<grpc::Channel>& channel) {
  auto stub = v1::Accounting::NewStub(channel);
  v1::AccountingDatabase reply;
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status = stub->Show(&context, v1::AccountingQuery(), &reply);
  if (!status.ok()) return MakeError("Problem talking to the database: " + Unreachable(status));
  return wire::FromProto(reply);
}

std::vector<v1::Job> ParseJobs(const v1::JobList& list) {
  std::vector<v1::Job> jobs(list.jobs_size());
  for (int i = 0; i < list.jobs_size(); ++i) jobs[i].ParseFromString(list.jobs(i));
  return jobs;
}

std::vector<v1::Partition> Partitions(Connection& connection, bool configuration_only) {
  v1::PartitionList list;
  std::vector<v1::Partition> partitions;
  v1::PartitionQuery query;
  query.set_configuration_only(configuration_only);
  if (Unary(connection, "/drover.v1.Controller/ListPartitions",
            &v1::Controller::Stub::ListPartitions, query, &list)
          .ok())
    partitions.assign(list.partitions().begin(), list.partitions().end());
  return partitions;
}

void ExitNow(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(code);
}

int Fail(std::string_view command, const std::string& message) {
  std::fprintf(stderr, "%.*s: error: %s\n", static_cast<int>(command.size()), command.data(),
               message.c_str());
  return 1;
}

namespace {

// Each name once per process: a listing names the same few owners thousands of times, and each
// lookup reads /etc/passwd or /etc/group again (or asks NSS's other sources).
template <typename Lookup>
std::string CachedName(std::unordered_map<uint32_t, std::string>& names, std::mutex& mutex,
                       uint32_t id, Lookup lookup) {
  std::lock_guard lock(mutex);
  auto found = names.find(id);
  if (found != names.end()) return found->second;
  std::string name = lookup(id);
  if (name.empty()) name = std::to_string(id);
  return names.emplace(id, std::move(name)).first->second;
}

}  // namespace

std::string UserName(uint32_t uid) {
  static std::unordered_map<uint32_t, std::string> names;
  static std::mutex mutex;
  return CachedName(names, mutex, uid, [](uint32_t id) -> std::string {
    passwd* entry = getpwuid(id);
    return entry && entry->pw_name ? entry->pw_name : "";
  });
}

std::string GroupName(uint32_t gid) {
  static std::unordered_map<uint32_t, std::string> names;
  static std::mutex mutex;
  return CachedName(names, mutex, gid, [](uint32_t id) -> std::string {
    group* entry = getgrgid(id);
    return entry && entry->gr_name ? entry->gr_name : "";
  });
}

Result<RunningJob> FindRunningJob(Connection& connection, uint64_t job_id) {
  v1::JobQuery query;
  query.mutable_filter()->add_job_ids(job_id);
  v1::JobList list;
  grpc::Status status = ListAllJobs(connection, query, &list);
  if (!status.ok()) return MakeError(Unreachable(status));
  RunningJob running;
  bool found = false;
  for (v1::Job& job : ParseJobs(list))
    if (job.spec().job_id() == job_id) {
      running.job = std::move(job);
      found = true;
    }
  if (!found)
    running.refusal = fmt::format("Invalid job id {}", job_id);
  else if (running.job.state() != "RUNNING")
    running.refusal = fmt::format("Job {} is not running: {}", job_id, running.job.state());
  if (!running.refusal.empty()) return running;
  auto names = ExpandHostlist(running.job.node_list());
  if (!names) return MakeError(names.error());
  v1::NodeQuery node_query;
  for (const std::string& name : *names) node_query.add_names(name);
  v1::NodeList listed;
  status = Unary(connection, "/drover.v1.Controller/ListNodes", &v1::Controller::Stub::ListNodes,
                 node_query, &listed);
  if (!status.ok()) return MakeError(Unreachable(status));
  for (const v1::NodeStatus& node : listed.nodes())
    running.agents.push_back({node.name(), node.agent_address()});
  return running;
}

}  // namespace drover::cli
