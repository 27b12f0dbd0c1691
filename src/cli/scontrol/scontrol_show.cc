// `scontrol show ENTITY [NAME]` and `scontrol ping`: the controller's records through the
// formatters of scontrol_format.h, and hostlist expansion and compression.
#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>

#include <cstdio>
#include <ctime>

#include "cli/client.h"
#include "cli/scontrol/scontrol.h"
#include "cli/scontrol/scontrol_format.h"
#include "cli/scontrol/scontrol_request.h"
#include "common/hostlist.h"
#include "common/text.h"

namespace drover::cli::scontrol {
namespace {

std::string UserName(uint32_t uid) {
  if (passwd* entry = getpwuid(uid); entry && entry->pw_name) return entry->pw_name;
  return std::to_string(uid);
}

std::string GroupName(uint32_t gid) {
  if (group* entry = getgrgid(gid); entry && entry->gr_name) return entry->gr_name;
  return std::to_string(gid);
}

int Print(const std::string& text) {
  std::fputs(text.c_str(), stdout);
  return 0;
}

int Error(const std::string& line) {
  std::fprintf(stderr, "%s\n", line.c_str());
  return 1;
}

std::vector<v1::Job> ParseJobs(const v1::JobList& list) {
  std::vector<v1::Job> jobs(list.jobs_size());
  for (int i = 0; i < list.jobs_size(); ++i) jobs[i].ParseFromString(list.jobs(i));
  return jobs;
}

struct Session {
  Session() = default;
  Session(const Session&) = delete;  // ctx.cluster points into connection
  Connection connection;
  ShowContext ctx;
};

// Fills `session` in place: its context points into its own configuration.
Status Open(const Flags& flags, Session& session) {
  auto connection = Connect();
  if (!connection) return std::move(connection).take_error();
  session.connection = std::move(*connection);
  session.ctx.cluster = &session.connection.cluster;
  session.ctx.details = flags.details;
  session.ctx.user_name = UserName;
  session.ctx.group_name = GroupName;
  session.ctx.version = flags.version;
  session.ctx.now = std::time(nullptr);
  return Ok{};
}

Result<std::vector<v1::Job>> LoadJobs(Session& session, bool all_states) {
  v1::JobQuery query;
  query.set_all_states(all_states);
  query.set_with_plan(true);  // StartTime and SchedNodeList of waiting jobs
  v1::JobList list;
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status = session.connection.stub->ListJobs(&context, query, &list);
  if (!status.ok()) return MakeError(Unreachable(status));
  if (list.time()) session.ctx.now = list.time();
  for (const v1::PlannedStart& plan : list.planned()) session.ctx.planned[plan.job_id()] = plan;
  return ParseJobs(list);
}

void LoadPriorities(Session& session) {
  v1::PriorityList priorities;
  grpc::ClientContext context;
  SetDeadline(context);
  if (session.connection.stub->Priorities(&context, v1::PriorityQuery(), &priorities).ok())
    for (const v1::JobPriority& priority : priorities.jobs())
      session.ctx.priorities[priority.job_id()] = priority.priority();
}

bool Selected(const v1::Job& job, const v1::JobFilter& filter) {
  const v1::JobSpec& spec = job.spec();
  for (uint64_t id : filter.job_ids())
    if (spec.job_id() == id || spec.array_job_id() == id) return true;
  for (const auto& task : filter.array_tasks())
    if (spec.array_job_id() == task.array_job_id() && spec.array_task_id() == task.task_id())
      return true;
  return false;
}

int ShowJobs(const Flags& flags, std::span<const std::string> names) {
  v1::JobFilter filter;
  for (const std::string& name : names)
    for (const std::string& id : Split(name, ','))
      if (!Trim(id).empty() && !AddJobId(Trim(id), &filter))
        return Error("slurm_load_jobs error: Invalid job id specified");
  Session session;
  if (Status opened = Open(flags, session); !opened)
    return Error("scontrol: error: " + opened.error());
  auto jobs = LoadJobs(session, true);
  if (!jobs) return Error("slurm_load_jobs error: " + jobs.error());
  std::vector<v1::Job> shown;
  for (v1::Job& job : *jobs)
    if (names.empty() || Selected(job, filter)) shown.push_back(std::move(job));
  if (!names.empty() && shown.empty())
    return Error("slurm_load_jobs error: Invalid job id specified");
  LoadPriorities(session);
  if (flags.json) return Print(JobsJson(shown, session.ctx));
  if (shown.empty()) return Print("No jobs in the system\n");
  std::vector<Record> records;
  for (const v1::Job& job : shown) records.push_back(JobRecord(job, session.ctx));
  return Print(Render(records, flags.one_liner));
}

int ShowNodes(const Flags& flags, std::span<const std::string> names) {
  Session session;
  if (Status opened = Open(flags, session); !opened)
    return Error("scontrol: error: " + opened.error());
  v1::NodeList nodes;
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status = session.connection.stub->ListNodes(&context, v1::NodeQuery(), &nodes);
  if (!status.ok()) return Error("slurm_load_node error: " + Unreachable(status));
  auto jobs = LoadJobs(session, false);
  if (!jobs) return Error("slurm_load_jobs error: " + jobs.error());
  std::vector<std::string> wanted;
  for (const std::string& name : names) {
    auto expanded = ExpandHostlist(name);
    if (!expanded) return Error("scontrol: error: " + expanded.error());
    wanted.insert(wanted.end(), expanded->begin(), expanded->end());
  }
  std::vector<v1::NodeStatus> shown;
  for (const v1::NodeStatus& node : nodes.nodes())
    if (wanted.empty() || std::find(wanted.begin(), wanted.end(), node.name()) != wanted.end())
      shown.push_back(node);
  if (!wanted.empty() && shown.empty()) return Error(fmt::format("Node {} not found", names[0]));
  if (flags.json) return Print(NodesJson(shown, *jobs, session.ctx));
  if (shown.empty()) return Print("No nodes in the system\n");
  std::vector<Record> records;
  for (const v1::NodeStatus& node : shown)
    records.push_back(
        NodeRecord(node, session.connection.cluster.FindNode(node.name()), *jobs, session.ctx));
  return Print(Render(records, flags.one_liner));
}

int ShowPartitions(const Flags& flags, std::span<const std::string> names) {
  Session session;
  if (Status opened = Open(flags, session); !opened)
    return Error("scontrol: error: " + opened.error());
  v1::PartitionList list;
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status =
      session.connection.stub->ListPartitions(&context, v1::PartitionQuery(), &list);
  if (!status.ok()) return Error("slurm_load_partitions error: " + Unreachable(status));
  std::vector<v1::Partition> shown;
  for (const v1::Partition& partition : list.partitions()) {
    if (!names.empty() && partition.name() != names[0]) continue;
    if (names.empty() && partition.hidden() && !flags.all) continue;
    shown.push_back(partition);
  }
  if (!names.empty() && shown.empty())
    return Error(fmt::format("Partition {} not found", names[0]));
  if (flags.json) return Print(PartitionsJson(shown, session.ctx));
  if (shown.empty()) return Print("No partitions in the system\n");
  std::vector<Record> records;
  for (const v1::Partition& partition : shown)
    records.push_back(PartitionRecord(partition, session.ctx));
  return Print(Render(records, flags.one_liner));
}

int ShowReservations(const Flags& flags, std::span<const std::string> names) {
  Session session;
  if (Status opened = Open(flags, session); !opened)
    return Error("scontrol: error: " + opened.error());
  v1::ReservationQuery query;
  if (!names.empty()) query.set_name(names[0]);
  v1::ReservationList list;
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status = session.connection.stub->ListReservations(&context, query, &list);
  if (status.error_code() == grpc::StatusCode::NOT_FOUND)
    return Error(fmt::format("Reservation {} not found", names[0]));
  if (!status.ok()) return Error("slurm_load_reservations error: " + Unreachable(status));
  if (list.time()) session.ctx.now = list.time();
  std::vector<v1::Reservation> shown(list.reservations().begin(), list.reservations().end());
  if (flags.json) return Print(ReservationsJson(shown, session.ctx));
  if (shown.empty()) return Print("No reservations in the system\n");
  std::vector<Record> records;
  for (const v1::Reservation& reservation : shown)
    records.push_back(ReservationRecord(reservation, session.ctx));
  return Print(Render(records, flags.one_liner));
}

int ShowTopology(const Flags& flags) {
  Session session;
  if (Status opened = Open(flags, session); !opened)
    return Error("scontrol: error: " + opened.error());
  const ClusterConfig& cluster = session.connection.cluster;
  if (cluster.topology.switches.empty()) return Print("No switches in the system\n");
  std::string out;
  for (const SwitchConfig& entry : cluster.topology.switches) {
    std::vector<std::string> nodes, children;
    for (int node : entry.subtree_nodes) nodes.push_back(cluster.nodes[node].name);
    for (int child : entry.children) children.push_back(cluster.topology.switches[child].name);
    out += fmt::format("SwitchName={} Level={} LinkSpeed={} Nodes={}", entry.name, entry.level,
                       entry.link_speed, CompressHostlist(nodes));
    if (!children.empty()) out += " Switches=" + CompressHostlist(children);
    out += "\n";
  }
  return Print(out);
}

// The names of a hostlist argument, or of SLURM_JOB_NODELIST without one (as Slurm does).
Result<std::vector<std::string>> HostNames(std::span<const std::string> names) {
  std::string text = names.empty() ? "" : Join({names.begin(), names.end()}, ",");
  if (text.empty())
    if (const char* env = std::getenv("SLURM_JOB_NODELIST")) text = env;
  if (text.empty()) return MakeError("hostlist is empty");
  return ExpandHostlist(text);
}

std::string PingLine(const ClusterConfig& cluster, bool up, const std::string& host) {
  std::string name = host;
  if (!cluster.settings.controller_hosts.empty())
    name = cluster.settings.controller_hosts.front().name;
  return fmt::format("Slurmctld(primary) at {} is {}\n", name, up ? "UP" : "DOWN");
}

// The ping line, and whether the controller answered.
std::pair<std::string, bool> Ping(Session& session) {
  v1::PingReply reply;
  grpc::ClientContext context;
  SetDeadline(context, 10);
  bool up = session.connection.stub->Ping(&context, v1::PingRequest(), &reply).ok();
  return {PingLine(session.connection.cluster, up, reply.host()), up};
}

}  // namespace

int RunShow(const Flags& flags, std::span<const std::string> words) {
  if (words.empty()) return Error("scontrol: error: show what? (job, node, partition, ...)");
  std::string entity = ToLower(words[0]);
  std::span<const std::string> names = words.subspan(1);
  if (entity == "job" || entity == "jobs" || entity == "jobid") return ShowJobs(flags, names);
  if (entity == "node" || entity == "nodes" || entity == "nodename") return ShowNodes(flags, names);
  if (entity == "partition" || entity == "partitions" || entity == "partitionname")
    return ShowPartitions(flags, names);
  if (entity == "reservation" || entity == "reservations" || entity == "res")
    return ShowReservations(flags, names);
  if (entity == "topology") return ShowTopology(flags);
  if (entity == "hostnames") {
    auto hosts = HostNames(names);
    if (!hosts) return Error("scontrol: error: " + hosts.error());
    return Print(Join(*hosts, "\n") + "\n");
  }
  if (entity == "hostlist" || entity == "hostlistsorted") {
    auto hosts = HostNames(names);
    if (!hosts) return Error("scontrol: error: " + hosts.error());
    return Print(
        (entity == "hostlist" ? CompressHostlist(*hosts) : CompressHostlistSorted(*hosts)) + "\n");
  }
  if (entity == "config") {
    Session session;
    if (Status opened = Open(flags, session); !opened)
      return Error("scontrol: error: " + opened.error());
    auto [line, up] = Ping(session);
    const ClusterConfig& cluster = session.connection.cluster;
    Print(ConfigText(cluster, session.ctx.now, cluster.conf_path) + "\n" + line);
    return 0;
  }
  return Error(fmt::format(
      "scontrol: error: invalid entity: {} for keyword: show (Drover shows job, node, partition, "
      "reservation, config, topology, hostnames, hostlist, hostlistsorted)",
      words[0]));
}

int RunPing(const Flags& flags) {
  Session session;
  if (Status opened = Open(flags, session); !opened)
    return Error("scontrol: error: " + opened.error());
  auto [line, up] = Ping(session);
  std::fputs(line.c_str(), stdout);
  return up ? 0 : 1;
}

}  // namespace drover::cli::scontrol
