// `scontrol show ENTITY [NAME]` and `scontrol ping`: the controller's records through the
// formatters of scontrol_format.h, and hostlist expansion and compression.
#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>

#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>

#include "cli/client.h"
#include "cli/query/query_common.h"
#include "cli/scontrol/scontrol.h"
#include "cli/scontrol/scontrol_format.h"
#include "cli/scontrol/scontrol_keywords.h"
#include "cli/scontrol/scontrol_request.h"
#include "common/hostlist.h"
#include "common/text.h"

namespace drover::cli::scontrol {
namespace {

using cli::GroupName;
using cli::UserName;

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
Status Open(const Flags& flags, Session& session, bool find_controller = true) {
  // `show` is a few calls: no gRPC channel (client.h).
  auto connection = Connect(ConnectMode::kLean, find_controller);
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

// `filter`: only these jobs, chosen by the controller (none: every job).
Result<std::vector<v1::Job>> LoadJobs(Session& session, bool all_states,
                                      const v1::JobFilter* filter = nullptr) {
  v1::JobQuery query;
  query.set_all_states(all_states);
  if (filter) *query.mutable_filter() = *filter;
  query.set_with_plan(true);  // StartTime and SchedNodeList of waiting jobs
  v1::JobList list;
  grpc::Status status = ListAllJobs(session.connection, query, &list);
  if (!status.ok()) return MakeError(Unreachable(status));
  if (list.time()) session.ctx.now = list.time();
  for (const v1::PlannedStart& plan : list.planned()) session.ctx.planned[plan.job_id()] = plan;
  return ParseJobs(list);
}

void LoadPriorities(Session& session, const v1::JobFilter* filter = nullptr) {
  v1::PriorityList priorities;
  v1::PriorityQuery query;
  if (filter) *query.mutable_filter() = *filter;
  if (Unary(session.connection, "/drover.v1.Controller/Priorities",
            &v1::Controller::Stub::Priorities, query, &priorities)
          .ok())
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

int ShowLicenses(const Flags& flags, const std::optional<std::string>& name) {
  Session session;
  if (Status opened = Open(flags, session); !opened)
    return Error("scontrol: error: " + opened.error());
  auto jobs = LoadJobs(session, false);
  if (!jobs) return Error("slurm_load_license error: " + jobs.error());
  return Print(LicensesText(session.connection.cluster, *jobs, name, flags.one_liner));
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
  const v1::JobFilter* only = names.empty() ? nullptr : &filter;
  auto jobs = LoadJobs(session, true, only);
  if (!jobs) return Error("slurm_load_jobs error: " + jobs.error());
  std::vector<v1::Job> shown;
  for (v1::Job& job : *jobs)
    if (names.empty() || Selected(job, filter)) shown.push_back(std::move(job));
  if (!names.empty() && shown.empty())
    return Error("slurm_load_jobs error: Invalid job id specified");
  LoadPriorities(session, only);
  if (flags.json) return Print(JobsJson(shown, session.ctx));
  if (shown.empty()) return Print("No jobs in the system\n");
  std::vector<Record> records;
  for (const v1::Job& job : shown) records.push_back(JobRecord(job, session.ctx));
  return Print(Render(records, flags.one_liner));
}

// The controller's node and partition records; the error is the line scontrol prints.
// The nodes `names` names (none: all of them).
Result<v1::NodeList> LoadNodes(Session& session, std::span<const std::string> names = {}) {
  v1::NodeList nodes;
  v1::NodeQuery query;
  for (const std::string& name : names) query.add_names(name);
  grpc::Status status = Unary(session.connection, "/drover.v1.Controller/ListNodes",
                              &v1::Controller::Stub::ListNodes, query, &nodes);
  if (!status.ok()) return MakeError("slurm_load_node error: " + Unreachable(status));
  return nodes;
}

Result<v1::PartitionList> LoadPartitions(Session& session) {
  v1::PartitionList list;
  grpc::Status status = Unary(session.connection, "/drover.v1.Controller/ListPartitions",
                              &v1::Controller::Stub::ListPartitions, v1::PartitionQuery(), &list);
  if (!status.ok()) return MakeError("slurm_load_partitions error: " + Unreachable(status));
  return list;
}

int ShowNodes(const Flags& flags, std::span<const std::string> names) {
  Session session;
  if (Status opened = Open(flags, session); !opened)
    return Error("scontrol: error: " + opened.error());
  std::vector<std::string> wanted;
  for (const std::string& name : names) {
    auto expanded = ExpandHostlist(name);
    if (!expanded) return Error("scontrol: error: " + expanded.error());
    wanted.insert(wanted.end(), expanded->begin(), expanded->end());
  }
  // Only the nodes asked for, chosen by the controller.
  auto loaded = LoadNodes(session, wanted);
  if (!loaded) return Error(loaded.error());
  v1::NodeList& nodes = *loaded;
  columns::ApplyNodeSettings(nodes.nodes(), session.connection.cluster);
  // Only the jobs on the nodes asked for, chosen by the controller.
  v1::JobFilter on_nodes;
  for (const std::string& name : wanted) on_nodes.add_nodes(name);
  auto jobs = LoadJobs(session, false, wanted.empty() ? nullptr : &on_nodes);
  if (!jobs) return Error("slurm_load_jobs error: " + jobs.error());
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
  auto loaded = LoadPartitions(session);
  if (!loaded) return Error(loaded.error());
  const v1::PartitionList& list = *loaded;
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
  grpc::Status status = Unary(session.connection, "/drover.v1.Controller/ListReservations",
                              &v1::Controller::Stub::ListReservations, query, &list);
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
    for (const char* name : {"SLURM_JOB_NODELIST", "SLURM_NODELIST"})
      if (const char* env = std::getenv(name); env && text.empty()) text = env;
  if (text.empty()) return MakeError("hostlist is empty");
  return ExpandHostlist(text);
}

// Slurm's lines: "Slurmctld(primary) at NAME is UP", then "backup" (or "backupN" when there
// are more than two), and the banner for root when one is down. A standby that answers is UP.
// The lines, and whether any controller answered (scontrol ping's exit status, as Slurm's).
std::pair<std::string, bool> Ping(Session& session) {
  std::vector<ControllerPing> pings = PingEveryController(session.connection);
  std::string lines;
  bool any_up = false, any_down = false;
  for (size_t i = 0; i < pings.size(); ++i) {
    std::string mode = i == 0              ? "primary"
                       : pings.size() == 2 ? "backup"
                                           : fmt::format("backup{}", i);
    lines += fmt::format("Slurmctld({}) at {} is {}\n", mode, pings[i].name,
                         pings[i].up ? "UP" : "DOWN");
    any_up |= pings[i].up;
    any_down |= !pings[i].up;
  }
  if (any_down && ::getuid() == 0)
    lines +=
        "*****************************************\n"
        "** RESTORE SLURMCTLD DAEMON TO SERVICE **\n"
        "*****************************************\n";
  return {lines, any_up};
}

// show step [JOB[.STEP]]: the srun steps of running jobs, from their job records.
int ShowSteps(const Flags& flags, const std::optional<std::string>& id) {
  v1::JobFilter filter;
  std::optional<uint32_t> step_id;
  if (id) {
    std::string_view text = *id;
    size_t dot = text.find('.');
    if (dot != std::string_view::npos) {
      auto step = ParseUint64(text.substr(dot + 1));
      if (!step || *step >= UINT32_MAX)
        return Error("slurm_get_job_steps error: Invalid job id specified");
      step_id = static_cast<uint32_t>(*step);
      text = text.substr(0, dot);
    }
    if (!AddJobId(text, &filter))
      return Error("slurm_get_job_steps error: Invalid job id specified");
  }
  Session session;
  if (Status opened = Open(flags, session); !opened)
    return Error("scontrol: error: " + opened.error());
  auto jobs = LoadJobs(session, false);
  if (!jobs) return Error("slurm_get_job_steps error: " + jobs.error());
  std::vector<Record> records;
  for (const v1::Job& job : *jobs) {
    if (id && !Selected(job, filter)) continue;
    for (const v1::Step& step : job.steps())
      if (step.end_time() == 0 && (!step_id || step.step_id() == *step_id))
        records.push_back(StepRecord(job, step));
  }
  if (records.empty()) {
    if (id) return Print(fmt::format("Job step {} not found\n", *id));
    return Print("No job steps in the system\n");
  }
  return Print(Render(records, flags.one_liner));
}

// show aliases [HOST]: the NodeName of every node whose NodeHostname is HOST (this host by
// default), on one line, as slurm.conf names them.
int ShowAliases(const std::optional<std::string>& host) {
  auto cluster = LoadCluster();
  if (!cluster) return Error("scontrol: error: " + cluster.error());
  std::string name = host ? *host : ShortHostName();
  std::vector<std::string> names;
  for (const NodeConfig& node : cluster->nodes)
    if (node.hostname == name) names.push_back(node.name);
  if (!names.empty()) Print(Join(names, " ") + "\n");
  return 0;
}

// show daemons: which of Slurm's daemons this host runs (the controller, an agent).
int ShowDaemons() {
  auto cluster = LoadCluster();
  if (!cluster) return Error("scontrol: error: " + cluster.error());
  std::string me = ShortHostName();
  bool controller = false, agent = false;
  for (const auto& host : cluster->settings.controller_hosts)
    controller |= host.name == me || host.name == "localhost";
  for (const NodeConfig& node : cluster->nodes)
    agent |= node.hostname == me || node.name == me || node.hostname == "localhost";
  std::vector<std::string> daemons;
  if (controller) daemons.push_back("slurmctld");
  if (agent) daemons.push_back("slurmd");
  return Print(Join(daemons, " ") + "\n");
}

// Drover has no accounting database yet: the association manager's cache holds no users,
// associations or QOS records, as slurmctld's does without AccountingStorageType.
int ShowAssocMgr(std::span<const std::string> options) {
  for (const std::string& option : options) {
    auto [key, value] = SplitKeyValue(option);
    if (key != "users" && key != "accounts" && key != "qos" && key != "flags")
      return Error(fmt::format("Invalid option: {}", option));
  }
  return Print(
      "Current Association Manager state\n\nUser Records\n\n\nAssociation Records\n\n\nQOS "
      "Records\n\n");
}

int ShowHostlist(const std::optional<std::string>& list, bool sorted) {
  if (!list) return Error("invalid encode argument");
  auto hosts = ExpandHostlist(*list);
  if (!hosts) return Error("scontrol: error: " + hosts.error());
  return Print((sorted ? CompressHostlistSorted(*hosts) : CompressHostlist(*hosts)) + "\n");
}

int ShowConfig(const Flags& flags) {
  Session session;
  if (Status opened = Open(flags, session); !opened)
    return Error("scontrol: error: " + opened.error());
  auto [line, up] = Ping(session);
  const ClusterConfig& cluster = session.connection.cluster;
  Print(ConfigText(cluster, session.ctx.now, cluster.conf_path) + "\n" + line);
  return 0;
}

std::vector<std::string> Names(const std::optional<std::string>& id) {
  return id ? std::vector<std::string>{*id} : std::vector<std::string>{};
}

enum class Entity {
  kAliases,
  kBurstBuffer,
  kAssocMgr,
  kConfig,
  kDaemons,
  kFederation,
  kFrontend,
  kHostnames,
  kHostlist,
  kHostlistSorted,
  kJobs,
  kLicenses,
  kNodes,
  kPartitions,
  kReservations,
  kSlurmd,
  kSteps,
  kTopology
};

struct EntityKeyword {
  Keyword keyword;
  Entity entity;
};

// Slurm 22.05's show entities in its order (the first match wins) with its shortest forms.
constexpr EntityKeyword kEntities[] = {
    {{"aliases", 1}, Entity::kAliases},
    {{"burstbuffer", 2}, Entity::kBurstBuffer},
    {{"assoc_mgr", 2}, Entity::kAssocMgr},
    {{"cache", 2}, Entity::kAssocMgr},
    {{"config", 1}, Entity::kConfig},
    {{"daemons", 1}, Entity::kDaemons},
    {{"federations", 1}, Entity::kFederation},
    {{"frontendname", 1}, Entity::kFrontend},
    {{"hostnames", 5}, Entity::kHostnames},
    {{"hostlist", 5}, Entity::kHostlist},
    {{"hostlistsorted", 9}, Entity::kHostlistSorted},
    {{"jobs", 1}, Entity::kJobs},
    {{"jobid", 1}, Entity::kJobs},
    {{"licenses", 2}, Entity::kLicenses},
    {{"nodes", 1}, Entity::kNodes},
    {{"nodename", 1}, Entity::kNodes},
    {{"partitions", 2}, Entity::kPartitions},
    {{"partitionname", 2}, Entity::kPartitions},
    {{"reservations", 1}, Entity::kReservations},
    {{"reservationname", 1}, Entity::kReservations},
    {{"slurmd", 2}, Entity::kSlurmd},
    {{"steps", 2}, Entity::kSteps},
    {{"topology", 1}, Entity::kTopology},
};

std::optional<Entity> FindEntity(std::string_view word) {
  for (const EntityKeyword& entry : kEntities)
    if (MatchesKeyword(word, entry.keyword.name, entry.keyword.min_length)) return entry.entity;
  return std::nullopt;
}

int ShowEntity(Entity entity, const Flags& flags, const std::optional<std::string>& id,
               std::span<const std::string> rest) {
  switch (entity) {
    case Entity::kAliases:
      return ShowAliases(id);
    case Entity::kBurstBuffer:
      return 0;  // no burst buffer plugin: nothing to report
    case Entity::kAssocMgr:
      return ShowAssocMgr(rest);
    case Entity::kConfig:
      return ShowConfig(flags);
    case Entity::kDaemons:
      return ShowDaemons();
    case Entity::kFederation:
      return Print("Not a member of a federation\n");
    case Entity::kFrontend:
      if (id) return Print(fmt::format("Front_end node {} not found\n", *id));
      return Print("No front end nodes in the system\n");
    case Entity::kHostnames: {
      auto hosts = HostNames(Names(id));
      if (!hosts) return Error("scontrol: error: " + hosts.error());
      return Print(Join(*hosts, "\n") + "\n");
    }
    case Entity::kHostlist:
      return ShowHostlist(id, false);
    case Entity::kHostlistSorted:
      return ShowHostlist(id, true);
    case Entity::kJobs:
      return ShowJobs(flags, Names(id));
    case Entity::kLicenses:
      return ShowLicenses(flags, id);
    case Entity::kNodes:
      return ShowNodes(flags, Names(id));
    case Entity::kPartitions:
      return ShowPartitions(flags, Names(id));
    case Entity::kReservations:
      return ShowReservations(flags, Names(id));
    case Entity::kSlurmd:
      return ShowSlurmd(id);
    case Entity::kSteps:
      return ShowSteps(flags, id);
    case Entity::kTopology:
      return ShowTopology(flags);
  }
  return 1;
}

}  // namespace

Result<ClusterConfig> LoadCluster() {
  std::string path = ResolveConfPath("");
  ConfigLoad load = LoadClusterConfig(path);
  if (!load.ok())
    return MakeError(
        fmt::format("cannot load the cluster's configuration {}: {}", path, load.ErrorText()));
  return std::move(load.config);
}

// show ENTITY[=ID] or show ENTITY [ID], as Slurm's _show_it reads them.
int RunShow(const Flags& flags, std::span<const std::string> words) {
  if (words.empty()) return Error("too few arguments for keyword:show");
  std::string_view tag = words[0];
  size_t eq = tag.find('=');
  std::optional<Entity> entity = FindEntity(tag.substr(0, eq));
  if (words.size() > 2 && entity != Entity::kAssocMgr)
    return Error("too many arguments for keyword:show");
  if (!entity) return Error(fmt::format("invalid entity:{} for keyword:show ", tag.substr(0, eq)));
  std::optional<std::string> id;
  if (eq != std::string_view::npos)
    id = std::string(tag.substr(eq + 1));
  else if (words.size() == 2 && entity != Entity::kAssocMgr)
    id = words[1];
  return ShowEntity(*entity, flags, id, words.subspan(1));
}

// write config [FILE]: what the controller runs now, written as slurm_write_ctl_conf writes it,
// to FILE (else the slurm.conf this command read) with ".TIME" appended.
int RunWriteConfig(const Flags& flags, const std::optional<std::string>& file) {
  Session session;
  if (Status opened = Open(flags, session); !opened)
    return Error("scontrol: error: " + opened.error());
  auto nodes = LoadNodes(session);
  if (!nodes) return Error(nodes.error());
  auto partitions = LoadPartitions(session);
  if (!partitions) return Error(partitions.error());
  const ClusterConfig& cluster = session.connection.cluster;
  std::string stamp = columns::IsoTime(session.ctx.now);
  std::string path = fmt::format("{}.{}", file ? *file : cluster.conf_path, stamp);
  std::vector<v1::NodeStatus> live(nodes->nodes().begin(), nodes->nodes().end());
  std::vector<v1::Partition> parts(partitions->partitions().begin(),
                                   partitions->partitions().end());
  std::string text = WriteConfigText(cluster, live, parts, stamp, cluster.conf_path);
  FILE* out = std::fopen(path.c_str(), "w");
  if (!out) return Error(fmt::format("Could not create file {}: {}", path, std::strerror(errno)));
  bool written = std::fputs(text.c_str(), out) >= 0;
  if (std::fclose(out) != 0 || !written) {
    int error = errno;
    std::remove(path.c_str());
    return Error(fmt::format("Could not write file {}: {}", path, std::strerror(error)));
  }
  return Print(fmt::format("Slurm config saved to {}\n", path));
}

int RunPing(const Flags& flags) {
  Session session;
  // Each controller is asked in turn: none need be in charge.
  if (Status opened = Open(flags, session, /*find_controller=*/false); !opened)
    return Error("scontrol: error: " + opened.error());
  auto [line, up] = Ping(session);
  std::fputs(line.c_str(), stdout);
  return up ? 0 : 1;
}

}  // namespace drover::cli::scontrol
